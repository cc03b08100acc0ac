//! Exhaustive check of [`Position::unmoves`] against a brute-force inversion of
//! [`Position::moves`].
//!
//! For every tier up to [`MAX_TIER`] and every rules value of [`rules_under_test`]: every
//! non-capturing move `p --house--> child` of every position `p` of the tier is recorded under
//! `child`; then `child.unmoves(..)` must report exactly the recorded `(p, house)` pairs, as a
//! multiset (so also without duplicates), for every position of the tier — including the
//! positions that have no parent at all.
//!
//! Run it with `cargo test --release -p oware-db --test unmoves` (a few seconds); in the
//! default test profile (opt-level 1) it takes longer but still passes.

mod common;

use common::rules_under_test;
use oware_db::index::{IndexKind, TierIndex};
use oware_db::{Outcome, Position, Rules};

/// Highest tier checked exhaustively (tier 10 has 352,716 positions).
const MAX_TIER: u8 = 10;

/// The brute-force inversion: `parents[rank(child)]` holds every `(parent, house)` whose legal
/// move leads to `child` in the same tier without capture.
fn brute_force_parents(idx: &TierIndex, rules: &Rules) -> Vec<Vec<(Position, u8)>> {
    let mut parents = vec![Vec::new(); idx.size() as usize];
    for i in 0..idx.size() {
        let p = idx.unrank(i);
        for m in p.moves(rules).iter() {
            if let Outcome::Continue { child, captured: 0 } = m.outcome {
                let r = idx
                    .rank(&child)
                    .unwrap_or_else(|| panic!("{rules}: child {child} of {p} not in tier"));
                parents[r as usize].push((p, m.house));
            }
        }
    }
    for list in &mut parents {
        list.sort_unstable();
    }
    parents
}

fn check_tier(n: u8, rules: &Rules) -> usize {
    let idx = TierIndex::new(n, IndexKind::Dense);
    let expected = brute_force_parents(&idx, rules);
    let mut edges = 0;
    for i in 0..idx.size() {
        let q = idx.unrank(i);
        let mut got = Vec::new();
        q.unmoves(rules, |parent, house| got.push((parent, house)));
        got.sort_unstable();
        let want = &expected[i as usize];
        if got != *want {
            let missing: Vec<_> = want.iter().filter(|e| !got.contains(e)).collect();
            let extra: Vec<_> = got.iter().filter(|e| !want.contains(e)).collect();
            panic!(
                "rules {rules}, tier {n}, position {q}: unmoves gave {} pairs, brute force {}; \
                 missing {missing:?}, extra {extra:?}",
                got.len(),
                want.len()
            );
        }
        edges += got.len();
        check_reachable(&q, rules);
    }
    edges
}

/// `unmoves_reachable` must report the reachable parents of `unmoves`, in the same order.
fn check_reachable(q: &Position, rules: &Rules) {
    let mut want = Vec::new();
    q.unmoves(rules, |p, house| {
        if p.is_reachable() {
            want.push((p, house));
        }
    });
    let mut got = Vec::new();
    q.unmoves_reachable(rules, |p, house| got.push((p, house)));
    assert_eq!(got, want, "rules {rules}, position {q}: unmoves_reachable");
    // By side: the same parents, each flagged exactly when its opponent side is `q`'s mover
    // side; such parents ranked by their mover's half alone get their index.
    let reachable = TierIndex::new(q.seeds(), IndexKind::Reachable);
    let half = reachable.opponent_half(&q.flipped());
    let mut by_side = Vec::new();
    q.unmoves_reachable_by_side(rules, |p, house, same| {
        let opp = |x: &Position| (0..6).map(|h| x.houses()[6 + h]).collect::<Vec<_>>();
        let mine = (0..6).map(|h| q.houses()[h]).collect::<Vec<_>>();
        assert_eq!(
            same,
            opp(&p) == mine,
            "rules {rules}, position {q}, parent {p}"
        );
        if same {
            assert_eq!(
                reachable.rank_beside(&p, &half),
                reachable.rank_unchecked(&p),
                "rules {rules}, parent {p}"
            );
        }
        by_side.push((p, house));
    });
    by_side.sort_unstable();
    want.sort_unstable();
    assert_eq!(
        by_side, want,
        "rules {rules}, position {q}: unmoves_reachable_by_side"
    );
}

#[test]
fn unmoves_invert_non_capturing_moves_exhaustively() {
    for text in rules_under_test() {
        let rules: Rules = text.parse().expect("rules text");
        let mut edges = 0;
        for n in 0..=MAX_TIER {
            edges += check_tier(n, &rules);
        }
        // Guard against a vacuous pass: the inversion must have had something to check.
        assert!(edges > 100_000, "{text}: only {edges} non-capturing moves");
    }
}

#[test]
fn reachable_unmoves_match_at_every_tier() {
    // Random positions of every tier, where sowings go around the board and the general
    // path of `unmoves_reachable` takes over.
    let mut rng = fastrand::Rng::with_seed(7);
    for text in rules_under_test() {
        let rules: Rules = text.parse().expect("rules text");
        for n in 0..=48u8 {
            let idx = TierIndex::new(n, IndexKind::Dense);
            for _ in 0..2_000 {
                check_reachable(&idx.unrank(rng.u64(0..idx.size())), &rules);
            }
        }
    }
}

#[test]
fn a_known_parent_is_found() {
    // 4 4 4 4 4 4 4 4 4 4 4 4, house 0 -> (rotated) 4 4 4 4 4 4 0 5 5 5 5 4.
    let child: Position = "4 4 4 4 4 4 0 5 5 5 5 4".parse().unwrap();
    let mut found = Vec::new();
    child.unmoves(&Rules::ABAPA, |p, h| found.push((p, h)));
    assert!(found.contains(&(Position::START, 0)), "{found:?}");
}
