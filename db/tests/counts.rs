//! The number of positions of Romein and Bal's database, 889,063,398,406, from the tier sizes
//! of the reachable index: every tier except 47, plus the start position.

use oware_db::index::{tier_size, IndexKind};
use oware_db::{Outcome, Position, Rules};

/// A random position of `n` seeds (a uniform composition of `n` into 12 houses).
fn random_position(rng: &mut fastrand::Rng, n: u8) -> Position {
    // Stars and bars: 11 bars among n + 11 slots.
    let mut bars: Vec<usize> = Vec::with_capacity(11);
    while bars.len() < 11 {
        let b = rng.usize(..n as usize + 11);
        if !bars.contains(&b) {
            bars.push(b);
        }
    }
    bars.sort_unstable();
    let mut houses = [0u8; 12];
    let mut prev = 0usize;
    for (h, &b) in bars.iter().enumerate() {
        houses[h] = (b - prev) as u8;
        prev = b + 1;
    }
    houses[11] = (n as usize + 11 - prev) as u8;
    Position::new(houses).expect("12 counts of at most 48 seeds")
}

/// The smallest non-zero capture of `samples` random positions of `n` seeds.
fn smallest_capture(rules: &Rules, n: u8, samples: usize) -> Option<u8> {
    let mut rng = fastrand::Rng::with_seed(u64::from(n) * 7919 + 47);
    let mut least = None::<u8>;
    for _ in 0..samples {
        let p = random_position(&mut rng, n);
        assert_eq!(p.seeds(), n);
        for m in p.moves(rules).iter() {
            if let Outcome::Continue { captured, .. } = m.outcome {
                if captured > 0 {
                    least = Some(least.map_or(captured, |l| l.min(captured)));
                }
            }
        }
    }
    least
}

#[test]
fn romein_bal_count_is_every_tier_but_47_and_the_start() {
    let reachable = |n: u8| tier_size(n, IndexKind::Reachable);
    let all: u64 = (0..=48).map(reachable).sum();
    assert_eq!(all, 1_056_351_956_205);
    // The start position has no empty house on either side, so the reachable index does not
    // hold it; it is counted on its own.
    let start: Position = "4 4 4 4 4 4 4 4 4 4 4 4".parse().unwrap();
    assert!(!start.is_reachable());
    let counted = all - reachable(47) + 1;
    assert_eq!(reachable(47), 167_288_557_800);
    assert_eq!(counted, 889_063_398_406);
}

#[test]
fn no_capture_from_48_seeds_leaves_47() {
    // Under captures of 2 or 3 (both presets), a capture takes at least 2 seeds, so the first
    // capture of the game leaves at most 46 and no game reaches tier 47.
    for rules in [Rules::ABAPA, Rules::AWARI] {
        let least = smallest_capture(&rules, 48, 20_000);
        assert!(least.is_some_and(|c| c >= 2), "{rules}: {least:?}");
    }
    // With single seeds capturable, one seed can be taken: the check sees the difference.
    let ones: Rules = "abapa+capture=1,2,3".parse().unwrap();
    assert_eq!(smallest_capture(&ones, 48, 20_000), Some(1));
}
