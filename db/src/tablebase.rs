//! The probe API over a directory of tier tables: scores, every move's score, best lines
//! and the outcome of a game in progress.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::Error;
use crate::index::TierIndex;
use crate::manifest::{self, Manifest, MANIFEST_FILE};
use crate::moves::Outcome;
use crate::position::{Position, MAX_SEEDS};
use crate::rules::Rules;
use crate::table::Table;

/// One legal move and its exact value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveScore {
    /// The house played, `0..6` from the mover's side.
    pub house: u8,
    /// Seeds the move captures.
    pub captured: u8,
    /// The value of the move for the mover: `captured − score(child)`, or the end score.
    pub score: i8,
    /// The position after the move (seen from the next mover), `None` if the move ends the
    /// game.
    pub child: Option<Position>,
}

/// Win, draw or loss, from the mover's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// The mover ends with more seeds.
    Win,
    /// Equal totals.
    Draw,
    /// The mover ends with fewer seeds.
    Loss,
}

impl GameResult {
    /// The result of a final difference of totals `diff` (mover − opponent).
    pub fn of(diff: i32) -> Self {
        match diff.signum() {
            1 => GameResult::Win,
            0 => GameResult::Draw,
            _ => GameResult::Loss,
        }
    }

    /// `win`, `draw` or `loss`.
    pub fn name(self) -> &'static str {
        match self {
            GameResult::Win => "win",
            GameResult::Draw => "draw",
            GameResult::Loss => "loss",
        }
    }
}

/// The perfect-play end of a game in progress.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GameOutcome {
    /// Win, draw or loss for the mover.
    pub result: GameResult,
    /// The score of the position (the rest of the game).
    pub score: i8,
    /// Final difference of totals, mover − opponent: `a − b + score`.
    pub difference: i32,
    /// The mover's final total. A half when seeds that cycle forever are split evenly and
    /// their number is odd.
    pub mover_total: f64,
    /// The opponent's final total (same remark).
    pub opponent_total: f64,
}

/// A directory of tier tables under one rules value, probed lazily.
///
/// Each tier's table is opened on the first probe that needs it and kept open. A
/// `Tablebase` is `Send + Sync`.
///
/// # Safety
/// Tables are memory-mapped ([`Table::open`]): while a `Tablebase` is alive, no table file in
/// its directory may be truncated or modified in place (replacing one by a rename is fine).
#[derive(Debug)]
pub struct Tablebase {
    dir: PathBuf,
    rules: Rules,
    manifest: Option<Manifest>,
    tables: Vec<OnceLock<Table>>,
}

impl Tablebase {
    /// Opens the directory `dir` for probes under the rules its tables were built with:
    /// those of its `manifest.json`; without a manifest, those of its lowest tier whose
    /// `tier-NN.owt` opens; for a directory with neither, the default rules
    /// ([`Rules::ABAPA`]), under which positions that need no table (tier 0, ended games)
    /// are still answered. Tables are opened on first use.
    ///
    /// # Errors
    /// [`Error::Io`] if `dir` is not a readable directory, [`Error::Manifest`] if its
    /// manifest is not valid.
    pub fn open(dir: &Path) -> Result<Tablebase, Error> {
        let manifest = Self::read_manifest(dir)?;
        let rules = manifest::tables_rules(dir, manifest.as_ref()).unwrap_or_default();
        Ok(Self::with(dir, rules, manifest))
    }

    /// Opens the directory `dir` for probes under `rules`, refusing a directory whose tables
    /// were built under other rules (those of its manifest, or without one of its lowest
    /// table, as [`Tablebase::open`] reads them). Tables are opened on first use, and each
    /// is checked against `rules` then.
    ///
    /// # Errors
    /// As [`Tablebase::open`]; [`Error::RulesMismatch`] if the tables were built under
    /// other rules.
    pub fn open_with_rules(dir: &Path, rules: &Rules) -> Result<Tablebase, Error> {
        let manifest = Self::read_manifest(dir)?;
        match manifest::tables_rules(dir, manifest.as_ref()) {
            Some(table) if table != *rules => Err(Error::RulesMismatch {
                table,
                asked: *rules,
            }),
            _ => Ok(Self::with(dir, *rules, manifest)),
        }
    }

    /// The manifest of `dir`, once `dir` is known to be a readable directory.
    fn read_manifest(dir: &Path) -> Result<Option<Manifest>, Error> {
        std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        Manifest::load(dir)
    }

    fn with(dir: &Path, rules: Rules, manifest: Option<Manifest>) -> Tablebase {
        Tablebase {
            dir: dir.to_path_buf(),
            rules,
            manifest,
            tables: (0..=MAX_SEEDS).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The rules probes are answered under.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The manifest, if the directory has one.
    pub fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_ref()
    }

    /// The path of tier `n`'s table: the file the manifest names for it, or `tier-NN.owt`
    /// ([`manifest::tier_path`]).
    pub fn tier_path(&self, n: u8) -> PathBuf {
        manifest::tier_path(&self.dir, self.manifest.as_ref(), n)
    }

    /// The table of tier `n`, opened (and checked against the rules) on first use.
    ///
    /// # Errors
    /// [`Error::TierOutOfRange`] for `n` over 48, [`Error::MissingTier`],
    /// [`Error::RulesMismatch`], [`Error::BadHeader`] (the file holds another tier),
    /// [`Error::Manifest`] (it disagrees with the manifest), and every error of
    /// [`Table::open`].
    pub fn table(&self, n: u8) -> Result<&Table, Error> {
        let Some(cell) = self.tables.get(usize::from(n)) else {
            return Err(Error::TierOutOfRange(n));
        };
        if let Some(t) = cell.get() {
            return Ok(t);
        }
        let path = self.tier_path(n);
        if !path.exists() {
            return Err(Error::MissingTier { tier: n, path });
        }
        let t = Table::open(&path)?;
        if t.rules() != self.rules {
            return Err(Error::RulesMismatch {
                table: t.rules(),
                asked: self.rules,
            });
        }
        if t.tier() != n {
            return Err(Error::BadHeader {
                path,
                detail: format!("holds tier {}, expected {n}", t.tier()),
            });
        }
        if let Some(e) = self.manifest.as_ref().and_then(|m| m.tiers.get(&n)) {
            if e.entries != t.len() || e.file_size != t.file_size() {
                return Err(Error::Manifest {
                    path: self.dir.join(MANIFEST_FILE),
                    detail: format!(
                        "tier {n}: manifest says {} entries in {} bytes, the file has {} in {}",
                        e.entries,
                        e.file_size,
                        t.len(),
                        t.file_size()
                    ),
                });
            }
        }
        // Another thread may have opened it meanwhile; either copy is good.
        Ok(cell.get_or_init(|| t))
    }

    /// The score stored for a position the index holds, or `None` if it holds no entry for
    /// it (an unreachable position).
    fn stored(&self, p: &Position) -> Result<Option<i8>, Error> {
        let n = p.seeds();
        let t = self.table(n)?;
        let Some(i) = TierIndex::new(n, t.kind()).rank(p) else {
            return Ok(None);
        };
        let v = t.get(i)?;
        if v.unsigned_abs() > n {
            return Err(Error::BadValue {
                path: t.path().to_path_buf(),
                tier: n,
                index: i,
                value: v,
            });
        }
        Ok(Some(v))
    }

    /// The exact score of `p` for the mover (see `docs/RULES.md` in the repository).
    ///
    /// Positions with no legal move score [`Position::end_score`] without a table; positions
    /// that no move can reach (the start position among them) are answered by a one-ply
    /// search over their children.
    ///
    /// # Errors
    /// Every error of [`Tablebase::table`] and [`Table::get`], and [`Error::BadValue`].
    pub fn score(&self, p: &Position) -> Result<i8, Error> {
        let moves = p.moves(&self.rules);
        if moves.is_empty() {
            return Ok(p.end_score());
        }
        if p.is_reachable() {
            if let Some(v) = self.stored(p)? {
                return Ok(v);
            }
        }
        let mut best = i8::MIN;
        for m in moves.iter() {
            best = best.max(self.move_value(&m.outcome)?);
        }
        Ok(best)
    }

    fn move_value(&self, o: &Outcome) -> Result<i8, Error> {
        match *o {
            // A child is always reachable (its houses 6..12 hold the emptied origin house),
            // so `score` finds it in its table and does not recurse further.
            Outcome::Continue { child, captured } => Ok(captured as i8 - self.score(&child)?),
            Outcome::End { score } => Ok(score),
        }
    }

    /// Every legal move of `p` with its exact value for the mover, best first (ties in house
    /// order). Empty if the game is over.
    ///
    /// # Errors
    /// As [`Tablebase::score`].
    pub fn moves(&self, p: &Position) -> Result<Vec<MoveScore>, Error> {
        let mut out = Vec::with_capacity(6);
        for m in p.moves(&self.rules).iter() {
            out.push(MoveScore {
                house: m.house,
                captured: m.captured,
                score: self.move_value(&m.outcome)?,
                child: match m.outcome {
                    Outcome::Continue { child, .. } => Some(child),
                    Outcome::End { .. } => None,
                },
            });
        }
        out.sort_by(|a, b| b.score.cmp(&a.score).then(a.house.cmp(&b.house)));
        Ok(out)
    }

    /// A principal variation from `p`: up to `max_plies` best moves (the first of the best in
    /// house order at each ply), stopping early when the game ends. Each step's `child` is the
    /// position the next step is played from.
    ///
    /// # Errors
    /// As [`Tablebase::score`].
    pub fn best_line(&self, p: &Position, max_plies: usize) -> Result<Vec<MoveScore>, Error> {
        let mut line = Vec::new();
        let mut cur = *p;
        while line.len() < max_plies {
            let Some(best) = self.moves(&cur)?.first().copied() else {
                break;
            };
            line.push(best);
            match best.child {
                Some(c) => cur = c,
                None => break,
            }
        }
        Ok(line)
    }

    /// The perfect-play outcome of a game in progress at `p`, where the mover has already
    /// captured `mover_captured` seeds and the opponent `opponent_captured`: the final
    /// difference is `mover_captured − opponent_captured + score(p)`.
    ///
    /// # Errors
    /// [`Error::TooManySeeds`] if the captures and the board hold more than 48 seeds; as
    /// [`Tablebase::score`].
    pub fn outcome(
        &self,
        p: &Position,
        mover_captured: u8,
        opponent_captured: u8,
    ) -> Result<GameOutcome, Error> {
        let board = p.seeds();
        let total = u32::from(board) + u32::from(mover_captured) + u32::from(opponent_captured);
        if total > u32::from(MAX_SEEDS) {
            return Err(Error::TooManySeeds {
                board,
                mover_captured,
                opponent_captured,
            });
        }
        let score = self.score(p)?;
        Ok(GameOutcome::new(
            board,
            mover_captured,
            opponent_captured,
            score,
        ))
    }
}

impl GameOutcome {
    /// The outcome of a game with `board` seeds on the board, the captures so far and the
    /// score of the position (as [`Tablebase::outcome`] computes it, for a score found
    /// otherwise).
    pub fn new(board: u8, mover_captured: u8, opponent_captured: u8, score: i8) -> GameOutcome {
        let a = f64::from(mover_captured);
        let b = f64::from(opponent_captured);
        let s = f64::from(score);
        let n = f64::from(board);
        let difference =
            i32::from(mover_captured) - i32::from(opponent_captured) + i32::from(score);
        GameOutcome {
            result: GameResult::of(difference),
            score,
            difference,
            mover_total: a + (n + s) / 2.0,
            opponent_total: b + (n - s) / 2.0,
        }
    }
}
