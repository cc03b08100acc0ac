//! `oware bench`.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `oware bench`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the tables.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
}

/// Runs `oware bench`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "`oware bench` is not implemented yet (dir {})",
        args.dir.display()
    )
}
