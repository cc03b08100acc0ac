//! [`ExitMoves`] against [`Position::for_each_move`]: the same moves that leave the tier, in
//! the same order, and the count of those that stay, under every rules value of
//! [`rules_under_test`]: for every position of the tiers up to 9 in index order (the order
//! a solver visits them in, where consecutive positions share the mover's side), and for
//! random positions of every tier in random order; and under `eradicate` with every
//! grand-slam option.

mod common;

use common::rules_under_test;
use oware_db::index::{IndexKind, TierIndex};
use oware_db::retro::ExitMoves;
use oware_db::{Move, Outcome, Position, Rules};

/// What `for_each_move` says: the moves that leave the tier, and the count of the others
/// (`None` without any legal move).
fn expected(p: &Position, rules: &Rules) -> (Vec<Move>, Option<u8>) {
    let mut exits = Vec::new();
    let mut open = 0u8;
    let any = p.for_each_move(rules, |m| match m.outcome {
        Outcome::Continue { captured: 0, .. } => open += 1,
        _ => exits.push(*m),
    });
    (exits, any.then_some(open))
}

/// Checks one position; returns how many moves leave the tier.
fn check(finder: &mut ExitMoves, p: &Position, rules: &Rules) -> usize {
    let mut exits = Vec::new();
    let open = finder.for_each(p, |m| exits.push(*m));
    let want = expected(p, rules);
    assert_eq!((exits, open), want, "rules {rules}, position {p}");
    want.0.len()
}

#[test]
fn exits_match_the_move_generator() {
    let mut rng = fastrand::Rng::with_seed(11);
    // `eradicate` beside every grand-slam option too: ExitMoves holds back the moves that
    // take every seed of the opponent, whose legality depends on the other moves.
    let eradicate = oware_db::rules::GrandSlam::NAMES
        .iter()
        .map(|name| format!("awari+grand-slam={name}"));
    for text in rules_under_test().into_iter().chain(eradicate) {
        let rules: Rules = text.parse().expect("rules text");
        let mut finder = ExitMoves::new(&rules);
        let mut exits = 0;
        for n in 0..=9u8 {
            let idx = TierIndex::new(n, IndexKind::Dense);
            for i in 0..idx.size() {
                exits += check(&mut finder, &idx.unrank(i), &rules);
            }
        }
        for _ in 0..100_000 {
            let idx = TierIndex::new(rng.u8(0..=48), IndexKind::Dense);
            exits += check(&mut finder, &idx.unrank(rng.u64(0..idx.size())), &rules);
        }
        // Guard against a vacuous pass: captures and ends must have been compared.
        assert!(
            exits > 10_000,
            "{text}: only {exits} moves that leave the tier"
        );
    }
}
