//! The probe API over a directory of tier tables: scores, every move's score, best lines
//! and the outcome of a game in progress.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::Error;
use crate::format::Values;
use crate::index::TierIndex;
use crate::manifest::{self, Manifest};
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
    /// Plies from the position before the move to the next conversion (docs/RULES.md, *The
    /// distance to conversion*) when play after it keeps the child's score: 1 for a move
    /// that captures or ends the game, `1 + distance(child)` for another; `None` for a move
    /// to a position scored 0, or where the child's tier has no distance table or it cannot
    /// be read ([`Tablebase::distance`] says why).
    pub distance: Option<u16>,
}

/// Orders moves best first: higher score; among moves of equal nonzero score that all have
/// a distance, the shorter distance for a winning score and the longer for a losing one;
/// otherwise (and among equal distances) house order.
fn order_moves(moves: &mut [MoveScore]) {
    moves.sort_by(|a, b| b.score.cmp(&a.score).then(a.house.cmp(&b.house)));
    for group in moves.chunk_by_mut(|a, b| a.score == b.score) {
        let s = group[0].score;
        if s == 0 || group.iter().any(|m| m.distance.is_none()) {
            continue;
        }
        // A stable sort: equal distances stay in house order.
        if s > 0 {
            group.sort_by_key(|m| m.distance);
        } else {
            group.sort_by_key(|m| std::cmp::Reverse(m.distance));
        }
    }
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

/// A directory of tier tables under one rules value (or several directories,
/// [`Tablebase::open_dirs`]), probed lazily.
///
/// Each tier's table is opened on the first probe that needs it and kept open. A
/// `Tablebase` is `Send + Sync`.
///
/// # Safety
/// Tables are memory-mapped ([`Table::open`]): while a `Tablebase` is alive, no table file in
/// its directories may be truncated or modified in place (replacing one by a rename is fine).
#[derive(Debug)]
pub struct Tablebase {
    /// The directories, each with its manifest, in the order a tier is looked for.
    dirs: Vec<(PathBuf, Option<Manifest>)>,
    rules: Rules,
    tables: Vec<OnceLock<Table>>,
    /// The distance tables, opened on first use.
    distances: Vec<OnceLock<Table>>,
    /// Whether every use of an open table first checks its file ([`Table::check_file`]).
    check_files: bool,
    /// Whether the tiers are read from Romein-Bal files only ([`Tablebase::open_romein`]).
    romein: bool,
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
        Ok(Self::with(vec![(dir.to_path_buf(), manifest)], rules))
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
        Tablebase::open_dirs(&[dir], rules)
    }

    /// Opens several directories as one for probes under `rules`: each tier's table is taken
    /// from the first directory that holds it. Each directory is checked as in
    /// [`Tablebase::open_with_rules`].
    ///
    /// # Errors
    /// As [`Tablebase::open_with_rules`], for any of the directories;
    /// [`Error::InvalidState`] for no directory.
    pub fn open_dirs<P: AsRef<Path>>(dirs: &[P], rules: &Rules) -> Result<Tablebase, Error> {
        if dirs.is_empty() {
            return Err(Error::InvalidState("no directory of tables given".into()));
        }
        let mut opened = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let dir = dir.as_ref();
            let manifest = Self::read_manifest(dir)?;
            if let Some(table) = manifest::tables_rules(dir, manifest.as_ref()) {
                if table != *rules {
                    return Err(Error::RulesMismatch {
                        table,
                        asked: *rules,
                    });
                }
            }
            opened.push((dir.to_path_buf(), manifest));
        }
        Ok(Self::with(opened, *rules))
    }

    /// The manifest of `dir`, once `dir` is known to be a readable directory.
    fn read_manifest(dir: &Path) -> Result<Option<Manifest>, Error> {
        std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        Manifest::load(dir)
    }

    fn with(dirs: Vec<(PathBuf, Option<Manifest>)>, rules: Rules) -> Tablebase {
        Tablebase {
            dirs,
            rules,
            tables: (0..=MAX_SEEDS).map(|_| OnceLock::new()).collect(),
            distances: (0..=MAX_SEEDS).map(|_| OnceLock::new()).collect(),
            check_files: false,
            romein: false,
        }
    }

    /// Opens the directory `dir` as one of the Romein-Bal Awari databases: tier `n` is read
    /// from `scores.N` ([`Table::open_romein`]) whatever else the directory holds, under the
    /// `awari` rules. ([`Tablebase::open`] reads such a directory the same way when it holds
    /// `scores.N` files and no `tier-NN.owt`.) The files hold no distances.
    ///
    /// # Errors
    /// [`Error::Io`] if `dir` is not a readable directory.
    pub fn open_romein(dir: &Path) -> Result<Tablebase, Error> {
        std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        let mut tb = Self::with(vec![(dir.to_path_buf(), None)], Rules::AWARI);
        tb.romein = true;
        Ok(tb)
    }

    /// The file of tier `n` in `dir`: `scores.N` for [`Tablebase::open_romein`], else as
    /// [`manifest::tier_path`] finds it.
    fn file_of(&self, dir: &Path, manifest: Option<&Manifest>, n: u8) -> PathBuf {
        if self.romein {
            dir.join(crate::romein::file_name(n))
        } else {
            manifest::tier_path(dir, manifest, n)
        }
    }

    /// Makes every use of an open table first check that its file still has its length
    /// ([`Table::check_file`], one `fstat`): for a long-running reader, such as a server,
    /// whose directory may be changed under it. A table truncated under the reader is then an
    /// error ([`Error::Truncated`]) for as long as it is short, instead of a fault that ends
    /// the process; the other tiers are answered as before. The check narrows the hazard of
    /// the type's safety contract (a truncation between the check and the read still faults);
    /// replacing a table by a rename remains the safe way to update a directory.
    pub fn check_files(&mut self, on: bool) {
        self.check_files = on;
    }

    /// Whether the tables are Romein and Bal's `scores.N` files ([`Tablebase::open_romein`],
    /// or [`Tablebase::open`] of a directory that holds only those).
    pub fn is_romein(&self) -> bool {
        self.romein
    }

    /// The directory (the first, of several).
    pub fn dir(&self) -> &Path {
        &self.dirs[0].0
    }

    /// The directories, in the order a tier is looked for.
    pub fn dirs(&self) -> impl Iterator<Item = &Path> {
        self.dirs.iter().map(|(d, _)| d.as_path())
    }

    /// The directory and manifest that tier `n` is read from: the first directory whose
    /// table of tier `n` exists, or the first directory.
    fn source(&self, n: u8) -> &(PathBuf, Option<Manifest>) {
        self.dirs
            .iter()
            .find(|(d, m)| self.file_of(d, m.as_ref(), n).exists())
            .unwrap_or(&self.dirs[0])
    }

    /// The rules probes are answered under.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The manifest, if the directory (the first, of several) has one.
    pub fn manifest(&self) -> Option<&Manifest> {
        self.dirs[0].1.as_ref()
    }

    /// The path of tier `n`'s table: in the first directory that holds it (of several), the
    /// file its manifest names for it, or `tier-NN.owt` ([`manifest::tier_path`]; `scores.N`
    /// for [`Tablebase::open_romein`]).
    pub fn tier_path(&self, n: u8) -> PathBuf {
        let (dir, manifest) = self.source(n);
        self.file_of(dir, manifest.as_ref(), n)
    }

    /// The table of tier `n`, opened (and checked against the rules) on first use.
    ///
    /// # Errors
    /// [`Error::TierOutOfRange`] for `n` over 48, [`Error::MissingTier`],
    /// [`Error::RulesMismatch`], [`Error::BadHeader`] (the file holds another tier),
    /// [`Error::TableChanged`] (it disagrees with the manifest), and every error of
    /// [`Table::open`].
    pub fn table(&self, n: u8) -> Result<&Table, Error> {
        let Some(cell) = self.tables.get(usize::from(n)) else {
            return Err(Error::TierOutOfRange(n));
        };
        if let Some(t) = cell.get() {
            if self.check_files {
                t.check_file()?;
            }
            return Ok(t);
        }
        let (dir, manifest) = self.source(n);
        let path = self.file_of(dir, manifest.as_ref(), n);
        let t = self.open_checked(path, n, Values::Scores, |path, _| Error::MissingTier {
            tier: n,
            path,
        })?;
        if let Some(e) = manifest.as_ref().and_then(|m| m.tiers.get(&n)) {
            if e.entries != t.len() || e.file_size != t.file_size() {
                return Err(Error::TableChanged {
                    path: t.path().to_path_buf(),
                    detail: format!(
                        "the table has {} entries in {} bytes, the manifest records {} in {} \
                         for tier {n}: the table changed since it was recorded",
                        t.len(),
                        t.file_size(),
                        e.entries,
                        e.file_size
                    ),
                });
            }
        }
        // Another thread may have opened it meanwhile; either copy is good.
        Ok(cell.get_or_init(|| t))
    }

    /// Opens `path` as the table of `values` of tier `n`: `missing(path, why)` when there is
    /// no file, `why` the system's error that says so (a symbolic link that leads nowhere, dangling or a loop, is not missing: opening
    /// it names what is wrong), [`Error::RulesMismatch`] for other rules, [`Error::BadHeader`]
    /// when it holds another tier or other values.
    fn open_checked(
        &self,
        path: PathBuf,
        n: u8,
        values: Values,
        missing: impl FnOnce(PathBuf, std::io::Error) -> Error,
    ) -> Result<Table, Error> {
        if let Err(why) = std::fs::symlink_metadata(&path) {
            if why.kind() == std::io::ErrorKind::NotFound {
                return Err(missing(path, why));
            }
        }
        let t = Table::open(&path)?;
        if t.rules() != self.rules {
            return Err(Error::RulesMismatch {
                table: t.rules(),
                asked: self.rules,
            });
        }
        if t.values() != values {
            return Err(Error::BadHeader {
                path,
                detail: format!(
                    "holds the {} of tier {}, expected the {} of tier {n}",
                    t.values().name(),
                    t.tier(),
                    values.name()
                ),
            });
        }
        if t.tier() != n {
            return Err(Error::BadHeader {
                path,
                detail: format!("holds tier {}, expected {n}", t.tier()),
            });
        }
        Ok(t)
    }

    /// The score stored for a position the index holds, or `None` if it holds no entry for
    /// it (an unreachable position).
    fn stored(&self, p: &Position) -> Result<Option<i8>, Error> {
        Ok(self.stored_at(p, false)?.map(|(v, _)| v))
    }

    /// [`Tablebase::stored`] with the entry's index; with `prefetch`, the block of the
    /// entry in the tier's distance table, if that table is open, is fetched into the
    /// processor's caches while the score is decoded.
    fn stored_at(&self, p: &Position, prefetch: bool) -> Result<Option<(i8, u64)>, Error> {
        let n = p.seeds();
        let t = self.table(n)?;
        let Some(i) = TierIndex::new(n, t.kind()).rank(p) else {
            return Ok(None);
        };
        if prefetch {
            if let Some(d) = self.distances.get(usize::from(n)).and_then(OnceLock::get) {
                d.prefetch(i);
            }
        }
        let v = t.get(i)?;
        if v.unsigned_abs() > n {
            return Err(Error::BadValue {
                path: t.path().to_path_buf(),
                tier: n,
                index: i,
                value: v,
            });
        }
        Ok(Some((v, i)))
    }

    /// The distance table of tier `n` (`tier-NN.owd` beside the tier's table, or the file
    /// the manifest names), opened (and checked against the rules, the tier and the
    /// manifest) on first use.
    ///
    /// # Errors
    /// [`Error::MissingDistances`] when the tier has none; [`Error::Io`] when the manifest
    /// records one whose file is missing; [`Error::BadHeader`] when the file holds another
    /// tier or scores; as [`Tablebase::table`].
    pub fn distance_table(&self, n: u8) -> Result<&Table, Error> {
        let Some(cell) = self.distances.get(usize::from(n)) else {
            return Err(Error::TierOutOfRange(n));
        };
        if let Some(t) = cell.get() {
            if self.check_files {
                t.check_file()?;
            }
            return Ok(t);
        }
        let (dir, manifest) = self.source(n);
        let path = manifest::distance_path(dir, manifest.as_ref(), n);
        if self.romein {
            // Romein-Bal files hold scores only.
            return Err(Error::MissingDistances { tier: n, path });
        }
        let recorded = manifest
            .as_ref()
            .and_then(|m| m.tiers.get(&n))
            .is_some_and(|e| e.distance.is_some());
        let t = self.open_checked(path.clone(), n, Values::Distances, |path, why| {
            if recorded {
                // The manifest records one: the file is missing (the system's error says
                // so), not the tier's distances.
                Error::io(&path, why)
            } else {
                Error::MissingDistances { tier: n, path }
            }
        })?;
        let scores = self.table(n)?;
        if t.len() != scores.len() || t.kind() != scores.kind() {
            return Err(Error::BadHeader {
                path,
                detail: format!("{} entries, the tier's table {}", t.len(), scores.len()),
            });
        }
        if let Some(e) = manifest
            .as_ref()
            .and_then(|m| m.tiers.get(&n))
            .and_then(|e| e.distance.as_ref())
        {
            if e.file_size != t.file_size() {
                return Err(Error::TableChanged {
                    path: t.path().to_path_buf(),
                    detail: format!(
                        "the distance table has {} bytes, the manifest records {} for tier \
                         {n}: the table changed since it was recorded",
                        t.file_size(),
                        e.file_size
                    ),
                });
            }
        }
        Ok(cell.get_or_init(|| t))
    }

    /// The distance to conversion of `p` (docs/RULES.md, *The distance to conversion*): the
    /// plies to the next capture or end of the game under play that keeps the score, the
    /// side the score favours taking the shortest way and the other the longest. `None` for
    /// a position scored 0. A position without a legal move is at distance 0; one the index
    /// holds no entry for (the start position, say) is answered by a one-ply search.
    ///
    /// # Errors
    /// As [`Tablebase::score`]; [`Error::MissingDistances`] when a tier needed has no distance
    /// table, [`Error::BadDistance`] when the one stored disagrees with the score, and the
    /// errors of [`Tablebase::distance_table`] and [`Table::get_distance`].
    pub fn distance(&self, p: &Position) -> Result<Option<u16>, Error> {
        let moves = p.moves(&self.rules);
        if moves.is_empty() {
            return Ok((p.end_score() != 0).then_some(0));
        }
        let n = p.seeds();
        if p.is_reachable() {
            if let Some(d) = self.distance_after_prefix(p)? {
                return Ok(d);
            }
            if let Some((s, i)) = self.stored_at(p, true)? {
                if s == 0 {
                    return Ok(None);
                }
                let t = self.distance_table(n)?;
                return match t.get_distance(i, self.table(n)?)? {
                    Some(d) => Ok(Some(d)),
                    None => Err(Error::BadDistance {
                        path: t.path().to_path_buf(),
                        index: i,
                        stored: "no distance".into(),
                        score: s,
                    }),
                };
            }
        }
        let s = self.score(p)?;
        if s == 0 {
            return Ok(None);
        }
        // Not in the index: the best (favoured) or worst (disfavoured) keeping move.
        let mut best: Option<u16> = None;
        for m in moves.iter() {
            if self.move_value(&m.outcome)? != s {
                continue;
            }
            let d = match m.outcome {
                Outcome::Continue { child, captured: 0 } => {
                    1 + self.distance(&child)?.ok_or_else(|| {
                        Error::InvalidState(format!(
                            "a child of {p} keeps the score {s} but has no distance"
                        ))
                    })?
                }
                _ => 1,
            };
            best = Some(match best {
                None => d,
                Some(b) if s > 0 => b.min(d),
                Some(b) => b.max(d),
            });
        }
        Ok(best)
    }

    /// [`Tablebase::distance`] of a reachable position with a legal move, when the tier's
    /// distance table is open and ctx-huffman like its scores
    /// ([`Table::takes_score_prefix`]): the scores of `p`'s sub-block are decoded only up to
    /// `p`'s entry, once, as the score of `p` and the context of its distance. `None` when
    /// that does not apply (`p` has no index, or the tables are not of that kind): the
    /// caller reads them as it otherwise does.
    fn distance_after_prefix(&self, p: &Position) -> Result<Option<Option<u16>>, Error> {
        let n = p.seeds();
        let Some(dt) = self.distances.get(usize::from(n)).and_then(OnceLock::get) else {
            return Ok(None);
        };
        let t = self.table(n)?;
        if !dt.takes_score_prefix(t) {
            return Ok(None);
        }
        let Some(i) = TierIndex::new(n, t.kind()).rank(p) else {
            return Ok(None);
        };
        dt.prefetch(i);
        let mut prefix = [0i8; 256];
        let got = t.score_prefix(i, &mut prefix)?;
        let s = prefix[got - 1];
        if s.unsigned_abs() > n {
            return Err(Error::BadValue {
                path: t.path().to_path_buf(),
                tier: n,
                index: i,
                value: s,
            });
        }
        if s == 0 {
            return Ok(Some(None));
        }
        if self.check_files {
            // As `distance_table` checks it.
            dt.check_file()?;
        }
        match dt.get_distance_after(i, t, &prefix[..got])? {
            Some(d) => Ok(Some(Some(d))),
            None => Err(Error::BadDistance {
                path: dt.path().to_path_buf(),
                index: i,
                stored: "no distance".into(),
                score: s,
            }),
        }
    }

    /// The stored distance of `p`, a position the index holds, whose score `s` is known
    /// and nonzero: its distance table's entry, without the search [`Tablebase::distance`]
    /// makes for a position the index does not hold.
    fn stored_distance(&self, p: &Position, s: i8) -> Result<u16, Error> {
        let n = p.seeds();
        let t = self.distance_table(n)?;
        let Some(i) = TierIndex::new(n, t.kind()).rank(p) else {
            return self
                .distance(p)?
                .ok_or_else(|| Error::InvalidState(format!("{p} scores {s} but has no distance")));
        };
        t.get_distance(i, self.table(n)?)?
            .ok_or_else(|| Error::BadDistance {
                path: t.path().to_path_buf(),
                index: i,
                stored: "no distance".into(),
                score: s,
            })
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

    /// Every legal move of `p` with its exact value for the mover and its distance, best
    /// first: by score, then among moves of equal nonzero score by distance (the shortest
    /// for a winning move, the longest for a losing one: the choice that converts), then in
    /// house order. Empty if the game is over. Where distances cannot be had (a tier without
    /// a distance table, one that cannot be read), those moves carry none, and moves of their
    /// score come in house order, as without distances.
    ///
    /// # Errors
    /// As [`Tablebase::score`].
    pub fn moves(&self, p: &Position) -> Result<Vec<MoveScore>, Error> {
        let mut out = Vec::with_capacity(6);
        for m in p.moves(&self.rules).iter() {
            let (score, child, distance) = match m.outcome {
                Outcome::Continue { child, captured } => {
                    let s = self.score(&child)?;
                    // 1 for a capture; one more than the child's for a quiet move (a child
                    // scored 0 has none, and one whose distance cannot be read gives none).
                    let distance = match (captured, s) {
                        (0, 0) => None,
                        (0, s) => self.stored_distance(&child, s).ok().map(|d| d + 1),
                        _ => Some(1),
                    };
                    (captured as i8 - s, Some(child), distance)
                }
                Outcome::End { score } => (score, None, Some(1)),
            };
            out.push(MoveScore {
                house: m.house,
                captured: m.captured,
                score,
                child,
                distance,
            });
        }
        order_moves(&mut out);
        Ok(out)
    }

    /// A principal variation from `p`: up to `max_plies` best moves (the first of
    /// [`Tablebase::moves`] at each ply), stopping early when the game ends. Each step's
    /// `child` is the position the next step is played from. Where every tier on the way has
    /// distances, the line converts: each move of a nonzero score brings the next capture one
    /// ply nearer, so the captures along it realise the score and no position repeats before
    /// one of score 0 (from which the line takes the first best move in house order).
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
