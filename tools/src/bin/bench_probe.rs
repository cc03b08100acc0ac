//! `bench_probe`: library probe latency and throughput on random positions of one warm tier
//! (and the latency of distance probes where the tier has a distance table), and a position
//! file for the batch benchmark (`scripts/bench probe`, `scripts/bench-probe`).
//!
//! ```text
//! bench_probe --dir DIR --tier N [--rules abapa] [--count 1000000] [--threads T]
//! bench_probe --dir DIR --tier N --count C --write-positions FILE
//! ```

use std::hint::black_box;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use oware_db::index::TierIndex;
use oware_db::{Position, Rules, Tablebase};

/// Library probe latency and throughput on random positions of one warm tier.
#[derive(Parser)]
#[command(name = "bench_probe")]
struct Args {
    /// Directory of the tables.
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// Rules of the tables.
    #[arg(long, default_value = "abapa")]
    rules: Rules,
    /// The tier to probe.
    #[arg(long)]
    tier: u8,
    /// Random probes per measurement.
    #[arg(long, default_value_t = 1_000_000)]
    count: usize,
    /// Threads for the throughput measurement (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Instead of measuring, write `count` random positions of the tier to this file, one
    /// per line (input for `oware probe -`).
    #[arg(long)]
    write_positions: Option<PathBuf>,
}

/// Measures, or writes the position file.
///
/// # Errors
/// The tables cannot be opened or probed, or the position file cannot be written.
fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    if let Some(path) = &args.write_positions {
        let index = TierIndex::new(args.tier, table_kind(&args)?);
        let mut out = BufWriter::new(std::fs::File::create(path)?);
        let mut rng = fastrand::Rng::with_seed(0x1234_5678_9abc_def1);
        for _ in 0..args.count {
            writeln!(out, "{}", index.unrank(rng.u64(..index.size())))?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    run_probe_bench(&args.dir, &args.rules, args.tier, args.count, threads)?;
    Ok(ExitCode::SUCCESS)
}

fn table_kind(args: &Args) -> anyhow::Result<oware_db::index::IndexKind> {
    let tb = Tablebase::open_with_rules(&args.dir, &args.rules)?;
    Ok(tb.table(args.tier)?.kind())
}

fn random_positions(index: &TierIndex, count: usize, seed: u64) -> Vec<Position> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..count)
        .map(|_| index.unrank(rng.u64(..index.size())))
        .collect()
}

fn percentile(sorted: &[u64], q: f64) -> f64 {
    let k = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(k).copied().unwrap_or(0) as f64 / 1000.0
}

/// Measures library probes of random positions of tier `tier` in `dir`, warm (the file read
/// once into the page cache and the table opened first): per-probe latency percentiles on
/// one thread, probes/s on one thread, and probes/s on `threads` threads; prints the
/// results.
///
/// # Errors
/// The tables cannot be opened or probed.
fn run_probe_bench(
    dir: &Path,
    rules: &Rules,
    tier: u8,
    count: usize,
    threads: usize,
) -> anyhow::Result<()> {
    let tb = Tablebase::open_with_rules(dir, rules)?;
    let table = tb.table(tier)?;
    let t0 = Instant::now();
    table.verify_checksum()?;
    println!(
        "tier {tier}: {} entries, {} bytes, {:.3} bits/position, {} entries per block; \
         warmed (checksum verified) in {:.2} s",
        table.len(),
        table.file_size(),
        table.bits_per_entry(),
        table.block_entries(),
        t0.elapsed().as_secs_f64()
    );
    let index = TierIndex::new(tier, table.kind());
    let positions = random_positions(&index, count, 42);
    // Latency: one probe at a time.
    let mut ns = Vec::with_capacity(count);
    for p in &positions {
        let t = Instant::now();
        black_box(tb.score(black_box(p))?);
        ns.push(t.elapsed().as_nanos() as u64);
    }
    ns.sort_unstable();
    println!(
        "latency (1 thread, {count} random probes): median {:.2} us, p90 {:.2} us, p99 {:.2} us, max {:.1} us",
        percentile(&ns, 0.5),
        percentile(&ns, 0.9),
        percentile(&ns, 0.99),
        percentile(&ns, 1.0)
    );
    // Distance probes (the score of the position included, as its context), where the tier
    // has a distance table: fresh random positions, one at a time.
    if let Ok(dist) = tb.distance_table(tier) {
        dist.verify_checksum()?;
        let positions = random_positions(&index, count, 4343);
        let mut dns = Vec::with_capacity(count);
        for p in &positions {
            let t = Instant::now();
            black_box(tb.distance(black_box(p))?);
            dns.push(t.elapsed().as_nanos() as u64);
        }
        dns.sort_unstable();
        println!(
            "distance latency (1 thread, {count} random probes, {:.3} bits/position): median {:.2} us, p90 {:.2} us, p99 {:.2} us; median {:.2} times the score probes'",
            dist.bits_per_entry(),
            percentile(&dns, 0.5),
            percentile(&dns, 0.9),
            percentile(&dns, 0.99),
            percentile(&dns, 0.5) / percentile(&ns, 0.5).max(1e-9)
        );
    }
    // Throughput on one thread, fresh positions.
    let positions = random_positions(&index, count, 4242);
    let t = Instant::now();
    for p in &positions {
        black_box(tb.score(p)?);
    }
    let one = count as f64 / t.elapsed().as_secs_f64();
    println!("throughput, 1 thread: {:.0} probes/s", one);
    // Throughput on every thread.
    let per: Vec<Vec<Position>> = (0..threads)
        .map(|k| random_positions(&index, count, 7 + k as u64 * 1_000_003))
        .collect();
    let t = Instant::now();
    let results: Vec<anyhow::Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = per
            .iter()
            .map(|ps| {
                let tb = &tb;
                s.spawn(move || -> anyhow::Result<()> {
                    for p in ps {
                        black_box(tb.score(p)?);
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a probe thread panicked")))
            })
            .collect()
    });
    for r in results {
        r?;
    }
    let all = (threads * count) as f64 / t.elapsed().as_secs_f64();
    println!(
        "throughput, {threads} threads: {:.0} probes/s ({:.0} per thread)",
        all,
        all / threads as f64
    );
    Ok(())
}
