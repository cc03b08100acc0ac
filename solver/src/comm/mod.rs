//! The communication layer, below the engines: a small collective interface ([`Comm`]) and
//! the two implementations that need no MPI, one process ([`LocalComm`]) and `N` simulated
//! ranks as threads of one process ([`ThreadComm`]), `MpiComm` with the cargo feature `mpi`
//! (`mpi.rs`); the split of a tier over the ranks ([`Partition`], `partition.rs`); the
//! exchange of the engines' updates between ranks (`exchange.rs`); and the agreement of the
//! ranks on their arrays (`arrays.rs`).
//!
//! Every method but [`Comm::post`], [`Comm::poll`] and [`Comm::in_flight`] is a
//! *collective*: all ranks call it, in the same order, from their main thread (never from
//! inside a rayon job). Those three are point to point, also from the main thread only.

mod arrays;
pub(crate) mod exchange;
mod lookup;
#[cfg(feature = "mpi")]
mod mpi;
pub(crate) mod partition;

pub(crate) use arrays::agree_arrays;
#[cfg(feature = "mpi")]
pub use mpi::MpiComm;
pub use partition::{LocalScores, Partition, PartitionConfig, Piece, PlaceCursor, PARTITION_ALIGN};

use std::collections::VecDeque;
use std::sync::{Arc, Barrier, Mutex};

/// A group of ranks that exchange data collectively.
///
/// Implementations: [`LocalComm`] (one rank), [`ThreadComm`] (ranks as threads) and, with
/// the cargo feature `mpi`, `MpiComm` (ranks as MPI processes).
pub trait Comm {
    /// This rank, in `0..size()`.
    fn rank(&self) -> usize;

    /// The number of ranks.
    fn size(&self) -> usize;

    /// All-to-all exchange: `outgoing[d]` goes to rank `d`; the result's element `s` is what
    /// rank `s` sent to this rank. Any sizes are accepted (implementations split large
    /// messages as their transport needs).
    ///
    /// # Panics
    /// If `outgoing.len() != self.size()`.
    fn exchange(&self, outgoing: Vec<Vec<u64>>) -> Vec<Vec<u64>>;

    /// The sum of `v` over all ranks, on every rank.
    fn all_reduce_sum(&self, v: u64) -> u64;

    /// The maximum of `v` over all ranks, on every rank.
    fn all_reduce_max(&self, v: u64) -> u64;

    /// Waits until every rank has reached the barrier.
    fn barrier(&self);

    /// Sends `words` to rank `dest` (another rank) without waiting for it to receive them:
    /// point to point, not a collective. Messages from one rank to another arrive in the
    /// order they were posted.
    fn post(&self, dest: usize, words: Vec<u64>);

    /// A message posted to this rank ([`Comm::post`]) that has arrived, with its sender, or
    /// `None` when none is waiting. Never waits.
    fn poll(&self) -> Option<(usize, Vec<u64>)>;

    /// Messages this rank posted to `dest` that it has not yet seen received (the
    /// transport may hold them in the sender's memory until then).
    fn in_flight(&self, dest: usize) -> usize;

    /// Gathers every rank's bytes on rank 0: `Some(parts)` there (`parts[s]` from rank `s`),
    /// `None` on the other ranks. Built on [`Comm::exchange`].
    fn gather_bytes(&self, local: &[u8]) -> Option<Vec<Vec<u8>>> {
        let mut out = vec![Vec::new(); self.size()];
        out[0] = pack_bytes(local);
        let got = self.exchange(out);
        (self.rank() == 0).then(|| got.iter().map(|w| unpack_bytes(w)).collect())
    }

    /// Gathers every rank's bytes on every rank (`parts[s]` from rank `s`). Built on
    /// [`Comm::exchange`].
    fn all_gather_bytes(&self, local: &[u8]) -> Vec<Vec<u8>> {
        let packed = pack_bytes(local);
        let got = self.exchange(vec![packed; self.size()]);
        got.iter().map(|w| unpack_bytes(w)).collect()
    }
}

/// The lowest rank of `comm` where `here` holds (each rank passes its own), on every rank;
/// `None` where it holds on none. A collective: one reduction, each rank's mark
/// `u64::MAX - rank`, so that the lowest rank's is the maximum.
pub(crate) fn lowest_rank_where(comm: &dyn Comm, here: bool) -> Option<usize> {
    let mark = if here {
        u64::MAX - comm.rank() as u64
    } else {
        0
    };
    match comm.all_reduce_max(mark) {
        0 => None,
        m => Some((u64::MAX - m) as usize),
    }
}

/// What sub-round `s` of `subrounds` sends to each rank from `buckets` (one per rank): the
/// `s`-th run of at most `per_dest` words of each bucket, or, when there is one sub-round,
/// the buckets themselves (taken, so not copied).
pub(crate) fn sub_round(
    buckets: &mut Vec<Vec<u64>>,
    s: usize,
    subrounds: u64,
    per_dest: usize,
) -> Vec<Vec<u64>> {
    if subrounds == 1 {
        return std::mem::take(buckets);
    }
    buckets
        .iter()
        .map(|b| {
            let lo = (s * per_dest).min(b.len());
            b[lo..(lo + per_dest).min(b.len())].to_vec()
        })
        .collect()
}

/// Packs bytes into words for [`Comm::exchange`]: word 0 holds the length, then 8 bytes a
/// word, little-endian.
pub(crate) fn pack_bytes(bytes: &[u8]) -> Vec<u64> {
    let mut out = Vec::with_capacity(1 + bytes.len().div_ceil(8));
    out.push(bytes.len() as u64);
    for chunk in bytes.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        out.push(u64::from_le_bytes(w));
    }
    out
}

/// Inverse of [`pack_bytes`]; an empty or short buffer gives what it holds.
pub(crate) fn unpack_bytes(words: &[u64]) -> Vec<u8> {
    let Some((&len, rest)) = words.split_first() else {
        return Vec::new();
    };
    let mut out: Vec<u8> = rest.iter().flat_map(|w| w.to_le_bytes()).collect();
    out.truncate(len as usize);
    out
}

/// One process: rank 0 of 1. Every collective is immediate.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalComm;

impl Comm for LocalComm {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn exchange(&self, outgoing: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        assert_eq!(outgoing.len(), 1, "one buffer per rank");
        outgoing
    }

    fn all_reduce_sum(&self, v: u64) -> u64 {
        v
    }

    fn all_reduce_max(&self, v: u64) -> u64 {
        v
    }

    fn barrier(&self) {}

    fn post(&self, dest: usize, _words: Vec<u64>) {
        unreachable!("one process posts to no other rank (rank {dest})")
    }

    fn poll(&self) -> Option<(usize, Vec<u64>)> {
        None
    }

    fn in_flight(&self, _dest: usize) -> usize {
        0
    }
}

/// The state the simulated ranks share.
struct Shared {
    size: usize,
    barrier: Barrier,
    /// `mail[src * size + dst]`: the buffer from `src` to `dst` of the current exchange.
    mail: Mutex<Vec<Vec<u64>>>,
    /// One value per rank for the current reduction.
    values: Mutex<Vec<u64>>,
    /// `posted[dst]`: the messages posted to `dst` and not yet polled, with their senders.
    posted: Vec<Mutex<Mailbox>>,
}

/// The messages posted to one simulated rank and not yet polled, with their senders.
type Mailbox = VecDeque<(usize, Vec<u64>)>;

/// `N` simulated ranks as threads of one process, for tests and measurements: each rank
/// holds its own `ThreadComm` and runs on its own thread (see [`ThreadComm::run`]).
pub struct ThreadComm {
    rank: usize,
    shared: Arc<Shared>,
}

impl ThreadComm {
    /// Creates the handles of `size` ranks (`size >= 1`); give each to its own thread.
    ///
    /// # Panics
    /// If `size == 0`.
    pub fn group(size: usize) -> Vec<ThreadComm> {
        assert!(size > 0, "at least one rank");
        let shared = Arc::new(Shared {
            size,
            barrier: Barrier::new(size),
            mail: Mutex::new(vec![Vec::new(); size * size]),
            values: Mutex::new(vec![0; size]),
            posted: (0..size).map(|_| Mutex::new(VecDeque::new())).collect(),
        });
        (0..size)
            .map(|rank| ThreadComm {
                rank,
                shared: Arc::clone(&shared),
            })
            .collect()
    }

    /// Runs `f` on `size` simulated ranks, each on its own thread, and returns the results
    /// in rank order.
    ///
    /// # Panics
    /// If `size == 0`, or if a rank panics (the panic is propagated).
    pub fn run<R: Send>(size: usize, f: impl Fn(&ThreadComm) -> R + Sync) -> Vec<R> {
        let comms = ThreadComm::group(size);
        std::thread::scope(|s| {
            let handles: Vec<_> = comms
                .iter()
                .map(|c| {
                    let f = &f;
                    s.spawn(move || f(c))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    }

    fn reduce(&self, v: u64, op: impl Fn(u64, u64) -> u64) -> u64 {
        lock(&self.shared.values)[self.rank] = v;
        self.shared.barrier.wait();
        let r = lock(&self.shared.values)
            .iter()
            .copied()
            .reduce(op)
            .unwrap_or(v);
        // Nobody may write the next reduction's value before everyone has read this one.
        self.shared.barrier.wait();
        r
    }
}

/// Locks a mutex, ignoring poisoning (a panicking rank ends the whole run anyway).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Comm for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.shared.size
    }

    fn exchange(&self, outgoing: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        let size = self.shared.size;
        assert_eq!(outgoing.len(), size, "one buffer per rank");
        {
            let mut mail = lock(&self.shared.mail);
            for (dst, buf) in outgoing.into_iter().enumerate() {
                mail[self.rank * size + dst] = buf;
            }
        }
        self.shared.barrier.wait();
        let incoming = {
            let mut mail = lock(&self.shared.mail);
            (0..size)
                .map(|src| std::mem::take(&mut mail[src * size + self.rank]))
                .collect()
        };
        // Every rank must have taken its mail before anyone posts the next exchange.
        self.shared.barrier.wait();
        incoming
    }

    fn all_reduce_sum(&self, v: u64) -> u64 {
        self.reduce(v, |a, b| a + b)
    }

    fn all_reduce_max(&self, v: u64) -> u64 {
        self.reduce(v, u64::max)
    }

    fn barrier(&self) {
        self.shared.barrier.wait();
    }

    fn post(&self, dest: usize, words: Vec<u64>) {
        lock(&self.shared.posted[dest]).push_back((self.rank, words));
    }

    fn poll(&self) -> Option<(usize, Vec<u64>)> {
        lock(&self.shared.posted[self.rank]).pop_front()
    }

    /// A message is in the receiver's queue once posted: none is held back.
    fn in_flight(&self, _dest: usize) -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip() {
        for len in [0usize, 1, 7, 8, 9, 100] {
            let b: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5a).collect();
            assert_eq!(unpack_bytes(&pack_bytes(&b)), b);
        }
        assert!(unpack_bytes(&[]).is_empty());
    }

    #[test]
    fn threads_exchange_and_reduce() {
        let out = ThreadComm::run(3, |c| {
            let r = c.rank() as u64;
            let got = c.exchange((0..3).map(|d| vec![r * 10 + d]).collect());
            let sum = c.all_reduce_sum(r + 1);
            let max = c.all_reduce_max(r * 7);
            let all = c.all_gather_bytes(&[r as u8; 3]);
            let gathered = c.gather_bytes(&[r as u8]);
            c.barrier();
            c.post((c.rank() + 1) % 3, vec![r, r + 100]);
            c.post((c.rank() + 1) % 3, vec![r + 200]);
            c.barrier();
            let mut polled = Vec::new();
            while let Some(m) = c.poll() {
                polled.push(m);
            }
            (got, sum, max, all, gathered, polled)
        });
        for (r, (got, sum, max, all, gathered, polled)) in out.into_iter().enumerate() {
            let from = (r as u64 + 2) % 3;
            assert_eq!(
                polled,
                vec![
                    (from as usize, vec![from, from + 100]),
                    (from as usize, vec![from + 200])
                ]
            );
            let want: Vec<Vec<u64>> = (0..3).map(|s| vec![s * 10 + r as u64]).collect();
            assert_eq!(got, want);
            assert_eq!(sum, 6);
            assert_eq!(max, 14);
            assert_eq!(all, vec![vec![0u8; 3], vec![1; 3], vec![2; 3]]);
            assert_eq!(gathered.is_some(), r == 0);
            if let Some(g) = gathered {
                assert_eq!(g, vec![vec![0u8], vec![1], vec![2]]);
            }
        }
    }
}
