//! `oware._oware`: the Python bindings of `oware-db` (rules, positions, moves, and probes of
//! a directory of tables). The package `oware` (python/oware) re-exports them; its stubs are
//! python/oware/_oware.pyi.

use std::path::PathBuf;

use ::oware_db::{self as db, GameResult, MoveScore, Outcome};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
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

fn parse_error(e: db::ParseError) -> PyErr {
    PyValueError::new_err(e.to_string())
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

#[pymethods]
impl PyPosition {
    #[new]
    fn new(houses: PositionArg) -> PyResult<Self> {
        houses.get().map(PyPosition)
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

/// A directory of tables, probed lazily: `Tablebase("tables", rules="abapa")`.
#[pyclass(name = "Tablebase", module = "oware", frozen)]
struct PyTablebase {
    tb: db::Tablebase,
}

/// A move with its value, as `oware probe --json` gives it.
fn move_dict<'py>(py: Python<'py>, m: &MoveScore) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("house", m.house)?;
    d.set_item("captures", m.captured)?;
    d.set_item("score", m.score)?;
    d.set_item("category", GameResult::of(m.score.into()).name())?;
    d.set_item("position", m.child.map(|c| c.to_string()))?;
    Ok(d)
}

#[pymethods]
impl PyTablebase {
    #[new]
    #[pyo3(signature = (dir, rules = RulesArg::Text("abapa".into())))]
    fn new(dir: PathBuf, rules: RulesArg) -> PyResult<Self> {
        let rules = rules.get()?;
        let tb = db::Tablebase::open_with_rules(&dir, &rules).map_err(to_py)?;
        Ok(PyTablebase { tb })
    }

    /// The rules of the tables.
    #[getter]
    fn rules(&self) -> PyRules {
        PyRules(*self.tb.rules())
    }

    /// The directory.
    #[getter]
    fn dir(&self) -> PathBuf {
        self.tb.dir().to_path_buf()
    }

    /// The exact score of a position for the side to move.
    fn score(&self, py: Python<'_>, position: PositionArg) -> PyResult<i8> {
        let p = position.get()?;
        py.detach(|| self.tb.score(&p)).map_err(to_py)
    }

    /// Every legal move with its value, best first: dicts of `house`, `captures`, `score`,
    /// `category` and `position` (the position after it, or None if it ends the game).
    fn moves<'py>(
        &self,
        py: Python<'py>,
        position: PositionArg,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let p = position.get()?;
        let moves = py.detach(|| self.tb.moves(&p)).map_err(to_py)?;
        moves.iter().map(|m| move_dict(py, m)).collect()
    }

    /// A best line of up to `plies` moves, each a dict as in `moves`.
    #[pyo3(signature = (position, plies = 100))]
    fn best_line<'py>(
        &self,
        py: Python<'py>,
        position: PositionArg,
        plies: usize,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let p = position.get()?;
        let line = py.detach(|| self.tb.best_line(&p, plies)).map_err(to_py)?;
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
        let o = py
            .detach(|| self.tb.outcome(&p, captured_mover, captured_opponent))
            .map_err(to_py)?;
        let d = PyDict::new(py);
        d.set_item("category", o.result.name())?;
        d.set_item("difference", o.difference)?;
        d.set_item("mover_total", o.mover_total)?;
        d.set_item("opponent_total", o.opponent_total)?;
        Ok(d)
    }

    /// The scores of many positions, probed on every core without the GIL; the first error
    /// is raised.
    fn scores(&self, py: Python<'_>, positions: Vec<PositionArg>) -> PyResult<Vec<i8>> {
        let ps = positions
            .into_iter()
            .map(PositionArg::get)
            .collect::<PyResult<Vec<_>>>()?;
        py.detach(|| {
            ps.par_iter()
                .map(|p| self.tb.score(p))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(to_py)
    }

    fn __repr__(&self) -> String {
        format!(
            "Tablebase('{}', rules='{}')",
            self.tb.dir().display(),
            self.tb.rules()
        )
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
    Ok(())
}
