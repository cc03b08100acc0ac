//! Probes a directory of tables: the score of a position and every move, best first.
//!
//! ```text
//! cargo run --release -- generate --max-seeds 12          # tables in ./tables
//! cargo run --release -p oware-db --example probe -- 1 1 1 1 1 2 1 2 2 0 0 0
//! cargo run --release -p oware-db --example probe -- --dir tables "0 0 3 0 1 2 0 1 0 0 2 0"
//! ```
//!
//! A position is the 12 house counts, the mover's houses 0..6 first (as one argument or as
//! twelve). The rules are those the tables were built with.

use std::path::PathBuf;
use std::process::ExitCode;

use oware_db::{Position, Tablebase};

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut dir = PathBuf::from("tables");
    if let Some(at) = args.iter().position(|a| a == "--dir") {
        if at + 1 >= args.len() {
            return usage();
        }
        dir = PathBuf::from(args.remove(at + 1));
        args.remove(at);
    }
    if args.is_empty() {
        return usage();
    }
    match probe(&dir, &args.join(" ")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn probe(dir: &std::path::Path, position: &str) -> Result<(), Box<dyn std::error::Error>> {
    let p: Position = position.parse()?;
    // Under the rules the tables were built with.
    let tb = Tablebase::open(dir)?;
    println!("position {p} ({} seeds, rules {})", p.seeds(), tb.rules());
    println!("score    {:+}", tb.score(&p)?);
    let moves = tb.moves(&p)?;
    if moves.is_empty() {
        println!("no legal move: the game is over");
    }
    for m in moves {
        let after = m.child.map_or("game over".to_string(), |c| c.to_string());
        println!(
            "house {}: captures {:>2}, value {:+3}  -> {after}",
            m.house, m.captured, m.score
        );
    }
    Ok(())
}

fn usage() -> ExitCode {
    eprintln!("usage: probe [--dir DIR] HOUSE x12   (DIR defaults to ./tables)");
    ExitCode::from(2)
}
