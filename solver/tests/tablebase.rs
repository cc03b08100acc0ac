//! The probe API over synthetic tables: stored scores, move values, one-ply answers for
//! unreachable positions, best lines, outcomes, and the typed errors.

mod synthetic;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::manifest::Manifest;
use oware_db::write::WriteOptions;
use oware_db::{Error, GameResult, Outcome, Position, Rules, Tablebase};
use synthetic::synth;

const MAX: u8 = 10;

fn stored(p: &Position) -> i8 {
    let n = p.seeds();
    synth(n, TierIndex::new(n, IndexKind::Reachable).rank(p).unwrap())
}

fn setup(rules: &Rules) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let opts = WriteOptions {
        block_entries: 512,
        ..WriteOptions::default()
    };
    synthetic::build_dir(dir.path(), rules, MAX, &opts);
    dir
}

fn pos(s: &str) -> Position {
    s.parse().unwrap()
}

/// The expected value of every move, from the synthetic child scores.
fn expected_moves(p: &Position, rules: &Rules) -> Vec<(u8, u8, i8)> {
    let mut v: Vec<(u8, u8, i8)> = p
        .moves(rules)
        .iter()
        .map(|m| {
            let score = m.outcome.value(|c| {
                if c.moves(rules).is_empty() {
                    c.end_score()
                } else {
                    stored(c)
                }
            });
            (m.house, m.captured, score)
        })
        .collect();
    v.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    v
}

#[test]
fn scores_and_moves_follow_the_tables() {
    for rules in [Rules::ABAPA, Rules::AWARI] {
        let dir = setup(&rules);
        let tb = Tablebase::open(dir.path()).unwrap();
        assert_eq!(*tb.rules(), rules);
        for n in [1u8, 4, 7, MAX] {
            let idx = TierIndex::new(n, IndexKind::Reachable);
            for i in (0..idx.size()).step_by(97) {
                let p = idx.unrank(i);
                let moves = tb.moves(&p).unwrap();
                if p.moves(&rules).is_empty() {
                    assert_eq!(tb.score(&p).unwrap(), p.end_score());
                    assert!(moves.is_empty());
                    continue;
                }
                assert_eq!(tb.score(&p).unwrap(), synth(n, i), "{p}");
                let got: Vec<(u8, u8, i8)> = moves
                    .iter()
                    .map(|m| (m.house, m.captured, m.score))
                    .collect();
                assert_eq!(got, expected_moves(&p, &rules), "{p}");
                for m in &moves {
                    if let Some(c) = m.child {
                        assert_eq!(c.seeds(), n - m.captured);
                    }
                }
            }
        }
    }
}

#[test]
fn unreachable_positions_get_a_one_ply_answer() {
    let rules = Rules::ABAPA;
    let dir = setup(&rules);
    let tb = Tablebase::open_with_rules(dir.path(), &rules).unwrap();
    // Every opponent house holds a seed: no move leads here, so no table stores it.
    for s in [
        "1 1 1 1 0 0 1 1 1 1 1 1",
        "0 0 2 0 0 1 1 1 1 1 1 1",
        "3 0 0 0 0 0 1 1 1 1 1 1",
    ] {
        let p = pos(s);
        assert!(!p.is_reachable());
        let want = expected_moves(&p, &rules)[0].2;
        assert_eq!(tb.score(&p).unwrap(), want, "{p}");
        assert_eq!(tb.moves(&p).unwrap()[0].score, want);
    }
    // The start position's children are in tier 48, which is not here: the one-ply search
    // asks for it (rather than looking the start position up).
    match tb.score(&Position::START) {
        Err(Error::MissingTier { tier: 48, path }) => {
            assert_eq!(path, dir.path().join("tier-48.owt"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_table_needed_for_tier_zero_and_ended_games() {
    let empty = tempfile::tempdir().unwrap();
    // A directory without tables or manifest: the default rules.
    let tb = Tablebase::open(empty.path()).unwrap();
    assert_eq!(*tb.rules(), Rules::ABAPA);
    assert_eq!(tb.score(&Position::default()).unwrap(), 0);
    // The mover has no seed: the opponent takes all.
    assert_eq!(tb.score(&pos("0 0 0 0 0 0 0 3 0 0 2 0")).unwrap(), -5);
    // Opponent empty and cannot be fed: the mover takes all.
    assert_eq!(tb.score(&pos("1 0 0 0 0 0 0 0 0 0 0 0")).unwrap(), 1);
    match tb.score(&pos("0 0 0 0 1 1 0 0 0 0 0 1")) {
        Err(Error::MissingTier { tier: 3, path }) => {
            assert_eq!(path, empty.path().join("tier-03.owt"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn best_line_follows_best_moves() {
    let rules = Rules::ABAPA;
    let dir = setup(&rules);
    let tb = Tablebase::open_with_rules(dir.path(), &rules).unwrap();
    let start = pos("2 1 0 0 3 0 1 0 2 1 0 0");
    let line = tb.best_line(&start, 12).unwrap();
    assert!(!line.is_empty() && line.len() <= 12);
    let mut cur = start;
    for step in &line {
        let best = tb.moves(&cur).unwrap()[0];
        assert_eq!(*step, best);
        match step.child {
            Some(c) => cur = c,
            None => break,
        }
    }
    assert!(tb.best_line(&start, 0).unwrap().is_empty());
}

#[test]
fn outcome_adds_captures() {
    let rules = Rules::ABAPA;
    let dir = setup(&rules);
    let tb = Tablebase::open_with_rules(dir.path(), &rules).unwrap();
    let p = pos("2 1 0 0 3 0 1 0 2 1 0 0"); // 10 seeds
    let s = tb.score(&p).unwrap();
    let o = tb.outcome(&p, 20, 18).unwrap();
    assert_eq!(o.score, s);
    assert_eq!(o.difference, 2 + i32::from(s));
    assert_eq!(o.mover_total + o.opponent_total, 48.0);
    assert_eq!(o.mover_total - o.opponent_total, f64::from(o.difference));
    assert_eq!(o.result, GameResult::of(o.difference));
    let o = tb.outcome(&p, 0, 38).unwrap();
    assert_eq!(o.result, GameResult::Loss);
    assert!(matches!(
        tb.outcome(&p, 20, 19),
        Err(Error::TooManySeeds {
            board: 10,
            mover_captured: 20,
            opponent_captured: 19
        })
    ));
}

#[test]
fn rules_mismatch_and_missing_tier() {
    let dir = setup(&Rules::ABAPA);
    let mismatch = |r: Result<Tablebase, Error>| match r {
        Err(Error::RulesMismatch { table, asked }) => (table, asked),
        other => panic!("{other:?}"),
    };
    // The manifest's rules refuse others.
    assert_eq!(
        mismatch(Tablebase::open_with_rules(dir.path(), &Rules::AWARI)),
        (Rules::ABAPA, Rules::AWARI)
    );
    // Without a manifest, the rules are those of the lowest table.
    let awari = setup(&Rules::AWARI);
    std::fs::remove_file(awari.path().join("manifest.json")).unwrap();
    let tb = Tablebase::open(awari.path()).unwrap();
    assert_eq!(*tb.rules(), Rules::AWARI);
    assert_eq!(
        mismatch(Tablebase::open_with_rules(awari.path(), &Rules::ABAPA)),
        (Rules::AWARI, Rules::ABAPA)
    );
    // A table of other rules among them is refused when first probed.
    std::fs::copy(
        dir.path().join("tier-10.owt"),
        awari.path().join("tier-10.owt"),
    )
    .unwrap();
    let p = pos("2 1 0 0 3 0 1 0 2 1 0 0");
    match tb.score(&p) {
        Err(Error::RulesMismatch { table, asked }) => {
            assert_eq!((table, asked), (Rules::ABAPA, Rules::AWARI))
        }
        other => panic!("{other:?}"),
    }
    // A tier past the ones written.
    let tb = Tablebase::open(dir.path()).unwrap();
    let p = pos("2 1 0 0 3 0 1 0 2 1 1 0");
    match tb.score(&p) {
        Err(Error::MissingTier { tier, path }) => {
            assert_eq!(tier, MAX + 1);
            assert!(path.ends_with("tier-11.owt"));
        }
        other => panic!("{other:?}"),
    }
    // A directory that does not exist.
    assert!(matches!(
        Tablebase::open(&dir.path().join("nope")),
        Err(Error::Io { .. })
    ));
    let _ = Manifest::new(&Rules::ABAPA);
    let _ = Outcome::End { score: 0 };
}

#[test]
fn tablebase_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Tablebase>();
    check::<oware_db::table::Table>();
}

#[test]
fn several_directories_probe_as_one() {
    let whole = setup(&Rules::ABAPA);
    let tb = Tablebase::open(whole.path()).unwrap();
    // Even tiers in one directory (with the manifest), odd tiers in another (without).
    let (even, odd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::copy(
        whole.path().join("manifest.json"),
        even.path().join("manifest.json"),
    )
    .unwrap();
    for n in 0..=MAX {
        let name = format!("tier-{n:02}.owt");
        let to = if n % 2 == 0 { &even } else { &odd };
        std::fs::copy(whole.path().join(&name), to.path().join(&name)).unwrap();
    }
    let split = Tablebase::open_dirs(&[even.path(), odd.path()], &Rules::ABAPA).unwrap();
    assert_eq!(split.dir(), even.path());
    assert_eq!(split.dirs().count(), 2);
    assert!(split.tier_path(3).starts_with(odd.path()));
    assert!(split.tier_path(4).starts_with(even.path()));
    // A tier in neither is missing from the first directory.
    assert!(split.tier_path(MAX + 1).starts_with(even.path()));
    let mut rng = fastrand::Rng::with_seed(3);
    for _ in 0..300 {
        let mut h = [0u8; 12];
        for _ in 0..rng.u8(0..=MAX) {
            h[rng.usize(0..12)] += 1;
        }
        let p = Position::new(h).unwrap();
        assert_eq!(split.score(&p).unwrap(), tb.score(&p).unwrap(), "{p}");
        assert_eq!(split.moves(&p).unwrap(), tb.moves(&p).unwrap(), "{p}");
    }
    // Alone, each directory misses the other's tiers.
    let alone = Tablebase::open(even.path()).unwrap();
    assert!(matches!(
        alone.score(&pos("2 1 0 0 3 0 1 0 2 0 0 0")),
        Err(Error::MissingTier { tier: 9, .. })
    ));
    assert!(matches!(
        Tablebase::open_dirs::<&std::path::Path>(&[], &Rules::ABAPA),
        Err(Error::InvalidState(_))
    ));
}
