//! `oware generate`.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `oware generate`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the tables.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
}

/// Runs `oware generate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "`oware generate` is not implemented yet (dir {})",
        args.dir.display()
    )
}
