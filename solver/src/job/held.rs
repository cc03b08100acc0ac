//! What a job keeps of the tiers below the one it works on ([`Held`]): the tiers whole in one
//! process, or one rank's share of them over several. The generation's and the deep
//! verification's drivers keep one each, with their own plans for the one-process form
//! (`generate/held.rs`, `deep/held.rs`).

use oware_db::MAX_SEEDS;

use crate::comm::PartitionConfig;
use crate::lower::share::LowerShare;
use crate::lower::LowerTiers;

/// The lower tiers a job keeps between tiers.
pub(crate) enum Held<P> {
    /// One process: the tiers a later tier reads whole, and the job's plans (`P`) of how
    /// each tier reads its lower tiers.
    Process {
        /// The tiers held.
        lower: LowerTiers,
        /// The job's plans.
        plans: P,
    },
    /// One of several ranks: its share of every tier a later tier's captures reach, and the
    /// settings of the ranks' exchanges.
    Ranks {
        /// The share.
        share: LowerShare,
        /// The exchanges' settings.
        config: PartitionConfig,
    },
}

impl<P> Held<P> {
    /// Drops what is held of every tier `t` for which `unread(t)`: no tier still to come
    /// reads it from what is held.
    pub fn drop_tiers(&mut self, unread: impl Fn(u8) -> bool) {
        match self {
            Held::Process { lower, .. } => {
                for t in 0..lower.len() as u8 {
                    if unread(t) && lower.holds(t) {
                        lower.set(t, None);
                    }
                }
            }
            Held::Ranks { share, .. } => {
                for t in 0..=MAX_SEEDS {
                    if unread(t) && share.holds(t) {
                        share.remove(t);
                    }
                }
            }
        }
    }
}
