//! Solves tiers `0..=N` under MPI (or in one process with `--single`) and writes each tier's
//! scores as raw bytes to `DIR/tier-NN.raw`, for `scripts/mpi-check` to compare.
//!
//! ```text
//! mpirun -np 3 mpi_solve --max-seeds 14 --rules abapa --out DIR
//! mpi_solve --single --max-seeds 14 --rules abapa --out DIR
//! ```
//!
//! Under MPI, every rank owns an index range of each tier; rank 0 gathers the scores and
//! writes the file (to a temporary name, then renamed); after a barrier the other ranks read
//! it back from `DIR`, which must be shared by all ranks. A tier whose file already exists
//! with the right size is read instead of solved (resume, tier by tier).

use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use oware_db::{tier_size, IndexKind, Rules};
use oware_solver::distributed::{gather_scores, solve_tier_local, Comm, MpiComm, PartitionConfig};
use oware_solver::{solve_tier, LowerTiers, NoProgress};

struct Args {
    max: u8,
    rules: Rules,
    out: PathBuf,
    single: bool,
    batch: usize,
}

fn parse() -> Result<Args, Box<dyn Error>> {
    let mut args = Args {
        max: 12,
        rules: Rules::ABAPA,
        out: PathBuf::from("mpi-out"),
        single: false,
        batch: PartitionConfig::default().batch,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--max-seeds" => args.max = value()?.parse()?,
            "--rules" => args.rules = value()?.parse()?,
            "--out" => args.out = PathBuf::from(value()?),
            "--batch" => args.batch = value()?.parse()?,
            "--single" => args.single = true,
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    if args.max > 48 {
        return Err("--max-seeds is at most 48".into());
    }
    if args.batch == 0 {
        return Err("--batch must be positive".into());
    }
    Ok(args)
}

fn tier_path(dir: &Path, n: u8) -> PathBuf {
    dir.join(format!("tier-{n:02}.raw"))
}

/// The tier's scores from its file, if it exists with the right size.
fn read_tier(dir: &Path, n: u8) -> Option<Vec<i8>> {
    let bytes = std::fs::read(tier_path(dir, n)).ok()?;
    (bytes.len() as u64 == tier_size(n, IndexKind::Reachable))
        .then(|| bytes.into_iter().map(|b| b as i8).collect())
}

fn write_tier(dir: &Path, n: u8, scores: &[i8]) -> std::io::Result<()> {
    let tmp = dir.join(format!("tier-{n:02}.raw.tmp"));
    let bytes: Vec<u8> = scores.iter().map(|&s| s as u8).collect();
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(tmp, tier_path(dir, n))
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = parse()?;
    std::fs::create_dir_all(&args.out)?;
    if args.single {
        return single(&args);
    }
    let comm = MpiComm::init().ok_or("MPI initialisation failed")?;
    let (rank, size) = (comm.rank(), comm.size());
    let config = PartitionConfig { batch: args.batch };
    let mut lower = LowerTiers::new();
    let t0 = Instant::now();
    for n in 0..=args.max {
        let positions = tier_size(n, IndexKind::Reachable);
        let have = read_tier(&args.out, n);
        // Resume only if every rank sees the finished file.
        let all_have = comm.all_reduce_sum(u64::from(have.is_some())) == size as u64;
        let scores = match have {
            Some(s) if all_have => {
                if rank == 0 {
                    println!("tier {n:2}: {positions} positions, read from file");
                }
                s
            }
            _ => {
                let t = Instant::now();
                let (local, stats) =
                    solve_tier_local(&comm, &args.rules, n, &lower, &NoProgress, &config);
                let bytes = comm.all_reduce_sum(stats.bytes_sent);
                let gathered = gather_scores(&comm, &local);
                if let Some(all) = &gathered {
                    write_tier(&args.out, n, all)?;
                }
                comm.barrier();
                let secs = t.elapsed().as_secs_f64();
                if rank == 0 {
                    println!(
                        "tier {n:2}: {positions} positions on {size} ranks in {secs:.2} s \
                         ({:.1} M/s), {} rounds, {:.2} bytes exchanged per position",
                        positions as f64 / secs / 1e6,
                        stats.rounds,
                        bytes as f64 / positions as f64,
                    );
                }
                match gathered {
                    Some(all) => all,
                    None => read_tier(&args.out, n).ok_or_else(|| {
                        format!("rank {rank}: tier {n} missing in the shared directory")
                    })?,
                }
            }
        };
        lower.push(Arc::from(scores));
    }
    if rank == 0 {
        println!(
            "tiers 0..={} on {size} ranks in {:.2} s",
            args.max,
            t0.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn single(args: &Args) -> Result<(), Box<dyn Error>> {
    let mut lower = LowerTiers::new();
    let t0 = Instant::now();
    for n in 0..=args.max {
        let scores = match read_tier(&args.out, n) {
            Some(s) => s,
            None => {
                let (scores, _) = solve_tier(&args.rules, n, &lower, &NoProgress);
                let v = scores.to_vec();
                write_tier(&args.out, n, &v)?;
                v
            }
        };
        lower.push(Arc::from(scores));
    }
    println!(
        "tiers 0..={} in one process in {:.2} s",
        args.max,
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
