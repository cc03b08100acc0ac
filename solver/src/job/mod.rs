//! The jobs: `generate` (solve tiers into a directory of tables, resumably) and deep
//! verification (re-prove every score of a directory), each one driver for one process or
//! many ranks.

pub(crate) mod deep;
pub(crate) mod generate;
pub(crate) mod held;
pub(crate) mod place;
pub(crate) mod rank_error;
pub(crate) mod ranks;
