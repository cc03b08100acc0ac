//! `oware._oware`: the Python bindings of `oware-db` (rules, positions, moves, and probes of
//! a directory of tables). The package `oware` (python/oware) re-exports them; its stubs are
//! python/oware/_oware.pyi.

use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock, RwLockReadGuard};

use ::oware_db::{self as db, GameResult, MoveScore, Outcome};
use pyo3::create_exception;
use pyo3::exceptions::{
    PyException, PyFileNotFoundError, PyMemoryError, PyOSError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use rayon::prelude::*;

create_exception!(
    _oware,
    TableError,
    PyException,
    "A table or manifest is damaged (the message names the file); a file that cannot be read raises OSError."
);
create_exception!(
    _oware,
    MissingTierError,
    PyFileNotFoundError,
    "The table of a tier a probe needs is not in the directory."
);

/// The Python exception of a library error: `MissingTierError` for a missing tier,
/// `ValueError` for an impossible state or other rules, `OSError` (`FileNotFoundError` and
/// kin) for a directory that cannot be read, `TableError` for a damaged table or manifest.
fn to_py(e: db::Error) -> PyErr {
    let message = e.to_string();
    match e {
        db::Error::MissingTier { .. } => MissingTierError::new_err(message),
        db::Error::InvalidState(_)
        | db::Error::TooManySeeds { .. }
        | db::Error::TierOutOfRange(_)
        | db::Error::RulesMismatch { .. } => PyValueError::new_err(message),
        db::Error::Io { source, .. } => {
            PyOSError::new_err((source.raw_os_error().unwrap_or(0), message))
        }
        _ => TableError::new_err(message),
    }
}

/// The `ValueError` of text that does not parse, its quote of the input cut as the command
/// line cuts it ([`db::shorten_quotes`]).
fn parse_error(e: db::ParseError) -> PyErr {
    PyValueError::new_err(db::shorten_quotes(&e.to_string()))
}

/// Positions probed per parallel run of a batch: signals (Ctrl-C) are checked between runs.
const BATCH_CHUNK: usize = 1 << 16;

/// Plies of a best line computed per run without the GIL: signals are checked between runs.
const LINE_CHUNK: usize = 64;

/// Room for `more` items in `v`, or `MemoryError` where it cannot be had (an input too long
/// to hold), instead of the abort of a failed allocation.
fn reserve<T>(v: &mut Vec<T>, more: usize, what: &str) -> PyResult<()> {
    v.try_reserve(more)
        .map_err(|_| PyMemoryError::new_err(format!("no memory for {more} {what}")))
}

/// A rules value: a preset (`abapa`, `awari`) with options, e.g.
/// `Rules("abapa+grand-slam=illegal")`.
#[pyclass(name = "Rules", module = "oware", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct PyRules(db::Rules);

#[pymethods]
impl PyRules {
    #[new]
    #[pyo3(signature = (text = "abapa"))]
    fn new(text: &str) -> PyResult<Self> {
        text.parse().map(PyRules).map_err(parse_error)
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Rules('{}')", self.0)
    }
}

/// A position: 12 house counts, the mover's houses (0..6) first, then the opponent's, in
/// sowing order. `Position("4 4 4 4 4 4 4 4 4 4 4 4")` or `Position([4] * 12)`.
#[pyclass(name = "Position", module = "oware", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct PyPosition(db::Position);

/// What a position argument may be: a `Position`, its text, or a list of 12 counts.
#[derive(FromPyObject)]
enum PositionArg {
    Position(PyPosition),
    Text(String),
    Counts(Vec<i64>),
}

impl PositionArg {
    /// The argument as the user gave it, for an error message: at most
    /// [`db::QUOTE_CHARS`] characters of it, then `…` ([`db::shorten`]).
    fn describe(&self) -> String {
        match self {
            PositionArg::Position(p) => p.0.to_string(),
            PositionArg::Text(s) => db::shorten(s),
            PositionArg::Counts(v) => {
                // Written only as far as the quote shows: a list may hold millions.
                let mut text = String::from("[");
                for (k, c) in v.iter().enumerate() {
                    if k > 0 {
                        text.push_str(", ");
                    }
                    text.push_str(&c.to_string());
                    if text.len() > db::QUOTE_CHARS {
                        break;
                    }
                }
                if text.len() <= db::QUOTE_CHARS {
                    text.push(']');
                }
                db::shorten(&text)
            }
        }
    }

    fn get(self) -> PyResult<db::Position> {
        match self {
            PositionArg::Position(p) => Ok(p.0),
            PositionArg::Text(s) => s.parse().map_err(parse_error),
            PositionArg::Counts(v) => {
                if v.len() != db::HOUSES {
                    return Err(PyValueError::new_err(format!(
                        "bad position: expected {} house counts, found {}",
                        db::HOUSES,
                        v.len()
                    )));
                }
                let mut houses = [0u8; db::HOUSES];
                for (i, (&c, h)) in v.iter().zip(&mut houses).enumerate() {
                    *h = u8::try_from(c)
                        .ok()
                        .filter(|&c| c <= db::MAX_SEEDS)
                        .ok_or_else(|| {
                            PyValueError::new_err(format!(
                                "bad position: house {i} holds {c}, not a count in 0..=48"
                            ))
                        })?;
                }
                db::Position::new(houses).map_err(parse_error)
            }
        }
    }
}

/// What a rules argument may be: a `Rules` or its text.
#[derive(FromPyObject)]
enum RulesArg {
    Rules(PyRules),
    Text(String),
}

impl RulesArg {
    fn get(self) -> PyResult<db::Rules> {
        match self {
            RulesArg::Rules(r) => Ok(r.0),
            RulesArg::Text(s) => s.parse().map_err(parse_error),
        }
    }
}

/// What the moves of `Position.from_game` may be: the houses as a list of ints, or as the
/// command line's text (`"5,2,3"`).
#[derive(FromPyObject)]
enum GameMovesArg {
    Text(String),
    Houses(Vec<i64>),
}

/// The `ValueError` of a game that cannot be replayed: the message of the command line and
/// the web API, prefixed with the argument at fault (`moves: move 3 (house 0) is illegal ...`).
fn game_error(e: db::GameError) -> PyErr {
    PyValueError::new_err(format!("{}: {e}", e.argument()))
}

#[pymethods]
impl PyPosition {
    #[new]
    fn new(houses: PositionArg) -> PyResult<Self> {
        houses.get().map(PyPosition)
    }

    /// The position a game reaches: from the start with `start` seeds in every house
    /// (1..=4), the houses of `moves` played in turn under `rules`, each numbered 0..=5 from
    /// the left of the side that plays it (the `house` of the moves a probe lists). `moves`
    /// is a list of houses or the command line's text (`"5,2,3"`). A move that cannot be
    /// played raises `ValueError` naming its place in the list, as the command line and the
    /// web API do: `moves: move 3 (house 0) is illegal in ...: house 0 is empty`.
    #[staticmethod]
    #[pyo3(signature = (
        start,
        moves = GameMovesArg::Houses(Vec::new()),
        rules = RulesArg::Text("abapa".into()),
    ))]
    fn from_game(start: i64, moves: GameMovesArg, rules: RulesArg) -> PyResult<PyPosition> {
        let rules = rules.get()?;
        let Ok(start) = u8::try_from(start) else {
            return Err(game_error(db::GameError::Start {
                word: start.to_string(),
            }));
        };
        let houses = match moves {
            GameMovesArg::Text(text) => {
                return db::Position::from_game_text(&rules, start, &text)
                    .map(PyPosition)
                    .map_err(game_error)
            }
            GameMovesArg::Houses(houses) => houses,
        };
        // The houses up to the first that is no house at all; the moves before it are played
        // first, so that the error is that of the first move at fault.
        let end = houses
            .iter()
            .position(|&h| u8::try_from(h).is_err())
            .unwrap_or(houses.len());
        let played: Vec<u8> = houses[..end]
            .iter()
            .filter_map(|&h| u8::try_from(h).ok())
            .collect();
        let p = db::Position::from_game(&rules, start, &played).map_err(game_error)?;
        match houses.get(end) {
            Some(h) => Err(game_error(db::GameError::NotAHouse {
                at: end + 1,
                word: h.to_string(),
            })),
            None => Ok(PyPosition(p)),
        }
    }

    /// The seeds on the board (the position's tier).
    #[getter]
    fn seeds(&self) -> u8 {
        self.0.seeds()
    }

    /// The 12 house counts, the mover's first.
    #[getter]
    fn houses(&self) -> Vec<u8> {
        self.0.houses().to_vec()
    }

    /// The same board seen from the other side (houses 6..12 first).
    fn flipped(&self) -> PyPosition {
        PyPosition(self.0.flipped())
    }

    /// The legal moves under `rules`, in house order; empty when the game is over.
    #[pyo3(signature = (rules = RulesArg::Text("abapa".into())))]
    fn moves(&self, rules: RulesArg) -> PyResult<Vec<PyMove>> {
        let rules = rules.get()?;
        Ok(self
            .0
            .moves(&rules)
            .iter()
            .map(|m| match m.outcome {
                Outcome::Continue { child, captured } => PyMove {
                    house: m.house,
                    captured,
                    child: Some(PyPosition(child)),
                    end_score: None,
                },
                Outcome::End { score } => PyMove {
                    house: m.house,
                    captured: m.captured,
                    child: None,
                    end_score: Some(score),
                },
            })
            .collect())
    }

    /// The score of the game ended here because the mover has no legal move: the seeds on
    /// the mover's side minus those on the opponent's.
    fn end_score(&self) -> i8 {
        self.0.end_score()
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Position('{}')", self.0)
    }
}

/// A legal move: the house played (0..6, the mover's), the seeds it captures, and either the
/// position after it (`child`, from the next mover's side) or, for a move that ends the game,
/// the rest of the game's score for the mover (`end_score`).
#[pyclass(name = "Move", module = "oware", frozen, get_all)]
#[derive(Clone)]
struct PyMove {
    house: u8,
    captured: u8,
    child: Option<PyPosition>,
    end_score: Option<i8>,
}

#[pymethods]
impl PyMove {
    fn __repr__(&self) -> String {
        match (&self.child, self.end_score) {
            (Some(c), _) => format!(
                "Move(house={}, captured={}, child=Position('{}'))",
                self.house, self.captured, c.0
            ),
            (None, s) => format!(
                "Move(house={}, captured={}, end_score={})",
                self.house,
                self.captured,
                s.unwrap_or(0)
            ),
        }
    }
}

/// One directory of tables, several, or a list of them, probed lazily:
/// `Tablebase("tables")`, `Tablebase("d1", "d2")`, `Tablebase(["d1", "d2"], rules="awari")`.
/// The rules are the tables' own unless given; closed by `close()` or a `with` block.
#[pyclass(name = "Tablebase", module = "oware", frozen)]
struct PyTablebase {
    /// The tables; `None` once closed.
    tb: RwLock<Option<db::Tablebase>>,
    /// The directories, in the order a tier is looked for.
    dirs: Vec<PathBuf>,
    /// The rules probes are answered under.
    rules: db::Rules,
}

/// A move with its value, as `oware probe --json` gives it.
fn move_dict<'py>(py: Python<'py>, m: &MoveScore) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("house", m.house)?;
    d.set_item("captures", m.captured)?;
    d.set_item("score", m.score)?;
    d.set_item("category", GameResult::of(m.score.into()).name())?;
    d.set_item("distance", m.distance)?;
    d.set_item("position", m.child.map(|c| c.to_string()))?;
    Ok(d)
}

/// The directories of `Tablebase(*dirs)`: each argument a path, or a list of paths.
fn directories(dirs: &Bound<'_, PyTuple>) -> PyResult<Vec<PathBuf>> {
    let mut out = Vec::new();
    for d in dirs.iter() {
        if let Ok(p) = d.extract::<PathBuf>() {
            out.push(p);
        } else if let Ok(ps) = d.extract::<Vec<PathBuf>>() {
            out.extend(ps);
        } else {
            return Err(PyTypeError::new_err(format!(
                "Tablebase takes directories (str or os.PathLike) or lists of them, not {}",
                d.get_type().name()?
            )));
        }
    }
    if out.is_empty() {
        return Err(PyTypeError::new_err(
            "Tablebase takes at least one directory of tables",
        ));
    }
    Ok(out)
}

/// The rules of the tables in `dir`: its manifest's, or without one the first table's that
/// opens; `None` for a directory without tables (as the command line reads them).
fn tables_rules(dir: &Path) -> Result<Option<db::Rules>, db::Error> {
    let manifest = db::manifest::Manifest::load(dir)?;
    Ok(db::manifest::tables_rules(dir, manifest.as_ref()))
}

/// The rules to probe `dirs` under: the tables' own, which every directory must share, and
/// `asked` must match; `asked` or `abapa` for directories without tables.
/// The one directory `dirs` opened as Romein and Bal's `scores.N` files, whose rules are
/// `awari` (`asked`, when given, must be them).
fn open_romein(
    py: Python<'_>,
    dirs: &[PathBuf],
    asked: Option<db::Rules>,
) -> PyResult<db::Tablebase> {
    if let Some(a) = asked.filter(|&a| a != db::Rules::AWARI) {
        return Err(PyValueError::new_err(format!(
            "format=\"romein\" reads Romein and Bal's databases, whose rules are `awari`, not \
             `{a}`"
        )));
    }
    let [dir] = dirs else {
        return Err(PyValueError::new_err(format!(
            "format=\"romein\" opens one directory, not {}",
            dirs.len()
        )));
    };
    py.detach(|| db::Tablebase::open_romein(dir)).map_err(to_py)
}

fn resolve_rules(dirs: &[PathBuf], asked: Option<db::Rules>) -> PyResult<db::Rules> {
    let mut found: Option<(db::Rules, &PathBuf)> = None;
    for d in dirs {
        let Some(r) = tables_rules(d).map_err(to_py)? else {
            continue;
        };
        match found {
            Some((f, first)) if f != r => {
                return Err(PyValueError::new_err(format!(
                    "{} holds tables under rules `{f}`, {} under `{r}`",
                    first.display(),
                    d.display()
                )))
            }
            Some(_) => {}
            None => found = Some((r, d)),
        }
    }
    match (found, asked) {
        (Some((f, _)), Some(a)) if f != a => {
            Err(to_py(db::Error::RulesMismatch { table: f, asked: a }))
        }
        (Some((f, _)), _) => Ok(f),
        (None, a) => Ok(a.unwrap_or(db::Rules::ABAPA)),
    }
}

impl PyTablebase {
    /// The open tables, or `ValueError` once closed.
    fn open(&self) -> PyResult<RwLockReadGuard<'_, Option<db::Tablebase>>> {
        let g = self.tb.read().unwrap_or_else(PoisonError::into_inner);
        if g.is_none() {
            return Err(PyValueError::new_err("I/O operation on a closed Tablebase"));
        }
        Ok(g)
    }

    /// Runs `f` on the tables without the GIL.
    fn probe<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&db::Tablebase) -> Result<R, db::Error> + Send,
    ) -> PyResult<R> {
        let g = self.open()?;
        let Some(tb) = g.as_ref() else {
            return Err(PyValueError::new_err("I/O operation on a closed Tablebase"));
        };
        py.detach(|| f(tb)).map_err(to_py)
    }

    /// As [`PyTablebase::probe`], `None` for a missing tier.
    fn probe_or_none<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&db::Tablebase) -> Result<R, db::Error> + Send,
    ) -> PyResult<Option<R>> {
        let g = self.open()?;
        let Some(tb) = g.as_ref() else {
            return Err(PyValueError::new_err("I/O operation on a closed Tablebase"));
        };
        match py.detach(|| f(tb)) {
            Ok(r) => Ok(Some(r)),
            Err(db::Error::MissingTier { .. }) => Ok(None),
            Err(e) => Err(to_py(e)),
        }
    }
}

/// The error of item `i` (`what`) of a batch: the same exception, its message prefixed with
/// the item, and its `index` and `position` attributes set.
fn batch_error(py: Python<'_>, e: PyErr, i: usize, what: &str) -> PyErr {
    let value = e.value(py);
    let message = format!("position {i} ({what}): {value}");
    // An OSError keeps its errno (and its subclass, e.g. FileNotFoundError).
    let errno = value
        .getattr("errno")
        .ok()
        .and_then(|n| n.extract::<i32>().ok());
    let typ = e.get_type(py);
    let made = match errno {
        Some(n) => typ.call1((n, message.as_str())),
        None => typ.call1((message.as_str(),)),
    };
    let Ok(v) = made else {
        return e;
    };
    if v.setattr("index", i).is_err() || v.setattr("position", what).is_err() {
        return e;
    }
    let new = PyErr::from_value(v);
    new.set_cause(py, Some(e));
    new
}

#[pymethods]
impl PyTablebase {
    #[new]
    #[pyo3(signature = (*dirs, rules = None, format = None))]
    fn new(
        py: Python<'_>,
        dirs: &Bound<'_, PyTuple>,
        rules: Option<RulesArg>,
        format: Option<&str>,
    ) -> PyResult<Self> {
        let dirs = directories(dirs)?;
        let asked = rules.map(RulesArg::get).transpose()?;
        let (tb, rules) = match format {
            None => {
                let rules = py.detach(|| resolve_rules(&dirs, asked))?;
                let tb = db::Tablebase::open_dirs(&dirs, &rules).map_err(to_py)?;
                (tb, rules)
            }
            Some("romein") => (open_romein(py, &dirs, asked)?, db::Rules::AWARI),
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "format must be \"romein\" (Romein and Bal's scores.N files) or None, \
                     not {other:?}"
                )))
            }
        };
        Ok(PyTablebase {
            tb: RwLock::new(Some(tb)),
            dirs,
            rules,
        })
    }

    /// The rules of the tables.
    #[getter]
    fn rules(&self) -> PyRules {
        PyRules(self.rules)
    }

    /// The directory (the first, of several).
    #[getter]
    fn dir(&self) -> PathBuf {
        self.dirs[0].clone()
    }

    /// The directories, in the order a tier is looked for.
    #[getter]
    fn dirs(&self) -> Vec<PathBuf> {
        self.dirs.clone()
    }

    /// Whether `close()` was called (or the `with` block ended).
    #[getter]
    fn closed(&self) -> bool {
        self.tb
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }

    /// Closes the tables (unmaps them); a probe after it raises `ValueError`.
    fn close(&self, py: Python<'_>) {
        // Without the GIL: a probe in another thread holds the tables until it ends.
        let tb = py.detach(|| {
            self.tb
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
        });
        drop(tb);
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }

    /// The exact score of a position for the side to move.
    fn score(&self, py: Python<'_>, position: PositionArg) -> PyResult<i8> {
        let p = position.get()?;
        self.probe(py, |tb| tb.score(&p))
    }

    /// The exact score of a position, or `default` when a tier it needs is missing.
    #[pyo3(signature = (position, default = None))]
    fn get_score(
        &self,
        py: Python<'_>,
        position: PositionArg,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let p = position.get()?;
        Ok(match self.probe_or_none(py, |tb| tb.score(&p))? {
            Some(s) => s.into_pyobject(py)?.into_any().unbind(),
            None => default.unwrap_or_else(|| py.None()),
        })
    }

    /// The distance to conversion of a position (docs/RULES.md): the plies to the next
    /// capture or end under play that keeps the score, the winner taking the shortest way
    /// and the loser the longest; None for a score of 0. Raises `TableError` where the tier
    /// has no distance table (generated with `--no-distance`) or it cannot be read, and
    /// `OSError` where the manifest records one whose file is missing.
    fn distance(&self, py: Python<'_>, position: PositionArg) -> PyResult<Option<u16>> {
        let p = position.get()?;
        self.probe(py, |tb| tb.distance(&p))
    }

    /// Every legal move with its value, best first: dicts of `house`, `captures`, `score`,
    /// `category`, `distance` (plies to the next capture when play after the move keeps the
    /// score; None for a move to a position scored 0 or without a distance table) and
    /// `position` (the position after it, or None if it ends the game). Among moves of equal
    /// score, the one that converts comes first: the shortest distance for a win, the
    /// longest for a loss.
    fn moves<'py>(
        &self,
        py: Python<'py>,
        position: PositionArg,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let p = position.get()?;
        let moves = self.probe(py, |tb| tb.moves(&p))?;
        moves.iter().map(|m| move_dict(py, m)).collect()
    }

    /// Every legal move with its value as in `moves`, or `default` when a tier it needs is
    /// missing.
    #[pyo3(signature = (position, default = None))]
    fn get_moves(
        &self,
        py: Python<'_>,
        position: PositionArg,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let p = position.get()?;
        Ok(match self.probe_or_none(py, |tb| tb.moves(&p))? {
            Some(moves) => {
                let v = moves
                    .iter()
                    .map(|m| move_dict(py, m))
                    .collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, v)?.into_any().unbind()
            }
            None => default.unwrap_or_else(|| py.None()),
        })
    }

    /// A best line of up to `plies` moves, each a dict as in `moves`: the first move of
    /// `moves` at each ply, so that where the tables have distances the line realises its
    /// score (its captures add up to it) without repeating a position. `plies` is at most
    /// 1000 (`MAX_LINE_PLIES`, as the command line's `--max-plies` and the web API's);
    /// more raises `ValueError`.
    #[pyo3(signature = (position, plies = 100))]
    fn best_line<'py>(
        &self,
        py: Python<'py>,
        position: PositionArg,
        plies: usize,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        if plies > db::MAX_LINE_PLIES {
            return Err(PyValueError::new_err(format!(
                "plies {plies} is over {}, the longest line given (as the command line's \
                 --max-plies)",
                db::MAX_LINE_PLIES
            )));
        }
        let p = position.get()?;
        let mut line: Vec<MoveScore> = Vec::new();
        reserve(&mut line, plies, "plies")?;
        let mut cur = Some(p);
        // In runs of LINE_CHUNK plies, Ctrl-C checked between them: the line is the same,
        // each ply depending on the position it is played from only.
        while let Some(from) = cur.filter(|_| line.len() < plies) {
            let n = (plies - line.len()).min(LINE_CHUNK);
            let part = self.probe(py, |tb| tb.best_line(&from, n))?;
            cur = match part.last() {
                Some(last) if part.len() == n => last.child,
                _ => None,
            };
            line.extend(part);
            py.check_signals()?;
        }
        line.iter().map(|m| move_dict(py, m)).collect()
    }

    /// The perfect-play end of a game in progress, when the mover has captured
    /// `captured_mover` seeds and the opponent `captured_opponent`: a dict of `category`,
    /// `difference`, `mover_total` and `opponent_total`.
    fn outcome<'py>(
        &self,
        py: Python<'py>,
        position: PositionArg,
        captured_mover: u8,
        captured_opponent: u8,
    ) -> PyResult<Bound<'py, PyDict>> {
        let p = position.get()?;
        let o = self.probe(py, |tb| tb.outcome(&p, captured_mover, captured_opponent))?;
        let d = PyDict::new(py);
        d.set_item("category", o.result.name())?;
        d.set_item("difference", o.difference)?;
        d.set_item("mover_total", o.mover_total)?;
        d.set_item("opponent_total", o.opponent_total)?;
        Ok(d)
    }

    /// The scores of many positions (an iterable of them), probed on every core without
    /// the GIL. The first position that fails raises its error, the message naming it
    /// (`position 3 (...): ...`, at most 100 characters of it) and the exception's `index`
    /// and `position` attributes set. Ctrl-C interrupts it (`KeyboardInterrupt`); a batch
    /// too large for memory raises `MemoryError`.
    fn scores(&self, py: Python<'_>, positions: &Bound<'_, PyAny>) -> PyResult<Vec<i8>> {
        if positions.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "scores takes an iterable of positions, not one str",
            ));
        }
        let mut ps: Vec<db::Position> = Vec::new();
        reserve(&mut ps, positions.len().unwrap_or(0), "positions")?;
        for (i, a) in positions.try_iter()?.enumerate() {
            if i % BATCH_CHUNK == BATCH_CHUNK - 1 {
                py.check_signals()?;
            }
            let item = a?;
            let a: PositionArg = match item.extract() {
                Ok(a) => a,
                Err(e) => {
                    let what = item.repr().map(|r| db::shorten(&r.to_string_lossy()));
                    return Err(batch_error(py, e, i, &what.unwrap_or_default()));
                }
            };
            let what = a.describe();
            let p = a.get().map_err(|e| batch_error(py, e, i, &what))?;
            reserve(&mut ps, 1, "positions")?;
            ps.push(p);
        }
        let mut out: Vec<i8> = Vec::new();
        reserve(&mut out, ps.len(), "scores")?;
        for (k, chunk) in ps.chunks(BATCH_CHUNK).enumerate() {
            let g = self.open()?;
            let Some(tb) = g.as_ref() else {
                return Err(PyValueError::new_err("I/O operation on a closed Tablebase"));
            };
            let results: Vec<Result<i8, db::Error>> =
                py.detach(|| chunk.par_iter().map(|p| tb.score(p)).collect());
            drop(g);
            for (j, r) in results.into_iter().enumerate() {
                let i = k * BATCH_CHUNK + j;
                out.push(r.map_err(|e| batch_error(py, to_py(e), i, &ps[i].to_string()))?);
            }
            py.check_signals()?;
        }
        Ok(out)
    }

    fn __repr__(&self) -> String {
        let dirs: Vec<String> = self
            .dirs
            .iter()
            .map(|d| format!("'{}'", d.display()))
            .collect();
        format!("Tablebase({}, rules='{}')", dirs.join(", "), self.rules)
    }
}

/// The Python module `oware._oware`.
#[pymodule]
fn _oware(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRules>()?;
    m.add_class::<PyPosition>()?;
    m.add_class::<PyMove>()?;
    m.add_class::<PyTablebase>()?;
    m.add("TableError", m.py().get_type::<TableError>())?;
    m.add("MissingTierError", m.py().get_type::<MissingTierError>())?;
    m.add("PRESETS", db::rules::PRESETS.to_vec())?;
    m.add("MAX_LINE_PLIES", db::MAX_LINE_PLIES)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
