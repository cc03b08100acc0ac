//! `bench_index`: the cost of the index and of move generation over a full tier, on one
//! thread (`scripts/bench index`).
//!
//! ```text
//! bench_index --tier 20 [--kind reachable] [--rules abapa]
//! ```
//!
//! The tier is walked in index order in chunks: each chunk is unranked into a buffer (timed as
//! `unrank`), then every position of the buffer is ranked, has its legal moves generated, and
//! its un-moves generated, each pass timed separately. Every figure is an average over every
//! position of the tier, on one thread. Two more passes time what the solver does instead of
//! `unrank`: a [`oware_db::retro::Cursor`] over the chunk (its first pass) and an
//! [`oware_db::retro::Unranker`] over every eighth index (a level scan's sparse hits).

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use oware_db::index::{IndexKind, TierIndex};
use oware_db::{Position, Rules};
use oware_tools::machine;

/// Positions per chunk (16 MiB of positions).
const CHUNK: u64 = 1 << 20;

/// The stride of the sparse unranker pass.
const SPARSE: usize = 8;

/// Nanoseconds per rank, unrank, legal-move generation and un-move generation, averaged over
/// every position of one tier.
#[derive(Parser)]
#[command(name = "bench_index")]
struct Args {
    /// The tier (seed count, 0..=48) to walk in full.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=48))]
    tier: u8,
    /// Which index: `reachable` (the tables' index) or `dense` (every position).
    #[arg(long, default_value = "reachable", value_parser = parse_kind)]
    kind: IndexKind,
    /// The rules for move and un-move generation, e.g. `abapa`, `awari+capture=3`.
    #[arg(long, default_value = "abapa")]
    rules: Rules,
}

fn parse_kind(s: &str) -> Result<IndexKind, String> {
    IndexKind::from_name(s)
        .ok_or_else(|| format!("unknown index kind `{s}`; valid: dense, reachable"))
}

/// Time spent and work done by one pass.
#[derive(Default)]
struct Pass {
    time: Duration,
    count: u64,
}

impl Pass {
    fn timed(&mut self, f: impl FnOnce() -> u64) {
        let t = Instant::now();
        self.count += f();
        self.time += t.elapsed();
    }

    fn ns_per(&self, positions: u64) -> f64 {
        self.time.as_secs_f64() * 1e9 / positions.max(1) as f64
    }
}

/// Walks the tier and prints the figures.
///
/// # Errors
/// If the self-check fails: the ranks of the unranked positions must be `0..size` exactly
/// (their sum is compared).
fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let idx = TierIndex::new(args.tier, args.kind);
    let rules = args.rules;
    let size = idx.size();
    println!("machine: {}", machine::describe());
    println!(
        "tier {} ({} index), rules {rules}: {size} positions, single-threaded",
        args.tier,
        args.kind.name()
    );
    let mut unrank = Pass::default();
    let mut rank = Pass::default();
    let mut rank_unchecked = Pass::default();
    let mut moves = Pass::default();
    let mut unmoves = Pass::default();
    let mut unmoves_reachable = Pass::default();
    let mut cursor = Pass::default();
    let mut sparse = Pass::default();
    let mut unranker = idx.unranker();
    let mut buf: Vec<Position> = Vec::with_capacity(CHUNK.min(size) as usize);
    let mut rank_sum: u128 = 0;
    let started = Instant::now();
    let mut start = 0u64;
    while start < size {
        let end = (start + CHUNK).min(size);
        buf.clear();
        unrank.timed(|| {
            for i in start..end {
                buf.push(idx.unrank(black_box(i)));
            }
            end - start
        });
        cursor.timed(|| {
            for p in idx.cursor(start, end) {
                black_box(p);
            }
            end - start
        });
        sparse.timed(|| {
            for i in (start..end).step_by(SPARSE) {
                black_box(unranker.unrank(black_box(i)));
            }
            (end - start).div_ceil(SPARSE as u64)
        });
        rank.timed(|| {
            let mut sum = 0u128;
            for p in &buf {
                sum += u128::from(idx.rank(black_box(p)).unwrap_or(u64::MAX));
            }
            rank_sum += sum;
            buf.len() as u64
        });
        rank_unchecked.timed(|| {
            let mut sum = 0u64;
            for p in &buf {
                sum = sum.wrapping_add(idx.rank_unchecked(black_box(p)));
            }
            black_box(sum);
            buf.len() as u64
        });
        moves.timed(|| {
            let mut count = 0u64;
            for p in &buf {
                count += black_box(p.moves(black_box(&rules))).len() as u64;
            }
            count
        });
        unmoves.timed(|| {
            let mut count = 0u64;
            for p in &buf {
                p.unmoves(black_box(&rules), |parent, house| {
                    black_box((parent, house));
                    count += 1;
                });
            }
            count
        });
        unmoves_reachable.timed(|| {
            let mut count = 0u64;
            for p in &buf {
                p.unmoves_reachable(black_box(&rules), |parent, house| {
                    black_box((parent, house));
                    count += 1;
                });
            }
            count
        });
        start = end;
    }
    let total = started.elapsed();
    let expected_sum = u128::from(size) * u128::from(size.saturating_sub(1)) / 2;
    anyhow::ensure!(
        rank_sum == expected_sum,
        "self-check failed: the ranks of tier {} sum to {rank_sum}, not {expected_sum}",
        args.tier
    );
    let avg = |p: &Pass| p.count as f64 / size.max(1) as f64;
    println!("rank            {:8.2} ns/position", rank.ns_per(size));
    println!(
        "rank_unchecked  {:8.2} ns/position",
        rank_unchecked.ns_per(size)
    );
    println!("unrank          {:8.2} ns/position", unrank.ns_per(size));
    println!("cursor          {:8.2} ns/position", cursor.ns_per(size));
    println!(
        "unranker 1/{SPARSE}    {:8.2} ns/position unranked",
        sparse.time.as_secs_f64() * 1e9 / sparse.count.max(1) as f64
    );
    println!(
        "moves           {:8.2} ns/position ({:.2} legal moves per position)",
        moves.ns_per(size),
        avg(&moves)
    );
    println!(
        "unmoves         {:8.2} ns/position ({:.2} parents per position)",
        unmoves.ns_per(size),
        avg(&unmoves)
    );
    println!(
        "unmoves_reachable {:6.2} ns/position ({:.2} reachable parents per position)",
        unmoves_reachable.ns_per(size),
        avg(&unmoves_reachable)
    );
    println!("wall time       {:8.1} s", total.as_secs_f64());
    Ok(ExitCode::SUCCESS)
}
