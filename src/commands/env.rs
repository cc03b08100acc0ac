//! The environment variables the commands heed, read and parsed once, in one place ([`Env`],
//! [`get`]): `OWARE_MEMORY_LIMIT` (the memory the commands plan for), `RAYON_NUM_THREADS`
//! (the worker threads when `--threads` is not given), the measuring aids
//! `OWARE_SLICE_BYTES`, `OWARE_DISTANCE_WINDOW` and `OWARE_EXCHANGE_BATCH`, and the MPI
//! launcher's. A value that does not parse is an error, never ignored.

use anyhow::bail;

/// The most worker threads `--threads` accepts.
pub const MAX_THREADS: usize = 1024;

/// Parses `--threads`: a count of `1..=MAX_THREADS`, digits only.
pub fn parse_threads(s: &str) -> Result<usize, String> {
    let bad = || format!("`{s}` is not a thread count in 1..={MAX_THREADS}");
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    match s.parse::<usize>() {
        Ok(t) if (1..=MAX_THREADS).contains(&t) => Ok(t),
        _ => Err(bad()),
    }
}

/// The variable that sets the memory the commands plan for.
pub const MEMORY_LIMIT_VAR: &str = "OWARE_MEMORY_LIMIT";

/// The variable that sets the worker threads when `--threads` is not given.
pub const THREADS_VAR: &str = "RAYON_NUM_THREADS";

/// Parses a size in bytes: digits, then optionally a unit: `K`, `M`, `G`, `T` (or `KiB`,
/// `MiB`, `GiB`, `TiB`; powers of 1024), `KB`, `MB`, `GB`, `TB` (powers of 1000) or `B`,
/// in any case, with optional spaces between. At least 1 byte, and at most `u64::MAX`.
///
/// # Errors
/// Anything else (a sign, a fraction, an exponent, an unknown unit, zero, an overflow), with
/// the forms accepted.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let bad = |why: &str| {
        format!(
            "`{s}` is not a size in bytes ({why}); give digits with an optional unit: \
             22G, 22GiB, 512M, 22GB, 4096"
        )
    };
    let t = s.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(digits_end);
    if digits.is_empty() {
        return Err(bad("no digits first"));
    }
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return Err(bad("unknown unit")),
    };
    let n: u64 = digits.parse().map_err(|_| bad("too large"))?;
    match n.checked_mul(factor) {
        Some(0) => Err(bad("zero")),
        Some(v) => Ok(v),
        None => Err(bad("too large")),
    }
}

/// The variable that computes every tier's exits in slices of at most that many bytes of
/// lower-tier scores, whatever the memory (tests and measurements).
pub const SLICE_BYTES_VAR: &str = "OWARE_SLICE_BYTES";

/// The variable that keeps every tier's distances out of core in windows of at most that
/// many positions, whatever the memory (tests and measurements).
pub const DISTANCE_WINDOW_VAR: &str = "OWARE_DISTANCE_WINDOW";

/// The variable that sets the most updates or look-ups a rank sends per exchange under MPI
/// (a tuning and measuring aid).
pub const EXCHANGE_BATCH_VAR: &str = "OWARE_EXCHANGE_BATCH";

/// The environment of a run, read and checked once ([`get`]): every variable the commands
/// heed, so that none is read again, or differently, further down.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `OWARE_MEMORY_LIMIT`: the memory the commands plan for; `None` when unset or empty.
    pub memory_limit: Option<u64>,
    /// `RAYON_NUM_THREADS`: the worker threads when `--threads` is not given.
    pub threads: Option<usize>,
    /// `OWARE_SLICE_BYTES`.
    pub slice_bytes: Option<u64>,
    /// `OWARE_DISTANCE_WINDOW`.
    pub distance_window: Option<u64>,
    /// `OWARE_EXCHANGE_BATCH`.
    pub exchange_batch: Option<usize>,
    /// The number of processes of the MPI job that started this one, as its launcher tells
    /// (`OMPI_COMM_WORLD_SIZE`, `PMI_SIZE`, `PMIX_SIZE`), if any.
    pub mpi_job_size: Option<u64>,
    /// Whether an MPI launcher started this process (`OMPI_COMM_WORLD_SIZE`, `PMI_SIZE` or
    /// `PMIX_RANK` is set).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub launched_by_mpi: bool,
}

impl Env {
    /// Reads every variable through `var` (the process's environment in [`get`]).
    ///
    /// # Errors
    /// A variable is set but does not parse: one line naming it and the forms accepted.
    pub fn read(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> anyhow::Result<Env> {
        let text = |name: &str| -> anyhow::Result<Option<String>> {
            match var(name) {
                None => Ok(None),
                Some(v) => match v.into_string() {
                    Ok(v) if v.trim().is_empty() => Ok(None),
                    Ok(v) => Ok(Some(v)),
                    Err(_) => bail!("{name} is not text"),
                },
            }
        };
        let memory_limit = match text(MEMORY_LIMIT_VAR)? {
            None => None,
            Some(v) => match parse_bytes(&v) {
                Ok(b) => Some(b),
                Err(e) => bail!("{MEMORY_LIMIT_VAR}={v}: {e}"),
            },
        };
        let threads = match text(THREADS_VAR)? {
            None => None,
            Some(v) => match parse_threads(v.trim()) {
                Ok(t) => Some(t),
                Err(e) => bail!("{THREADS_VAR}={v}: {e}, as --threads"),
            },
        };
        let slice_bytes = match text(SLICE_BYTES_VAR)? {
            None => None,
            Some(v) => match v.trim().parse::<u64>() {
                Ok(b) => Some(b),
                Err(_) => bail!("{SLICE_BYTES_VAR}={v}: not a number of bytes"),
            },
        };
        let distance_window = match text(DISTANCE_WINDOW_VAR)? {
            None => None,
            Some(v) => match v.trim().parse::<u64>() {
                Ok(w) if w > 0 => Some(w),
                _ => bail!("{DISTANCE_WINDOW_VAR}={v}: not a positive number of positions"),
            },
        };
        let exchange_batch = match text(EXCHANGE_BATCH_VAR)? {
            None => None,
            Some(v) => match v.trim().parse::<usize>() {
                Ok(b) if b > 0 => Some(b),
                _ => bail!("{EXCHANGE_BATCH_VAR}={v}: not a positive number of words"),
            },
        };
        let mpi_job_size = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
            .iter()
            .find_map(|v| var(v)?.into_string().ok()?.trim().parse().ok());
        let launched_by_mpi = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
            .iter()
            .any(|v| var(v).is_some());
        Ok(Env {
            memory_limit,
            threads,
            slice_bytes,
            distance_window,
            exchange_batch,
            mpi_job_size,
            launched_by_mpi,
        })
    }

    /// The memory a command plans for: `OWARE_MEMORY_LIMIT`, or the system's available
    /// memory ([`oware_solver::memory::available_memory`]).
    pub fn memory(&self) -> u64 {
        self.memory_limit
            .unwrap_or_else(oware_solver::memory::available_memory)
    }
}

/// The process's environment ([`Env`]), read on the first call and kept for the rest of the
/// run.
///
/// # Errors
/// A variable is set but does not parse (on every call).
pub fn get() -> anyhow::Result<&'static Env> {
    static ENV: std::sync::OnceLock<Result<Env, String>> = std::sync::OnceLock::new();
    ENV.get_or_init(|| Env::read(|v| std::env::var_os(v)).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| anyhow::anyhow!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::{parse_bytes, Env};
    use std::ffi::OsString;

    fn env_of(vars: &[(&str, &str)]) -> anyhow::Result<Env> {
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        Env::read(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn the_environment_parses_once_with_every_variable() {
        let env = env_of(&[
            ("OWARE_MEMORY_LIMIT", "2G"),
            ("RAYON_NUM_THREADS", "3"),
            ("OWARE_SLICE_BYTES", "4096"),
            ("OWARE_DISTANCE_WINDOW", "65536"),
            ("OWARE_EXCHANGE_BATCH", "64"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
        ])
        .unwrap();
        assert_eq!(env.memory_limit, Some(2 << 30));
        assert_eq!(env.threads, Some(3));
        assert_eq!(env.slice_bytes, Some(4096));
        assert_eq!(env.distance_window, Some(65536));
        assert_eq!(env.exchange_batch, Some(64));
        assert_eq!(env.mpi_job_size, Some(4));
        assert!(env.launched_by_mpi);
        let none = env_of(&[("OWARE_MEMORY_LIMIT", " "), ("OWARE_SLICE_BYTES", "")]).unwrap();
        assert_eq!(none.memory_limit, None);
        assert_eq!(none.slice_bytes, None);
        assert!(!none.launched_by_mpi);
        for (var, bad) in [
            ("OWARE_MEMORY_LIMIT", "lots"),
            ("RAYON_NUM_THREADS", "0"),
            ("OWARE_SLICE_BYTES", "-1"),
            ("OWARE_DISTANCE_WINDOW", "0"),
            ("OWARE_EXCHANGE_BATCH", "x"),
        ] {
            let e = env_of(&[(var, bad)]).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{var}={bad}: ")), "{e}");
        }
    }

    #[test]
    fn sizes_parse_with_their_units() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes(" 4k "), Ok(4096));
        assert_eq!(parse_bytes("22G"), Ok(22 << 30));
        assert_eq!(parse_bytes("22GiB"), Ok(22 << 30));
        assert_eq!(parse_bytes("22 gib"), Ok(22 << 30));
        assert_eq!(parse_bytes("22GB"), Ok(22_000_000_000));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("1T"), Ok(1 << 40));
        assert_eq!(parse_bytes("7B"), Ok(7));
        for bad in [
            "",
            "garbage",
            "-1",
            "+1",
            "1e9",
            "1.5G",
            "0",
            "0G",
            "4x",
            "G",
            "99999999999T",
            "18446744073709551616",
        ] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }
}
