//! `oware probe`: the exact score of a position and of every move, or a batch on stdin.

use std::io::{self, BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use oware_db::{Position, Rules, Tablebase};
use rayon::prelude::*;
use serde_json::json;

use super::common::{check_captured, open_tablebase, parse_captured, Captured};
use super::json::{category, move_json, outcome_json, probe_json};

/// Arguments of `oware probe`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the tables.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
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
    /// Longest best line printed by --line, in plies.
    #[arg(long, default_value_t = 100)]
    pub max_plies: usize,
    /// Seeds already captured by the mover and by the opponent, `A,B`: also print the
    /// outcome of the game (win/draw/loss and the final totals).
    #[arg(long, value_name = "A,B", value_parser = parse_captured)]
    pub captured: Option<Captured>,
    /// The position: 12 house counts, mover's houses first (one argument or twelve), or `-`
    /// to read one position per line from stdin and print `position<TAB>score` lines.
    /// Flags may come before or after it.
    #[arg(required = true, num_args = 1..)]
    pub position: Vec<String>,
}

/// Runs `oware probe`.
///
/// # Errors
/// The tables cannot be opened or probed, or the position does not parse.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let tb = open_tablebase(&args.dir, args.rules)?;
    let rules = *tb.rules();
    if args.position.len() == 1 && args.position[0] == "-" {
        if args.line || args.captured.is_some() {
            bail!("--line and --captured need one position, not `-` (a batch on stdin)");
        }
        return batch(&tb, args.json);
    }
    if args.position.iter().any(|a| a == "-") {
        bail!("`-` (a batch on stdin) comes alone, without house counts");
    }
    let text = args.position.join(" ");
    let p: Position = text.parse()?;
    let captured = args.captured;
    if let Some(c) = captured {
        check_captured(&p, c)?;
    }
    let score = tb.score(&p)?;
    let moves = tb.moves(&p)?;
    let line = if args.line {
        Some(tb.best_line(&p, args.max_plies)?)
    } else {
        None
    };
    let outcome = match captured {
        Some(c) => Some(tb.outcome(&p, c.mover, c.opponent)?),
        None => None,
    };
    let mut out = io::stdout().lock();
    if args.json {
        let mut v = probe_json(&p, &rules, score, &moves);
        v.line = line.as_ref().map(|l| l.iter().map(move_json).collect());
        v.outcome = outcome.as_ref().map(outcome_json);
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "position  {p}  ({} seeds, rules {})", p.seeds(), rules)?;
    writeln!(
        out,
        "score     {score:+} ({} for the side to move)",
        category(score.into())
    )?;
    if moves.is_empty() {
        writeln!(out, "no legal move: the game is over")?;
    } else {
        writeln!(out, "house  captures  score  category  position after")?;
        for m in &moves {
            writeln!(
                out,
                "{:>5}  {:>8}  {:>+5}  {:<8}  {}",
                m.house,
                m.captured,
                m.score,
                category(m.score.into()),
                m.child.map_or("(game over)".to_string(), |c| c.to_string())
            )?;
        }
    }
    if let Some(line) = &line {
        let houses: Vec<String> = line.iter().map(|m| m.house.to_string()).collect();
        writeln!(
            out,
            "best line ({} plies): {}",
            line.len(),
            houses.join(" ")
        )?;
        for (k, m) in line.iter().enumerate() {
            writeln!(
                out,
                "{:>4}. house {} captures {:>2}  value {:+}  -> {}",
                k + 1,
                m.house,
                m.captured,
                m.score,
                m.child.map_or("(game over)".to_string(), |c| c.to_string())
            )?;
        }
    }
    if let Some(o) = outcome {
        writeln!(
            out,
            "outcome   {} for the side to move: final totals {} - {} (difference {:+})",
            o.result.name(),
            o.mover_total,
            o.opponent_total,
            o.difference
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Lines probed per parallel batch.
const BATCH_LINES: usize = 1 << 16;

/// Batch mode: one position per line on stdin, `position<TAB>score` per line on stdout; a
/// bad line prints `<line><TAB>error: line N: ...` and the run goes on. With `json`, each
/// line is an object instead: `{"position", "score"}`, or `{"line", "input", "error"}`.
fn batch(tb: &Tablebase, json: bool) -> anyhow::Result<ExitCode> {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut line_no = 0usize;
    let mut failed = 0usize;
    loop {
        let mut lines = Vec::with_capacity(BATCH_LINES);
        for _ in 0..BATCH_LINES {
            let mut s = String::new();
            if input.read_line(&mut s)? == 0 {
                break;
            }
            lines.push(s);
        }
        if lines.is_empty() {
            break;
        }
        let first = line_no + 1;
        line_no += lines.len();
        let results: Vec<Result<(Position, i8), String>> = lines
            .par_iter()
            .map(|s| {
                let p: Position = s.trim().parse().map_err(|e| format!("{e}"))?;
                let v = tb.score(&p).map_err(|e| format!("{e}"))?;
                Ok((p, v))
            })
            .collect();
        for (k, (r, s)) in results.into_iter().zip(&lines).enumerate() {
            match (r, json) {
                (Ok((p, v)), false) => writeln!(out, "{p}\t{v}")?,
                (Ok((p, v)), true) => {
                    let o = json!({ "position": p.to_string(), "score": v });
                    writeln!(out, "{o}")?;
                }
                (Err(e), false) => {
                    failed += 1;
                    writeln!(out, "{}\terror: line {}: {e}", s.trim(), first + k)?;
                }
                (Err(e), true) => {
                    failed += 1;
                    let o = json!({ "line": first + k, "input": s.trim(), "error": e });
                    writeln!(out, "{o}")?;
                }
            }
        }
    }
    out.flush()?;
    if failed > 0 {
        eprintln!("{failed} of {line_no} lines failed");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
