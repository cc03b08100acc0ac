//! The JSON API of `oware serve` (`/api/v1/probe`, `/api/v1/line`, `/api/v1/info`) and the
//! router that also serves the page.
//!
//! Every answer is JSON; an error is `{ "error": "..." }` with 400 for bad input (a malformed
//! position, a move of `moves` that cannot be played, unknown or repeated parameters, a query
//! over [`MAX_QUERY`] bytes), 404 for a missing tier (with the position's legal moves and the
//! command that generates the tier), and 500 only for a damaged table (the message names the
//! file). Files are named within the served directory, which is named by its last component
//! only: no answer reveals where the tables lie on the server. Every read of the tables runs
//! on the runtime's blocking threads ([`tokio::task::spawn_blocking`]), never on a worker that
//! serves connections.

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use oware_db::{Error, GameError, GameOutcome, Outcome, Position, Rules, Tablebase, MAX_SEEDS};
use serde_json::{json, Value};

use super::page;
use crate::commands::common::{check_captured, parse_captured, tier_ranges};
use crate::commands::json::{category, move_json, outcome_json, probe_json, ProbeJson};

/// The longest query string accepted, in bytes.
pub const MAX_QUERY: usize = 1024;

/// The longest line `/api/v1/line` gives, in plies ([`oware_db::MAX_LINE_PLIES`], as
/// `probe --max-plies` and Python's `best_line`).
pub const MAX_PLIES: usize = oware_db::MAX_LINE_PLIES;

/// The tables a server answers from.
pub struct Oracle {
    tb: Tablebase,
    /// The directory as answers name it: its last component.
    name: String,
}

impl Oracle {
    /// An oracle over an opened directory of tables. Every probe first checks that the
    /// tables it reads still have their length ([`Tablebase::check_files`]): a table
    /// truncated under the server is a 500 for that tier, not the end of the server.
    pub fn new(mut tb: Tablebase) -> Self {
        tb.check_files(true);
        let name = std::fs::canonicalize(tb.dir())
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "tables".into());
        Oracle { tb, name }
    }

    /// The rules of the tables.
    pub fn rules(&self) -> &Rules {
        self.tb.rules()
    }

    /// The tiers whose table is in the directory now.
    pub fn tiers(&self) -> Vec<u8> {
        (0..=MAX_SEEDS)
            .filter(|&n| self.tb.tier_path(n).is_file())
            .collect()
    }

    /// The command that makes the tiers up to `n` in this directory
    /// ([`tier_command`](crate::commands::common::tier_command)).
    fn generate_command(&self, n: u8) -> String {
        crate::commands::common::tier_command(&self.name, self.tb.rules(), n, self.tb.is_romein())
    }

    /// A message for an answer: the directory's path, wherever it names a file of it, is
    /// replaced by the directory's name.
    fn public(&self, message: &str) -> String {
        let dir = self.tb.dir().join("");
        let dir = dir.to_string_lossy();
        if dir.is_empty() {
            return message.to_string();
        }
        message.replace(dir.as_ref(), &format!("{}/", self.name))
    }
}

/// Runs `f` over the oracle on the runtime's blocking threads: opening a table and reading
/// its pages may wait on the disk, and must not hold a worker that serves connections.
async fn blocking<T: Send + 'static>(
    o: &Arc<Oracle>,
    f: impl FnOnce(&Oracle) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let o = Arc::clone(o);
    tokio::task::spawn_blocking(move || f(&o))
        .await
        .unwrap_or_else(|e| {
            Err(ApiError {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                message: format!("the request failed: {e}"),
                extra: Value::Null,
            })
        })
}

/// `tiers 0..=12`, `tiers 0..=10, 14`, or `no tiers`, for a list of tiers.
pub fn tiers_text(tiers: &[u8]) -> String {
    if tiers.is_empty() {
        return "no tiers".into();
    }
    format!("tiers {}", tier_ranges(tiers))
}

/// The router: the page at `/`, its script and style, and the API under `/api/v1/`.
pub fn router(oracle: Arc<Oracle>) -> Router {
    Router::new()
        .route("/", get(page::index))
        .route("/app.js", get(page::script))
        .route("/style.css", get(page::style))
        .route("/api/v1/probe", get(probe))
        .route("/api/v1/line", get(line))
        .route("/api/v1/info", get(info))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(oracle)
}

/// An error answer: a status and `{ "error": message, ...extra }`.
struct ApiError {
    status: StatusCode,
    message: String,
    extra: Value,
}

impl ApiError {
    fn bad(message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            extra: Value::Null,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = match self.extra {
            Value::Object(m) => Value::Object(m),
            _ => json!({}),
        };
        body["error"] = Value::String(self.message);
        (self.status, Json(body)).into_response()
    }
}

/// The error of a probe of `p`: 404 with the legal moves for a missing tier, 400 for an
/// impossible state, 500 for everything else (a damaged or unreadable table).
fn probe_error(o: &Oracle, p: &Position, e: Error) -> ApiError {
    match e {
        Error::MissingTier { tier, .. } => {
            let need = tier.max(p.seeds());
            let moves: Vec<Value> = p
                .moves(o.rules())
                .iter()
                .map(|m| match m.outcome {
                    Outcome::Continue { child, .. } => json!({
                        "house": m.house,
                        "captures": m.captured,
                        "position": child.to_string(),
                    }),
                    // The rules alone give the value of a move that ends the game.
                    Outcome::End { score } => json!({
                        "house": m.house,
                        "captures": m.captured,
                        "score": score,
                        "category": category(score.into()),
                        "position": null,
                    }),
                })
                .collect();
            ApiError {
                status: StatusCode::NOT_FOUND,
                message: o.public(&format!(
                    "{e}; generate it with `{}`",
                    o.generate_command(need)
                )),
                extra: json!({
                    "position": p.to_string(),
                    "rules": o.rules().to_string(),
                    "seeds": p.seeds(),
                    "missing_tier": tier,
                    "generate": o.generate_command(need),
                    "moves": moves,
                }),
            }
        }
        Error::InvalidState(_) | Error::TooManySeeds { .. } | Error::TierOutOfRange(_) => {
            ApiError::bad(e.to_string())
        }
        e => ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: o.public(&e.to_string()),
            extra: Value::Null,
        },
    }
}

/// The query's parameters, each at most once and each one of `allowed`.
fn params(
    uri: &Uri,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    allowed: &[&str],
) -> Result<Vec<(String, String)>, ApiError> {
    let len = uri.query().map_or(0, str::len);
    if len > MAX_QUERY {
        return Err(ApiError::bad(format!(
            "the query string is {len} bytes, over the limit of {MAX_QUERY}"
        )));
    }
    let Query(pairs) = query.map_err(|e| ApiError::bad(format!("bad query string: {e}")))?;
    for (k, (key, _)) in pairs.iter().enumerate() {
        if !allowed.contains(&key.as_str()) {
            let takes = if allowed.is_empty() {
                "no parameters".to_string()
            } else {
                allowed.join(", ")
            };
            return Err(ApiError::bad(format!(
                "unknown parameter `{key}`; this endpoint takes {takes}"
            )));
        }
        if pairs[..k].iter().any(|(other, _)| other == key) {
            return Err(ApiError::bad(format!("parameter `{key}` is given twice")));
        }
    }
    Ok(pairs)
}

fn get_param<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The parameters that name the position of a request: `position`, or `start` with `moves`.
const POSITION_PARAMS: [&str; 3] = ["position", "start", "moves"];

/// The position of a request: the `position` parameter parsed, or the position reached from
/// the start with `start` seeds per house (1..=4) by playing the houses of `moves` (`5,2,3`,
/// none for the start itself) under `rules`, as `oware probe --start K --moves H,H,...`.
/// A move that cannot be played is a 400 naming its place in the list
/// (`moves: move 3 (house 0) is illegal in ...`).
fn position(pairs: &[(String, String)], rules: &Rules) -> Result<Position, ApiError> {
    let moves = get_param(pairs, "moves");
    match (get_param(pairs, "position"), get_param(pairs, "start")) {
        (Some(_), Some(_)) => Err(ApiError::bad(
            "parameters `position` and `start` exclude each other: give one",
        )),
        (Some(_), None) | (None, None) if moves.is_some() => Err(ApiError::bad(
            "parameter `moves` needs `start` (the seeds per house of the game's start, 1..=4)",
        )),
        (Some(text), None) => text.parse().map_err(|e| ApiError::bad(format!("{e}"))),
        (None, None) => Err(ApiError::bad(
            "missing parameter `position` (12 house counts, the mover's first), or `start` \
             (the seeds per house of a game's start, 1..=4) with `moves`",
        )),
        (None, Some(text)) => {
            let game_error = |e: GameError| ApiError::bad(format!("{}: {e}", e.argument()));
            let k = match text.parse::<u8>() {
                Ok(k) if text.bytes().all(|b| b.is_ascii_digit()) => k,
                _ => {
                    return Err(game_error(GameError::Start {
                        word: oware_db::shorten(text),
                    }))
                }
            };
            Position::from_game_text(rules, k, moves.unwrap_or("")).map_err(game_error)
        }
    }
}

/// `GET /api/v1/probe?position=P[&captured=A,B]`, or `start=K[&moves=H,H,...]` in place of
/// `position` ([`position`]): the shape of `oware probe --json`.
async fn probe(
    State(o): State<Arc<Oracle>>,
    uri: Uri,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<ProbeJson>, ApiError> {
    let pairs = params(&uri, query, &[&POSITION_PARAMS[..], &["captured"]].concat())?;
    let p = position(&pairs, o.rules())?;
    let captured = match get_param(&pairs, "captured") {
        Some(s) => {
            let c = parse_captured(s)
                .map_err(|e| ApiError::bad(e.replacen("--captured", "captured", 1)))?;
            // The message names the command line's flag; here it is the parameter.
            check_captured(&p, c)
                .map_err(|e| ApiError::bad(e.to_string().replacen("--captured", "captured", 1)))?;
            Some(c)
        }
        None => None,
    };
    let (score, distance, moves) = blocking(&o, move |o| {
        let answer = (|| {
            let score = o.tb.score(&p)?;
            let moves = o.tb.moves(&p)?;
            let distance = crate::commands::probe::distance_or_moves_note(&o.tb, &p, &moves)
                .map_err(|e| o.public(&e));
            Ok((score, distance, moves))
        })();
        answer.map_err(|e| probe_error(o, &p, e))
    })
    .await?;
    let mut v = probe_json(&p, o.rules(), score, &distance, &moves);
    v.outcome =
        captured.map(|c| outcome_json(&GameOutcome::new(p.seeds(), c.mover, c.opponent, score)));
    Ok(Json(v))
}

/// `GET /api/v1/line?position=P[&plies=N]`, or `start=K[&moves=H,H,...]` in place of
/// `position` ([`position`]): the score and a best line of up to `N` plies (default 100, at
/// most [`MAX_PLIES`]).
async fn line(
    State(o): State<Arc<Oracle>>,
    uri: Uri,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let pairs = params(&uri, query, &[&POSITION_PARAMS[..], &["plies"]].concat())?;
    let p = position(&pairs, o.rules())?;
    let plies = match get_param(&pairs, "plies") {
        None => 100,
        Some(s) => match s.parse::<usize>() {
            Ok(n) if n <= MAX_PLIES && s.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => {
                return Err(ApiError::bad(format!(
                    "plies `{s}` is not a count in 0..={MAX_PLIES}"
                )))
            }
        },
    };
    let (score, distance, line) = blocking(&o, move |o| {
        let answer = (|| {
            let score = o.tb.score(&p)?;
            let line = o.tb.best_line(&p, plies)?;
            let distance =
                crate::commands::probe::distance_or_note(&o.tb, &p).map_err(|e| o.public(&e));
            Ok((score, distance, line))
        })();
        answer.map_err(|e| probe_error(o, &p, e))
    })
    .await?;
    let mut v = json!({
        "position": p.to_string(),
        "rules": o.rules().to_string(),
        "seeds": p.seeds(),
        "score": score,
        "category": category(score.into()),
        "distance": distance.as_ref().ok().copied().flatten(),
        "line": line.iter().map(move_json).collect::<Vec<_>>(),
    });
    if let Err(note) = distance {
        v["distance_note"] = json!(note);
    }
    Ok(Json(v))
}

/// `GET /api/v1/info`: the rules, the directory's name and the tiers present.
async fn info(
    State(o): State<Arc<Oracle>>,
    uri: Uri,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    params(&uri, query, &[])?;
    let tiers = blocking(&o, |o| Ok(o.tiers())).await?;
    // The highest n with every tier 0..=n present.
    let complete = tiers
        .iter()
        .enumerate()
        .take_while(|&(k, &n)| usize::from(n) == k)
        .last()
        .map(|(_, &n)| n);
    Ok(Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "rules": o.rules().to_string(),
        "dir": o.name,
        "tiers": tiers,
        "complete_to": complete,
        "summary": tiers_text(&tiers),
    })))
}

/// A method other than GET (or HEAD, answered as GET) on a page of the API: 405 as JSON.
async fn method_not_allowed(method: axum::http::Method, uri: Uri) -> ApiError {
    ApiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        message: format!("{method} {}: only GET (and HEAD) is served", uri.path()),
        extra: Value::Null,
    }
}

/// Any other path: 404 as JSON.
async fn not_found(uri: Uri) -> ApiError {
    ApiError {
        status: StatusCode::NOT_FOUND,
        message: format!("no such page: {}", uri.path()),
        extra: Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::tiers_text;

    #[test]
    fn tier_lists_read_as_ranges() {
        assert_eq!(tiers_text(&[]), "no tiers");
        assert_eq!(tiers_text(&[0, 1, 2]), "tiers 0..=2");
        assert_eq!(tiers_text(&[0, 1, 2, 5, 7, 8]), "tiers 0..=2, 5, 7..=8");
    }
}
