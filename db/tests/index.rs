//! The tier index is a bijection between the positions it covers and `0..size()`.
//!
//! - Exhaustive for tiers 0..=12 and both kinds: every composition of `n` seeds into 12 houses
//!   is enumerated here independently of the index, and `rank` must be `Some` exactly for the
//!   positions the kind covers, hit every index once, and invert `unrank`.
//! - Random positions of every tier up to 48 (proptest) for both kinds.
//! - A sample of random positions of large tiers gets pairwise distinct ranks.

use std::collections::HashMap;

use oware_db::index::{binomial, IndexKind, TierIndex};
use oware_db::retro::rank_of_child;
use oware_db::Position;
use proptest::prelude::*;

const KINDS: [IndexKind; 2] = [IndexKind::Dense, IndexKind::Reachable];

/// Calls `f` on every position with `n` seeds, by a plain recursion over the houses.
fn for_each_position(n: u8, f: &mut impl FnMut(Position)) {
    fn rec(h: &mut [u8; 12], k: usize, left: u8, f: &mut impl FnMut(Position)) {
        if k == 11 {
            h[11] = left;
            f(Position::new(*h).expect("at most 48 seeds"));
            return;
        }
        for v in 0..=left {
            h[k] = v;
            rec(h, k + 1, left - v, f);
        }
    }
    rec(&mut [0; 12], 0, n, f);
}

/// Independent definition of the positions a kind covers.
fn covered(kind: IndexKind, p: &Position) -> bool {
    match kind {
        IndexKind::Dense => true,
        IndexKind::Reachable => p.houses()[6..].contains(&0),
    }
}

#[test]
fn exhaustive_round_trip_tiers_0_to_12() {
    for kind in KINDS {
        for n in 0..=12u8 {
            let idx = TierIndex::new(n, kind);
            let size = idx.size();
            let dense = binomial(n as usize + 11, 11);
            let expected_size = match kind {
                IndexKind::Dense => dense,
                IndexKind::Reachable if n >= 6 => dense - binomial(n as usize + 5, 11),
                IndexKind::Reachable => dense,
            };
            assert_eq!(size, expected_size, "{kind:?} tier {n}: size");

            // unrank then rank
            for i in 0..size {
                let p = idx.unrank(i);
                assert_eq!(p.seeds(), n, "{kind:?} tier {n}: unrank({i}) = {p}");
                assert!(covered(kind, &p), "{kind:?} tier {n}: unrank({i}) = {p}");
                assert_eq!(kind.holds(&p), covered(kind, &p));
                assert_eq!(
                    idx.rank(&p),
                    Some(i),
                    "{kind:?} tier {n}: rank(unrank({i}))"
                );
                assert_eq!(idx.rank_unchecked(&p), i);
                assert_eq!(rank_of_child(&idx, &p), i);
            }

            // rank then unrank, over an independent enumeration of the tier
            let mut seen = vec![false; size as usize];
            let mut count = 0u64;
            for_each_position(n, &mut |p| match idx.rank(&p) {
                Some(r) => {
                    assert!(
                        covered(kind, &p),
                        "{kind:?} tier {n}: {p} ranked but not covered"
                    );
                    assert!(r < size, "{kind:?} tier {n}: rank({p}) = {r} >= {size}");
                    assert!(!seen[r as usize], "{kind:?} tier {n}: rank {r} twice");
                    seen[r as usize] = true;
                    assert_eq!(idx.unrank(r), p, "{kind:?} tier {n}: unrank(rank({p}))");
                    count += 1;
                }
                None => assert!(!covered(kind, &p), "{kind:?} tier {n}: {p} not ranked"),
            });
            assert_eq!(count, size, "{kind:?} tier {n}: ranked positions");

            // positions of the neighbouring tiers are refused
            for other in [n.wrapping_sub(1), n + 1] {
                if other > 12 {
                    continue;
                }
                let o = TierIndex::new(other, IndexKind::Dense);
                for i in (0..o.size()).step_by(97) {
                    let p = o.unrank(i);
                    assert_eq!(idx.rank(&p), None, "{kind:?} tier {n}: ranked {p}");
                }
            }
        }
    }
}

#[test]
fn unreachable_positions_are_refused_by_reachable() {
    let idx = TierIndex::new(48, IndexKind::Reachable);
    assert_eq!(idx.rank(&Position::START), None);
    assert!(TierIndex::new(48, IndexKind::Dense)
        .rank(&Position::START)
        .is_some());
    let p: Position = "0 0 0 0 0 0 1 1 1 1 1 1".parse().unwrap();
    assert_eq!(TierIndex::new(6, IndexKind::Reachable).rank(&p), None);
    assert_eq!(TierIndex::new(6, IndexKind::Reachable).size(), 12_376 - 1);
}

/// Tier 3 of the dense index holds C(14, 3) = 364 positions, indices 0..364.
#[test]
#[should_panic(expected = "index 364 out of tier 3")]
fn unrank_out_of_range_panics() {
    let idx = TierIndex::new(3, IndexKind::Dense);
    idx.unrank(idx.size());
}

/// A random position with at most 48 seeds: each of up to 48 seeds is dropped into a random
/// house.
fn any_position() -> impl Strategy<Value = Position> {
    prop::collection::vec(0usize..12, 0..=48).prop_map(|seeds| {
        let mut h = [0u8; 12];
        for s in seeds {
            h[s] += 1;
        }
        Position::new(h).expect("at most 48 seeds")
    })
}

/// A random position whose opponent side (houses 6..12) has no empty house, with at most
/// 48 seeds.
fn full_opponent_position() -> impl Strategy<Value = Position> {
    any_position().prop_map(|p| {
        let mut h = p.houses();
        // Make room: remove seeds from the fullest houses until 6 can be added.
        while h.iter().map(|&x| u32::from(x)).sum::<u32>() > 42 {
            let k = (0..12).max_by_key(|&k| h[k]).expect("12 houses");
            h[k] -= 1;
        }
        for x in &mut h[6..] {
            *x += 1;
        }
        Position::new(h).expect("at most 48 seeds")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn random_positions_round_trip(p in any_position()) {
        for kind in KINDS {
            let idx = TierIndex::new(p.seeds(), kind);
            match idx.rank(&p) {
                Some(r) => {
                    prop_assert!(covered(kind, &p));
                    prop_assert!(r < idx.size());
                    prop_assert_eq!(idx.unrank(r), p);
                }
                None => prop_assert!(!covered(kind, &p), "{:?} refused {}", kind, p),
            }
            if p.seeds() < 48 {
                prop_assert_eq!(TierIndex::new(p.seeds() + 1, kind).rank(&p), None);
            }
        }
    }

    #[test]
    fn random_indices_round_trip(n in 0u8..=48, frac in 0.0f64..1.0) {
        for kind in KINDS {
            let idx = TierIndex::new(n, kind);
            let i = ((idx.size() as f64 * frac) as u64).min(idx.size() - 1);
            for j in [i, 0, idx.size() - 1] {
                let p = idx.unrank(j);
                prop_assert_eq!(p.seeds(), n);
                prop_assert!(covered(kind, &p));
                prop_assert_eq!(idx.rank(&p), Some(j));
            }
        }
    }

    #[test]
    fn reachable_refuses_full_opponent_sides(p in full_opponent_position()) {
        prop_assert_eq!(TierIndex::new(p.seeds(), IndexKind::Reachable).rank(&p), None);
        prop_assert!(TierIndex::new(p.seeds(), IndexKind::Dense).rank(&p).is_some());
    }
}

/// A small deterministic generator (SplitMix64), so the sample is the same on every run.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[test]
fn distinct_positions_have_distinct_ranks_on_a_sample() {
    let mut rng = SplitMix(0x0a4e_2024);
    for n in [13u8, 20, 30, 40, 47, 48] {
        for kind in KINDS {
            let idx = TierIndex::new(n, kind);
            let mut by_rank: HashMap<u64, Position> = HashMap::new();
            let mut tries = 0;
            while by_rank.len() < 20_000 && tries < 100_000 {
                tries += 1;
                let mut h = [0u8; 12];
                for _ in 0..n {
                    h[(rng.next() % 12) as usize] += 1;
                }
                let p = Position::new(h).expect("at most 48 seeds");
                let Some(r) = idx.rank(&p) else {
                    assert!(!covered(kind, &p));
                    continue;
                };
                assert!(r < idx.size());
                if let Some(q) = by_rank.insert(r, p) {
                    assert_eq!(q, p, "{kind:?} tier {n}: {p} and {q} share rank {r}");
                }
            }
            assert!(by_rank.len() > 1_000, "{kind:?} tier {n}: sample too small");
        }
    }
}
