//! The benchmark drivers run and print their figures on a small tier: `bench_index`, and
//! `synthetic_table` followed by `bench_probe` and each subcommand of `entropy` on the table
//! it writes.

use std::process::{Command, Output};

/// Runs one of this crate's binaries and returns its output; fails the test if it failed.
fn run(bin: &str, args: &[&str]) -> Output {
    let out = Command::new(bin).args(args).output().expect("run the tool");
    assert!(
        out.status.success(),
        "{bin} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

#[test]
fn bench_index_walks_a_tier() {
    let out = stdout(&run(env!("CARGO_BIN_EXE_bench_index"), &["--tier", "6"]));
    assert!(out.contains("tier 6 (reachable index), rules abapa: 12375 positions"));
    for pass in ["rank ", "unrank ", "cursor ", "moves ", "unmoves "] {
        assert!(out.contains(pass), "no `{pass}` line in:\n{out}");
    }
}

#[test]
fn synthetic_table_then_bench_probe_and_entropy() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path().to_str().expect("a UTF-8 path");
    let out = stdout(&run(
        env!("CARGO_BIN_EXE_synthetic_table"),
        &[d, "8", "1024,4096"],
    ));
    assert_eq!(out.lines().count(), 2, "one line per block size:\n{out}");
    let table = dir.path().join("b1024");
    let t = table.to_str().expect("a UTF-8 path");
    let probe = env!("CARGO_BIN_EXE_bench_probe");
    let common = [
        "--dir",
        t,
        "--tier",
        "8",
        "--count",
        "1000",
        "--threads",
        "1",
    ];
    let out = stdout(&run(probe, &common));
    assert!(out.contains("75504 entries"), "{out}");
    assert!(
        out.contains("latency (1 thread, 1000 random probes)"),
        "{out}"
    );
    assert!(out.contains("throughput, 1 thread"), "{out}");

    let positions = dir.path().join("positions.txt");
    let mut args = common.to_vec();
    args.extend([
        "--write-positions",
        positions.to_str().expect("a UTF-8 path"),
    ]);
    run(probe, &args);
    let text = std::fs::read_to_string(&positions).expect("the position file");
    assert_eq!(text.lines().count(), 1000);

    let entropy = env!("CARGO_BIN_EXE_entropy");
    let out = stdout(&run(entropy, &["scores", t, "8"]));
    assert!(out.starts_with("entries 75504 file bits/pos "), "{out}");
    for line in [
        "order-0 entropy",
        "order-1 with the context reset every 256",
        "order-2 ",
    ] {
        assert!(out.contains(line), "no `{line}` in:\n{out}");
    }
    let out = stdout(&run(entropy, &["contexts", t, "8"]));
    assert_eq!(out.lines().count(), 6, "{out}");
    assert!(out.starts_with("tier 8, context previous (the tables' model)"));
    for args in [
        &["neighbours", t, "8"][..],
        &["neighbours", t, "8", "--any"],
    ] {
        let out = stdout(&run(entropy, args));
        assert_eq!(out.lines().count(), 25, "{out}");
    }
    let out = stdout(&run(entropy, &["orders", t, "8"]));
    assert_eq!(out.lines().count(), 7, "{out}");
    let out = stdout(&run(entropy, &["signs", t, "8"]));
    assert!(out.contains("knowing the previous 4: "), "{out}");
    // Synthetic scores have no lower tiers, and are no solved tier anyway.
    let out = Command::new(entropy)
        .args(["exit-delta", t, "8"])
        .output()
        .expect("run the tool");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: ") && err.contains("tier-00.owt") && err.lines().count() == 1,
        "{err}"
    );
}
