//! The environment variables that set limits, parsed in one place: `OWARE_MEMORY_LIMIT` (the
//! memory the commands plan for) and `RAYON_NUM_THREADS` (the worker threads when
//! `--threads` is not given). A value that does not parse is an error, never ignored.

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

/// `OWARE_MEMORY_LIMIT`, parsed ([`parse_bytes`]); `None` when it is unset or empty.
///
/// # Errors
/// It is set but does not parse: one line naming the variable and the forms accepted.
pub fn memory_limit() -> anyhow::Result<Option<u64>> {
    match std::env::var(MEMORY_LIMIT_VAR) {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => match parse_bytes(&v) {
            Ok(b) => Ok(Some(b)),
            Err(e) => bail!("{MEMORY_LIMIT_VAR}={v}: {e}"),
        },
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            bail!("{MEMORY_LIMIT_VAR} is not text; give a size such as 22G")
        }
    }
}

/// The memory a command plans for: `OWARE_MEMORY_LIMIT` ([`memory_limit`]), or the system's
/// ([`oware_solver::memory::available_memory`]).
///
/// # Errors
/// As [`memory_limit`].
pub fn available_memory() -> anyhow::Result<u64> {
    Ok(memory_limit()?.unwrap_or_else(oware_solver::memory::available_memory))
}

/// `RAYON_NUM_THREADS`, parsed as `--threads` is (1..=1024); `None` when it is unset or empty.
///
/// # Errors
/// It is set but is not a count of 1..=1024.
pub fn threads() -> anyhow::Result<Option<usize>> {
    match std::env::var(THREADS_VAR) {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => match parse_threads(v.trim()) {
            Ok(t) => Ok(Some(t)),
            Err(e) => bail!("{THREADS_VAR}={v}: {e}, as --threads"),
        },
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            bail!("{THREADS_VAR} is not text; give a count of 1..={MAX_THREADS}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

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
