//! Prints entropy statistics of a tier table's scores (a design aid for value encodings):
//! order-0, order-1 and order-2 entropies, the histogram of the scores, and the cost of a
//! per-block palette.
//!
//! `cargo run --release -p oware-tools --bin entropy -- tables/tier-20.owt`
use oware_db::table::Table;
use std::path::Path;

fn h(counts: &[u64]) -> f64 {
    let t: u64 = counts.iter().sum();
    if t == 0 {
        return 0.0;
    }
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / t as f64;
            -p.log2() * c as f64
        })
        .sum::<f64>()
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: entropy TABLE (the path of one tier-NN.owt file)");
    let t = Table::open(Path::new(&path)).expect("open");
    let v = t.read_all().expect("read");
    let n = v.len() as f64;
    let sym = |x: i8| (x as i32 + 64) as usize;
    let mut c0 = vec![0u64; 128];
    let mut c1 = vec![vec![0u64; 128]; 128];
    let mut eqprev = 0u64;
    for (i, &x) in v.iter().enumerate() {
        c0[sym(x)] += 1;
        let p = if i > 0 { v[i - 1] } else { 0 };
        c1[sym(p)][sym(x)] += 1;
        if p == x {
            eqprev += 1;
        }
    }
    let h0 = h(&c0) / n;
    let h1: f64 = c1.iter().map(|c| h(c)).sum::<f64>() / n;
    println!(
        "entries {} file bits/pos {:.3}",
        v.len(),
        t.bits_per_entry()
    );
    println!(
        "order-0 entropy {:.3} bits, order-1 {:.3} bits, equal to previous {:.3}",
        h0,
        h1,
        eqprev as f64 / n
    );
    let hist: Vec<(i32, u64)> = c0
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(s, &c)| (s as i32 - 64, c))
        .collect();
    println!("histogram {:?}", hist);
    extra(&v);
    for b in [256usize, 1024, 4096] {
        let mut bits = 0f64;
        let mut distinct = 0usize;
        for blk in v.chunks(b) {
            let mut c = [0u64; 128];
            for &x in blk {
                c[sym(x)] += 1;
            }
            let d = c.iter().filter(|&&x| x > 0).count();
            distinct += d;
            bits += (d as f64).log2().ceil() * blk.len() as f64;
        }
        println!(
            "block {b}: mean distinct {:.2}, palette bits/pos {:.3}",
            distinct as f64 / (v.len() / b) as f64,
            bits / n
        );
    }
}

#[allow(dead_code)]
fn extra(v: &[i8]) {
    let n = v.len() as f64;
    let sym = |x: i8| (x as i32 + 64) as usize;
    let mut c2 = std::collections::HashMap::<(usize, usize), Vec<u64>>::new();
    let mut ce = std::collections::HashMap::<(usize, bool), Vec<u64>>::new();
    for i in 2..v.len() {
        c2.entry((sym(v[i - 1]), sym(v[i - 2])))
            .or_insert_with(|| vec![0; 128])[sym(v[i])] += 1;
        ce.entry((sym(v[i - 1]), v[i - 1] == v[i - 2]))
            .or_insert_with(|| vec![0; 128])[sym(v[i])] += 1;
    }
    println!(
        "order-2 {:.3} bits ({} contexts), prev+eq {:.3}",
        c2.values().map(|c| h(c)).sum::<f64>() / n,
        c2.len(),
        ce.values().map(|c| h(c)).sum::<f64>() / n
    );
}
