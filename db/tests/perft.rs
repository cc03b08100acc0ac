//! Perft: the number of leaves of the game tree from the start position, depth by depth.
//!
//! A leaf is a node at the given depth, or a node where the game ended earlier (no legal
//! move, or a move whose outcome is [`Outcome::End`]), which is counted once and not
//! expanded. The counts are computed twice, with [`Position::moves`] and with a naive
//! reference move generator written below from `docs/RULES.md` (seed-by-seed sowing, explicit
//! capture chain), and both must equal the values recorded in `tests/vectors/perft.csv`.
//! The reference generator is also compared move by move with [`Position::moves`] on every
//! node of those trees and on every position of the small tiers.

use oware_db::index::{IndexKind, TierIndex};
use oware_db::rules::{GrandSlam, Starve};
use oware_db::{Outcome, Position, Rules};

const PERFT_CSV: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/perft.csv");

/// Deepest perft recorded.
const MAX_DEPTH: u32 = 9;

/// The legal moves of `p` as `(house, outcome)`, by a direct reading of `docs/RULES.md`.
fn reference_moves(p: &Position, rules: &Rules) -> Vec<(u8, Outcome)> {
    let board = p.houses();
    let n: u8 = board.iter().sum();
    let opp_before: u8 = board[6..].iter().sum();
    let mut moves = Vec::new(); // (house, outcome, eradicating)
    for i in 0..6 {
        if board[i] == 0 {
            continue;
        }
        // Sowing, one seed at a time, skipping the origin house.
        let mut b = board;
        let seeds = b[i];
        b[i] = 0;
        let mut h = i;
        let mut fed = false;
        for _ in 0..seeds {
            h = (h + 1) % 12;
            if h == i {
                h = (h + 1) % 12;
            }
            b[h] += 1;
            fed |= h >= 6;
        }
        if rules.starve == Starve::Feed && opp_before == 0 && !fed {
            continue;
        }
        // The capture chain: from the last house backwards over the opponent's houses.
        let mut chain = Vec::new();
        let mut k = h;
        while k >= 6 && rules.capture.contains(b[k]) {
            chain.push(k);
            k -= 1;
        }
        let chain_seeds: u8 = chain.iter().map(|&k| b[k]).sum();
        let opp_after_sowing: u8 = b[6..].iter().sum();
        let slam = !chain.is_empty() && chain_seeds == opp_after_sowing;
        let taken: Vec<usize> = if slam {
            match rules.grand_slam {
                GrandSlam::NoCapture => Vec::new(),
                GrandSlam::Illegal => continue,
                GrandSlam::CaptureAll | GrandSlam::ToOpponent => chain.clone(),
                // chain[0] is the house of the last seed
                GrandSlam::KeepLast => chain[1..].to_vec(),
                // the chain's last element is its lowest-numbered house
                GrandSlam::KeepFirst => chain[..chain.len() - 1].to_vec(),
            }
        } else {
            chain.clone()
        };
        let mut captured = 0u8;
        for &k in &taken {
            captured += b[k];
            b[k] = 0;
        }
        let opp_left: u8 = b[6..].iter().sum();
        let rest_to_opponent = || Outcome::End {
            score: captured as i8 - (n - captured) as i8,
        };
        let game_ends = (slam && rules.grand_slam == GrandSlam::ToOpponent)
            || (opp_left == 0 && rules.starve == Starve::Forfeit);
        let outcome = if game_ends {
            rest_to_opponent()
        } else {
            let mut child = [0u8; 12];
            child[..6].copy_from_slice(&b[6..]);
            child[6..].copy_from_slice(&b[..6]);
            Outcome::Continue {
                child: Position::new(child).expect("no seeds created"),
                captured,
            }
        };
        moves.push((i as u8, outcome, opp_left == 0));
    }
    if rules.starve == Starve::Eradicate && moves.iter().any(|m| !m.2) {
        moves.retain(|m| !m.2);
    }
    moves.into_iter().map(|(h, o, _)| (h, o)).collect()
}

/// The library's moves; also checks that `for_each_move` visits exactly these moves.
fn library_moves(p: &Position, rules: &Rules) -> Vec<(u8, Outcome)> {
    let moves: Vec<(u8, Outcome)> = p
        .moves(rules)
        .iter()
        .map(|m| (m.house, m.outcome))
        .collect();
    let mut visited = Vec::new();
    let any = p.for_each_move(rules, |m| visited.push((m.house, m.outcome)));
    assert_eq!(visited, moves, "{rules}: for_each_move of {p}");
    assert_eq!(any, !moves.is_empty());
    moves
}

/// Leaves of the tree of depth `depth` below `p`, expanding nodes with `gen`.
fn perft(
    p: &Position,
    rules: &Rules,
    depth: u32,
    gen: &impl Fn(&Position, &Rules) -> Vec<(u8, Outcome)>,
) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = gen(p, rules);
    if moves.is_empty() {
        return 1;
    }
    moves
        .iter()
        .map(|(_, o)| match o {
            Outcome::End { .. } => 1,
            Outcome::Continue { child, .. } => perft(child, rules, depth - 1, gen),
        })
        .sum()
}

/// The recorded rows `(rules, depth, leaves)` of `perft.csv`.
fn recorded() -> Vec<(String, u32, u64)> {
    let text = std::fs::read_to_string(PERFT_CSV)
        .unwrap_or_else(|e| panic!("cannot read {PERFT_CSV}: {e}"));
    let mut rows = Vec::new();
    let mut header = true;
    for (k, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        if header {
            assert_eq!(
                f,
                ["rules", "position", "depth", "leaves"],
                "{PERFT_CSV}: header"
            );
            header = false;
            continue;
        }
        let [rules, position, depth, leaves] = f.as_slice() else {
            panic!("{PERFT_CSV}:{}: expected 4 fields", k + 1);
        };
        assert_eq!(
            position.parse::<Position>().ok(),
            Some(Position::START),
            "{PERFT_CSV}:{}: only the start position is recorded",
            k + 1
        );
        let bad = |what: &str| format!("{PERFT_CSV}:{}: bad {what}", k + 1);
        rows.push((
            rules.to_string(),
            depth.parse().unwrap_or_else(|_| panic!("{}", bad("depth"))),
            leaves
                .parse()
                .unwrap_or_else(|_| panic!("{}", bad("count"))),
        ));
    }
    rows
}

#[test]
fn perft_of_the_start_position_matches_the_recorded_counts() {
    let rows = recorded();
    assert!(rows.len() >= 10, "{PERFT_CSV}: only {} rows", rows.len());
    for (text, depth, leaves) in rows {
        let rules: Rules = text.parse().expect("rules text");
        let lib = perft(&Position::START, &rules, depth, &library_moves);
        let reference = perft(&Position::START, &rules, depth, &reference_moves);
        assert_eq!(lib, reference, "{text} depth {depth}: library vs reference");
        assert_eq!(
            lib, leaves,
            "{text} depth {depth}: recorded {leaves}, got {lib}"
        );
    }
}

/// Compares the two generators on every node of the tree below `p`.
fn compare_tree(p: &Position, rules: &Rules, depth: u32) {
    let lib = library_moves(p, rules);
    assert_eq!(lib, reference_moves(p, rules), "{rules}: position {p}");
    if depth == 0 {
        return;
    }
    for (_, o) in lib {
        if let Outcome::Continue { child, .. } = o {
            compare_tree(&child, rules, depth - 1);
        }
    }
}

fn every_rules() -> Vec<Rules> {
    let mut v = Vec::new();
    for grand_slam in GrandSlam::ALL {
        for capture in oware_db::rules::CaptureSet::all() {
            for starve in Starve::ALL {
                v.push(Rules {
                    grand_slam,
                    capture,
                    starve,
                });
            }
        }
    }
    v
}

#[test]
fn reference_generator_agrees_on_the_start_trees() {
    for rules in [Rules::ABAPA, Rules::AWARI] {
        compare_tree(&Position::START, &rules, 6);
    }
}

#[test]
fn reference_generator_agrees_on_small_tiers_under_every_rules_value() {
    let rules = every_rules();
    assert_eq!(rules.len(), 126);
    for n in 0..=6u8 {
        let idx = TierIndex::new(n, IndexKind::Dense);
        for p in idx.positions() {
            for r in &rules {
                assert_eq!(library_moves(&p, r), reference_moves(&p, r), "{r}: {p}");
            }
        }
    }
    // Lapping sowings: one house with 11..=30 seeds and a few seeds elsewhere.
    for r in &rules {
        for big in 11..=30u8 {
            for house in 0..6 {
                for extra in 0..12 {
                    let mut h = [0u8; 12];
                    h[house] = big;
                    h[extra] += 1;
                    h[(extra * 5 + 7) % 12] += 2;
                    let p = Position::new(h).expect("at most 48 seeds");
                    assert_eq!(library_moves(&p, r), reference_moves(&p, r), "{r}: {p}");
                }
            }
        }
    }
}

/// Prints the rows of `perft.csv` (run with `--ignored --nocapture` to regenerate them after a
/// deliberate rules change, and review the difference).
#[test]
#[ignore]
fn print_perft_rows() {
    for rules in [Rules::ABAPA, Rules::AWARI] {
        for depth in 1..=MAX_DEPTH {
            let leaves = perft(&Position::START, &rules, depth, &library_moves);
            println!("{rules},{},{depth},{leaves}", Position::START);
        }
    }
}
