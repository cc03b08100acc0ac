//! `verify_tier` accepts the solver's scores and catches corrupted ones: a single changed
//! score (named, with the value the recurrence gives), an out-of-range score, and a whole set
//! of endless positions given nonzero values that satisfy the recurrence everywhere but that
//! no finite line forces (reported as unjustified). Reports do not depend on the thread count,
//! nor on the slices the lower tiers are read in, and they are those of a plain fixpoint
//! computed here from the definition of the justification.

mod common;

use std::sync::Arc;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::{Outcome, Position, Rules};
use oware_solver::tier::{
    solve_tier, verify_tier, verify_tier_in_place, LowerTiers, MismatchKind, VerifyLower,
    VerifyPhases, VerifyReport,
};
use oware_solver::NoProgress;

/// Solves tiers `0..=max`: their scores, and the lower tiers of `max` (tiers `0..max`).
fn solve_all(rules: &Rules, max: u8) -> (Vec<Vec<i8>>, LowerTiers) {
    let mut lower = LowerTiers::new();
    let mut out = Vec::new();
    for n in 0..=max {
        let (scores, _) = solve_tier(rules, n, &lower, &NoProgress).expect("tier allocates");
        let v = scores.to_vec();
        if n < max {
            lower.push(Arc::from(v.clone()));
        }
        out.push(v);
    }
    (out, lower)
}

fn presets() -> [Rules; 2] {
    [Rules::ABAPA, Rules::AWARI]
}

#[test]
fn solver_scores_verify_up_to_tier_10() {
    for rules in common::test_rules() {
        let mut lower = LowerTiers::new();
        for n in 0..=10u8 {
            let (scores, stats) =
                solve_tier(&rules, n, &lower, &NoProgress).expect("tier allocates");
            let report = verify_tier(&rules, n, scores.as_slice(), &lower, &NoProgress).unwrap();
            assert!(report.is_ok(), "{rules} tier {n}: {:?}", report.first);
            assert_eq!(report.positions, stats.positions);
            assert_eq!(report.tier, n);
            let nonzero = scores.as_slice().iter().filter(|&&s| s != 0).count() as u64;
            assert_eq!(report.nonzero, nonzero);
            lower.push(Arc::from(scores.to_vec()));
        }
    }
}

/// The positions of tier `n` whose true score is 0 and whose values can be changed
/// consistently: Gauss-Seidel value iteration of the recurrence over the zeros, started from
/// one zero set to −1, the other tiers and the nonzero positions kept. Returns the changed
/// scores if it settles on a nonzero fixpoint.
fn endless_fake(rules: &Rules, n: u8, tiers: &[Vec<i8>], seed: usize) -> Option<Vec<i8>> {
    let idx = TierIndex::new(n, IndexKind::Reachable);
    let s = &tiers[n as usize];
    let zeros: Vec<usize> = (0..s.len()).filter(|&i| s[i] == 0).collect();
    let lookup = |p: &Position| {
        let t = TierIndex::new(p.seeds(), IndexKind::Reachable);
        tiers[p.seeds() as usize][t.rank(p).expect("reachable") as usize]
    };
    // For each zero: best value over exits and nonzero in-tier children, and zero children.
    let mut fixed = Vec::with_capacity(zeros.len());
    let mut kids: Vec<Vec<usize>> = Vec::with_capacity(zeros.len());
    for &i in &zeros {
        let p = idx.unrank(i as u64);
        let moves = p.moves(rules);
        let mut best = if moves.is_empty() {
            i16::from(p.end_score())
        } else {
            i16::MIN
        };
        let mut zk = Vec::new();
        for m in moves.iter() {
            match m.outcome {
                Outcome::Continue { child, captured: 0 } => {
                    let c = idx.rank(&child).expect("same tier") as usize;
                    if s[c] == 0 {
                        zk.push(c);
                    } else {
                        best = best.max(-i16::from(s[c]));
                    }
                }
                o => best = best.max(i16::from(o.value(lookup))),
            }
        }
        fixed.push(best);
        kids.push(zk);
    }
    let mut x = s.clone();
    x[zeros[seed]] = -1;
    for _ in 0..1000 {
        let mut changed = false;
        for (k, &i) in zeros.iter().enumerate() {
            let v = kids[k]
                .iter()
                .map(|&c| -i16::from(x[c]))
                .fold(fixed[k], i16::max);
            let v = v as i8;
            if x[i] != v {
                x[i] = v;
                changed = true;
            }
        }
        if !changed {
            return (x != *s).then_some(x);
        }
    }
    None
}

/// The recurrence at index `i` of tier `n`, computed from `tiers` (independently of
/// `verify_tier`), in `i16`.
fn recurrence(rules: &Rules, tiers: &[Vec<i8>], n: u8, i: u64) -> i16 {
    let p = TierIndex::new(n, IndexKind::Reachable).unrank(i);
    let get = |q: &Position| {
        let t = TierIndex::new(q.seeds(), IndexKind::Reachable);
        i16::from(tiers[q.seeds() as usize][t.rank(q).expect("reachable") as usize])
    };
    let moves = p.moves(rules);
    if moves.is_empty() {
        return i16::from(p.end_score());
    }
    moves
        .iter()
        .map(|m| match m.outcome {
            Outcome::Continue { child, captured } => i16::from(captured) - get(&child),
            Outcome::End { score } => i16::from(score),
        })
        .max()
        .unwrap_or(i16::MIN)
}

/// Whether the report names index `i` with `kind`, or lists 10 failures all before `i`
/// (so that `i` may fail further on) out of more than 10.
fn names(report: &VerifyReport, i: u64, stored: i8, kind: MismatchKind) -> bool {
    let listed = report
        .first
        .iter()
        .any(|m| m.index == i && m.stored == stored && m.kind == kind);
    let crowded = report.first.len() == 10
        && report.mismatches > 10
        && report.first.iter().all(|m| m.index < i);
    listed || crowded
}

#[test]
fn a_changed_score_is_named() {
    let n = 8u8;
    for rules in presets() {
        let (tiers, lower) = solve_all(&rules, n);
        let idx = TierIndex::new(n, IndexKind::Reachable);
        let size = idx.size();
        let mut checked = 0;
        for k in 0..40u64 {
            let i = k * (size - 1) / 39;
            let old = tiers[n as usize][i as usize];
            for delta in [1i8, -1, 2, -2] {
                let new = old + delta;
                if new.unsigned_abs() > n {
                    continue;
                }
                let mut t = tiers.clone();
                t[n as usize][i as usize] = new;
                let expected = recurrence(&rules, &t, n, i);
                let report = verify_tier(&rules, n, &t[n as usize], &lower, &NoProgress).unwrap();
                assert!(!report.is_ok(), "{rules} {}: {old} -> {new}", idx.unrank(i));
                for m in &report.first {
                    assert_eq!(m.position, idx.unrank(m.index));
                    assert_eq!(m.stored, t[n as usize][m.index as usize]);
                }
                if expected != i16::from(new) {
                    // The position is not its own child: its recurrence must fail.
                    assert_eq!(expected, i16::from(old));
                    assert!(
                        names(&report, i, new, MismatchKind::Recurrence { expected }),
                        "{rules} {}: {old} -> {new}: {report:?}",
                        idx.unrank(i)
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked >= 100, "{checked}");
    }
}

#[test]
fn out_of_range_scores_are_named_without_panic() {
    let n = 7u8;
    for rules in presets() {
        let (tiers, lower) = solve_all(&rules, n);
        let size = tiers[n as usize].len() as u64;
        for (k, bad) in [8i8, -8, 48, i8::MIN, i8::MAX].into_iter().enumerate() {
            let i = (k as u64 * 7919 + 13) % size;
            let mut t = tiers.clone();
            t[n as usize][i as usize] = bad;
            let report = verify_tier(&rules, n, &t[n as usize], &lower, &NoProgress).unwrap();
            assert!(names(&report, i, bad, MismatchKind::Bound), "{report:?}");
        }
        // Corrupt lower tiers: nothing overflows; the parents are named.
        let mut t = tiers.clone();
        for v in t[(n - 2) as usize].iter_mut() {
            *v = i8::MIN;
        }
        let mut bad_lower = LowerTiers::new();
        for s in &t[..n as usize] {
            bad_lower.push(Arc::from(s.clone()));
        }
        let report = verify_tier(&rules, n, &t[n as usize], &bad_lower, &NoProgress).unwrap();
        assert!(!report.is_ok());
        for m in &report.first {
            let expected = recurrence(&rules, &t, n, m.index);
            assert_eq!(m.kind, MismatchKind::Recurrence { expected });
            assert!(expected > 48);
        }
    }
}

/// Endless positions (true score 0) given nonzero values that satisfy the recurrence at
/// every position (checked independently by `common::check_tier`): the local check passes
/// and every changed position, and only those, is reported unjustified.
#[test]
fn consistent_fake_values_on_endless_positions_are_unjustified() {
    let mut cases = 0;
    for rules in presets() {
        let (tiers, _) = solve_all(&rules, 4);
        for n in [2u8, 4] {
            let zeros = tiers[n as usize].iter().filter(|&&v| v == 0).count();
            let Some(fake) = (0..zeros).find_map(|seed| endless_fake(&rules, n, &tiers, seed))
            else {
                continue;
            };
            let mut t = tiers.clone();
            t[n as usize] = fake;
            t.truncate(n as usize + 1);
            let refs: Vec<&[i8]> = t.iter().map(|v| v.as_slice()).collect();
            let bad = common::check_tier(&rules, &refs, n);
            assert!(bad.is_empty(), "{rules} tier {n}: {bad:?}");
            let changed: Vec<u64> = (0..t[n as usize].len())
                .filter(|&i| t[n as usize][i] != tiers[n as usize][i])
                .map(|i| i as u64)
                .collect();
            let mut lower = LowerTiers::new();
            for s in &t[..n as usize] {
                lower.push(Arc::from(s.clone()));
            }
            let report = verify_tier(&rules, n, &t[n as usize], &lower, &NoProgress).unwrap();
            assert_eq!(report.mismatches, changed.len() as u64, "{rules} tier {n}");
            let listed: Vec<u64> = report.first.iter().map(|m| m.index).collect();
            assert_eq!(listed, changed[..changed.len().min(10)]);
            for m in &report.first {
                assert_eq!(m.kind, MismatchKind::Unjustified, "{rules} tier {n}");
                assert_ne!(m.stored, 0);
            }
            cases += 1;
        }
    }
    // Tiers 2 and 4 of both presets have such value sets.
    assert_eq!(cases, 4);
}

#[test]
fn reports_do_not_depend_on_thread_count() {
    let n = 10u8;
    let rules = Rules::ABAPA;
    let (tiers, lower) = solve_all(&rules, n);
    let mut t = tiers[n as usize].clone();
    let size = t.len();
    for k in 0..60 {
        let i = (k * 104_729 + 17) % size;
        t[i] = if t[i] > 0 { t[i] - 1 } else { t[i] + 1 };
    }
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        let mut r = pool
            .install(|| verify_tier(&rules, n, &t, &lower, &NoProgress))
            .unwrap();
        r.seconds = 0.0;
        r.phases = VerifyPhases::default();
        r
    };
    let one = run(1);
    assert!(one.mismatches >= 60, "{one:?}");
    assert_eq!(one.first.len(), 10);
    for threads in [2, 3] {
        assert_eq!(run(threads), one, "{threads} threads");
    }
}

/// The failures of tier `n` of `tiers` by the definition (the module doc of `verify`),
/// computed plainly: the local check, then the justification as a fixpoint iterated over
/// the whole tier until nothing changes. Returns the count and the first 10 with their kind.
#[allow(clippy::needless_range_loop)] // indices are positions of the tier
fn reference(rules: &Rules, tiers: &[Vec<i8>], n: u8) -> (u64, Vec<(u64, MismatchKind)>) {
    let idx = TierIndex::new(n, IndexKind::Reachable);
    let s = &tiers[n as usize];
    let size = s.len();
    let mut kids: Vec<Vec<usize>> = Vec::with_capacity(size);
    let mut kind: Vec<Option<MismatchKind>> = Vec::with_capacity(size);
    let mut justified: Vec<bool> = Vec::with_capacity(size);
    for i in 0..size {
        let p = idx.unrank(i as u64);
        let mut exit = i16::MIN;
        if p.moves(rules).is_empty() {
            exit = i16::from(p.end_score());
        }
        let mut k = Vec::new();
        for m in p.moves(rules).iter() {
            match m.outcome {
                Outcome::Continue { child, captured: 0 } => {
                    k.push(idx.rank(&child).expect("reachable") as usize);
                }
                Outcome::Continue { child, captured } => {
                    let t = TierIndex::new(child.seeds(), IndexKind::Reachable);
                    let c = tiers[child.seeds() as usize][t.rank(&child).unwrap() as usize];
                    exit = exit.max(i16::from(captured) - i16::from(c));
                }
                Outcome::End { score } => exit = exit.max(i16::from(score)),
            }
        }
        let v = i16::from(s[i]);
        let best = recurrence(rules, tiers, n, i as u64);
        kind.push(if s[i].unsigned_abs() > n {
            Some(MismatchKind::Bound)
        } else if best != v {
            Some(MismatchKind::Recurrence { expected: best })
        } else {
            None
        });
        justified.push(v == 0 || (v > 0 && exit >= v) || (v < 0 && k.is_empty()));
        kids.push(k);
    }
    loop {
        let mut changed = false;
        for i in 0..size {
            if justified[i] {
                continue;
            }
            let v = i16::from(s[i]);
            let ok = if v > 0 {
                kids[i]
                    .iter()
                    .any(|&c| justified[c] && i16::from(s[c]) == -v)
            } else {
                kids[i]
                    .iter()
                    .all(|&c| justified[c] && i16::from(s[c]) >= -v)
            };
            if ok {
                justified[i] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let failing: Vec<(u64, MismatchKind)> = (0..size)
        .filter_map(|i| match kind[i] {
            Some(k) => Some((i as u64, k)),
            None => (!justified[i]).then_some((i as u64, MismatchKind::Unjustified)),
        })
        .collect();
    let count = failing.len() as u64;
    (count, failing.into_iter().take(10).collect())
}

/// The report's count and first failures, with their kinds.
fn summary(r: &VerifyReport) -> (u64, Vec<(u64, MismatchKind)>) {
    (
        r.mismatches,
        r.first.iter().map(|m| (m.index, m.kind)).collect(),
    )
}

/// Tier `n` of `t` verified with the lower tiers read in slices of `bytes` scores.
fn sliced(rules: &Rules, t: &[Vec<i8>], n: u8, lower: &LowerTiers, bytes: u64) -> VerifyReport {
    let mut scores = t[n as usize].clone();
    let source = VerifyLower::Sliced {
        source: lower,
        slice_bytes: bytes,
    };
    let mut r =
        verify_tier_in_place(rules, n, &mut scores, source, None, &NoProgress).expect("verifies");
    assert_eq!(scores, t[n as usize], "the scores are put back");
    r.seconds = 0.0;
    r.phases = VerifyPhases::default();
    r
}

/// Many scores changed at once, some of them to values that satisfy the local check: the
/// reports (count, first failures, kinds) are those of the plain fixpoint, with the lower
/// tiers held whole or read in slices of one block, of a size that cuts tiers, or in one
/// slice (whose sweep is the last).
#[test]
fn reports_are_those_of_the_plain_fixpoint() {
    let max = 9u8;
    let mut cases = 0;
    let mut unjustified = 0;
    for rules in presets() {
        let (tiers, _) = solve_all(&rules, max);
        for n in 5..=max {
            let mut lower = LowerTiers::new();
            for s in &tiers[..n as usize] {
                lower.push(Arc::from(s.clone()));
            }
            let size = tiers[n as usize].len();
            for (seed, changes) in [(1usize, 1usize), (2, 7), (3, 60), (4, 600)] {
                let mut t = tiers.clone();
                let mut x = (seed as u64)
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    .wrapping_add(u64::from(n));
                for _ in 0..changes {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let i = (x % size as u64) as usize;
                    // Mostly small moves, sometimes the negation (which may keep the local
                    // check and fail only the justification).
                    let old = t[n as usize][i];
                    let new = match x >> 60 {
                        0..=5 => old.saturating_add(1),
                        6..=11 => old.saturating_sub(1),
                        _ => -old,
                    };
                    if new.unsigned_abs() <= n {
                        t[n as usize][i] = new;
                    }
                }
                let expect = reference(&rules, &t, n);
                unjustified += expect
                    .1
                    .iter()
                    .filter(|(_, k)| *k == MismatchKind::Unjustified)
                    .count();
                let whole = verify_tier(&rules, n, &t[n as usize], &lower, &NoProgress).unwrap();
                assert_eq!(summary(&whole), expect, "{rules} tier {n} seed {seed}");
                for bytes in [1, 37 * 1024 + 100, 1 << 30] {
                    let mut r = sliced(&rules, &t, n, &lower, bytes);
                    let mut w = whole.clone();
                    w.seconds = 0.0;
                    w.phases = VerifyPhases::default();
                    r.seconds = 0.0;
                    r.phases = VerifyPhases::default();
                    assert_eq!(r, w, "{rules} tier {n} seed {seed} slices of {bytes}");
                }
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 2 * 5 * 4);
    assert!(unjustified > 0, "no case fails the justification alone");
}

/// The solver's tables of tiers 0..=14 under both presets are accepted, with the lower
/// tiers held whole and read in slices of 3 MiB (which cut tier 14's window).
#[test]
fn solver_scores_verify_up_to_tier_14_whole_and_sliced() {
    let max = 14u8;
    for rules in presets() {
        let (tiers, _) = solve_all(&rules, max);
        let mut lower = LowerTiers::new();
        for (n, s) in tiers.iter().enumerate() {
            let n = n as u8;
            let r = verify_tier(&rules, n, s, &lower, &NoProgress).unwrap();
            assert!(r.is_ok(), "{rules} tier {n}: {:?}", r.first);
            if n >= 12 {
                let r = sliced(&rules, &tiers, n, &lower, 3 << 20);
                assert!(r.is_ok(), "{rules} tier {n} sliced: {:?}", r.first);
            }
            lower.push(Arc::from(s.clone()));
        }
    }
}

/// Tier `n` of `t` verified over `ranks` simulated ranks, each holding its range of the tier
/// and its share of the lower tiers: the tier's counts and its first failing indices.
fn over_ranks(
    rules: &Rules,
    t: &[Vec<i8>],
    n: u8,
    ranks: usize,
    batch: usize,
) -> (u64, u64, Vec<u64>) {
    use oware_solver::distributed::{
        verify_tier_local, Comm, LowerShare, Partition, PartitionConfig, ThreadComm,
    };
    let mut lower = LowerTiers::new();
    for s in &t[..n as usize] {
        lower.push(Arc::from(s.clone()));
    }
    let config = PartitionConfig {
        batch,
        ..PartitionConfig::default()
    };
    let parts = ThreadComm::run(ranks, |c| {
        let share = LowerShare::from_whole(&lower, c.rank(), c.size());
        let part = Partition::of_tier(n, c.size());
        let range = part.range(c.rank());
        let mut mine = part.share_of(c.rank(), &t[n as usize]);
        let v = verify_tier_local(
            c,
            rules,
            n,
            range.start,
            &mut mine,
            &share,
            &config,
            &NoProgress,
        )
        .expect("bits allocate");
        // The scores are put back (clamped out of bounds).
        for (a, b) in mine.iter().zip(&part.share_of(c.rank(), &t[n as usize])) {
            assert_eq!(
                i16::from(*a),
                i16::from(*b).clamp(-i16::from(n) - 1, i16::from(n) + 1)
            );
        }
        v
    });
    let mut first: Vec<u64> = parts.iter().flat_map(|p| p.first.clone()).collect();
    first.sort_unstable();
    first.truncate(10);
    (
        parts.iter().map(|p| p.nonzero).sum(),
        parts.iter().map(|p| p.mismatches).sum(),
        first,
    )
}

/// Over 1 to 5 simulated ranks (exchanges bounded to a few words on some), the verifier
/// finds what one process finds: on the solver's tiers, on changed scores, on scores out of
/// bounds and on consistent fake values on endless positions.
#[test]
fn ranks_give_the_verdicts_of_one_process() {
    let max = 9u8;
    for rules in presets() {
        let (tiers, _) = solve_all(&rules, max);
        for n in 0..=max {
            let mut cases: Vec<Vec<Vec<i8>>> = vec![tiers.clone()];
            if n >= 5 {
                for (seed, changes) in [(2u64, 7usize), (4, 600)] {
                    let mut t = tiers.clone();
                    let size = t[n as usize].len() as u64;
                    let mut x = seed
                        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                        .wrapping_add(u64::from(n));
                    for c in 0..changes {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let i = (x % size) as usize;
                        let old = t[n as usize][i];
                        t[n as usize][i] = match (x >> 60, c) {
                            (_, 0) => n as i8 + 3,
                            (0..=5, _) => old.saturating_add(1),
                            (6..=11, _) => old.saturating_sub(1),
                            _ => -old,
                        };
                    }
                    cases.push(t);
                }
                let zeros = tiers[n as usize].contains(&0);
                if let Some(fake) = zeros.then(|| endless_fake(&rules, n, &tiers, 0)).flatten() {
                    let mut t = tiers.clone();
                    t[n as usize] = fake;
                    cases.push(t);
                }
            }
            for (c, t) in cases.iter().enumerate() {
                let mut lower = LowerTiers::new();
                for s in &t[..n as usize] {
                    lower.push(Arc::from(s.clone()));
                }
                let whole = verify_tier(&rules, n, &t[n as usize], &lower, &NoProgress).unwrap();
                let want = (
                    whole.nonzero,
                    whole.mismatches,
                    whole.first.iter().map(|m| m.index).collect::<Vec<_>>(),
                );
                assert_eq!(want.1 == 0, c == 0, "{rules} tier {n} case {c}");
                for (ranks, batch) in [(1, 1 << 22), (2, 256), (3, 1 << 22), (4, 64), (5, 500)] {
                    let got = over_ranks(&rules, t, n, ranks, batch);
                    assert_eq!(
                        got, want,
                        "{rules} tier {n} case {c}, {ranks} ranks, batch {batch}"
                    );
                }
            }
        }
    }
}
