//! Round trips of the ctx-huffman codec on random score arrays: every
//! tier size `n` in 0..=48, any length (0, 1, not a multiple of the block), skewed and flat
//! distributions; every entry decoded alone (`decode_at`) and every block whole
//! (`decode_block`).

use super::{symbol_count, Model, MAX_LIMIT, MIN_LIMIT};
use proptest::prelude::*;

/// The arrays' generator (faster than a proptest vector of a million values).
struct Rng(fastrand::Rng);

impl Rng {
    fn below(&mut self, k: u64) -> u64 {
        self.0.u64(..k)
    }
}

/// The shapes of score arrays.
#[derive(Clone, Copy, Debug)]
pub enum Dist {
    /// One value only.
    One,
    /// Two values, the first with probability `p/256`.
    Two(u8),
    /// All `2n+1` values, uniform.
    Uniform,
    /// `|score|` geometric (each step up with probability `p/256`), random sign; repeats
    /// the previous score with probability `r/256` (runs, as in real tables).
    Geometric(u8, u8),
}

/// `len` scores of tier `n` (as score bytes) drawn from `dist`.
pub fn scores(n: u8, len: usize, dist: Dist, seed: u64) -> Vec<u8> {
    let mut rng = Rng(fastrand::Rng::with_seed(seed));
    let n64 = u64::from(n);
    let value = |rng: &mut Rng| (rng.below(2 * n64 + 1) as i64 - n as i64) as i8;
    let a = value(&mut rng);
    let b = value(&mut rng);
    let mut prev = 0i8;
    (0..len)
        .map(|_| {
            let v = match dist {
                Dist::One => a,
                Dist::Two(p) => {
                    if rng.below(256) < u64::from(p) {
                        a
                    } else {
                        b
                    }
                }
                Dist::Uniform => value(&mut rng),
                Dist::Geometric(p, r) => {
                    if rng.below(256) < u64::from(r) {
                        prev
                    } else {
                        let mut m = 0i8;
                        while i64::from(m) < n as i64 && rng.below(256) < u64::from(p) {
                            m += 1;
                        }
                        if rng.below(2) == 0 {
                            -m
                        } else {
                            m
                        }
                    }
                }
            };
            prev = v;
            v as u8
        })
        .collect()
}

fn dist() -> impl Strategy<Value = Dist> {
    prop_oneof![
        Just(Dist::One),
        any::<u8>().prop_map(Dist::Two),
        Just(Dist::Uniform),
        (any::<u8>(), any::<u8>()).prop_map(|(p, r)| Dist::Geometric(p, r)),
    ]
}

/// Encodes `data` in blocks of `block` entries, then decodes every entry both ways.
fn round_trip(n: u8, data: &[u8], block: usize, shift: u8, limit: u8) {
    let s = symbol_count(n);
    let mut counts = vec![0u64; s * s];
    for b in data.chunks(block) {
        Model::count_block(n, b, shift, &mut counts).unwrap();
    }
    let model = Model::from_counts(n, &counts, limit);
    assert_eq!(model.lengths().len(), s * s);
    // The model survives its stored form.
    let model = Model::from_lengths(n, limit, model.lengths()).unwrap();
    for (k, b) in data.chunks(block).enumerate() {
        let mut enc = Vec::new();
        model.encode_block(b, shift, &mut enc).unwrap();
        let mut back = vec![0u8; b.len()];
        model.decode_block(&enc, shift, &mut back).unwrap();
        assert_eq!(back, b, "block {k}");
        for (i, &v) in b.iter().enumerate() {
            assert_eq!(
                model.decode_at(&enc, b.len(), shift, i).unwrap(),
                v as i8,
                "block {k} entry {i}"
            );
        }
        assert!(model.decode_at(&enc, b.len(), shift, b.len()).is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn codec_round_trips(
        n in 0u8..=48,
        len in prop_oneof![Just(0usize), Just(1), 0usize..5000],
        block in prop_oneof![Just(1024usize), 1usize..3000],
        shift in 0u8..=10,
        limit in MIN_LIMIT..=MAX_LIMIT,
        dist in dist(),
        seed in any::<u64>(),
    ) {
        let data = scores(n, len, dist, seed);
        round_trip(n, &data, block, shift, limit);
    }
}

#[test]
fn every_symbol_of_tier_48_under_the_smallest_limit() {
    // 97 symbols, uniform, with codes of at most 7 bits (128 codes).
    let data = scores(48, 50_000, Dist::Uniform, 7);
    round_trip(48, &data, 1024, 8, MIN_LIMIT);
}
