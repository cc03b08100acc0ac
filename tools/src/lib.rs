//! Benchmark drivers and design aids for the oware workspace, one binary per tool under
//! `src/bin/`; this library holds what they share and the measurements of the `entropy`
//! binary.
//!
//! Nothing here is published: the shipped crates are `oware-db`, `oware-solver` and the
//! `oware` command-line tool.

#![warn(missing_docs)]

pub mod entropy;
pub mod machine;
