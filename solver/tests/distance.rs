//! Distances to conversion ([`tier_distances`]) agree with an independent brute force on
//! every position of tiers 0..=10 under both presets and every rule option.
//!
//! The brute force shares nothing with the distance pass but the move generator and the
//! index (no un-moves, no counts): it computes by plain sweeps the sets
//! `W_r = {p : distance(p) <= r}` (a favoured position with a keeping exit, or with a
//! keeping move to a position of `W_{r-1}`; a disfavoured one whose keeping moves that stay
//! in the tier all lead into `W_{r-1}`; a position without moves in `W_0`) until they stop
//! growing, and takes each position's distance as the least `r` with `p` in `W_r`.

mod common;

use std::sync::Arc;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::{Outcome, Position, Rules};
use oware_solver::tier::{
    check_distances, check_distances_sliced, check_distances_sliced_windowed,
    check_distances_windowed, solve_tier_sliced, solve_tier_tuned, tier_distances, DistanceError,
    DistanceSource, LowerTiers, Spill, TierScores, Tuning, NO_DISTANCE, WINDOW_ALIGN,
};
use oware_solver::NoProgress;

fn score(tiers: &[Vec<i8>], p: &Position) -> i8 {
    let idx = TierIndex::new(p.seeds(), IndexKind::Reachable);
    tiers[p.seeds() as usize][idx.rank(p).expect("a child is reachable") as usize]
}

/// The distances of tier `n` by the brute force, from the scores of tiers `0..=n`.
fn brute_distances(rules: &Rules, n: u8, tiers: &[Vec<i8>]) -> Vec<u16> {
    const NONE: u16 = u16::MAX;
    let idx = TierIndex::new(n, IndexKind::Reachable);
    let size = idx.size() as usize;
    let scores = &tiers[n as usize];
    // Per position: whether the game is over, a keeping exit, the keeping in-tier children.
    let mut over = vec![false; size];
    let mut exit = vec![false; size];
    let mut inside: Vec<Vec<usize>> = vec![Vec::new(); size];
    for i in 0..size {
        let s = scores[i];
        if s == 0 {
            continue;
        }
        let p = idx.unrank(i as u64);
        let moves = p.moves(rules);
        over[i] = moves.is_empty();
        for m in moves.iter() {
            if m.outcome.value(|c| score(tiers, c)) != s {
                continue;
            }
            match m.outcome {
                Outcome::Continue { child, captured: 0 } => {
                    inside[i].push(idx.rank(&child).unwrap() as usize)
                }
                _ => exit[i] = true,
            }
        }
    }
    let mut d = vec![NONE; size];
    for i in 0..size {
        if scores[i] != 0 && over[i] {
            d[i] = 0;
        }
    }
    for r in 1u16.. {
        let prev = d.clone();
        let mut grew = false;
        for i in 0..size {
            let s = scores[i];
            if s == 0 || prev[i] != NONE {
                continue;
            }
            let known = |c: &usize| prev[*c] != NONE;
            let now = if s > 0 {
                exit[i] || inside[i].iter().any(known)
            } else {
                inside[i].iter().all(known)
            };
            if now {
                d[i] = r;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    d
}

/// The solver's scores of tiers `0..=top`, and tiers `0..top` as the lower tiers of `top`.
fn solved_below(rules: &Rules, top: u8) -> (Vec<Vec<i8>>, LowerTiers) {
    let tiers = common::solve_all(rules, top);
    let mut lower = LowerTiers::new();
    for scores in &tiers[..top as usize] {
        lower.push(Arc::from(scores.clone()));
    }
    (tiers, lower)
}

#[test]
fn distances_match_the_brute_force_up_to_tier_10() {
    let max = 10;
    for rules in common::test_rules() {
        let tiers = common::brute_all(&rules, max);
        let mut lower = LowerTiers::new();
        for n in 0..=max {
            let got = tier_distances(&rules, n, &tiers[n as usize], &lower)
                .unwrap_or_else(|e| panic!("{rules} tier {n}: {e}"));
            // The brute force's distances as the pass stores them: one byte each.
            let want: Vec<u8> = brute_distances(&rules, n, &tiers)
                .into_iter()
                .map(|d| {
                    if d == u16::MAX {
                        NO_DISTANCE
                    } else {
                        u8::try_from(d).unwrap()
                    }
                })
                .collect();
            let idx = TierIndex::new(n, IndexKind::Reachable);
            let diffs: Vec<String> = (0..want.len())
                .filter(|&i| got[i] != want[i])
                .take(5)
                .map(|i| {
                    format!(
                        "{} (score {}): brute {} pass {}",
                        idx.unrank(i as u64),
                        tiers[n as usize][i],
                        want[i],
                        got[i]
                    )
                })
                .collect();
            assert!(diffs.is_empty(), "{rules} tier {n}: {diffs:?}");
            // Every nonzero score has a distance; every zero has none.
            for (i, &s) in tiers[n as usize].iter().enumerate() {
                assert_eq!(s == 0, got[i] == NO_DISTANCE, "{rules} tier {n} index {i}");
            }
            // The check of verify --deep passes them.
            check_distances(&rules, n, &tiers[n as usize], &lower, &got)
                .unwrap_or_else(|e| panic!("{rules} tier {n}: {e}"));
            lower.push(Arc::from(tiers[n as usize].clone()));
        }
    }
}

/// The check of the distances finds every kind of damage: a distance one more or one less,
/// a missing one, one beside a score of 0; each at the position changed or at a parent
/// whose equation reads it.
#[test]
fn the_check_of_distances_finds_each_wrong_one() {
    let rules = Rules::ABAPA;
    let n = 12;
    let (tiers, lower) = solved_below(&rules, n);
    let scores = &tiers[n as usize];
    let good = tier_distances(&rules, n, scores, &lower).unwrap();
    assert_eq!(check_distances(&rules, n, scores, &lower, &good), Ok(()));
    assert!(matches!(
        check_distances(&rules, n, scores, &lower, &good[1..]),
        Err(DistanceError::Length { .. })
    ));
    let idx = TierIndex::new(n, IndexKind::Reachable);
    let far = (0..good.len())
        .find(|&i| good[i] > 3 && good[i] != NO_DISTANCE)
        .unwrap();
    let zero = (0..good.len()).find(|&i| scores[i] == 0).unwrap();
    for (i, v) in [
        (far, good[far] + 1),
        (far, good[far] - 1),
        (far, NO_DISTANCE),
        (zero, 5),
    ] {
        let mut bad = good.clone();
        bad[i] = v;
        let e = check_distances(&rules, n, scores, &lower, &bad).unwrap_err();
        let DistanceError::Wrong { index, .. } = e else {
            panic!("{e}");
        };
        let named = idx.unrank(index);
        let reads = index == i as u64
            || named.moves(&rules).iter().any(|m| match m.outcome {
                Outcome::Continue { child, captured: 0 } => idx.rank(&child) == Some(i as u64),
                _ => false,
            });
        assert!(reads, "index {i} set to {v}: {e}");
        assert!(!e.to_string().contains('\n'));
    }
}

/// The same distances on one thread and on three.
#[test]
fn distances_do_not_depend_on_thread_count() {
    let rules = Rules::ABAPA;
    let (tiers, lower) = solved_below(&rules, 13);
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| tier_distances(&rules, 13, &tiers[13], &lower).unwrap())
    };
    assert!(run(1) == run(3));
}

/// Scores of the wrong length, and a nonzero score given to a position of endless play,
/// are errors.
#[test]
fn wrong_scores_are_errors() {
    let rules = Rules::ABAPA;
    let (tiers, lower) = solved_below(&rules, 12);
    assert!(matches!(
        tier_distances(&rules, 12, &tiers[12][1..], &lower),
        Err(DistanceError::Length { tier: 12, .. })
    ));
    // A position of endless play without exits, none of whose children scores −1, given
    // the score +1: no play keeping the scores leaves the tier from it.
    let mut wrong = tiers[12].clone();
    let idx = TierIndex::new(12, IndexKind::Reachable);
    let i = (0..wrong.len())
        .find(|&i| {
            wrong[i] == 0 && {
                let p = idx.unrank(i as u64);
                p.moves(&rules).iter().all(|m| match m.outcome {
                    Outcome::Continue { captured: 0, child } => score(&tiers, &child) != -1,
                    _ => false,
                })
            }
        })
        .expect("an endless position without exits");
    wrong[i] = 1;
    // It, or a parent that keeps its score through it, is named.
    let e = tier_distances(&rules, 12, &wrong, &lower).unwrap_err();
    assert!(
        matches!(e, DistanceError::Unreached { tier: 12, index, .. } if index <= i as u64),
        "{e}"
    );
    assert!(!e.to_string().contains('\n'));
}

/// The worked example of docs/RULES.md (*The distance to conversion*).
#[test]
fn the_worked_example_of_the_rules() {
    let rules = Rules::ABAPA;
    let (tiers, lower) = solved_below(&rules, 12);
    let d = tier_distances(&rules, 12, &tiers[12], &lower).unwrap();
    let idx = TierIndex::new(12, IndexKind::Reachable);
    for (houses, s, dist) in [
        ([0, 0, 0, 0, 0, 1, 0, 1, 1, 8, 1, 0], 2, 3),
        ([1, 1, 1, 8, 1, 0, 0, 0, 0, 0, 0, 0], -2, 2),
        ([1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2, 1], 2, 1),
    ] {
        let p = Position::new(houses).unwrap();
        let i = idx.rank(&p).unwrap() as usize;
        assert_eq!((tiers[12][i], d[i]), (s, dist), "{p}");
    }
    // Houses 0 and 4 of the last position keep +2 too, to positions at distance 26.
    let p = Position::new([1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2, 1]).unwrap();
    for m in p.moves(&rules).iter().filter(|m| [0, 4].contains(&m.house)) {
        let Outcome::Continue { child, captured: 0 } = m.outcome else {
            panic!("house {} leaves the tier", m.house);
        };
        let c = idx.rank(&child).unwrap() as usize;
        assert_eq!((tiers[12][c], d[c]), (-2, 26), "house {}", m.house);
    }
}

/// Solves tier `n` with its distances decided in rounds ([`Tuning::distances`]), with
/// `tuning`, on `threads` threads: the scores and the distances.
fn solved_in_rounds(
    rules: &Rules,
    n: u8,
    lower: &LowerTiers,
    tuning: Tuning,
    threads: usize,
) -> (Vec<i8>, Vec<u8>) {
    let tuning = Tuning {
        distances: true,
        ..tuning
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| {
            let (s, _) = solve_tier_tuned(rules, n, lower, &NoProgress, tuning).unwrap();
            let d = s
                .distances()
                .unwrap()
                .expect("distances asked for")
                .to_vec();
            (s.to_vec(), d)
        })
}

/// The distances the solver decides in rounds are those of the separate pass, byte for
/// byte, and its scores those of the solver without them, under every rule option up to
/// tier 10 (where the separate pass agrees with the brute force, above) and both presets
/// up to tier 14; with the default tuning and with carried lists and stacks of one
/// position (so that most rounds go through the frontier bits), on 1, 2 and 4 threads.
#[test]
fn distances_decided_in_rounds_are_those_of_the_separate_pass() {
    let tiny = Tuning {
        stack: 1,
        budget: 1,
        ..Tuning::default()
    };
    for rules in common::test_rules() {
        let top = if rules == Rules::ABAPA || rules == Rules::AWARI {
            14
        } else {
            10
        };
        let (tiers, _) = solved_below(&rules, top);
        let mut lower = LowerTiers::new();
        for n in 0..=top {
            let scores = &tiers[n as usize];
            let want = tier_distances(&rules, n, scores, &lower).unwrap();
            let runs: &[(Tuning, usize)] = if n == top || n == 9 {
                &[
                    (Tuning::default(), 1),
                    (Tuning::default(), 2),
                    (tiny, 1),
                    (tiny, 4),
                ]
            } else {
                &[(Tuning::default(), 2)]
            };
            for &(tuning, threads) in runs {
                let (s, d) = solved_in_rounds(&rules, n, &lower, tuning, threads);
                assert!(&s == scores, "{rules} tier {n}: scores differ");
                let first = (0..d.len()).find(|&i| d[i] != want[i]);
                assert_eq!(
                    first.map(|i| (i, d[i], want[i])),
                    None,
                    "{rules} tier {n} {tuning:?} {threads} threads: (index, rounds, pass)"
                );
            }
            lower.push(Arc::from(scores.clone()));
        }
    }
}

/// A tier whose lower tiers are read in slices gets the distances of the resident path.
#[test]
fn distances_of_a_sliced_tier_are_those_of_the_resident_path() {
    let rules = Rules::AWARI;
    let n = 15;
    let (tiers, lower) = solved_below(&rules, n);
    let resident = solved_in_rounds(&rules, n, &lower, Tuning::default(), 2);
    let tuning = Tuning {
        distances: true,
        ..Tuning::default()
    };
    let (s, stats) = solve_tier_sliced(&rules, n, &lower, 1 << 18, &NoProgress, tuning).unwrap();
    assert!(stats.exit_sweeps > 2, "{} sweeps", stats.exit_sweeps);
    assert!(s.as_slice() == &tiers[n as usize][..]);
    assert!(s.distances().unwrap().unwrap() == &resident.1[..]);
}

/// The distances of `s`, read back from their windows when they were kept out of core.
fn spilled(s: &TierScores) -> Vec<u8> {
    let spilled = s.spilled().expect("kept out of core");
    let mut all = Vec::new();
    let mut buf = Vec::new();
    for (w, range) in spilled.windows().enumerate() {
        assert_eq!(
            range.start,
            all.len() as u64,
            "window {w} starts where the last ended"
        );
        spilled.read(w, &mut buf).unwrap();
        all.extend_from_slice(&buf);
    }
    all
}

/// Distances kept out of core, one run of the propagation per window of the tier, are those
/// held whole, byte for byte, with the same scores: under both presets and an option, at
/// tier 12 (21 windows), resident and sliced, with the default tuning and tiny stacks, on 1 and 2
/// threads; the scratch files go with the scores.
#[test]
fn distances_kept_out_of_core_are_those_held_whole() {
    let scratch = tempfile::tempdir().unwrap();
    let tiny = Tuning {
        stack: 1,
        budget: 1,
        ..Tuning::default()
    };
    let rules_all = [
        Rules::ABAPA,
        Rules::AWARI,
        "abapa+grand-slam=illegal".parse().unwrap(),
    ];
    for rules in rules_all {
        let top = 12;
        let (tiers, _) = solved_below(&rules, top);
        let mut lower = LowerTiers::new();
        for n in 0..=top {
            let scores = &tiers[n as usize];
            if n == top {
                let (_, whole) = solved_in_rounds(&rules, n, &lower, Tuning::default(), 2);
                let runs = [(Tuning::default(), 1), (tiny, 2)];
                for (base, threads) in runs {
                    let tuning = Tuning {
                        distances: true,
                        spill: Some(Spill {
                            dir: scratch.path(),
                            window: WINDOW_ALIGN + 5,
                        }),
                        ..base
                    };
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    let (s, stats) = pool
                        .install(|| solve_tier_tuned(&rules, n, &lower, &NoProgress, tuning))
                        .unwrap();
                    let windows = scores.len().div_ceil(WINDOW_ALIGN as usize) as u64;
                    assert!(windows > 1);
                    assert_eq!(stats.distance_runs, windows, "{rules} tier {n}");
                    assert_eq!(s.distances().unwrap(), None);
                    assert!(
                        s.as_slice() == &scores[..],
                        "{rules} tier {n}: scores differ"
                    );
                    let d = spilled(&s);
                    let first = (0..d.len()).find(|&i| d[i] != whole[i]);
                    assert_eq!(
                        first.map(|i| (i, d[i], whole[i])),
                        None,
                        "{rules} tier {n} {base:?} {threads} threads: (index, spilled, whole)"
                    );
                    let max = whole.iter().filter(|&&d| d != NO_DISTANCE).max();
                    assert_eq!(s.spilled().unwrap().max(), *max.unwrap_or(&0));
                    if n == top {
                        let (s, _) =
                            solve_tier_sliced(&rules, n, &lower, 1 << 16, &NoProgress, tuning)
                                .unwrap();
                        assert!(s.as_slice() == &scores[..], "{rules} tier {n} sliced");
                        assert!(spilled(&s) == whole, "{rules} tier {n} sliced");
                    }
                    drop(s);
                    let left = std::fs::read_dir(scratch.path()).unwrap().count();
                    assert_eq!(left, 0, "scratch files left behind");
                }
            }
            lower.push(Arc::from(scores.clone()));
        }
    }
}

/// A tier no larger than the window is decided in one run, in memory.
#[test]
fn a_tier_within_the_window_is_held_whole() {
    let scratch = tempfile::tempdir().unwrap();
    let rules = Rules::ABAPA;
    let (tiers, lower) = solved_below(&rules, 9);
    let tuning = Tuning {
        distances: true,
        spill: Some(Spill {
            dir: scratch.path(),
            window: (tiers[9].len() as u64).next_multiple_of(WINDOW_ALIGN),
        }),
        ..Tuning::default()
    };
    let (s, stats) = solve_tier_tuned(&rules, 9, &lower, &NoProgress, tuning).unwrap();
    assert!(s.spilled().is_none());
    assert_eq!(stats.distance_runs, 1);
    let (_, whole) = solved_in_rounds(&rules, 9, &lower, Tuning::default(), 2);
    assert!(s.distances().unwrap().unwrap() == &whole[..]);
}

/// The check of a tier whose lower tiers are read in slices, or whose distances are read in
/// windows, gives the verdicts of the check over the lower tiers held whole: on the true distances, and on each kind of damage
/// (one more, one less, none, one beside a score of 0), under both presets, for slices of
/// a tenth and a third of the lower tiers the captures reach.
#[test]
fn the_sliced_check_of_distances_gives_the_whole_checks_verdicts() {
    for rules in [Rules::ABAPA, Rules::AWARI] {
        let n = 13;
        let (tiers, lower) = solved_below(&rules, n);
        let scores = &tiers[n as usize];
        let good = tier_distances(&rules, n, scores, &lower).unwrap();
        let far = (0..good.len())
            .filter(|&i| good[i] > 3 && good[i] != NO_DISTANCE)
            .nth(100)
            .unwrap();
        let favoured_one = (0..good.len())
            .find(|&i| good[i] == 1 && scores[i] > 0)
            .unwrap();
        let zero = (0..good.len()).find(|&i| scores[i] == 0).unwrap();
        let mut cases = vec![good.clone()];
        for (i, v) in [
            (far, good[far] + 1),
            (far, good[far] - 1),
            (far, NO_DISTANCE),
            (zero, 5),
            (favoured_one, 2),
        ] {
            let mut bad = good.clone();
            bad[i] = v;
            cases.push(bad);
        }
        for (c, dist) in cases.iter().enumerate() {
            let whole = check_distances(&rules, n, scores, &lower, dist);
            assert_eq!(whole.is_ok(), c == 0, "{rules} case {c}: {whole:?}");
            let window = oware_solver::memory::window_bytes(&rules, n);
            for bytes in [window / 10, window / 3] {
                let sliced = check_distances_sliced(&rules, n, scores, &lower, bytes, dist);
                assert_eq!(sliced, whole, "{rules} case {c}, slices of {bytes} bytes");
            }
            // Read in windows of positions: a seventh of the tier, a half, all of it.
            let source = Held(dist);
            for w in [dist.len() / 7 + 3, dist.len() / 2, dist.len()] {
                let w = w as u64;
                let windowed = check_distances_windowed(&rules, n, scores, &lower, &source, w);
                assert_eq!(windowed, whole, "{rules} case {c}, windows of {w}");
                let both = check_distances_sliced_windowed(
                    &rules,
                    n,
                    scores,
                    &lower,
                    window / 3,
                    &source,
                    w,
                );
                assert_eq!(both, whole, "{rules} case {c}, slices and windows of {w}");
            }
        }
    }
}

/// Distances held in memory, read a window at a time.
struct Held<'a>(&'a [u8]);

impl DistanceSource for Held<'_> {
    fn read(&self, range: std::ops::Range<u64>, out: &mut Vec<u8>) -> Result<(), DistanceError> {
        out.clear();
        out.extend_from_slice(&self.0[range.start as usize..range.end as usize]);
        Ok(())
    }
}

/// A source that fails is an error, not a panic.
#[test]
fn a_window_that_cannot_be_read_is_an_error() {
    struct Broken;
    impl DistanceSource for Broken {
        fn read(&self, _: std::ops::Range<u64>, _: &mut Vec<u8>) -> Result<(), DistanceError> {
            Err(DistanceError::Read {
                tier: 9,
                error: "no".into(),
            })
        }
    }
    let rules = Rules::ABAPA;
    let (tiers, lower) = solved_below(&rules, 9);
    let e = check_distances_windowed(&rules, 9, &tiers[9], &lower, &Broken, 1000);
    assert!(matches!(e, Err(DistanceError::Read { .. })), "{e:?}");
}
