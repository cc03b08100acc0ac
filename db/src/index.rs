//! The perfect-hash index of a tier: a bijection between the positions of tier `n` and
//! `0..size(n)`, with table-driven rank and unrank.
//!
//! # Layout
//!
//! A position is split into the mover's side `a` (houses 0..6, `m` seeds) and the opponent's
//! side `b` (houses 6..12, `n − m` seeds); each side into two triples of houses. Indices are
//! ordered by `m`, then by the rank of `a`, then by the rank of `b`:
//!
//! ```text
//! rank(p) = OFF12[n][m] + rank6(a) · B(n − m) + rankB(b)
//! rank6(x) = OFF6[s][t] + rank3(x0,x1,x2) · N3(s − t) + rank3(x3,x4,x5)   (t = x0+x1+x2)
//! ```
//!
//! `rank3` is one look-up in a 64³ table of `u16` (512 KB), keyed by the triple's three bytes
//! of the packed board cut to 6 bits each, the triple sums are one multiply each, and every
//! offset is a look-up in a row padded to 64 entries, so a rank is about a dozen look-ups,
//! no loop over seeds and no bounds checks. Unrank finds `m` and the two
//! triple sums by binary search in rows of at most 50 offsets (6 probes each) and reads the
//! triples from a table of all 3-house compositions (20,825 entries). Over increasing
//! indices ([`Cursor`], [`Unranker`]) the last triple, and within a few rows the first, are
//! stepped on rather than searched, and the mover's side is kept while it lasts.
//!
//! # Two kinds
//!
//! - [`IndexKind::Dense`]: every one of the C(n+11, 11) positions of the tier.
//! - [`IndexKind::Reachable`] (what the tables use): only positions that a move can lead to,
//!   those whose opponent side (houses 6..12, the side that just moved) has an empty house.
//!   The others (the start position among them) are not stored: `rank` returns `None` for
//!   them and the probe answers them with a one-ply search. It holds
//!   C(n+11, 11) − C(n+5, 11) positions: 13 % fewer at tier 30, 27 % fewer at tier 48.
//!
//!   Within a triple ordering, the compositions holding a zero come first, so the opponent
//!   sides with an empty house are ranked directly: the pairs of triples where the first
//!   triple has a zero (any second triple), then those where the first is all positive and
//!   the second has a zero.

use std::sync::OnceLock;

use crate::position::{Position, MAX_SEEDS};

/// Which positions an index covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexKind {
    /// All C(n+11, 11) positions of the tier.
    Dense,
    /// Only positions whose opponent side has at least one empty house.
    Reachable,
}

impl IndexKind {
    /// The name stored in table headers: `dense` or `reachable`.
    pub fn name(self) -> &'static str {
        match self {
            IndexKind::Dense => "dense",
            IndexKind::Reachable => "reachable",
        }
    }

    /// Parses [`IndexKind::name`].
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "dense" => Some(IndexKind::Dense),
            "reachable" => Some(IndexKind::Reachable),
            _ => None,
        }
    }

    /// Whether this kind holds the position `p` (of any tier).
    #[inline]
    pub fn holds(self, p: &Position) -> bool {
        match self {
            IndexKind::Dense => true,
            IndexKind::Reachable => p.is_reachable(),
        }
    }
}

/// Serialized as its name (as in `manifest.json`).
impl serde::Serialize for IndexKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Deserialized from its name; the error names the text.
impl<'de> serde::Deserialize<'de> for IndexKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        IndexKind::from_name(&text).ok_or_else(|| {
            serde::de::Error::custom(format!("index `{text}`: not `reachable` or `dense`"))
        })
    }
}

const S: usize = MAX_SEEDS as usize + 1; // 49 seed counts 0..=48
/// Rows of the tables indexed by a seed count: 64, so that an index masked with `SP - 1`
/// needs no bounds check.
const SP: usize = 64;
/// Entries of the `rank3` table: three houses of up to 63 seeds, 6 bits each.
const R3: usize = 1 << 18;
/// Length of an offset row: at least `S + 1`, a power of two for the branchless search.
const ROW: usize = 64;

struct Tables {
    /// C(n, k) for n < 64, k <= 12.
    binom: [[u64; 13]; 64],
    /// The rank of `(x, y, z)` within the compositions of x+y+z into 3 parts
    /// (zero-containing first), at `x | y << 6 | z << 12` (see `side_triples`).
    rank3: Box<[u16; R3]>,
    /// All 3-part compositions, grouped by sum, each group in rank order.
    /// (houses packed one per byte: `x | y << 8 | z << 16`).
    list3: Vec<u32>,
    start3: [usize; S + 1],
    n3: [u64; SP],
    z3: [u64; SP],
    /// Offsets of the triple-sum blocks of 6-house sides: [sum][t], t in 0..=sum+1.
    off6_dense: Box<[[u64; ROW]; SP]>,
    off6_zero: Box<[[u64; ROW]; SP]>,
    /// Offsets of the mover-sum blocks of tiers: [kind][n][m], m in 0..=n+1.
    off12: [Box<[[u64; ROW]; SP]>; 2],
}

#[allow(clippy::needless_range_loop)]
fn binom_table() -> [[u64; 13]; 64] {
    let mut c = [[0u64; 13]; 64];
    for n in 0..64 {
        c[n][0] = 1;
        for k in 1..13 {
            c[n][k] = if n == 0 {
                0
            } else {
                c[n - 1][k - 1] + c[n - 1][k]
            };
        }
    }
    c
}

#[inline]
fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(build_tables)
}

// Index loops read best here: several tables are indexed by the same sums.
#[allow(clippy::needless_range_loop)]
fn build_tables() -> Tables {
    let binom = binom_table();
    let mut rank3: Box<[u16; R3]> = vec![u16::MAX; R3]
        .into_boxed_slice()
        .try_into()
        .expect("R3 entries");
    let mut list3 = Vec::new();
    let mut start3 = [0usize; S + 1];
    let mut n3 = [0u64; SP];
    let mut z3 = [0u64; SP];
    for t in 0..S {
        start3[t] = list3.len();
        let mut group: Vec<[u8; 3]> = Vec::new();
        for x in 0..=t {
            for y in 0..=t - x {
                group.push([x as u8, y as u8, (t - x - y) as u8]);
            }
        }
        // zero-containing first, stable (lexicographic) inside each part
        group.sort_by_key(|c| !c.contains(&0));
        n3[t] = group.len() as u64;
        z3[t] = group.iter().filter(|c| c.contains(&0)).count() as u64;
        for (k, c) in group.iter().enumerate() {
            rank3[usize::from(c[0]) | usize::from(c[1]) << 6 | usize::from(c[2]) << 12] = k as u16;
        }
        list3.extend(
            group
                .iter()
                .map(|c| u32::from(c[0]) | u32::from(c[1]) << 8 | u32::from(c[2]) << 16),
        );
    }
    start3[S] = list3.len();
    let p3 = |t: usize| n3[t] - z3[t];
    let rows = || -> Box<[[u64; ROW]; SP]> { Box::new([[0u64; ROW]; SP]) };
    let mut off6_dense = rows();
    let mut off6_zero = rows();
    for s in 0..S {
        for t in 0..=s {
            let d = n3[t] * n3[s - t];
            off6_dense[s][t + 1] = off6_dense[s][t] + d;
            off6_zero[s][t + 1] = off6_zero[s][t] + d - p3(t) * p3(s - t);
        }
        for t in s + 2..ROW {
            off6_dense[s][t] = u64::MAX;
            off6_zero[s][t] = u64::MAX;
        }
    }
    let n6 = |s: usize| off6_dense[s][s + 1];
    let z6 = |s: usize| off6_zero[s][s + 1];
    let mut off12 = [rows(), rows()];
    for (k, table) in off12.iter_mut().enumerate() {
        for n in 0..S {
            for m in 0..=n {
                let b = if k == 0 { n6(n - m) } else { z6(n - m) };
                table[n][m + 1] = table[n][m] + n6(m) * b;
            }
            for m in n + 2..ROW {
                table[n][m] = u64::MAX;
            }
        }
    }
    Tables {
        binom,
        rank3,
        list3,
        start3,
        n3,
        z3,
        off6_dense,
        off6_zero,
        off12,
    }
}

/// C(n, k) for `n < 64`, `k <= 12` (0 when `k > n`).
pub fn binomial(n: usize, k: usize) -> u64 {
    tables().binom[n][k]
}

/// The side of six houses packed one per byte in the low 48 bits of `w` (higher bits
/// ignored) as two triples: their `rank3` keys and their seed sums, `(key1, key2, sum1,
/// sum2)`, each worked out for both triples at once (three masks and one multiply in
/// all), in lanes of 24 bits. A triple's key takes 6 bits per house (a house of a position
/// holds at most 48 seeds; larger counts give a wrong key, never an out-of-bounds one).
#[inline(always)]
fn side_triples(w: u64) -> (usize, usize, usize, usize) {
    const M0: u64 = 0x3F | 0x3F << 24;
    const M1: u64 = 0xFC0 | 0xFC0 << 24;
    const M2: u64 = 0x3_F000 | 0x3_F000 << 24;
    let k = (w & M0) | (w >> 2 & M1) | (w >> 4 & M2);
    // Byte 2 of the product is the sum of bytes 0..3, byte 5 that of bytes 3..6: no byte
    // carries while the houses hold at most 85 seeds in all.
    let s = w.wrapping_mul(0x01_0101);
    (
        (k & (R3 as u64 - 1)) as usize,
        (k >> 24 & (R3 as u64 - 1)) as usize,
        (s >> 16 & (SP as u64 - 1)) as usize,
        (s >> 40 & (SP as u64 - 1)) as usize,
    )
}

/// The rank of the triple of `rank3` key `key` within the compositions of its sum.
#[inline(always)]
fn rank3_key(t: &Tables, key: usize) -> u64 {
    u64::from(t.rank3[key & (R3 - 1)])
}

#[inline]
fn unrank3(t: &Tables, sum: usize, r: u64) -> u128 {
    u128::from(t.list3[t.start3[sum] + r as usize])
}

/// Largest `i` with `row[i] <= r` (rows start at 0, are strictly increasing, and are padded
/// with `u64::MAX`): a branchless binary search of 6 probes.
#[inline]
fn block_of(row: &[u64; ROW], r: u64) -> usize {
    let mut base = 0usize;
    let mut step = ROW / 2;
    while step > 0 {
        if row[base + step] <= r {
            base += step;
        }
        step /= 2;
    }
    base
}

/// `(q / d, q % d)`, in 32 bits when `q` fits (much faster than a 64-bit division).
#[inline]
fn divmod(q: u64, d: u64) -> (u64, u64) {
    if q <= u64::from(u32::MAX) {
        let (q, d) = (q as u32, d as u32);
        (u64::from(q / d), u64::from(q % d))
    } else {
        (q / d, q % d)
    }
}

/// The rank of the packed board `$x` in the index `$index` (see
/// [`TierIndex::rank_unchecked`]). A macro, not a function: `rank_unchecked` must stay one
/// function body for the compiler's inlining choices in the solver's hot loops, and
/// `TierIndex::rank_whole` needs the same code over a board loaded whole. It repeats the
/// arithmetic of `mover_rank` and `opponent_rank` rather than calling them: built from those
/// two helpers (both `#[inline(always)]`), generation's propagation of tier 22 took 2 %
/// longer, in each of four alternated pairs.
macro_rules! rank_packed {
    ($index:expr, $x:expr) => {{
        let index: &TierIndex = $index;
        // The four triples of houses, 24 bits each, and their sums; every table index is
        // masked to its table, so a position of another tier gives a meaningless index
        // rather than a panic.
        let t = index.t;
        let x: u128 = $x;
        // Both triples of a side at once ([`side_triples`]).
        let (ka1, ka2, ta, ta2) = side_triples(x as u64);
        let (kb1, kb2, tb, tb2) = side_triples((x >> 48) as u64);
        let m = (ta + ta2) & (SP - 1);
        let sb = (tb + tb2) & (SP - 1);
        let sb1 = (sb + 1) & (ROW - 1);
        let n = usize::from(index.n) & (SP - 1);
        let ra = t.off6_dense[m][ta] + rank3_key(t, ka1) * t.n3[ta2] + rank3_key(t, ka2);
        let (b1, b2) = (rank3_key(t, kb1), rank3_key(t, kb2));
        let (rb, nb) = match index.kind {
            IndexKind::Dense => (
                t.off6_dense[sb][tb] + b1 * t.n3[tb2] + b2,
                t.off6_dense[sb][sb1],
            ),
            IndexKind::Reachable => {
                let z1 = t.z3[tb];
                let inner = if b1 < z1 {
                    b1 * t.n3[tb2] + b2
                } else {
                    z1 * t.n3[tb2] + (b1 - z1) * t.z3[tb2] + b2
                };
                (t.off6_zero[sb][tb] + inner, t.off6_zero[sb][sb1])
            }
        };
        t.off12[index.kind as usize][n][m] + ra * nb + rb
    }};
}

/// The half of a rank that depends on the opponent's side alone
/// ([`TierIndex::opponent_half`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpponentHalf {
    /// The tier's offset of the mover's seed count, plus the opponent side's rank.
    base: u64,
    /// Opponent sides of that seed count: the stride of the mover's rank.
    nb: u64,
}

/// The index of one tier: rank and unrank between its positions and `0..size()`.
///
/// Cheap to copy; the look-up tables (under 1 MB) are built once per process, and each
/// index holds a reference to them (no check that they are built per rank).
#[derive(Clone, Copy)]
pub struct TierIndex {
    n: u8,
    kind: IndexKind,
    t: &'static Tables,
}

impl PartialEq for TierIndex {
    fn eq(&self, other: &Self) -> bool {
        (self.n, self.kind) == (other.n, other.kind)
    }
}

impl Eq for TierIndex {}

impl std::fmt::Debug for TierIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TierIndex")
            .field("n", &self.n)
            .field("kind", &self.kind)
            .finish()
    }
}

impl TierIndex {
    /// The index of tier `n` (0..=48).
    ///
    /// # Panics
    /// If `n > 48`.
    pub fn new(n: u8, kind: IndexKind) -> Self {
        assert!(n <= MAX_SEEDS, "tier {n} is over 48");
        TierIndex {
            n,
            kind,
            t: tables(),
        }
    }

    /// The tier (seed count).
    pub fn tier(&self) -> u8 {
        self.n
    }

    /// The kind of positions covered.
    pub fn kind(&self) -> IndexKind {
        self.kind
    }

    /// Number of positions in the index: C(n+11, 11) for [`IndexKind::Dense`],
    /// C(n+11, 11) − C(n+5, 11) for [`IndexKind::Reachable`].
    pub fn size(&self) -> u64 {
        let n = self.n as usize;
        self.t.off12[self.kind as usize][n][n + 1]
    }

    /// The index of `p`, or `None` if `p` is not of this tier or not covered by this kind.
    #[inline]
    pub fn rank(&self, p: &Position) -> Option<u64> {
        if p.seeds() != self.n || !self.kind.holds(p) {
            return None;
        }
        Some(self.rank_unchecked(p))
    }

    /// The index of `p`, which the caller guarantees is of this tier and covered by this
    /// kind (checked in debug builds; otherwise the result is meaningless).
    #[inline]
    pub fn rank_unchecked(&self, p: &Position) -> u64 {
        debug_assert!(p.seeds() == self.n && self.kind.holds(p));
        rank_packed!(self, p.packed())
    }

    /// The half of [`TierIndex::rank_unchecked`] that depends on the opponent's side
    /// (houses 6..12) of `p`, a position of this tier: worked out once for positions that
    /// share it, each then ranked by its mover's side alone ([`TierIndex::rank_beside`]).
    #[inline]
    pub fn opponent_half(&self, p: &Position) -> OpponentHalf {
        let (rb, nb, sb) = opponent_rank(self.t, self.kind, p.packed());
        let n = usize::from(self.n) & (SP - 1);
        let m = n.wrapping_sub(sb) & (SP - 1);
        OpponentHalf {
            base: self.t.off12[self.kind as usize][n][m] + rb,
            nb,
        }
    }

    /// [`TierIndex::rank_unchecked`] of `p`, whose opponent's side is that of the position
    /// `half` was worked out from (the caller guarantees it, as it guarantees what
    /// `rank_unchecked` needs; otherwise the result is meaningless): the mover's half only.
    #[inline(always)]
    pub fn rank_beside(&self, p: &Position, half: &OpponentHalf) -> u64 {
        let (ra, _) = mover_rank(self.t, p.packed());
        half.base + ra * half.nb
    }

    /// The rank of `p` loaded whole ([`Position::packed_whole`]): see
    /// [`crate::retro::rank_of_child`].
    #[inline]
    pub(crate) fn rank_whole(&self, p: &Position) -> u64 {
        rank_packed!(self, p.packed_whole())
    }

    /// The rank of the packed board `x` of this tier in three parts, `(ra, nb, base)` with
    /// `rank = base + ra · nb`: `ra` depends on the mover's side only, `nb` and `base` on the
    /// opponent's side only (see the module's layout). What a reader of another order that
    /// keeps one side fixed over a run of positions computes once per run.
    pub(crate) fn rank_parts(&self, x: u128) -> (u64, u64, u64) {
        let (ra, m) = mover_rank(self.t, x);
        let (rb, nb, _) = opponent_rank(self.t, self.kind, x);
        let n = usize::from(self.n) & (SP - 1);
        (ra, nb, self.t.off12[self.kind as usize][n][m] + rb)
    }

    /// The indices of the positions whose mover holds `m` seeds (houses 0..6): the index
    /// orders a tier by that count first, one block of consecutive indices per count. Empty
    /// when `m` is over the tier.
    pub fn mover_block(&self, m: u8) -> std::ops::Range<u64> {
        if m > self.n {
            let size = self.size();
            return size..size;
        }
        let row = &self.t.off12[self.kind as usize][usize::from(self.n)];
        row[usize::from(m)]..row[usize::from(m) + 1]
    }

    /// The position with index `i`.
    ///
    /// # Panics
    /// If `i >= self.size()`.
    #[inline]
    pub fn unrank(&self, i: u64) -> Position {
        let (mover, sb, _, rb) = self.unrank_mover(i);
        Position::from_packed(mover | self.unrank_opponent(sb, rb).side)
    }

    /// The mover's side of index `i` (packed houses 0..6), the opponent's seed count, the
    /// first index of the run of indices that share this mover side, and the rank of the
    /// opponent's side within that run.
    #[inline]
    fn unrank_mover(&self, i: u64) -> (u128, usize, u64, u64) {
        assert!(i < self.size(), "index {i} out of tier {}", self.n);
        let t = self.t;
        let n = self.n as usize;
        let m = block_of(&t.off12[self.kind as usize][n], i);
        let q = i - t.off12[self.kind as usize][n][m];
        let sb = n - m;
        let nb = self.sides(sb);
        let (ra, rb) = divmod(q, nb);
        let ta = block_of(&t.off6_dense[m], ra);
        let qa = ra - t.off6_dense[m][ta];
        let (a1, a2) = divmod(qa, t.n3[m - ta]);
        let mover = unrank3(t, ta, a1) | unrank3(t, m - ta, a2) << 24;
        (mover, sb, i - rb, rb)
    }

    /// How many opponent sides of `sb` seeds this kind holds.
    #[inline]
    fn sides(&self, sb: usize) -> u64 {
        let t = self.t;
        match self.kind {
            IndexKind::Dense => t.off6_dense[sb][sb + 1],
            IndexKind::Reachable => t.off6_zero[sb][sb + 1],
        }
    }

    /// The opponent's side of rank `rb` among the sides of `sb` seeds, and where it stands in
    /// the rows of its first triple (see [`Opponent`]).
    #[inline]
    fn unrank_opponent(&self, sb: usize, rb: u64) -> Opponent {
        let t = self.t;
        let (tb, b1, b2, limit, b1_end) = match self.kind {
            IndexKind::Dense => {
                let tb = block_of(&t.off6_dense[sb], rb);
                let qb = rb - t.off6_dense[sb][tb];
                let nb2 = t.n3[sb - tb];
                let (b1, b2) = divmod(qb, nb2);
                (tb, b1, b2, nb2, t.n3[tb])
            }
            IndexKind::Reachable => {
                let tb = block_of(&t.off6_zero[sb], rb);
                let qb = rb - t.off6_zero[sb][tb];
                let nb2 = t.n3[sb - tb];
                let z1 = t.z3[tb];
                if qb < z1 * nb2 {
                    let (b1, b2) = divmod(qb, nb2);
                    (tb, b1, b2, nb2, z1)
                } else {
                    let z2 = t.z3[sb - tb];
                    let (b1, b2) = divmod(qb - z1 * nb2, z2);
                    (tb, z1 + b1, b2, z2, t.n3[tb])
                }
            }
        };
        Opponent {
            side: unrank3(t, tb, b1) << 48 | unrank3(t, sb - tb, b2) << 72,
            first_sum: tb,
            b1,
            b1_end,
            b2,
            limit,
            last_sum: sb - tb,
        }
    }

    /// An unranker that remembers the mover's side of the last index it unranked, so that
    /// unranking indices in increasing order, as a sweep over a bitset does, mostly only
    /// decodes the opponent's side.
    pub fn unranker(&self) -> Unranker {
        Unranker {
            index: *self,
            start: 1,
            end: 0,
            mover: 0,
            sb: 0,
            last: u64::MAX,
            packed: 0,
            b2: 0,
            limit: 0,
            last_sum: 0,
            first_sum: 0,
            b1: 0,
            b1_end: 0,
        }
    }

    /// Iterates the positions of indices `start..end` in order, faster than calling
    /// [`TierIndex::unrank`] for each: most steps only change houses 9..12.
    ///
    /// # Panics
    /// If `end > self.size()`.
    pub fn cursor(&self, start: u64, end: u64) -> Cursor {
        assert!(end <= self.size(), "end {end} beyond tier {}", self.n);
        Cursor {
            unranker: self.unranker(),
            next: start,
            end,
        }
    }

    /// Every position of the tier in index order.
    pub fn positions(&self) -> impl Iterator<Item = Position> + '_ {
        (0..self.size()).map(move |i| self.unrank(i))
    }
}

/// An iterator over a range of indices of a tier, from [`TierIndex::cursor`].
#[derive(Clone, Debug)]
pub struct Cursor {
    unranker: Unranker,
    next: u64,
    end: u64,
}

impl Iterator for Cursor {
    type Item = Position;

    #[inline]
    fn next(&mut self) -> Option<Position> {
        if self.next >= self.end {
            return None;
        }
        // Consecutive indices: the unranker mostly steps the last triple, and otherwise
        // keeps the mover's side while it lasts.
        let p = self.unranker.unrank(self.next);
        self.next += 1;
        Some(p)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.end - self.next) as usize;
        (n, Some(n))
    }
}

/// Unranks indices of one tier, reusing the mover's side between calls: see
/// [`TierIndex::unranker`].
#[derive(Clone, Debug)]
pub struct Unranker {
    index: TierIndex,
    /// The indices `start..end` share the mover's side `mover`, with `sb` opponent seeds.
    start: u64,
    end: u64,
    mover: u128,
    sb: usize,
    /// The last index unranked, its position (packed), and where its last triple stands
    /// (as in [`Cursor`]): rank `b2` of `limit` compositions of `last_sum` seeds.
    last: u64,
    packed: u128,
    b2: u64,
    limit: u64,
    last_sum: usize,
    /// Where its first triple stands: rank `b1` of the compositions of `first_sum` seeds,
    /// in a run of ranks below `b1_end` whose last triples all take `limit` ranks.
    first_sum: usize,
    b1: u64,
    b1_end: u64,
}

impl Unranker {
    /// The position with index `i` (the same as [`TierIndex::unrank`]).
    ///
    /// # Panics
    /// If `i` is not below the tier's size.
    #[inline(always)]
    pub fn unrank(&mut self, i: u64) -> Position {
        if i > self.last && i - self.last < self.limit - self.b2 {
            // Only the last triple moves on, within the compositions of its sum.
            self.b2 += i - self.last;
            let packed = (self.packed & !(0xFF_FFFFu128 << 72))
                | unrank3(self.index.t, self.last_sum, self.b2) << 72;
            self.packed = packed;
            self.last = i;
            return Position::from_packed(packed);
        }
        Position::from_packed(self.unrank_far(i))
    }

    /// [`Unranker::unrank`] beyond the last triple's compositions. Out of line, and
    /// returning the packed board, which travels in registers: a `Position` returned
    /// through memory and read back at once stalls on store forwarding.
    ///
    /// An index a few rows of last triples ahead, in the same run of first triples, moves
    /// the first triple on by whole rows (no search, no division); any other is unranked
    /// from the mover's side.
    #[inline(never)]
    fn unrank_far(&mut self, i: u64) -> u128 {
        /// Rows of last triples skipped by stepping rather than by a search.
        const ROWS: u64 = 8;
        if i > self.last && i - self.last <= ROWS * self.limit {
            // `b2 < limit`, so at most `ROWS` rows are stepped.
            let (mut b1, mut b2) = (self.b1, self.b2 + (i - self.last));
            while b2 >= self.limit {
                b2 -= self.limit;
                b1 += 1;
            }
            if b1 < self.b1_end {
                let t = self.index.t;
                self.packed = self.mover
                    | unrank3(t, self.first_sum, b1) << 48
                    | unrank3(t, self.last_sum, b2) << 72;
                (self.last, self.b1, self.b2) = (i, b1, b2);
                return self.packed;
            }
        }
        if i < self.start || i >= self.end {
            let (mover, sb, start, _) = self.index.unrank_mover(i);
            self.mover = mover;
            self.sb = sb;
            self.start = start;
            self.end = start + self.index.sides(sb);
        }
        let o = self.index.unrank_opponent(self.sb, i - self.start);
        self.packed = self.mover | o.side;
        self.last = i;
        (self.first_sum, self.b1, self.b1_end) = (o.first_sum, o.b1, o.b1_end);
        (self.b2, self.limit, self.last_sum) = (o.b2, o.limit, o.last_sum);
        self.packed
    }
}

/// An opponent's side unranked ([`TierIndex::unrank_opponent`]), and where it stands: its
/// first triple is rank `b1` of the compositions of `first_sum` seeds, its last triple rank
/// `b2` of `limit` compositions of `last_sum` seeds, and the sides of first triples
/// `b1..b1_end` all have `limit` last triples (a run of consecutive indices).
struct Opponent {
    /// Houses 6..12, packed in place.
    side: u128,
    first_sum: usize,
    b1: u64,
    b1_end: u64,
    b2: u64,
    limit: u64,
    last_sum: usize,
}

/// Ranks the children of moves, each in the index of its own tier, for positions visited
/// in index order: the rank in halves, the half that the child's opponent's side fixes kept
/// per house played.
///
/// A move's child is seen from the next mover, so its opponent's side is the mover's side
/// of the parent once sown, which depends on the parent's mover side and the house played
/// alone (captures take seeds from the other side). Consecutive indices share the mover's
/// side, so over a run of positions the children of each house share that side, in
/// whichever tier their captures put them, and only the child's own side is ranked for
/// each child (see the module's layout: `rankB(b)` and `B(n − m)` depend on the opponent's
/// side alone). The result is [`TierIndex::rank_unchecked`]'s in the child's tier, whatever
/// the order of the calls: the half is worked out again whenever the child's opponent's
/// side is not the one kept.
#[derive(Clone)]
pub struct ChildRanker {
    kind: IndexKind,
    /// The look-up tables, held (no `OnceLock` check per rank).
    t: &'static Tables,
    /// Per house played (`0..6`; 8 entries, so that a mask keeps any house in bounds):
    /// the child's opponent's side (houses 6..12, packed) whose half is kept, or `u64::MAX`.
    sides: [u64; 8],
    /// Per house played: that side's `rankB(b)`, `B(n − m)` and seeds.
    parts: [(u64, u64, usize); 8],
}

impl std::fmt::Debug for ChildRanker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildRanker")
            .field("kind", &self.kind)
            .field("sides", &self.sides)
            .field("parts", &self.parts)
            .finish_non_exhaustive()
    }
}

impl ChildRanker {
    /// A ranker of positions in indices of `kind`.
    pub fn new(kind: IndexKind) -> Self {
        ChildRanker {
            kind,
            t: tables(),
            sides: [u64::MAX; 8],
            parts: [(0, 0, 0); 8],
        }
    }

    /// The rank of `child` in the index of its tier, a position that the caller guarantees
    /// that index holds (as for [`TierIndex::rank_unchecked`], checked in debug builds only;
    /// otherwise the result is meaningless), reached by playing `house` (`0..6`; any value
    /// gives the right rank, the house played keeps the half that its next child reuses).
    #[inline(always)]
    pub fn rank(&mut self, child: &Position, house: u8) -> u64 {
        debug_assert!(self.kind.holds(child));
        // Loaded whole: the child was just stored (`Position::packed_whole`).
        let x = child.packed_whole();
        let side = (x >> 48) as u64;
        let h = usize::from(house) & 7;
        if self.sides[h] != side {
            self.sides[h] = side;
            self.parts[h] = self.opponent_part(x);
        }
        let (rb, nb, sb) = self.parts[h];
        let (ra, m) = mover_rank(self.t, x);
        let n = (m + sb) & (SP - 1);
        self.t.off12[self.kind as usize][n][m] + ra * nb + rb
    }

    /// [`opponent_rank`] out of line: it runs only when a run's side changes.
    #[inline(never)]
    fn opponent_part(&self, x: u128) -> (u64, u64, usize) {
        opponent_rank(self.t, self.kind, x)
    }
}

/// `rank6(a)` of the mover's side of the packed board `x` (houses 0..6), and its seeds `m`
/// (see the module's layout; tables indexed by masked values, as in a rank).
#[inline(always)]
fn mover_rank(t: &Tables, x: u128) -> (u64, usize) {
    let (k1, k2, ta, ta2) = side_triples(x as u64);
    let m = (ta + ta2) & (SP - 1);
    (
        t.off6_dense[m][ta] + rank3_key(t, k1) * t.n3[ta2] + rank3_key(t, k2),
        m,
    )
}

/// `rankB(b)`, `B(n − m)` and the seeds of the opponent's side of the packed board `x`
/// (houses 6..12) in an index of `kind` (see the module's layout).
#[inline(always)]
fn opponent_rank(t: &Tables, kind: IndexKind, x: u128) -> (u64, u64, usize) {
    let (k1, k2, tb, tb2) = side_triples((x >> 48) as u64);
    let sb = (tb + tb2) & (SP - 1);
    let sb1 = (sb + 1) & (ROW - 1);
    let (b1, b2) = (rank3_key(t, k1), rank3_key(t, k2));
    let (rb, nb) = match kind {
        IndexKind::Dense => (
            t.off6_dense[sb][tb] + b1 * t.n3[tb2] + b2,
            t.off6_dense[sb][sb1],
        ),
        IndexKind::Reachable => {
            let z1 = t.z3[tb];
            let inner = if b1 < z1 {
                b1 * t.n3[tb2] + b2
            } else {
                z1 * t.n3[tb2] + (b1 - z1) * t.z3[tb2] + b2
            };
            (t.off6_zero[sb][tb] + inner, t.off6_zero[sb][sb1])
        }
    };
    (rb, nb, sb)
}

/// Number of positions of tier `n` in an index of `kind`.
pub fn tier_size(n: u8, kind: IndexKind) -> u64 {
    TierIndex::new(n, kind).size()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_binomials() {
        let mut reach_total = 0u64;
        for n in 0..=48u8 {
            let dense = binomial(n as usize + 11, 11);
            let unreachable = if n >= 6 {
                binomial(n as usize + 5, 11)
            } else {
                0
            };
            assert_eq!(tier_size(n, IndexKind::Dense), dense, "tier {n}");
            assert_eq!(
                tier_size(n, IndexKind::Reachable),
                dense - unreachable,
                "tier {n}"
            );
            reach_total += dense - unreachable;
        }
        assert_eq!(tier_size(48, IndexKind::Dense), 279_871_768_995);
        assert_eq!(tier_size(30, IndexKind::Dense), 3_159_461_968);
        assert_eq!(tier_size(30, IndexKind::Reachable), 2_742_236_068);
        // Over all tiers; without tier 47 and with the start position this is Romein and
        // Bal's 889,063,398,406 (`db/tests/counts.rs`, docs/DESIGN.md).
        assert_eq!(reach_total, 1_056_351_956_205);
    }

    /// Each position's index lies in the block of its mover's seed count, and the blocks
    /// tile the tier in order.
    #[test]
    fn mover_blocks_hold_their_positions() {
        for kind in [IndexKind::Dense, IndexKind::Reachable] {
            for n in 0..=9u8 {
                let idx = TierIndex::new(n, kind);
                let mut end = 0;
                for m in 0..=n {
                    let b = idx.mover_block(m);
                    assert_eq!(b.start, end, "{kind:?} tier {n} block {m}");
                    end = b.end;
                }
                assert_eq!(end, idx.size());
                assert!(idx.mover_block(n + 1).is_empty());
                for (i, p) in idx.positions().enumerate() {
                    assert!(idx.mover_block(p.mover_seeds()).contains(&(i as u64)));
                }
            }
        }
    }

    #[test]
    fn small_tiers_round_trip() {
        for kind in [IndexKind::Dense, IndexKind::Reachable] {
            for n in 0..=9u8 {
                let idx = TierIndex::new(n, kind);
                let mut cursor = idx.cursor(0, idx.size());
                let mut unranker = idx.unranker();
                for i in 0..idx.size() {
                    let p = idx.unrank(i);
                    assert_eq!(cursor.next(), Some(p));
                    assert_eq!(unranker.unrank(i), p);
                    assert_eq!(p.seeds(), n);
                    assert!(kind.holds(&p));
                    assert_eq!(idx.rank(&p), Some(i));
                }
                assert_eq!(cursor.next(), None);
                // Out of order too.
                let mut unranker = idx.unranker();
                for i in (0..idx.size()).rev().step_by(7) {
                    assert_eq!(unranker.unrank(i), idx.unrank(i));
                }
                // Forward with gaps, as a sweep over a sparse frontier does.
                let mut unranker = idx.unranker();
                for i in (0..idx.size()).step_by(3) {
                    assert_eq!(unranker.unrank(i), idx.unrank(i));
                }
                let mid = idx.size() / 3;
                assert!(idx
                    .cursor(mid, idx.size())
                    .eq((mid..idx.size()).map(|i| idx.unrank(i))));
            }
        }
    }

    /// An unranker gives `unrank`'s position for increasing indices at every spacing: within
    /// a row of last triples, a few rows ahead (stepped), and beyond (searched), across the
    /// runs of first triples and of mover sides, under both kinds.
    #[test]
    fn unrankers_agree_at_every_spacing() {
        for kind in [IndexKind::Dense, IndexKind::Reachable] {
            for n in [6u8, 11, 14] {
                let idx = TierIndex::new(n, kind);
                for gap in [1u64, 2, 3, 5, 9, 17, 40, 97, 301, 1000, 4099] {
                    let mut unranker = idx.unranker();
                    for i in (gap / 2..idx.size()).step_by(gap as usize) {
                        assert_eq!(
                            unranker.unrank(i),
                            idx.unrank(i),
                            "tier {n}, gap {gap}, {i}"
                        );
                    }
                }
                // Irregular gaps, and a step back now and then.
                let mut unranker = idx.unranker();
                let (mut i, mut x) = (0u64, 12345u64);
                while i < idx.size() {
                    assert_eq!(unranker.unrank(i), idx.unrank(i), "tier {n}, {i}");
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let r = x >> 33;
                    i = if r % 50 == 0 {
                        i.saturating_sub(r % 300)
                    } else {
                        i + 1 + r % 700
                    };
                }
            }
        }
    }

    /// A child ranker gives every child (in the tier or, after a capture, below it) the rank
    /// that `rank_unchecked` gives it in its tier: over a tier in index order (where its
    /// halves are reused), in reverse order, and with the house passed wrong (where they are
    /// worked out again), under both kinds.
    #[test]
    fn child_ranks_are_the_ranks() {
        use crate::moves::Outcome;
        use crate::rules::Rules;
        for kind in [IndexKind::Dense, IndexKind::Reachable] {
            for n in [0u8, 1, 5, 9, 12] {
                let idx = TierIndex::new(n, kind);
                let mut ranker = ChildRanker::new(kind);
                let (mut children, mut captures, mut reused) = (0u64, 0u64, 0u64);
                let mut check = |p: Position, ranker: &mut ChildRanker, shift: u8| {
                    p.for_each_move(&Rules::ABAPA, |m| {
                        if let Outcome::Continue { child, captured } = m.outcome {
                            if kind.holds(&child) {
                                let h = usize::from((m.house + shift) % 6);
                                let side = (child.packed() >> 48) as u64;
                                reused += u64::from(ranker.sides[h] == side);
                                let want =
                                    TierIndex::new(child.seeds(), kind).rank_unchecked(&child);
                                assert_eq!(ranker.rank(&child, m.house + shift), want, "{child:?}");
                                children += 1;
                                captures += u64::from(captured > 0);
                            }
                        }
                    });
                };
                for p in idx.positions() {
                    check(p, &mut ranker, 0);
                }
                for i in (0..idx.size()).rev() {
                    check(idx.unrank(i), &mut ranker, 1);
                }
                if n >= 5 {
                    assert!(captures > 0, "tier {n}");
                    assert!(reused * 2 > children, "tier {n}: {reused} of {children}");
                }
            }
        }
    }
}
