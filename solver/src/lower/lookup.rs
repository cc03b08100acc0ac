//! Look-ups of the lower tiers when they are partitioned
//! ([`LowerShare`](super::share::LowerShare)): what a pass over
//! a rank's positions needs of other ranks' shares (the captures' children in the solver's
//! first pass, `solve/partitioned.rs`; the children in the ranks' verifier,
//! `verify/ranks.rs`; the children in the ranks' proof of distances, `distance/ranks.rs`)
//! becomes look-ups sent to their owners, answered with a byte or two each.
//!
//! Every rank walks its positions in rounds of about the same number of look-ups, and the
//! rounds go on while any rank has positions left (a rank done early still answers). A
//! round:
//!
//! 1. generates the moves of its positions (rayon, a chunk of positions per task): the
//!    game ends fold into each position's exit at once, every capture becomes a look-up word
//!    bucketed by the rank that owns the child, in the order the moves were generated;
//! 2. exchanges the look-ups all-to-all in sub-rounds of at most `per_dest` words per
//!    destination (as propagation bounds its updates), each sub-round answered at once by the
//!    owners, whose bytes come back in a second exchange in the order they were asked;
//! 3. folds `captured − answer` into the exits, walking the captures in the same order, and
//!    writes the cells as the single-process first pass does.
//!
//! An answer is a byte, or two where one does not hold it ([`Reply`]: the distance check
//! over ranks, `distance/ranks.rs`, answers a child's score and distance).

use std::time::Instant;

use rayon::prelude::*;

use crate::comm::{pack_bytes, unpack_bytes, Comm};

/// What an owner answers to a look-up: a byte or two, packed into words for the exchange.
pub(crate) trait Reply: Copy + Send + Sync {
    /// `values`, packed into words ([`pack_bytes`] of their little-endian bytes).
    fn pack(values: &[Self]) -> Vec<u64>;

    /// Inverse of [`Reply::pack`]; a short buffer gives what it holds.
    fn unpack(words: &[u64]) -> Vec<Self>;
}

impl Reply for u8 {
    fn pack(values: &[u8]) -> Vec<u64> {
        pack_bytes(values)
    }

    fn unpack(words: &[u64]) -> Vec<u8> {
        unpack_bytes(words)
    }
}

impl Reply for u16 {
    fn pack(values: &[u16]) -> Vec<u64> {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        pack_bytes(&bytes)
    }

    fn unpack(words: &[u64]) -> Vec<u16> {
        unpack_bytes(words)
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    }
}

/// Counts and timings of a rank's look-ups.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct LookupStats {
    /// Look-ups sent to other ranks.
    pub remote: u64,
    /// Look-ups this rank answered for itself.
    pub local: u64,
    /// Bytes sent to other ranks: 8 per look-up, 1 or 2 per answer (and the words' padding).
    pub bytes_sent: u64,
    /// All-to-all exchanges (look-ups and answers; the same on every rank).
    pub exchanges: u64,
    /// Seconds inside collective calls.
    pub comm_seconds: f64,
}

/// The layout of a pass over a rank's positions with look-ups.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// Positions per rayon task (at most 2^16: far exits are kept per chunk).
    pub chunk: usize,
    /// The most positions a round takes (about: whole groups of chunks).
    pub batch: usize,
    /// The look-ups after which a round takes no more chunks.
    pub budget: usize,
    /// The most look-up words sent to one rank in one exchange.
    pub per_dest: usize,
}

impl Layout {
    /// The layout for exchanges of at most `batch` words over `ranks` ranks: rounds of about
    /// `batch / 4` look-ups, and of at most `4 · batch` positions.
    pub fn new(chunk: usize, batch: usize, ranks: usize) -> Self {
        let batch = batch.max(1);
        Layout {
            chunk,
            batch: (4 * batch).next_multiple_of(chunk),
            budget: (batch / 4).max(1),
            per_dest: (batch / ranks.max(1)).max(1),
        }
    }
}

/// The look-ups of one chunk, by owner, and the owner of each in the order they were made.
pub(crate) struct Asks {
    /// The look-up words, by owner.
    pub requests: Vec<Vec<u64>>,
    /// The owner of each look-up, in order.
    pub owners: Vec<u32>,
}

impl Asks {
    /// No look-up yet, over `ranks` ranks.
    pub fn new(ranks: usize) -> Self {
        Asks {
            requests: vec![Vec::new(); ranks],
            owners: Vec::new(),
        }
    }

    /// Asks `word` of rank `owner`.
    #[inline]
    pub fn push(&mut self, word: u64, owner: usize) {
        self.requests[owner].push(word);
        self.owners.push(owner as u32);
    }
}

/// The answers to one chunk's look-ups, taken in the order they were asked.
pub(crate) struct Replies<'a, A = u8> {
    answers: &'a [Vec<A>],
    owners: std::slice::Iter<'a, u32>,
    at: Vec<usize>,
}

impl<A: Copy> Iterator for Replies<'_, A> {
    type Item = A;

    #[inline]
    fn next(&mut self) -> Option<A> {
        let d = *self.owners.next()? as usize;
        let v = self.answers[d][self.at[d]];
        self.at[d] += 1;
        Some(v)
    }
}

/// A pass over a rank's `len` positions in batches (see the module documentation): for
/// each `layout.chunk` positions, `ask(range)` makes the chunk's look-ups and what it keeps
/// until they are answered; `answer(word)` is what this rank replies to a look-up it owns;
/// `fold(range, kept, replies)` receives the replies in the order the look-ups were made.
/// Chunks run on the rayon pool, collectives on the calling thread. A collective: every rank
/// calls it (with its own `len`).
pub(crate) fn lookup_pass<W: Send, A: Reply>(
    comm: &dyn Comm,
    len: usize,
    layout: Layout,
    ask: impl Fn(std::ops::Range<usize>) -> (W, Asks) + Sync,
    answer: &(dyn Fn(u64) -> A + Sync),
    fold: impl Fn(std::ops::Range<usize>, W, Replies<'_, A>) + Sync,
    stats: &mut LookupStats,
) {
    let ranks = comm.size();
    let chunks: Vec<std::ops::Range<usize>> = (0..len)
        .step_by(layout.chunk)
        .map(|s| s..(s + layout.chunk).min(len))
        .collect();
    // Chunks are asked a group at a time, so that a round stops near its budget.
    let group = (2 * rayon::current_num_threads()).max(1);
    let mut next = 0;
    loop {
        // This round's chunks: groups until the look-ups reach the budget or the positions
        // the batch (a round of a level's start, where few positions ask, spans many chunks).
        let mut works: Vec<(W, Asks)> = Vec::new();
        let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
        let (mut asked, mut positions) = (0usize, 0usize);
        while next < chunks.len() && asked < layout.budget && positions < layout.batch {
            let end = (next + group).min(chunks.len());
            let got: Vec<(W, Asks)> = chunks[next..end]
                .par_iter()
                .map(|r| ask(r.clone()))
                .collect();
            asked += got.iter().map(|(_, a)| a.owners.len()).sum::<usize>();
            positions += chunks[next..end].iter().map(|r| r.len()).sum::<usize>();
            works.extend(got);
            ranges.extend(chunks[next..end].iter().cloned());
            next = end;
        }
        let busy = !ranges.is_empty() || next < chunks.len();
        // The chunks' look-ups, concatenated per owner; `offsets[c][d]`: where chunk `c`'s
        // look-ups to rank `d` begin.
        let mut outgoing: Vec<Vec<u64>> = (0..ranks)
            .map(|d| Vec::with_capacity(works.iter().map(|w| w.1.requests[d].len()).sum()))
            .collect();
        let offsets: Vec<Vec<usize>> = works
            .iter_mut()
            .map(|(_, asks)| {
                outgoing
                    .iter_mut()
                    .zip(&mut asks.requests)
                    .map(|(out, req)| {
                        let at = out.len();
                        out.append(req);
                        at
                    })
                    .collect()
            })
            .collect();
        let Some(answers) = exchange_asks(comm, outgoing, layout.per_dest, answer, stats, busy)
        else {
            break;
        };
        works
            .into_par_iter()
            .zip(ranges)
            .zip(offsets)
            .for_each(|(((kept, asks), range), at)| {
                let replies = Replies {
                    answers: &answers,
                    owners: asks.owners.iter(),
                    at,
                };
                fold(range, kept, replies);
            });
    }
}

/// Sends `outgoing[d]` to rank `d` and returns its answers in the same order, in sub-rounds
/// of at most `per_dest` words per destination; answers (with `answer`) what the other ranks
/// ask meanwhile; its own look-ups it answers itself, unsent. `busy`: this rank has positions
/// in this round or after it. Returns `None`, exchanging nothing, when no rank is busy. A
/// collective.
fn exchange_asks<A: Reply>(
    comm: &dyn Comm,
    outgoing: Vec<Vec<u64>>,
    per_dest: usize,
    answer: &(dyn Fn(u64) -> A + Sync),
    stats: &mut LookupStats,
    busy: bool,
) -> Option<Vec<Vec<A>>> {
    let me = comm.rank();
    for (d, b) in outgoing.iter().enumerate() {
        if d == me {
            stats.local += b.len() as u64;
        } else {
            stats.remote += b.len() as u64;
        }
    }
    // This rank answers its own look-ups without exchanging them.
    let mut outgoing = outgoing;
    let own = std::mem::take(&mut outgoing[me]);
    let longest = outgoing.iter().map(Vec::len).max().unwrap_or(0);
    let t = Instant::now();
    // One reduction: the sub-rounds the largest bucket needs, and whether any rank is busy
    // (zero: none is, and nothing is asked).
    let need = (longest.div_ceil(per_dest) as u64) << 1 | u64::from(busy);
    let reduced = comm.all_reduce_max(need);
    stats.comm_seconds += t.elapsed().as_secs_f64();
    if reduced == 0 {
        return None;
    }
    let subrounds = reduced >> 1;
    let mut answers: Vec<Vec<A>> = outgoing
        .iter()
        .map(|b| Vec::with_capacity(b.len()))
        .collect();
    answers[me] = own
        .par_chunks(1 << 12)
        .flat_map_iter(|words| words.iter().map(|&w| answer(w)))
        .collect();
    let mut asked_of: Vec<usize> = outgoing.iter().map(Vec::len).collect();
    asked_of[me] = own.len();
    drop(own);
    let remote_words = |bufs: &[Vec<u64>]| -> u64 {
        bufs.iter()
            .enumerate()
            .filter(|&(d, _)| d != me)
            .map(|(_, b)| b.len() as u64 * 8)
            .sum()
    };
    for s in 0..subrounds as usize {
        // One sub-round sends the look-ups themselves, dropped once sent.
        let out = crate::comm::sub_round(&mut outgoing, s, subrounds, per_dest);
        stats.bytes_sent += remote_words(&out);
        let t = Instant::now();
        let asked = comm.exchange(out);
        stats.comm_seconds += t.elapsed().as_secs_f64();
        let replies: Vec<Vec<u64>> = asked
            .par_iter()
            .map(|words| {
                let values: Vec<A> = words.iter().map(|&w| answer(w)).collect();
                A::pack(&values)
            })
            .collect();
        drop(asked);
        stats.bytes_sent += remote_words(&replies);
        let t = Instant::now();
        let back = comm.exchange(replies);
        stats.comm_seconds += t.elapsed().as_secs_f64();
        stats.exchanges += 2;
        for (acc, words) in answers.iter_mut().zip(&back) {
            acc.extend(A::unpack(words));
        }
    }
    for (d, (a, &b)) in answers.iter().zip(&asked_of).enumerate() {
        assert_eq!(a.len(), b, "rank {d} answered {} of {b} look-ups", a.len());
    }
    Some(answers)
}
