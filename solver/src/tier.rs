//! One tier on its own: solved from the scores of the tiers below ([`solve_tier`], and its
//! sliced and tuned forms, [`LowerTiers`] and the [`Slice`]s of them), re-proved
//! independently ([`verify_tier`]), and its distances to conversion found
//! ([`tier_distances`]) and checked ([`check_distances`] and its forms). The jobs
//! ([`generate`](crate::generate), [`verify_deep`](crate::verify_deep)) call these tier by
//! tier; tools and tests call them directly.

pub use crate::distance::{
    check_distances, check_distances_sliced, check_distances_sliced_windowed,
    check_distances_windowed, tier_distances, DistanceError, DistanceSource,
    DISTANCE_BYTES_PER_POSITION, MAX_DISTANCE, NO_DISTANCE,
};
pub use crate::lower::slice::{cut_slices, Piece, ScoreSource, Slice, TableSource, SLICE_ALIGN};
pub use crate::lower::LowerTiers;
pub use crate::solve::{
    solve_tier, solve_tier_sliced, solve_tier_tuned, SolveStats, Spill, SpilledDistances,
    TierScores, Tuning, WINDOW_ALIGN,
};
pub use crate::verify::{
    verify_tier, verify_tier_in_place, Mismatch, MismatchKind, RankExchanges, VerifyLower,
    VerifyPhases, VerifyReport,
};
