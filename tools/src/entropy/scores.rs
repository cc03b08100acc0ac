//! The scores on their own: order-0, order-1 and order-2 entropies, the order-1 entropy as
//! the tables code it (context reset every sub-block), the histogram, and the cost of a
//! per-block palette.

use std::collections::HashMap;
use std::fmt;

use super::bits;

/// The sub-block of the tables' order-1 code: its first entry has the context of score 0.
pub const SUB_BLOCK: usize = 256;

/// Block sizes of the palette measurements.
pub const PALETTE_BLOCKS: [usize; 3] = [256, 1024, 4096];

/// The symbol of a score: 128 of them cover every tier.
fn symbol(x: i8) -> usize {
    (i32::from(x) + 64) as usize
}

/// A palette per block: each entry coded as an index into the distinct scores of its block.
#[derive(Clone, Debug)]
pub struct Palette {
    /// Entries per block.
    pub block: usize,
    /// The mean number of distinct scores in a block.
    pub mean_distinct: f64,
    /// Bits per position: `ceil(log2(distinct))` per entry of each block.
    pub bits: f64,
}

/// The statistics of a tier's scores.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Positions.
    pub entries: usize,
    /// Order-0 entropy: each score coded alone.
    pub order0: f64,
    /// Order-1 entropy: each score coded knowing the previous one (score 0 before the first).
    pub order1: f64,
    /// Order-1 entropy with the context reset to score 0 every [`SUB_BLOCK`] entries, as the
    /// tables code it.
    pub order1_sub_blocks: f64,
    /// The share of scores equal to the previous one.
    pub equal_previous: f64,
    /// Order-2 entropy: knowing the previous two scores.
    pub order2: f64,
    /// Pairs of previous scores seen.
    pub order2_contexts: usize,
    /// Knowing the previous score and whether it equals the one before it.
    pub previous_and_equal: f64,
    /// How many positions have each score, by score.
    pub histogram: Vec<(i8, u64)>,
    /// A palette per block, for each of [`PALETTE_BLOCKS`].
    pub palettes: Vec<Palette>,
}

/// Measures `scores`.
pub fn measure(scores: &[i8]) -> Summary {
    let v = scores;
    let n = v.len() as f64;
    let mut c0 = vec![0u64; 128];
    let mut c1 = vec![vec![0u64; 128]; 128];
    let mut c1_sub = vec![vec![0u64; 128]; 128];
    let mut equal = 0u64;
    for (i, &x) in v.iter().enumerate() {
        c0[symbol(x)] += 1;
        let p = if i > 0 { v[i - 1] } else { 0 };
        c1[symbol(p)][symbol(x)] += 1;
        let q = if i % SUB_BLOCK > 0 { v[i - 1] } else { 0 };
        c1_sub[symbol(q)][symbol(x)] += 1;
        if p == x {
            equal += 1;
        }
    }
    let mut c2 = HashMap::<(usize, usize), Vec<u64>>::new();
    let mut ce = HashMap::<(usize, bool), Vec<u64>>::new();
    for i in 2..v.len() {
        c2.entry((symbol(v[i - 1]), symbol(v[i - 2])))
            .or_insert_with(|| vec![0; 128])[symbol(v[i])] += 1;
        ce.entry((symbol(v[i - 1]), v[i - 1] == v[i - 2]))
            .or_insert_with(|| vec![0; 128])[symbol(v[i])] += 1;
    }
    let palettes = PALETTE_BLOCKS
        .iter()
        .map(|&b| {
            let mut bits = 0f64;
            let mut distinct = 0usize;
            for blk in v.chunks(b) {
                let mut c = [0u64; 128];
                for &x in blk {
                    c[symbol(x)] += 1;
                }
                let d = c.iter().filter(|&&x| x > 0).count();
                distinct += d;
                bits += (d as f64).log2().ceil() * blk.len() as f64;
            }
            Palette {
                block: b,
                mean_distinct: distinct as f64 / (v.len() / b).max(1) as f64,
                bits: bits / n,
            }
        })
        .collect();
    let conditional = |rows: &[Vec<u64>]| rows.iter().map(|c| bits(c)).sum::<f64>() / n;
    Summary {
        entries: v.len(),
        order0: bits(&c0) / n,
        order1: conditional(&c1),
        order1_sub_blocks: conditional(&c1_sub),
        equal_previous: equal as f64 / n,
        order2: c2.values().map(|c| bits(c)).sum::<f64>() / n,
        order2_contexts: c2.len(),
        previous_and_equal: ce.values().map(|c| bits(c)).sum::<f64>() / n,
        histogram: c0
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(s, &c)| ((s as i32 - 64) as i8, c))
            .collect(),
        palettes,
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "order-0 entropy {:.3} bits, order-1 {:.3} bits, equal to previous {:.3}",
            self.order0, self.order1, self.equal_previous
        )?;
        writeln!(
            f,
            "order-1 with the context reset every {SUB_BLOCK} entries (the tables' code) {:.3} bits",
            self.order1_sub_blocks
        )?;
        writeln!(f, "histogram {:?}", self.histogram)?;
        writeln!(
            f,
            "order-2 {:.3} bits ({} contexts), prev+eq {:.3}",
            self.order2, self.order2_contexts, self.previous_and_equal
        )?;
        for p in &self.palettes {
            writeln!(
                f,
                "block {}: mean distinct {:.2}, palette bits/pos {:.3}",
                p.block, p.mean_distinct, p.bits
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_run_costs_nothing_but_its_first_score() {
        let s = measure(&[3; 1000]);
        assert_eq!(s.order0, 0.0);
        assert_eq!(s.order1, 0.0);
        assert_eq!(s.equal_previous, 999.0 / 1000.0);
        assert_eq!(s.histogram, vec![(3, 1000)]);
        // Every sub-block starts from score 0, so its first 3 is a surprise: the context of
        // score 0 holds only 3s, though, so it costs nothing either.
        assert_eq!(s.order1_sub_blocks, 0.0);
    }

    #[test]
    fn alternating_scores_take_one_bit_alone_and_none_in_order() {
        let v: Vec<i8> = (0..4096).map(|i| if i % 2 == 0 { 1 } else { -1 }).collect();
        let s = measure(&v);
        assert!((s.order0 - 1.0).abs() < 1e-12);
        assert_eq!(s.order1, 0.0);
        assert_eq!(s.order2, 0.0);
        assert!(s.palettes.iter().all(|p| (p.bits - 1.0).abs() < 1e-12));
    }
}
