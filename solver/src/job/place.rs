//! Where a job runs ([`Placement`]): one process, or one rank of several with the settings of
//! their exchanges, and the memory it may use, resolved once from the job's options.

use crate::comm::{Comm, PartitionConfig};
use crate::memory::available_memory;

/// Where a job runs and within what: its communicator (one process is one rank), the bytes
/// it may use on this rank, and over several ranks the settings of their exchanges. Built
/// once by each job from its options; what the drivers pass down instead of resolving the
/// limit or the batch again.
pub(crate) struct Placement<'a> {
    comm: &'a dyn Comm,
    limit: u64,
    exchange: Option<PartitionConfig>,
}

impl<'a> Placement<'a> {
    /// The job over `comm` within `memory_limit` bytes (`None`: the machine's available
    /// memory, [`available_memory`]), sending at most `exchange_batch` updates or look-ups
    /// per exchange over several ranks (`None`: [`PartitionConfig`]'s default).
    pub fn new(
        comm: &'a dyn Comm,
        memory_limit: Option<u64>,
        exchange_batch: Option<usize>,
    ) -> Self {
        let exchange = (comm.size() > 1).then(|| {
            let default = PartitionConfig::default();
            PartitionConfig {
                batch: exchange_batch.unwrap_or(default.batch).max(1),
                ..default
            }
        });
        Placement {
            comm,
            limit: memory_limit.unwrap_or_else(available_memory),
            exchange,
        }
    }

    /// The communicator.
    pub fn comm(&self) -> &'a dyn Comm {
        self.comm
    }

    /// Bytes the job may use on this rank.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Over several ranks, the settings of their exchanges; `None` in one process.
    pub fn exchange(&self) -> Option<PartitionConfig> {
        self.exchange
    }
}

#[cfg(test)]
mod tests {
    use super::Placement;
    use crate::comm::{LocalComm, PartitionConfig, ThreadComm};

    #[test]
    fn one_process_has_no_exchange_and_ranks_have_the_batch_asked() {
        let local = LocalComm;
        let p = Placement::new(&local, Some(1 << 20), Some(64));
        assert_eq!(p.limit(), 1 << 20);
        assert!(p.exchange().is_none());
        let batches = ThreadComm::run(2, |comm| {
            let asked = Placement::new(comm, Some(1 << 20), Some(64));
            let default = Placement::new(comm, Some(1 << 20), None);
            let zero = Placement::new(comm, Some(1 << 20), Some(0));
            [asked, default, zero].map(|p| p.exchange().map(|c| c.batch))
        });
        for b in batches {
            assert_eq!(
                b,
                [Some(64), Some(PartitionConfig::default().batch), Some(1)]
            );
        }
    }
}
