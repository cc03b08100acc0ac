//! The JSON shapes of a probe, shared by `oware probe --json` and the API of `oware serve`
//! (docs/CLI.md describes them).

use oware_db::{GameOutcome, GameResult, MoveScore, Position, Rules};
use serde_json::{json, Value};

/// `win`, `draw` or `loss` for a score (or a final difference) from the mover's side.
pub fn category(score: i32) -> &'static str {
    GameResult::of(score).name()
}

/// One move with its value: `house`, `captures`, `score`, `category`, `position` (the
/// position after it, or `null` when it ends the game).
pub fn move_json(m: &MoveScore) -> Value {
    json!({
        "house": m.house,
        "captures": m.captured,
        "score": m.score,
        "category": category(m.score.into()),
        "position": m.child.map(|c| c.to_string()),
    })
}

/// A probed position: `position`, `rules`, `seeds`, `score`, `category` and its `moves`,
/// best first.
pub fn probe_json(p: &Position, rules: &Rules, score: i8, moves: &[MoveScore]) -> Value {
    json!({
        "position": p.to_string(),
        "rules": rules.to_string(),
        "seeds": p.seeds(),
        "score": score,
        "category": category(score.into()),
        "moves": moves.iter().map(move_json).collect::<Vec<_>>(),
    })
}

/// The perfect-play end of a game in progress: `category`, `difference`, `mover_total`,
/// `opponent_total`.
pub fn outcome_json(o: &GameOutcome) -> Value {
    json!({
        "category": o.result.name(),
        "difference": o.difference,
        "mover_total": o.mover_total,
        "opponent_total": o.opponent_total,
    })
}
