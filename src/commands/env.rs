//! The environment variables the commands heed, read and parsed once, in one place ([`Env`],
//! [`get`]): `OWARE_MEMORY_LIMIT` (the memory the commands plan for), `RAYON_NUM_THREADS`
//! (the worker threads when `--threads` is not given), the measuring aids
//! `OWARE_SLICE_BYTES`, `OWARE_DISTANCE_WINDOW` and `OWARE_EXCHANGE_BATCH`, the switch
//! `OWARE_SIMD`, and the MPI launcher's. A value that does not parse is an error where it is
//! used, never ignored.

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

/// The variable that keeps the solver on its portable paths (`off`) instead of the vector
/// instructions it finds at run time (`auto`, the default): the tables are the same bytes.
pub const SIMD_VAR: &str = "OWARE_SIMD";

/// A variable's value: `Ok(None)` when it is unset or empty, `Err` (the one-line message)
/// when it is set but does not parse.
type Parsed<T> = Result<Option<T>, String>;

/// The environment of a run, read and parsed once ([`get`]): every variable the commands
/// heed, so that none is read again, or differently, further down. A variable that does not
/// parse is an error where its value is used (a bad `RAYON_NUM_THREADS` beside `--threads`
/// is never read).
#[derive(Clone, Debug)]
pub struct Env {
    memory_limit: Parsed<u64>,
    threads: Parsed<usize>,
    slice_bytes: Parsed<u64>,
    distance_window: Parsed<u64>,
    exchange_batch: Parsed<usize>,
    simd: Parsed<bool>,
    /// The number of processes of the MPI job that started this one, as its launcher tells
    /// (`OMPI_COMM_WORLD_SIZE`, `PMI_SIZE`, `PMIX_SIZE`), if any.
    pub mpi_job_size: Option<u64>,
    /// Whether an MPI launcher started this process (`OMPI_COMM_WORLD_SIZE`, `PMI_SIZE` or
    /// `PMIX_RANK` is set).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub launched_by_mpi: bool,
}

/// What a variable's value should look like, for the message of one that is not text.
fn hint_of(name: &str) -> &'static str {
    match name {
        MEMORY_LIMIT_VAR => "give a size such as 22G",
        THREADS_VAR => "give a count of 1..=1024",
        _ => "give a number",
    }
}

/// Parses variable `name` of `var` with `parse` (which gives the reason a value is refused).
fn parsed<T>(
    var: &impl Fn(&str) -> Option<std::ffi::OsString>,
    name: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Parsed<T> {
    match var(name) {
        None => Ok(None),
        Some(v) => match v.into_string() {
            Ok(v) if v.trim().is_empty() => Ok(None),
            Ok(v) => parse(&v)
                .map(Some)
                .map_err(|why| format!("{name}={v}: {why}")),
            Err(_) => Err(format!("{name} is not text; {}", hint_of(name))),
        },
    }
}

impl Env {
    /// Reads every variable through `var` (the process's environment in [`get`]).
    pub fn read(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Env {
        let positive = |what: &'static str| {
            move |v: &str| match v.trim().parse::<u64>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!("not a positive number of {what}")),
            }
        };
        Env {
            memory_limit: parsed(&var, MEMORY_LIMIT_VAR, parse_bytes),
            threads: parsed(&var, THREADS_VAR, |v| {
                parse_threads(v.trim()).map_err(|e| format!("{e}, as --threads"))
            }),
            slice_bytes: parsed(&var, SLICE_BYTES_VAR, |v| {
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| "not a number of bytes".to_string())
            }),
            distance_window: parsed(&var, DISTANCE_WINDOW_VAR, positive("positions")),
            exchange_batch: parsed(&var, EXCHANGE_BATCH_VAR, |v| {
                positive("words")(v).map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            }),
            simd: parsed(&var, SIMD_VAR, |v| match v.trim() {
                "auto" => Ok(true),
                "off" => Ok(false),
                _ => Err("give auto (the default) or off".to_string()),
            }),
            mpi_job_size: ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
                .iter()
                .find_map(|v| var(v)?.into_string().ok()?.trim().parse().ok()),
            launched_by_mpi: ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
                .iter()
                .any(|v| var(v).is_some()),
        }
    }

    /// `OWARE_MEMORY_LIMIT`: the memory the commands plan for.
    ///
    /// # Errors
    /// It is set but is not a size ([`parse_bytes`]).
    pub fn memory_limit(&self) -> anyhow::Result<Option<u64>> {
        self.memory_limit.clone().map_err(anyhow::Error::msg)
    }

    /// `RAYON_NUM_THREADS`: the worker threads when `--threads` is not given.
    ///
    /// # Errors
    /// It is set but is not a count of 1..=1024.
    pub fn threads(&self) -> anyhow::Result<Option<usize>> {
        self.threads.clone().map_err(anyhow::Error::msg)
    }

    /// `OWARE_SLICE_BYTES`.
    ///
    /// # Errors
    /// It is set but is not a number of bytes.
    pub fn slice_bytes(&self) -> anyhow::Result<Option<u64>> {
        self.slice_bytes.clone().map_err(anyhow::Error::msg)
    }

    /// `OWARE_DISTANCE_WINDOW`.
    ///
    /// # Errors
    /// It is set but is not a positive number.
    pub fn distance_window(&self) -> anyhow::Result<Option<u64>> {
        self.distance_window.clone().map_err(anyhow::Error::msg)
    }

    /// `OWARE_EXCHANGE_BATCH`.
    ///
    /// # Errors
    /// It is set but is not a positive number.
    pub fn exchange_batch(&self) -> anyhow::Result<Option<usize>> {
        self.exchange_batch.clone().map_err(anyhow::Error::msg)
    }

    /// `OWARE_SIMD`: `Some(false)` keeps the solver on its portable paths.
    ///
    /// # Errors
    /// It is set to something other than `auto` or `off`.
    pub fn simd(&self) -> anyhow::Result<Option<bool>> {
        self.simd.clone().map_err(anyhow::Error::msg)
    }

    /// The memory a command plans for: `OWARE_MEMORY_LIMIT`, or the system's available
    /// memory ([`oware_solver::memory::available_memory`]).
    ///
    /// # Errors
    /// As [`Env::memory_limit`].
    pub fn memory(&self) -> anyhow::Result<u64> {
        Ok(self
            .memory_limit()?
            .unwrap_or_else(oware_solver::memory::available_memory))
    }
}

/// The process's environment ([`Env`]), read on the first call and kept for the rest of the
/// run.
pub fn get() -> &'static Env {
    static ENV: std::sync::OnceLock<Env> = std::sync::OnceLock::new();
    ENV.get_or_init(|| Env::read(|v| std::env::var_os(v)))
}

#[cfg(test)]
mod tests {
    use super::{parse_bytes, Env};
    use std::ffi::OsString;

    fn env_of(vars: &[(&str, &str)]) -> Env {
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
            ("OWARE_SIMD", "off"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
        ]);
        assert_eq!(env.memory_limit().unwrap(), Some(2 << 30));
        assert_eq!(env.threads().unwrap(), Some(3));
        assert_eq!(env.slice_bytes().unwrap(), Some(4096));
        assert_eq!(env.distance_window().unwrap(), Some(65536));
        assert_eq!(env.exchange_batch().unwrap(), Some(64));
        assert_eq!(env.simd().unwrap(), Some(false));
        assert_eq!(
            env_of(&[("OWARE_SIMD", "auto")]).simd().unwrap(),
            Some(true)
        );
        assert_eq!(env.mpi_job_size, Some(4));
        assert!(env.launched_by_mpi);
        let none = env_of(&[("OWARE_MEMORY_LIMIT", " "), ("OWARE_SLICE_BYTES", "")]);
        assert_eq!(none.memory_limit().unwrap(), None);
        assert_eq!(none.slice_bytes().unwrap(), None);
        assert_eq!(none.simd().unwrap(), None);
        assert!(!none.launched_by_mpi);
        for (var, bad) in [
            ("OWARE_MEMORY_LIMIT", "lots"),
            ("RAYON_NUM_THREADS", "0"),
            ("OWARE_SLICE_BYTES", "-1"),
            ("OWARE_DISTANCE_WINDOW", "0"),
            ("OWARE_EXCHANGE_BATCH", "x"),
            ("OWARE_SIMD", "avx9"),
        ] {
            let env = env_of(&[(var, bad)]);
            let e = [
                env.memory_limit().err(),
                env.threads().err(),
                env.slice_bytes().err(),
                env.distance_window().err(),
                env.exchange_batch().err(),
                env.simd().err(),
            ];
            // Only the bad variable's value is an error.
            let e: Vec<String> = e.into_iter().flatten().map(|e| e.to_string()).collect();
            assert_eq!(e.len(), 1, "{e:?}");
            assert!(e[0].starts_with(&format!("{var}={bad}: ")), "{e:?}");
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
