//! The JSON shapes of a probe, shared by `oware probe --json` and the API of `oware serve`
//! (docs/CLI.md describes them). Fields are declared in alphabetical order: that is the order
//! they print in.

use oware_db::{GameOutcome, GameResult, MoveScore, Position, Rules};
use serde::Serialize;

/// `win`, `draw` or `loss` for a score (or a final difference) from the mover's side.
pub fn category(score: i32) -> &'static str {
    GameResult::of(score).name()
}

/// One move with its value.
#[derive(Serialize)]
pub struct MoveJson {
    /// Seeds the move captures.
    pub captures: u8,
    /// `win`, `draw` or `loss` of `score`.
    pub category: &'static str,
    /// Plies from before the move to the next capture or end when play after it keeps the
    /// score (docs/RULES.md, *The distance to conversion*; Lichess's `dtz` in chess): 1 for
    /// a capture, `null` for a move to a position scored 0 or one without a distance table.
    pub distance: Option<u16>,
    /// The house played, 0..6 from the mover's side.
    pub house: u8,
    /// The position after the move, or `null` when it ends the game.
    pub position: Option<String>,
    /// The move's value for the mover.
    pub score: i8,
}

/// One move with its value: `house`, `captures`, `score`, `category`, `distance`,
/// `position`.
pub fn move_json(m: &MoveScore) -> MoveJson {
    MoveJson {
        captures: m.captured,
        category: category(m.score.into()),
        distance: m.distance,
        house: m.house,
        position: m.child.map(|c| c.to_string()),
        score: m.score,
    }
}

/// The perfect-play end of a game in progress.
#[derive(Serialize)]
pub struct OutcomeJson {
    /// `win`, `draw` or `loss` of the final difference.
    pub category: &'static str,
    /// The final difference of totals, mover − opponent.
    pub difference: i32,
    /// The mover's final total.
    pub mover_total: f64,
    /// The opponent's final total.
    pub opponent_total: f64,
}

/// The outcome's fields.
pub fn outcome_json(o: &GameOutcome) -> OutcomeJson {
    OutcomeJson {
        category: o.result.name(),
        difference: o.difference,
        mover_total: o.mover_total,
        opponent_total: o.opponent_total,
    }
}

/// A probed position.
#[derive(Serialize)]
pub struct ProbeJson {
    /// `win`, `draw` or `loss` of `score`.
    pub category: &'static str,
    /// The position's distance to conversion in plies (docs/RULES.md): `null` for a score
    /// of 0, or when it cannot be had (see `distance_note`).
    pub distance: Option<u16>,
    /// Why a distance is missing, the position's where the score is not 0 or a move's
    /// (whatever the position's score) where its tier has no distance table or it cannot
    /// be read: moves are then ordered by score and house only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance_note: Option<String>,
    /// The game is over: the side to move has no legal move, and `score` is the end score
    /// (the seeds on the mover's side minus those on the opponent's), as Lichess marks a
    /// checkmate.
    pub game_over: bool,
    /// A best line (`probe --line`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<Vec<MoveJson>>,
    /// Every legal move, best first.
    pub moves: Vec<MoveJson>,
    /// The end of the game from given captured totals (`--captured`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<OutcomeJson>,
    /// The position, canonical.
    pub position: String,
    /// The rules of the tables.
    pub rules: String,
    /// The position's score for the side to move.
    pub score: i8,
    /// The seeds on the board.
    pub seeds: u8,
}

/// A position of a batch probe (`oware probe -` with `--json`): the fields of [`ProbeJson`]
/// that need no move probed (no `moves`, `line` nor `outcome`).
#[derive(Serialize)]
pub struct BatchJson {
    /// `win`, `draw` or `loss` of `score`.
    pub category: &'static str,
    /// The position's distance to conversion in plies: `null` for a score of 0, or when it
    /// cannot be had (see `distance_note`).
    pub distance: Option<u16>,
    /// Why the distance is missing where the score is not 0 (the tier has no distance
    /// table, or it cannot be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance_note: Option<String>,
    /// The side to move has no legal move (as in [`ProbeJson`]).
    pub game_over: bool,
    /// The position, canonical.
    pub position: String,
    /// The rules of the tables.
    pub rules: String,
    /// The position's score for the side to move.
    pub score: i8,
    /// The seeds on the board.
    pub seeds: u8,
}

/// A position of a batch probe: `position`, `rules`, `seeds`, `score`, `category`,
/// `game_over` and its `distance` (or the note of why there is none).
pub fn batch_json(
    p: &Position,
    rules: &str,
    score: i8,
    distance: &Result<Option<u16>, String>,
    game_over: bool,
) -> BatchJson {
    BatchJson {
        category: category(score.into()),
        distance: distance.as_ref().ok().copied().flatten(),
        distance_note: distance.as_ref().err().cloned(),
        game_over,
        position: p.to_string(),
        rules: rules.to_string(),
        score,
        seeds: p.seeds(),
    }
}

/// A probed position: `position`, `rules`, `seeds`, `score`, `category`, `game_over` (no
/// move), its `distance` (or the note of why there is none) and its `moves`, best first (no
/// `line` nor `outcome` yet).
pub fn probe_json(
    p: &Position,
    rules: &Rules,
    score: i8,
    distance: &Result<Option<u16>, String>,
    moves: &[MoveScore],
) -> ProbeJson {
    ProbeJson {
        category: category(score.into()),
        distance: distance.as_ref().ok().copied().flatten(),
        distance_note: distance.as_ref().err().cloned(),
        game_over: moves.is_empty(),
        line: None,
        moves: moves.iter().map(move_json).collect(),
        outcome: None,
        position: p.to_string(),
        rules: rules.to_string(),
        score,
        seeds: p.seeds(),
    }
}
