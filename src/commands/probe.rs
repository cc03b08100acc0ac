//! `oware probe`: the exact score of a position and of every move, or a batch on stdin.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{PoisonError, RwLock};

use oware_db::table::Table;
use oware_db::{Position, Rules, Tablebase};
use rayon::prelude::*;
use serde_json::json;

use super::common::{check_captured, open_tablebase, parse_captured, Captured, Usage};
use super::json::{batch_json, category, move_json, outcome_json, probe_json};

/// Arguments of `oware probe`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the tables.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// Read the directory as Romein-Bal files (`scores.N`, rules `awari`) even where it
    /// holds tables of this program too (a directory with `scores.N` files and no
    /// `tier-NN.owt` is read so without it).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<super::common::Format>,
    /// Rules the tables must have been built with (e.g. `abapa`, `awari`,
    /// `abapa+grand-slam=illegal`; default: those of the tables).
    #[arg(long)]
    pub rules: Option<Rules>,
    /// Print JSON (the shape of the Lichess tablebase API; see docs/CLI.md); with `-`, one
    /// object per line.
    #[arg(long)]
    pub json: bool,
    /// Also print the best line.
    #[arg(long)]
    pub line: bool,
    /// Longest best line printed by --line, in plies (at most 1000, as the API's).
    #[arg(long, default_value_t = 100, value_parser = parse_plies, requires = "line")]
    pub max_plies: usize,
    /// Seeds already captured by the mover and by the opponent, `A,B`: also print the
    /// outcome of the game (win/draw/loss and the final totals).
    #[arg(long, value_name = "A,B", value_parser = parse_captured)]
    pub captured: Option<Captured>,
    /// Worker threads, 1..=1024 (default: one per core). Used by a batch (`-`).
    #[arg(long, value_parser = super::common::parse_threads)]
    pub threads: Option<usize>,
    /// Probe a position of a game instead of POSITION: the start position with K seeds in
    /// every house (1..=4), after the houses of --moves.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u8).range(1..=4),
          conflicts_with = "position")]
    pub start: Option<u8>,
    /// With --start: the houses played from the start, in turn, separated by commas, e.g.
    /// `5,2,3`; each numbered 0..=5 from the left of the side that plays it, as the `house`
    /// of the probe's moves.
    #[arg(long, value_name = "H,H,...", requires = "start")]
    pub moves: Option<String>,
    /// The position: 12 house counts, mover's houses first (one argument or twelve), or `-`
    /// to read one position per line from stdin and print
    /// `position<TAB>score<TAB>category<TAB>distance` lines (blank lines skipped).
    /// Flags may come before or after it.
    #[arg(required_unless_present = "start", num_args = 1..)]
    pub position: Vec<String>,
}

/// The longest line `--max-plies` accepts, as `/api/v1/line`'s `plies` and Python's
/// `best_line` ([`oware_db::MAX_LINE_PLIES`]).
pub const MAX_PLIES: usize = oware_db::MAX_LINE_PLIES;

/// Parses `--max-plies`: a count of `0..=MAX_PLIES`, digits only.
fn parse_plies(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n <= MAX_PLIES && s.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(format!("`{s}` is not a count of plies in 0..={MAX_PLIES}")),
    }
}

/// Runs `oware probe`. With `--json`, an error is also printed on stdout as a JSON object,
/// `{"error": ...}`, with `missing_tier` and `generate` (the command that makes the tier)
/// for a missing tier, as the API's answers.
///
/// # Errors
/// The tables cannot be opened or probed; [`super::common::Usage`] for a position that
/// does not parse, and for `--line` or `--captured` with `-`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let result = probe(&args);
    if let (true, Err(e)) = (args.json, &result) {
        // The probe's error is the one returned, even if its JSON cannot be written.
        let _ = crate::output::outln!("{}", json_error(e));
    }
    result
}

/// The JSON object of a failed `probe --json`.
fn json_error(e: &anyhow::Error) -> serde_json::Value {
    let mut v = json!({ "error": super::common::error_message(e) });
    if let Some(m) = e.downcast_ref::<MissingTier>() {
        v["missing_tier"] = json!(m.tier);
        v["generate"] = json!(m.command);
    }
    v
}

/// A tier the probe needs is not in the directory: the error, with the command that
/// generates it.
#[derive(Debug)]
struct MissingTier {
    tier: u8,
    error: oware_db::Error,
    command: String,
}

impl std::fmt::Display for MissingTier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; generate it with `{}`", self.error, self.command)
    }
}

impl std::error::Error for MissingTier {}

/// The work of [`run`].
fn probe(args: &Args) -> anyhow::Result<ExitCode> {
    let tb = open_tablebase(&args.dir, args.rules, args.format)?;
    let rules = *tb.rules();
    if args.position.len() == 1 && args.position[0] == "-" {
        if args.line || args.captured.is_some() {
            return Err(Usage(
                "--line and --captured need one position, not `-` (a batch on stdin)".into(),
            )
            .into());
        }
        super::common::start_workers(args.threads)?;
        return batch(&tb, args.json);
    }
    if args.position.iter().any(|a| a == "-") {
        return Err(
            Usage("`-` (a batch on stdin) comes alone, without house counts".into()).into(),
        );
    }
    let p: Position = match args.start {
        // The game's error names its place in the list; here the argument is the flag.
        Some(k) => Position::from_game_text(&rules, k, args.moves.as_deref().unwrap_or(""))
            .map_err(|e| Usage(format!("--{}: {e}", e.argument())))?,
        // A position that does not parse is a value out of range, as `-1` given as a word
        // of its own is to clap: a usage error (exit status 2), whichever way it is written.
        None => args
            .position
            .join(" ")
            .parse()
            .map_err(|e| Usage(format!("{e}")))?,
    };
    let captured = args.captured;
    if let Some(c) = captured {
        check_captured(&p, c)?;
    }
    let hint = |error: oware_db::Error| -> anyhow::Error {
        match error {
            oware_db::Error::MissingTier { tier, .. } => {
                let n = tier.max(p.seeds());
                let command = super::common::tier_command(
                    &args.dir.display().to_string(),
                    &rules,
                    n,
                    tb.is_romein(),
                );
                MissingTier {
                    tier,
                    error,
                    command,
                }
                .into()
            }
            // The directory's rules are `rules` (its manifest's, or its lowest table's): a
            // table of other rules among the tiers probed is a stray file, named.
            oware_db::Error::RulesMismatch { table, .. } => {
                let strays: Vec<String> = (0..=p.seeds())
                    .map(|n| tb.tier_path(n))
                    .filter(|f| Table::open(f).is_ok_and(|t| t.rules() == table))
                    .map(|f| f.display().to_string())
                    .collect();
                if strays.is_empty() {
                    return error.into();
                }
                let one = strays.len() == 1;
                anyhow::anyhow!(
                    "{error}: {} {} built under `{table}` in a directory of tables under \
                     `{rules}`; move {} out of {} or remove {}",
                    strays.join(", "),
                    if one { "is" } else { "are" },
                    if one { "it" } else { "them" },
                    args.dir.display(),
                    if one { "it" } else { "them" },
                )
            }
            e => e.into(),
        }
    };
    let score = tb.score(&p).map_err(hint)?;
    let moves = tb.moves(&p).map_err(hint)?;
    let distance = distance_or_moves_note(&tb, &p, &moves);
    let mut out = crate::output::stdout();
    if args.line && !args.json {
        // Text: the line is printed ply by ply as it is found, after the moves.
        print_position(&mut out, &p, &rules, score, &distance, &moves)?;
        let line = print_line(&mut out, &tb, &p, args.max_plies, &hint)?;
        let outcome = match captured {
            Some(c) => Some(tb.outcome(&p, c.mover, c.opponent).map_err(hint)?),
            None => None,
        };
        let houses: Vec<String> = line.iter().map(|h| h.to_string()).collect();
        writeln!(
            out,
            "best line ({} plies): {}",
            line.len(),
            houses.join(" ")
        )?;
        if let Some(o) = outcome {
            print_outcome(&mut out, &o)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let line = if args.line {
        Some(tb.best_line(&p, args.max_plies).map_err(hint)?)
    } else {
        None
    };
    let outcome = match captured {
        Some(c) => Some(tb.outcome(&p, c.mover, c.opponent).map_err(hint)?),
        None => None,
    };
    if args.json {
        let mut v = probe_json(&p, &rules, score, &distance, &moves);
        v.line = line.as_ref().map(|l| l.iter().map(move_json).collect());
        v.outcome = outcome.as_ref().map(outcome_json);
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_position(&mut out, &p, &rules, score, &distance, &moves)?;
    if let Some(o) = outcome {
        print_outcome(&mut out, &o)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The distance to conversion of `p`, or the one-line note of why it cannot be had (the
/// score is answered all the same).
pub(crate) fn distance_or_note(tb: &Tablebase, p: &Position) -> Result<Option<u16>, String> {
    tb.distance(p).map_err(distance_note)
}

/// The distance of `p` as [`distance_or_note`] gives it, or, where `p` has none (a score of
/// 0) but one of its `moves` lacks its distance because the tier has no distance table (or
/// it cannot be read), the note of why: so that a `-` among the moves is explained whatever
/// the position's own score.
pub(crate) fn distance_or_moves_note(
    tb: &Tablebase,
    p: &Position,
    moves: &[oware_db::MoveScore],
) -> Result<Option<u16>, String> {
    let distance = distance_or_note(tb, p)?;
    if distance.is_some() {
        return Ok(distance);
    }
    // A quiet move to a child of nonzero score has a distance when the child's tier has one.
    for m in moves {
        if let (None, 0, Some(child)) = (m.distance, m.captured, m.child) {
            if m.score != 0 {
                distance_or_note(tb, &child)?;
            }
        }
    }
    Ok(None)
}

/// The one-line note of why a distance cannot be had.
fn distance_note(e: oware_db::Error) -> String {
    match e {
        oware_db::Error::MissingDistances { tier, .. } => format!(
            "tier {tier} has no distance table (generated with --no-distance, or too large \
             for distances): moves are ordered by score, then house"
        ),
        e => format!("distance unavailable: {e}"),
    }
}

/// A distance for the text tables: the plies, or `-` for none.
fn plies(d: Option<u16>) -> String {
    d.map_or_else(|| "-".into(), |d| d.to_string())
}

/// Prints the position, its score and distance, and every move's.
fn print_position(
    out: &mut impl Write,
    p: &Position,
    rules: &Rules,
    score: i8,
    distance: &Result<Option<u16>, String>,
    moves: &[oware_db::MoveScore],
) -> io::Result<()> {
    writeln!(out, "position  {p}  ({} seeds, rules {})", p.seeds(), rules)?;
    writeln!(
        out,
        "score     {score:+} ({} for the side to move)",
        category(score.into())
    )?;
    match distance {
        Ok(Some(d)) => writeln!(
            out,
            "distance  {d} {} to the next capture or end",
            if *d == 1 { "ply" } else { "plies" }
        )?,
        Ok(None) => {}
        Err(note) => writeln!(out, "note      {note}")?,
    }
    if moves.is_empty() {
        writeln!(out, "no legal move: the game is over")?;
    } else {
        writeln!(
            out,
            "house  captures  score  category  distance  position after"
        )?;
        for m in moves {
            writeln!(
                out,
                "{:>5}  {:>8}  {:>+5}  {:<8}  {:>8}  {}",
                m.house,
                m.captured,
                m.score,
                category(m.score.into()),
                plies(m.distance),
                m.child.map_or("(game over)".to_string(), |c| c.to_string())
            )?;
        }
    }
    Ok(())
}

/// Prints a best line from `p` of up to `max_plies` plies, each as soon as it is found (a
/// long line is not held back until its end); returns its houses.
fn print_line(
    out: &mut impl Write,
    tb: &Tablebase,
    p: &Position,
    max_plies: usize,
    hint: &dyn Fn(oware_db::Error) -> anyhow::Error,
) -> anyhow::Result<Vec<u8>> {
    writeln!(out, "best line:")?;
    let mut houses = Vec::new();
    let mut cur = *p;
    while houses.len() < max_plies {
        let Some(m) = tb.moves(&cur).map_err(hint)?.first().copied() else {
            break;
        };
        houses.push(m.house);
        writeln!(
            out,
            "{:>4}. house {} captures {:>2}  value {:+}  distance {:>3}  -> {}",
            houses.len(),
            m.house,
            m.captured,
            m.score,
            plies(m.distance),
            m.child.map_or("(game over)".to_string(), |c| c.to_string())
        )?;
        out.flush()?;
        match m.child {
            Some(c) => cur = c,
            None => break,
        }
    }
    Ok(houses)
}

/// Prints the outcome of the game.
fn print_outcome(out: &mut impl Write, o: &oware_db::GameOutcome) -> io::Result<()> {
    writeln!(
        out,
        "outcome   {} for the side to move: final totals {} - {} (difference {:+})",
        o.result.name(),
        o.mover_total,
        o.opponent_total,
        o.difference
    )
}

/// Lines probed per parallel batch.
const BATCH_LINES: usize = 1 << 16;

/// Bytes of a batch line kept: a position takes under 50, so a longer line is an error, and
/// the rest of it is read past without being held.
const MAX_LINE: usize = 4096;

/// Characters of a bad line echoed in its error, as many as any message quotes
/// ([`oware_db::QUOTE_CHARS`]).
const ECHO_CHARS: usize = oware_db::QUOTE_CHARS;

/// A line of the batch's input.
enum Line {
    /// UTF-8 text (its end of line included).
    Text(String),
    /// Bytes that are not UTF-8.
    NotText(Vec<u8>),
    /// The first `MAX_LINE` bytes of a longer line.
    Long(Vec<u8>),
}

impl Line {
    /// The line as its error echoes it: trimmed, at most `ECHO_CHARS` characters (then
    /// `…`), bytes that are not UTF-8 replaced.
    fn echo(&self) -> String {
        let text = match self {
            Line::Text(s) => std::borrow::Cow::Borrowed(s.as_str()),
            Line::NotText(b) | Line::Long(b) => String::from_utf8_lossy(b),
        };
        let text = text.trim();
        let mut echo: String = text.chars().take(ECHO_CHARS).collect();
        if matches!(self, Line::Long(_)) || text.chars().nth(ECHO_CHARS).is_some() {
            echo.push('…');
        }
        echo
    }
}

/// The next line of `input`, or `None` at its end: at most `cap` bytes of it are held, its
/// end of line (`\n` or `\r\n`) not counted.
///
/// # Errors
/// `input` cannot be read.
fn read_line_capped(input: &mut impl BufRead, cap: usize) -> io::Result<Option<Line>> {
    // Room for the text and its end of line; whatever comes beyond is read past.
    let room = cap + 2;
    let mut bytes = Vec::new();
    if input
        .by_ref()
        .take(room as u64)
        .read_until(b'\n', &mut bytes)?
        == 0
    {
        return Ok(None);
    }
    let dropped = !bytes.ends_with(b"\n") && bytes.len() == room && input.skip_until(b'\n')? > 0;
    let mut text = bytes.len();
    if !dropped {
        // The end of line is not part of the text.
        if bytes[..text].ends_with(b"\n") {
            text -= 1;
        }
        if bytes[..text].ends_with(b"\r") {
            text -= 1;
        }
    }
    Ok(Some(if dropped || text > cap {
        bytes.truncate(cap);
        Line::Long(bytes)
    } else {
        match String::from_utf8(bytes) {
            Ok(s) => Line::Text(s),
            Err(e) => Line::NotText(e.into_bytes()),
        }
    }))
}

/// The answer to one line of a batch.
enum Answer {
    /// A blank line: skipped, nothing printed.
    Blank,
    /// A position probed: its score, its distance (or the note of why there is none) and
    /// whether the game is over.
    Probed {
        p: Position,
        score: i8,
        distance: Result<Option<u16>, String>,
        game_over: bool,
    },
}

/// What a batch remembers of the tiers it found lacking, by tier: a later line of such a
/// tier gets the same answer without looking for the file again (the run answers as the
/// directory was then).
#[derive(Default)]
struct Lacking {
    /// The error of each tier found missing.
    tables: RwLock<BTreeMap<u8, String>>,
    /// The note of each tier found without a distance table.
    distances: RwLock<BTreeMap<u8, String>>,
}

impl Lacking {
    /// What `map` remembers of tier `n`.
    fn get(map: &RwLock<BTreeMap<u8, String>>, n: u8) -> Option<String> {
        map.read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&n)
            .cloned()
    }

    /// Remembers `message` for tier `n` in `map`.
    fn put(map: &RwLock<BTreeMap<u8, String>>, n: u8, message: &str) {
        map.write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(n, message.to_string());
    }
}

/// Probes one line of a batch: its score, category and distance, the tables and distance
/// tables found lacking remembered in `lacking`.
///
/// # Errors
/// The line is not a position (the message as printed after `error: line N: `), or its
/// score cannot be had.
fn probe_line(tb: &Tablebase, line: &Line, lacking: &Lacking) -> Result<Answer, String> {
    let s = match line {
        Line::Text(s) => s,
        Line::NotText(_) => return Err("not UTF-8 text".to_string()),
        Line::Long(_) => return Err(format!("longer than {MAX_LINE} bytes, not a position")),
    };
    if s.trim().is_empty() {
        return Ok(Answer::Blank);
    }
    let p = s
        .trim()
        .parse::<Position>()
        .map_err(|e| oware_db::shorten_quotes(&e.to_string()))?;
    let n = p.seeds();
    if let Some(e) = Lacking::get(&lacking.tables, n) {
        return Err(e);
    }
    let score = tb.score(&p).map_err(|e| {
        let message = e.to_string();
        if let oware_db::Error::MissingTier { tier, .. } = e {
            Lacking::put(&lacking.tables, tier, &message);
        }
        message
    })?;
    let game_over = p.moves(tb.rules()).is_empty();
    // A score of 0 has no distance, and an ended game needs no table: only a nonzero score
    // with a move looks for the tier's distance table.
    let distance = match Lacking::get(&lacking.distances, n) {
        Some(note) if score != 0 && !game_over => Err(note),
        _ => tb.distance(&p).map_err(|e| {
            let missing = match e {
                oware_db::Error::MissingDistances { tier, .. } => Some(tier),
                _ => None,
            };
            let note = distance_note(e);
            if let Some(tier) = missing {
                Lacking::put(&lacking.distances, tier, &note);
            }
            note
        }),
    };
    Ok(Answer::Probed {
        p,
        score,
        distance,
        game_over,
    })
}

/// Batch mode: one position per line on stdin, `position<TAB>score<TAB>category<TAB>distance`
/// per line on stdout (the distance `-` where there is none); a blank line is skipped, a bad
/// line prints `<line><TAB>error: line N: ...` and the run goes on. With `json`, each line is
/// an object instead: the fields of `probe --json` but the moves ([`BatchJson`]), or
/// `{"line", "input", "error"}`.
///
/// [`BatchJson`]: super::json::BatchJson
fn batch(tb: &Tablebase, json: bool) -> anyhow::Result<ExitCode> {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let mut out = BufWriter::with_capacity(1 << 16, crate::output::stdout());
    let rules = tb.rules().to_string();
    let mut line_no = 0usize;
    let mut probed = 0usize;
    let mut failed = 0usize;
    let lacking = Lacking::default();
    loop {
        let mut lines = Vec::with_capacity(BATCH_LINES);
        for _ in 0..BATCH_LINES {
            match read_line_capped(&mut input, MAX_LINE)? {
                Some(line) => lines.push(line),
                None => break,
            }
        }
        if lines.is_empty() {
            break;
        }
        let first = line_no + 1;
        line_no += lines.len();
        let results: Vec<Result<Answer, String>> = lines
            .par_iter()
            .map(|line| probe_line(tb, line, &lacking))
            .collect();
        for (k, (r, line)) in results.into_iter().zip(&lines).enumerate() {
            match r {
                Ok(Answer::Blank) => {}
                Ok(Answer::Probed {
                    p,
                    score,
                    distance,
                    game_over,
                }) => {
                    probed += 1;
                    if json {
                        let o = batch_json(&p, &rules, score, &distance, game_over);
                        writeln!(out, "{}", serde_json::to_string(&o)?)?;
                    } else {
                        let d = plies(distance.ok().flatten());
                        writeln!(out, "{p}\t{score}\t{}\t{d}", category(score.into()))?;
                    }
                }
                Err(e) => {
                    probed += 1;
                    failed += 1;
                    let s = line.echo();
                    if json {
                        let o = json!({ "line": first + k, "input": s, "error": e });
                        writeln!(out, "{o}")?;
                    } else {
                        writeln!(out, "{s}\terror: line {}: {e}", first + k)?;
                    }
                }
            }
        }
    }
    out.flush()?;
    if failed > 0 {
        crate::output::errln!("{failed} of {probed} lines failed");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
