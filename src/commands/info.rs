//! `oware info`.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `oware info`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the tables.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
}

/// Runs `oware info`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "`oware info` is not implemented yet (dir {})",
        args.dir.display()
    )
}
