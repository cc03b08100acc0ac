//! One module per subcommand; each has its clap `Args` and a `run` function.

pub mod common;
pub mod env;
pub mod generate;
pub mod info;
pub mod json;
pub mod probe;
pub mod progress;
pub mod ranks;
pub mod recompress;
pub mod romein;
pub mod serve;
pub mod verify;
