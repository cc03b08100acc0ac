//! The signs alone: win, draw or loss for the mover, the least a table could say.

/// Entropy of the signs of `scores` (three symbols), each coded knowing the previous `k`
/// signs, in bits per score.
///
/// # Panics
/// If `k` is over 8.
pub fn entropy(scores: &[i8], k: u32) -> f64 {
    assert!(k <= 8, "at most 8 previous signs");
    let mut counts = vec![[0u64; 3]; 1 << (2 * k)];
    let mut history = 0usize;
    for &x in scores {
        let sign = (x.signum() + 1) as usize;
        counts[history][sign] += 1;
        history = (history << 2 | sign) & ((1 << (2 * k)) - 1);
    }
    counts.iter().map(|c| super::bits(c)).sum::<f64>() / scores.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::entropy;

    #[test]
    fn signs_ignore_magnitudes() {
        // Wins of any size: one sign, which costs nothing.
        let v: Vec<i8> = [1, 5, 3, 2].repeat(100);
        assert_eq!(entropy(&v, 1), 0.0);
        // Win, draw, loss in turn: log2(3) bits alone, none knowing the previous one (the
        // history starts as a loss, which a win follows).
        let v: Vec<i8> = [4, 0, -2].repeat(300);
        assert!((entropy(&v, 0) - 3f64.log2()).abs() < 1e-12);
        assert_eq!(entropy(&v, 1), 0.0);
    }
}
