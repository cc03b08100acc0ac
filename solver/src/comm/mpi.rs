//! [`Comm`] over MPI, through rsmpi (the cargo feature `mpi`).
//!
//! MPI is initialised with `MPI_THREAD_FUNNELED`: rayon threads exist, but only the main
//! thread calls MPI. Counts and displacements of MPI calls are 32-bit (`c_int`), so every
//! all-to-all is split into rounds that move at most [`MAX_ELEMENTS`] words per rank.
//! Posted messages ([`Comm::post`]) are non-blocking sends of their own tag, each buffer
//! held until its send completes.

use std::cell::RefCell;

use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::{Threading, Universe};
use mpi::point_to_point::MatchedReceiveVec;
use mpi::request::{Request, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Source};
use mpi::{Count, Rank, Tag};

use super::Comm;

/// The most 8-byte words one rank sends (and receives) in one `MPI_Alltoallv`, far below
/// `i32::MAX` so that no count or displacement can overflow.
pub const MAX_ELEMENTS: usize = 1 << 28;

/// The tag of posted messages ([`Comm::post`]); collectives do not match point-to-point
/// messages, so no other tag is in use.
const POST_TAG: Tag = 0x0A5C;

/// A posted message whose send may not have completed: its request and its buffer, which
/// MPI reads until then.
struct Sent {
    dest: usize,
    request: Request<'static, [u64]>,
    /// From `Box::into_raw`; freed once the request completes.
    buffer: *mut [u64],
}

/// The ranks of `MPI_COMM_WORLD`. Create one per process, on the main thread; MPI is
/// finalised when it is dropped.
pub struct MpiComm {
    world: SimpleCommunicator,
    /// Posted messages not yet seen sent, in the order posted.
    sent: RefCell<Vec<Sent>>,
    // Dropped last: finalises MPI.
    _universe: Universe,
}

impl MpiComm {
    /// Initialises MPI (funneled threading) and returns the world communicator, or `None` if
    /// MPI was already initialised in this process or the library lacks funneled support.
    pub fn init() -> Option<MpiComm> {
        let (universe, threading) = mpi::initialize_with_threading(Threading::Funneled)?;
        if matches!(threading, Threading::Single) {
            return None;
        }
        Some(MpiComm {
            world: universe.world(),
            sent: RefCell::new(Vec::new()),
            _universe: universe,
        })
    }

    /// Ends every rank of the job (`MPI_Abort` with `code`): for a rank that failed, since
    /// the others would otherwise wait for it forever in the next collective call, and so would
    /// this rank in `MPI_Finalize`.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    /// Completes the posted sends that MPI has finished with, freeing their buffers.
    fn complete_sends(&self) {
        let mut sent = self.sent.borrow_mut();
        let pending = std::mem::take(&mut *sent);
        for s in pending {
            match s.request.test() {
                Ok(_) => {
                    // SAFETY: `buffer` came from `Box::into_raw` in `post` and is freed only
                    // here, once: its send has completed, so MPI no longer reads it, and the
                    // request that borrowed it is gone.
                    drop(unsafe { Box::from_raw(s.buffer) });
                }
                Err(request) => sent.push(Sent { request, ..s }),
            }
        }
    }

    /// One `MPI_Alltoallv` of at most [`MAX_ELEMENTS`] words in all.
    fn alltoallv(&self, outgoing: &[&[u64]]) -> Vec<Vec<u64>> {
        let size = outgoing.len();
        let send_counts: Vec<Count> = outgoing.iter().map(|b| count(b.len())).collect();
        let mut recv_counts: Vec<Count> = vec![0; size];
        self.world
            .all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        let send_displs = displacements(&send_counts);
        let recv_displs = displacements(&recv_counts);
        let send: Vec<u64> = outgoing.concat();
        let total: usize = recv_counts.iter().map(|&c| c as usize).sum();
        let mut recv = vec![0u64; total];
        {
            let sp = Partition::new(&send[..], &send_counts[..], &send_displs[..]);
            let mut rp = PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_displs[..]);
            self.world.all_to_all_varcount_into(&sp, &mut rp);
        }
        recv_displs
            .iter()
            .zip(&recv_counts)
            .map(|(&d, &c)| recv[d as usize..(d + c) as usize].to_vec())
            .collect()
    }
}

/// A count that fits MPI's `int` (guaranteed by the splitting into rounds).
fn count(n: usize) -> Count {
    Count::try_from(n).unwrap_or_else(|_| unreachable!("count {n} over i32::MAX"))
}

fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0, |acc, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect()
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn exchange(&self, outgoing: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        let size = self.size();
        assert_eq!(outgoing.len(), size, "one buffer per rank");
        let per_dest = (MAX_ELEMENTS / size).max(1);
        let longest = outgoing.iter().map(Vec::len).max().unwrap_or(0);
        let rounds = self
            .all_reduce_max(longest.div_ceil(per_dest) as u64)
            .max(1) as usize;
        let mut incoming: Vec<Vec<u64>> = vec![Vec::new(); size];
        for r in 0..rounds {
            let slices: Vec<&[u64]> = outgoing
                .iter()
                .map(|b| {
                    let lo = (r * per_dest).min(b.len());
                    &b[lo..(lo + per_dest).min(b.len())]
                })
                .collect();
            for (acc, part) in incoming.iter_mut().zip(self.alltoallv(&slices)) {
                acc.extend(part);
            }
        }
        incoming
    }

    fn all_reduce_sum(&self, v: u64) -> u64 {
        let mut r = 0u64;
        self.world
            .all_reduce_into(&v, &mut r, SystemOperation::sum());
        r
    }

    fn all_reduce_max(&self, v: u64) -> u64 {
        let mut r = 0u64;
        self.world
            .all_reduce_into(&v, &mut r, SystemOperation::max());
        r
    }

    fn barrier(&self) {
        self.world.barrier();
    }

    fn post(&self, dest: usize, words: Vec<u64>) {
        let buffer = Box::into_raw(words.into_boxed_slice());
        // SAFETY: `buffer` is a live allocation that nothing else reads or writes until
        // `complete_sends` frees it after the send has completed.
        let data: &'static [u64] = unsafe { &*buffer };
        let rank = Rank::try_from(dest).unwrap_or_else(|_| unreachable!("rank {dest}"));
        let request =
            self.world
                .process_at_rank(rank)
                .immediate_send_with_tag(StaticScope, data, POST_TAG);
        self.sent.borrow_mut().push(Sent {
            dest,
            request,
            buffer,
        });
    }

    fn poll(&self) -> Option<(usize, Vec<u64>)> {
        self.complete_sends();
        let probed = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(POST_TAG)?;
        let (words, status) = probed.matched_receive_vec::<u64>();
        Some((status.source_rank() as usize, words))
    }

    fn in_flight(&self, dest: usize) -> usize {
        self.complete_sends();
        self.sent.borrow().iter().filter(|s| s.dest == dest).count()
    }
}

impl Drop for MpiComm {
    /// Frees the buffers of the posted sends that have completed. A send still in flight
    /// (only where a job stopped between a message and its receipt) keeps its buffer, leaked
    /// rather than freed under MPI or waited for without end.
    fn drop(&mut self) {
        self.complete_sends();
        for s in self.sent.get_mut().drain(..) {
            std::mem::forget(s.request);
        }
    }
}
