//! Exits computed from slices of the lower tiers ([`solve_tier_sliced`]) give the same
//! scores as the one pass over lower tiers held whole: with slices of one block, slices that
//! cut tiers in the middle and slices of several tiers, from tiers held in memory and from
//! the tables of a directory.

mod common;
mod synthetic;

use std::sync::Arc;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::write::WriteOptions;
use oware_db::Rules;
use oware_solver::dir::write_table_parallel;
use oware_solver::tier::{
    cut_slices, solve_tier_sliced, LowerTiers, ScoreSource, TableSource, Tuning, SLICE_ALIGN,
};
use oware_solver::{NoProgress, SolveError};

/// The solved tiers `0..=max` as lower tiers in memory.
fn lower_of(tiers: &[Vec<i8>]) -> LowerTiers {
    let mut lower = LowerTiers::new();
    for t in tiers {
        lower.push(Arc::from(t.clone()));
    }
    lower
}

fn sliced(rules: &Rules, n: u8, source: &dyn ScoreSource, bytes: u64) -> (Vec<i8>, u64) {
    let (scores, stats) =
        solve_tier_sliced(rules, n, source, bytes, &NoProgress, Tuning::default()).unwrap();
    let slices = cut_slices(rules.capture_window(n), bytes, SLICE_ALIGN).len() as u64;
    assert_eq!(stats.exit_sweeps, slices, "tier {n}");
    (scores.to_vec(), stats.exit_sweeps)
}

/// Slice sizes per tier: one block (1024 scores) up to tier 9, 37 blocks (a size that cuts
/// most tiers in the middle) up to tier 13, then 3 MiB (several tiers per slice, tier 14
/// cut).
fn slice_bytes(n: u8) -> u64 {
    match n {
        0..=9 => 1,
        10..=13 => 37 * 1024 + 100,
        _ => 3 << 20,
    }
}

#[test]
fn sliced_exits_are_byte_identical_up_to_tier_16() {
    let max = 16;
    for rules in [Rules::ABAPA, Rules::AWARI] {
        let reference = common::solve_all(&rules, max);
        let lower = lower_of(&reference[..max as usize]);
        let mut most = 0;
        for n in 0..=max {
            let (got, sweeps) = sliced(&rules, n, &lower, slice_bytes(n));
            most = most.max(sweeps);
            assert!(got == reference[n as usize], "{rules} tier {n} differs");
        }
        assert!(most >= 8, "{rules}: at most {most} sweeps");
    }
}

/// Tiers solved from slices all the way (each tier's lower tiers themselves sliced) equal
/// the brute force, under the presets and a capture set whose window reaches tier n − 1.
#[test]
fn sliced_exits_match_the_brute_force_up_to_tier_10() {
    let max = 10;
    for rules in [
        Rules::ABAPA,
        Rules::AWARI,
        "abapa+capture=1,2".parse().unwrap(),
    ] {
        let brute = common::brute_all(&rules, max);
        let mut lower = LowerTiers::new();
        for n in 0..=max {
            for bytes in [1, 3000] {
                let (got, _) = sliced(&rules, n, &lower, bytes);
                assert!(got == brute[n as usize], "{rules} tier {n} slices {bytes}");
            }
            lower.push(Arc::from(brute[n as usize].clone()));
        }
    }
}

/// From the tables of a directory, written in blocks of 1,000 entries so that slices
/// (cut at multiples of 1,024) start and end inside blocks.
#[test]
fn sliced_exits_from_tables_are_byte_identical() {
    let rules = Rules::AWARI;
    let max = 13;
    let reference = common::solve_all(&rules, max);
    let dir = tempfile::tempdir().unwrap();
    let opts = WriteOptions {
        block_entries: 1000,
        ..WriteOptions::default()
    };
    for (n, scores) in reference.iter().enumerate().take(max as usize) {
        write_table_parallel(
            &oware_solver::TableDir::new(dir.path(), &oware_solver::Cancel::new()),
            &rules,
            n as u8,
            IndexKind::Reachable,
            scores,
            &opts,
            4,
        )
        .unwrap();
    }
    let source = TableSource::new(dir.path());
    for bytes in [5 * 1024, 50_000, 1 << 30] {
        let (got, _) = sliced(&rules, max, &source, bytes);
        assert!(got == reference[max as usize], "slices of {bytes}");
    }
}

/// A lower tier missing from the directory is an error naming its file.
#[test]
fn a_missing_lower_table_is_named() {
    let rules = Rules::ABAPA;
    let reference = common::solve_all(&rules, 8);
    let dir = tempfile::tempdir().unwrap();
    for n in [0u8, 1, 2, 3, 5, 6] {
        let w = WriteOptions::default();
        write_table_parallel(
            &oware_solver::TableDir::new(dir.path(), &oware_solver::Cancel::new()),
            &rules,
            n,
            IndexKind::Reachable,
            &reference[n as usize],
            &w,
            4,
        )
        .unwrap();
    }
    let source = TableSource::new(dir.path());
    let e = solve_tier_sliced(&rules, 8, &source, 1 << 20, &NoProgress, Tuning::default())
        .err()
        .expect("tier 4 is missing");
    assert!(matches!(e, SolveError::Lower(_)), "{e:?}");
    let m = e.to_string();
    assert!(m.contains("tier-04.owt"), "{m}");
    assert!(!m.contains('\n'), "{m}");
    // A slice that does not reach the missing tier is read.
    assert_eq!(
        TierIndex::new(3, IndexKind::Reachable).size() as usize,
        reference[3].len()
    );
    let mut buf = vec![0i8; reference[3].len()];
    source.load(3, 0, &mut buf).unwrap();
    assert!(buf == reference[3]);
}

/// The far exits' lists take exactly the room they are given: with every exit below 0 listed
/// (`exact_exits` 0), a tier whose lists fit in their room to the byte is solved as without a
/// room, resident or in slices, and one byte less stops it with a one-line error naming the
/// lists, before they are all made.
#[test]
fn far_exit_lists_stop_at_their_room() {
    use oware_solver::tier::solve_tier_tuned;
    let rules = Rules::ABAPA;
    let n = 10;
    let reference = common::solve_all(&rules, n);
    let lower = lower_of(&reference[..n as usize]);
    let listing = Tuning {
        exact_exits: 0,
        ..Tuning::default()
    };
    let (scores, stats) = solve_tier_tuned(&rules, n, &lower, &NoProgress, listing).unwrap();
    assert!(scores.as_slice() == reference[n as usize].as_slice());
    assert!(stats.far_exits > 10_000, "{stats:?}");
    let room = stats.far_exit_bytes;
    assert!(room > 4 * stats.far_exits, "{stats:?}");
    let slices = 37 * 1024 + 100;
    let resident = |far_exit_room| {
        let tuning = Tuning {
            far_exit_room,
            ..listing
        };
        solve_tier_tuned(&rules, n, &lower, &NoProgress, tuning)
            .map(|(s, st)| (s.to_vec(), st.far_exit_bytes))
            .map_err(|e| e.to_string())
    };
    let sliced = |far_exit_room| {
        let tuning = Tuning {
            far_exit_room,
            ..listing
        };
        solve_tier_sliced(&rules, n, &lower, slices, &NoProgress, tuning)
            .map(|(s, st)| {
                assert!(st.exit_sweeps > 2, "{st:?}");
                (s.to_vec(), st.far_exit_bytes)
            })
            .map_err(|e| match e {
                SolveError::Alloc(a) => a.to_string(),
                e => panic!("{e:?}"),
            })
    };
    for (path, solve) in [
        (
            "resident",
            &resident as &dyn Fn(u64) -> Result<(Vec<i8>, u64), String>,
        ),
        ("sliced", &sliced),
    ] {
        let (got, bytes) = solve(room).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(got == reference[n as usize], "{path}");
        assert_eq!(bytes, room, "{path}");
        let m = solve(room - 1).expect_err(path);
        assert!(
            m.starts_with("tier 10: cannot allocate the far-exit lists"),
            "{path}: {m}"
        );
        assert!(
            m.contains(&format!("the {} bytes", room - 1)),
            "{path}: {m}"
        );
        assert!(!m.contains('\n'), "{m}");
    }
}

/// Bytes of `path`'s memory maps in this process that are resident (`Rss` in
/// `/proc/self/smaps`).
#[cfg(target_os = "linux")]
fn mapped_rss(path: &std::path::Path) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let name = path.to_str().unwrap();
    let mut in_map = false;
    let mut kib = 0;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if first.contains('-') && first.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            in_map = line.ends_with(name);
        } else if in_map && first == "Rss:" {
            kib += line
                .split_whitespace()
                .nth(1)
                .unwrap()
                .parse::<u64>()
                .unwrap();
        }
    }
    kib * 1024
}

/// A range decoded by `TableSource` leaves no page of its table resident, its block index
/// included: slice after slice, the tables read cost nothing beside the slices.
#[cfg(target_os = "linux")]
#[test]
fn a_table_source_leaves_no_page_of_its_tables_resident() {
    let rules = Rules::ABAPA;
    let n = 12;
    let reference = common::solve_all(&rules, n);
    let dir = tempfile::tempdir().unwrap();
    write_table_parallel(
        &oware_solver::TableDir::new(dir.path(), &oware_solver::Cancel::new()),
        &rules,
        n,
        IndexKind::Reachable,
        &reference[n as usize],
        &WriteOptions::default(),
        4,
    )
    .unwrap();
    let path = dir.path().join("tier-12.owt").canonicalize().unwrap();
    let source = TableSource::new(dir.path());
    let mut buf = vec![0i8; 1 << 20];
    source.load(n, 1000, &mut buf).unwrap();
    assert!(buf[..] == reference[n as usize][1000..1000 + (1 << 20)]);
    assert_eq!(mapped_rss(&path), 0, "{}", path.display());
    // The map is still there (read again, then released again).
    source.load(n, 0, &mut buf[..5000]).unwrap();
    assert!(buf[..5000] == reference[n as usize][..5000]);
    assert_eq!(mapped_rss(&path), 0);
}

/// Tier 14's synthetic scores written into `dir` with one entry per block (16 bytes of
/// index per score, 71 MB in all), the table's path and the table opened.
#[cfg(target_os = "linux")]
fn one_entry_per_block(
    dir: &std::path::Path,
) -> (Vec<i8>, std::path::PathBuf, oware_db::table::Table) {
    let n = 14;
    let scores = synthetic::synth_tier(n, IndexKind::Reachable);
    let opts = WriteOptions {
        block_entries: 1,
        ..WriteOptions::default()
    };
    let w = oware_db::write::write_table_with(
        dir,
        &Rules::ABAPA,
        n,
        IndexKind::Reachable,
        &scores,
        &opts,
    )
    .unwrap();
    let path = w.path.canonicalize().unwrap();
    let table = oware_db::table::Table::open(&path).unwrap();
    (scores, path, table)
}

/// Releasing a range's entries (`Table::release_entries`, what the parallel decoder of a
/// slice does group by group) drops the pages of their block-index entries with those of
/// their blocks: a slice of a tier being read holds one group's index pages at a time, not a
/// 64th of a byte for every score it has decoded so far.
#[cfg(target_os = "linux")]
#[test]
fn released_entries_take_their_block_index_pages_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let (scores, path, table) = one_entry_per_block(dir.path());
    let size = scores.len();
    let opened = mapped_rss(&path);
    let (first, len) = (size / 4, size / 2);
    let index = len as u64 * 16;
    let mut buf = vec![0i8; len];
    table.read_range(first as u64, &mut buf).unwrap();
    assert!(buf[..] == scores[first..first + len]);
    assert!(
        mapped_rss(&path) >= opened + index,
        "the read maps the index"
    );
    table.release_entries(first as u64, len as u64);
    // What may stay besides the pages mapped at open: at the range's two ends in the blocks
    // and in the index, the pages the kernel mapped with those read (its fault-around, or a
    // large folio of the page cache: up to 2 MiB each).
    let after = mapped_rss(&path);
    assert!(
        after < opened + index / 4,
        "{after} bytes resident, {opened} at open, {index} of index read"
    );
    // Read again, unchanged.
    table.read_range(first as u64, &mut buf).unwrap();
    assert!(buf[..] == scores[first..first + len]);
}

/// A range released after the one before it (`Table::release_entries`, group after group in
/// the parallel decoder) takes back the pages before it that its own reads mapped again: a
/// fault maps the pages around the one it reads (the kernel's fault-around window, or a large
/// folio of the page cache), so the first reads of a range map the end of the range before,
/// released already, whose pages no later release would take. Two ranges decoded and released
/// in turn leave no page of the table resident beyond those mapped at open.
#[cfg(target_os = "linux")]
#[test]
fn a_released_range_takes_back_the_pages_its_reads_mapped_before_it() {
    let dir = tempfile::tempdir().unwrap();
    // Its index pages that a fault maps around the first entry of the second range hold
    // entries of the first.
    let (scores, path, table) = one_entry_per_block(dir.path());
    let size = scores.len();
    let opened = mapped_rss(&path);
    // Bounds off any page or fault-around boundary of the blocks or the index.
    let (a, b, c) = (size / 4 + 1001, size / 2 + 3, 3 * size / 4);
    for (first, end) in [(a, b), (b, c)] {
        let mut buf = vec![0i8; end - first];
        table.read_range(first as u64, &mut buf).unwrap();
        assert!(buf[..] == scores[first..end]);
        table.release_entries(first as u64, (end - first) as u64);
    }
    // The second range's last reads may map pages after it (entries no range here released);
    // a last release of them leaves what was mapped at open, or less.
    table.release_entries(c as u64, (size - c) as u64);
    let after = mapped_rss(&path);
    assert!(
        after <= opened,
        "{after} bytes resident after the releases, {opened} at open"
    );
}
