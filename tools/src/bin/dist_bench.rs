//! Measures the partitioned solver against the single-process one (the figures of
//! `docs/SCALING.md`).
//!
//! ```text
//! cargo run --release -p oware-tools --bin dist_bench -- --max 20 --from 18 --ranks 1,2,3 [--rules abapa] [--cache DIR]
//! ```
//!
//! Solves tiers `0..=max` with [`oware_solver::tier::solve_tier`] (tiers already in `--cache` as
//! `tier-NN.raw` are read instead); for each tier from `--from` on, also solves it on every
//! count of simulated ranks of `--ranks` (threads sharing the machine's rayon pool), each
//! holding only its share of the lower tiers (captures asked of their owners, as under MPI),
//! checks that the bytes are identical and prints one line per run: seconds, rate,
//! propagation rounds, bytes exchanged per position for propagation and for the capture
//! look-ups, the largest rank's cells and share of the lower tiers, rank 0's split of the
//! time, updates and look-ups per position.

use std::error::Error;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use oware_db::index::{tier_size, IndexKind};
use oware_db::Rules;
use oware_solver::distributed::{
    gather_scores, solve_tier_local, Comm, LowerShare, PartitionConfig, ThreadComm,
};
use oware_solver::tier::{solve_tier, LowerTiers};
use oware_solver::NoProgress;

fn main() -> Result<(), Box<dyn Error>> {
    let mut max = 18u8;
    let mut from = 16u8;
    let mut ranks = vec![1usize, 2, 3];
    let mut rules = Rules::ABAPA;
    let mut cache: Option<PathBuf> = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--max" => max = value()?.parse()?,
            "--from" => from = value()?.parse()?,
            "--ranks" => {
                ranks = value()?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?
            }
            "--rules" => rules = value()?.parse()?,
            "--cache" => cache = Some(PathBuf::from(value()?)),
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    if max > 48 || ranks.contains(&0) {
        return Err("--max is at most 48 and rank counts are positive".into());
    }
    if let Some(dir) = &cache {
        std::fs::create_dir_all(dir)?;
    }
    println!("tier positions run seconds Mpos/s rounds prop-bytes/pos lookup-bytes/pos cells-MB/rank share-MB/rank init/prop/comm/lookup-comm-s(rank0) updates/pos lookups/pos");
    let mut lower = LowerTiers::new();
    for n in 0..=max {
        let positions = tier_size(n, IndexKind::Reachable);
        let path = cache.as_ref().map(|d| d.join(format!("tier-{n:02}.raw")));
        let cached = path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .filter(|b| b.len() as u64 == positions)
            .map(|b| b.into_iter().map(|x| x as i8).collect::<Vec<i8>>());
        let reference = match cached {
            Some(v) if n < from => v,
            _ => {
                let t = Instant::now();
                let (scores, st) = solve_tier(&rules, n, &lower, &NoProgress)?;
                let secs = t.elapsed().as_secs_f64();
                if n >= from {
                    println!(
                        "{n} {positions} single {secs:.2} {:.2} - - - - - {:.1}/{:.1}/0.0/0.0",
                        positions as f64 / secs / 1e6,
                        st.init_seconds,
                        st.scan_seconds + st.sweep_seconds
                    );
                }
                let v = scores.to_vec();
                if let Some(p) = &path {
                    std::fs::write(p, v.iter().map(|&s| s as u8).collect::<Vec<u8>>())?;
                }
                v
            }
        };
        if n >= from {
            for &r in &ranks {
                let t = Instant::now();
                let out = ThreadComm::run(r, |comm| {
                    let share = LowerShare::from_whole(&lower, comm.rank(), comm.size());
                    let (local, stats) = solve_tier_local(
                        comm,
                        &rules,
                        n,
                        &share,
                        &NoProgress,
                        &PartitionConfig::default(),
                    )
                    .expect("tier allocates");
                    (gather_scores(comm, n, &local), stats, share.bytes())
                });
                let secs = t.elapsed().as_secs_f64();
                let same = out[0].0.as_ref() == Some(&reference);
                let per = |f: &dyn Fn(&oware_solver::distributed::PartitionStats) -> u64| {
                    out.iter().map(|(_, s, _)| f(s)).sum::<u64>() as f64 / positions as f64
                };
                let state = out.iter().map(|(_, s, _)| s.cell_bytes).max().unwrap_or(0);
                let shares = out.iter().map(|(_, _, b)| *b).max().unwrap_or(0);
                let s0 = &out[0].1;
                println!(
                    "{n} {positions} {r}-ranks {secs:.2} {:.2} {} {:.2} {:.2} {:.1} {:.1} {:.1}/{:.1}/{:.1}/{:.1} {:.2} {:.2}{}",
                    positions as f64 / secs / 1e6,
                    s0.rounds,
                    per(&|s| s.bytes_sent),
                    per(&|s| s.lookup_bytes_sent),
                    state as f64 / 1e6,
                    shares as f64 / 1e6,
                    s0.init_seconds,
                    s0.propagate_seconds,
                    s0.comm_seconds,
                    s0.lookup_comm_seconds,
                    per(&|s| s.updates_remote),
                    per(&|s| s.lookups_local + s.lookups_remote),
                    if same { "" } else { " DIFFERENT" }
                );
                if !same {
                    return Err(format!("tier {n} differs on {r} ranks").into());
                }
            }
        }
        lower.push(Arc::from(reference));
    }
    Ok(())
}
