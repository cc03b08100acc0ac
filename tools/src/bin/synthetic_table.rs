//! Writes one tier of synthetic but realistic scores, for the probe benchmarks
//! (`scripts/bench-probe`): mostly small values that follow the material balance, so the
//! entries come in long runs as in real tables, with the parity of the tier and some noise.
//!
//! ```text
//! cargo run --release -p oware-tools --bin synthetic_table -- DIR TIER [BLOCK_ENTRIES,...] [LEVEL]
//! ```
//! With one block size the table goes to `DIR`; with several, to `DIR/b<BLOCK_ENTRIES>`.
//! Each directory gets a `manifest.json` (rules `abapa`).

use std::path::PathBuf;
use std::time::Instant;

use oware_db::index::{IndexKind, TierIndex};
use oware_db::manifest::{Manifest, TierEntry};
use oware_db::write::WriteOptions;
use oware_db::Rules;
use oware_solver::dir::{write_table_parallel, DEFAULT_BATCH_BLOCKS};
use rayon::prelude::*;

fn score(idx: &TierIndex, i: u64) -> i8 {
    let p = idx.unrank(i);
    let n = i32::from(p.seeds());
    let h = p.houses();
    let m = i32::from(p.mover_seeds());
    // Material balance, damped; small houses of the opponent (capturable) favour the mover.
    let weak = h[6..].iter().filter(|&&x| x == 1 || x == 2).count() as i32;
    let mut v = (2 * m - n) / 4 + weak / 2;
    // Some noise, from a hash of the index: one entry in eight moves by ±2.
    let z = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58;
    if z < 4 {
        v += if z % 2 == 0 { 2 } else { -2 };
    }
    if (v - n).rem_euclid(2) != 0 {
        v += 1;
    }
    v.clamp(-n, n) as i8
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: synthetic_table DIR TIER [BLOCK_ENTRIES,...] [LEVEL]");
        std::process::exit(2);
    }
    let dir = PathBuf::from(&args[1]);
    let tier: u8 = args[2].parse().expect("TIER is a number in 0..=48");
    let sizes: Vec<u32> = args
        .get(3)
        .map_or("4096", String::as_str)
        .split(',')
        .map(|s| s.parse().expect("BLOCK_ENTRIES are numbers"))
        .collect();
    let level: i32 = args
        .get(4)
        .map_or(Ok(WriteOptions::DEFAULT_LEVEL), |s| s.parse())
        .expect("LEVEL is a number");
    let kind = IndexKind::Reachable;
    let idx = TierIndex::new(tier, kind);
    let t0 = Instant::now();
    let scores: Vec<i8> = (0..idx.size())
        .into_par_iter()
        .map(|i| score(&idx, i))
        .collect();
    eprintln!(
        "generated {} scores of tier {tier} in {:.1} s",
        scores.len(),
        t0.elapsed().as_secs_f64()
    );
    for &be in &sizes {
        let out = if sizes.len() == 1 {
            dir.clone()
        } else {
            dir.join(format!("b{be}"))
        };
        std::fs::create_dir_all(&out).expect("create the output directory");
        let opts = WriteOptions {
            block_entries: be,
            level,
            ..WriteOptions::default()
        };
        let t0 = Instant::now();
        let w = write_table_parallel(
            &oware_solver::TableDir::new(&out, &oware_solver::Cancel::new()),
            &Rules::ABAPA,
            tier,
            kind,
            &scores,
            &opts,
            DEFAULT_BATCH_BLOCKS,
        )
        .expect("write");
        let secs = t0.elapsed().as_secs_f64();
        let mut m = Manifest::new(&Rules::ABAPA);
        m.tiers.insert(
            tier,
            TierEntry {
                verified: None,
                distance: None,
                source: None,
                file: w.file.clone(),
                entries: scores.len() as u64,
                file_size: w.file_size,
                checksum: w.checksum.clone(),
                stats: None,
            },
        );
        m.save(&out).expect("write the manifest");
        println!(
            "block_entries {be:>6}  level {level}  {} bytes  {:.3} bits/position  written in {secs:.1} s  -> {}",
            w.file_size,
            w.file_size as f64 * 8.0 / scores.len() as f64,
            w.path.display()
        );
    }
}
