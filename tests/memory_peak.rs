//! A memory limit is a promise about the peak: `oware generate` under `OWARE_MEMORY_LIMIT`
//! that forces slices keeps its peak resident set (the kernel's own account of the child,
//! `ru_maxrss`) within the limit. One test in its own binary, so that no other child of the
//! test process is counted.

mod support;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::Rules;
use oware_solver::memory::{tier_memory, window_bytes, PROCESS_BYTES};
use support::{oware, text};

#[cfg(target_os = "linux")]
#[test]
fn a_limited_generation_peaks_within_its_limit() {
    let tmp = tempfile::tempdir().unwrap();
    // The top tier's cells, the process, and a quarter of the lower tiers its captures
    // read: the top tiers read those in slices decoded from the tables.
    let top = 18;
    let own = tier_memory(TierIndex::new(top, IndexKind::Reachable).size());
    let limit = own + PROCESS_BYTES + window_bytes(&Rules::ABAPA, top) / 4;
    // Reaped by `wait4` below, which also reads its resource usage.
    #[allow(clippy::zombie_processes)]
    let child = oware()
        .args([
            "generate",
            "--quiet",
            "--max-seeds",
            &top.to_string(),
            "--dir",
        ])
        .arg(tmp.path())
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
        "{}",
        text(stderr.as_bytes())
    );
    let peak = usage.ru_maxrss as u64 * 1024;
    assert!(
        tmp.path().join(format!("tier-{top}.owt")).exists(),
        "tier {top} not written"
    );
    assert!(
        peak <= limit,
        "peak resident set {peak} bytes over the limit {limit}"
    );
}
