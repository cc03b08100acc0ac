//! `oware verify`.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `oware verify`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the tables.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
}

/// Runs `oware verify`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "`oware verify` is not implemented yet (dir {})",
        args.dir.display()
    )
}
