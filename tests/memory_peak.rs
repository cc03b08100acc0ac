//! A memory limit is a promise about the peak: `oware generate` and `oware verify --deep`
//! under an `OWARE_MEMORY_LIMIT` that forces slices keep their peak resident set (the
//! kernel's own account of the child, `ru_maxrss`, read by `wait4` for that child alone)
//! within the limit.

mod support;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::Rules;
use oware_solver::memory::{
    far_exit_bytes, tier_memory, verify_memory, window_bytes, PROCESS_BYTES,
};
use support::{oware, text};

/// Runs `oware ARGS` under `OWARE_MEMORY_LIMIT=limit` to its end and returns its peak
/// resident set in bytes; panics, with its errors, if it fails.
#[cfg(target_os = "linux")]
fn peak_under(limit: u64, args: &[&str]) -> u64 {
    // Reaped by `wait4` below, which also reads its resource usage.
    #[allow(clippy::zombie_processes)]
    let child = oware()
        .args(args)
        .env("OWARE_MEMORY_LIMIT", limit.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: `rusage` is plain data, so all zeroes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for the child started above, writing into the two locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.unwrap(), &mut stderr).unwrap();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{args:?}: {}",
        text(stderr.as_bytes())
    );
    usage.ru_maxrss as u64 * 1024
}

/// The top tier's own state, the process, and a quarter of the lower tiers its captures
/// read: the top tiers read those in slices decoded from the tables.
fn limit_for(own: u64, top: u8) -> u64 {
    own + PROCESS_BYTES + window_bytes(&Rules::ABAPA, top) / 4
}

#[cfg(target_os = "linux")]
#[test]
fn a_limited_generation_peaks_within_its_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let top = 18;
    let own = tier_memory(positions(top)) + far_exit_bytes(top, positions(top));
    let limit = limit_for(own, top);
    let args = ["generate", "--quiet", "--max-seeds", "18", "--dir", d];
    let peak = peak_under(limit, &args);
    eprintln!("{args:?}: peak {peak} bytes, limit {limit}");
    assert!(
        tmp.path().join(format!("tier-{top}.owt")).exists(),
        "tier {top} not written"
    );
    assert!(
        peak <= limit,
        "peak resident set {peak} bytes over the limit {limit}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_limited_deep_verification_peaks_within_its_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let top = 18;
    support::ok(&["generate", "--quiet", "--max-seeds", "18", "--dir", d]);
    let limit = limit_for(verify_memory(positions(top)), top);
    let args = ["verify", "--deep", "--quiet", "--dir", d];
    let peak = peak_under(limit, &args);
    eprintln!("{args:?}: peak {peak} bytes, limit {limit}");
    assert!(
        peak <= limit,
        "peak resident set {peak} bytes over the limit {limit}"
    );
}

fn positions(n: u8) -> u64 {
    TierIndex::new(n, IndexKind::Reachable).size()
}
