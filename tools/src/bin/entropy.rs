//! Entropies of real tables' scores under the models a table format could use: the
//! measurements behind docs/BENCHMARKS.md, "Findings" (code: `oware_tools::entropy`). Each
//! subcommand reads the table of tier TIER (reachable index) in DIR; `exit-delta` also reads
//! the tiers below it.
//!
//! `cargo run --release -p oware-tools --bin entropy -- scores tables 20`

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use oware_tools::entropy::{contexts, exit_delta, neighbours, orders, read_tier, scores, signs};

#[derive(Parser)]
#[command(about = "Entropies of a tier's scores under models a table format could use")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where the table is.
#[derive(clap::Args)]
struct Tier {
    /// The directory of the tables.
    dir: PathBuf,
    /// The tier measured.
    #[arg(value_parser = clap::value_parser!(u8).range(0..=48))]
    tier: u8,
}

#[derive(Subcommand)]
enum Command {
    /// Order-0, order-1 (also as the tables code it) and order-2 entropies, the histogram
    /// and the cost of per-block palettes.
    Scores(Tier),
    /// Richer contexts than the previous score: the mover's seed count, the two previous
    /// scores, features of the board.
    Contexts(Tier),
    /// A neighbour's score (one seed moved to the next house) as a further context.
    Neighbours {
        #[command(flatten)]
        tier: Tier,
        /// Every neighbour, not only those a block decoder would know (of smaller index).
        #[arg(long)]
        any: bool,
    },
    /// The order-1 entropy in other orders of the positions (houses permuted).
    Orders {
        #[command(flatten)]
        tier: Tier,
        /// Then search for a better order, swapping two houses at a time (slow: use a
        /// small tier).
        #[arg(long)]
        search: bool,
    },
    /// The win/draw/loss signs alone, knowing the previous one and four signs.
    Signs(Tier),
    /// Storing `score − exit` (the best move that leaves the tier) instead of the score;
    /// reads tiers 0..=TIER.
    ExitDelta(Tier),
}

fn main() -> std::process::ExitCode {
    match run(Cli::parse().command) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The chain of causes, without those an error already quotes.
            let mut message = e.to_string();
            for cause in e.chain().skip(1).map(ToString::to_string) {
                if !message.contains(&cause) {
                    message = format!("{message}: {cause}");
                }
            }
            eprintln!("error: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Scores(t) => {
            let tier = read_tier(&t.dir, t.tier)?;
            println!(
                "entries {} file bits/pos {:.3}",
                tier.scores.len(),
                tier.bits_per_entry
            );
            print!("{}", scores::measure(&tier.scores));
        }
        Command::Contexts(t) => {
            let n = t.tier;
            let tier = read_tier(&t.dir, n)?;
            for c in contexts::measure(n, &tier.scores) {
                println!(
                    "tier {n}, context {:40} {:.3} bits per position ({} contexts)",
                    c.name, c.bits, c.contexts
                );
            }
        }
        Command::Neighbours { tier: t, any } => {
            let n = t.tier;
            let tier = read_tier(&t.dir, n)?;
            let m = neighbours::measure(n, &tier.scores, any);
            println!(
                "tier {n}: previous score (the tables' model): {:.3} bits per position",
                m.order1
            );
            for x in &m.moves {
                println!(
                    "tier {n}: previous and the neighbour with a seed moved from house {} to {}: \
                     {:.3} bits per position (neighbour known for {:.1} %)",
                    x.from,
                    x.to,
                    x.bits,
                    100.0 * x.known
                );
            }
        }
        Command::Orders { tier: t, search } => {
            let n = t.tier;
            let tier = read_tier(&t.dir, n)?;
            println!(
                "tier {n}, stored order: {:.3} bits per position",
                orders::order1(tier.scores.iter().copied())
            );
            let reorder = orders::Reorder::new(n, &tier.scores);
            for (name, order) in &orders::ORDERS {
                println!(
                    "tier {n}, {name:34} {:.3} bits per position",
                    reorder.entropy(order)
                );
            }
            if search {
                let (best, bits) = reorder.search(|order, bits| {
                    println!("tier {n}, houses {order:?}: {bits:.4} bits per position");
                });
                println!("tier {n}, best found: houses {best:?}, {bits:.4} bits per position");
            }
        }
        Command::Signs(t) => {
            let n = t.tier;
            let tier = read_tier(&t.dir, n)?;
            for k in [1, 4] {
                println!(
                    "tier {n}, the signs alone, knowing the previous {k}: {:.3} bits per position",
                    signs::entropy(&tier.scores, k)
                );
            }
        }
        Command::ExitDelta(t) => {
            let n = t.tier;
            let tier = read_tier(&t.dir, n)?;
            let mut lower = Vec::with_capacity(usize::from(n));
            for k in 0..n {
                let below = read_tier(&t.dir, k)?;
                if below.rules != tier.rules {
                    anyhow::bail!(
                        "tier {k} was solved under {}, tier {n} under {}",
                        below.rules,
                        tier.rules
                    );
                }
                lower.push(below.scores);
            }
            let d = exit_delta::measure(&tier.rules, n, &lower, &tier.scores)
                .with_context(|| format!("{}", t.dir.display()))?;
            println!(
                "tier {n}: {} positions, with exit {:.3}, exit exact {:.3}",
                d.positions, d.with_exit, d.exact
            );
            println!(
                "score: order-0 {:.3} order-1 {:.3}; delta: order-0 {:.3} order-1 {:.3}, \
                 +has-exit ctx {:.3}",
                d.score_order0, d.score_order1, d.delta_order0, d.delta_order1, d.delta_has_exit
            );
            println!(
                "don't care where the exit is the score: order-1 {:.3}",
                d.dont_care
            );
        }
    }
    Ok(())
}
