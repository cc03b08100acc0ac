//! What the jobs do together over the ranks of a [`Comm`]: agree on a result or on rank 0's
//! findings, lock the directory on rank 0, check its disk, gather a histogram. With one
//! rank each is the plain operation.

use std::collections::BTreeMap;

use super::generate::error::GenerateError;
use super::rank_error::RankError;
use oware_db::table::Table;

use crate::comm::{Comm, LocalScores};
use crate::dir::{DirLock, LockError, TableDir};
use crate::lower::share::LowerShare;
use crate::memory::PROCESS_BYTES;

/// Count of each score.
pub(super) fn histogram(scores: &[i8]) -> BTreeMap<i8, u64> {
    use rayon::prelude::*;
    let counts = scores
        .par_chunks(1 << 20)
        .map(|chunk| {
            let mut h = [0u64; 256];
            for &s in chunk {
                h[s as u8 as usize] += 1;
            }
            h
        })
        .reduce(
            || [0u64; 256],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                a
            },
        );
    (i8::MIN..=i8::MAX)
        .filter(|&s| counts[s as u8 as usize] > 0)
        .map(|s| (s, counts[s as u8 as usize]))
        .collect()
}

/// The most updates or look-ups a rank sends per exchange for a tier of `positions`
/// positions over `ranks` ranks: `batch`, but at most a 256th of a rank's positions (and not
/// under 2^12), so that the buffers of a small tier stay small beside its cells.
pub(crate) fn tier_batch(batch: usize, positions: u64, ranks: usize) -> usize {
    let cap = (positions / ranks.max(1) as u64 / 256).max(1 << 12);
    batch.min(usize::try_from(cap).unwrap_or(usize::MAX))
}

/// The histogram of a tier's scores over every rank's share, on rank 0 (`None` elsewhere).
/// A collective.
pub(super) fn gather_histogram(comm: &dyn Comm, scores: &[i8]) -> Option<BTreeMap<i8, u64>> {
    let mine = histogram(scores);
    let bytes: Vec<u8> = mine
        .iter()
        .flat_map(|(&s, &c)| std::iter::once(s as u8).chain(c.to_le_bytes()))
        .collect();
    let parts = comm.gather_bytes(&bytes)?;
    let mut all = BTreeMap::new();
    for part in parts {
        for rec in part.chunks_exact(9) {
            let count = u64::from_le_bytes(rec[1..].try_into().unwrap_or_default());
            *all.entry(rec[0] as i8).or_insert(0) += count;
        }
    }
    Some(all)
}

/// Rank 0's flags on every rank. A collective.
pub(crate) fn agree_flags(comm: &dyn Comm, flags: &[bool]) -> Vec<bool> {
    let bytes: Vec<u8> = flags.iter().map(|&f| u8::from(f)).collect();
    let all = comm.all_gather_bytes(&bytes);
    all.first()
        .map(|f| f.iter().map(|&b| b != 0).collect())
        .unwrap_or_default()
}

/// `result` on every rank if it is `Ok` everywhere; otherwise its own error on a rank that
/// failed and [`RankError::Failed`] on the others. A collective.
pub(super) fn agree<T, E: Into<GenerateError>>(
    comm: &dyn Comm,
    result: Result<T, E>,
) -> Result<T, GenerateError> {
    let result = result.map_err(Into::into);
    if comm.size() == 1 {
        return result;
    }
    let failed = comm.all_reduce_max(match &result {
        Ok(_) => 0,
        Err(_) => u64::MAX - comm.rank() as u64,
    });
    match result {
        Ok(_) if failed > 0 => Err(GenerateError::Rank(RankError::Failed {
            rank: (u64::MAX - failed) as usize,
        })),
        r => r,
    }
}

/// Takes the lock of `dir` on rank 0 (the writer), and tells every rank whether it got it, so
/// that all return the error together.
pub(super) fn lock_dir(
    comm: &dyn Comm,
    table_dir: &TableDir,
) -> Result<Option<DirLock>, GenerateError> {
    let dir = table_dir.path();
    let mine = (comm.rank() == 0).then(|| table_dir.lock());
    if comm.size() == 1 {
        return Ok(mine.transpose()?);
    }
    // 0: locked; p + 1: held by process p; MAX - 1: held by another process; MAX: failed.
    let code = match &mine {
        None | Some(Ok(_)) => 0,
        Some(Err(LockError::Held { pid: Some(p), .. })) => u64::from(*p) + 1,
        Some(Err(LockError::Held { pid: None, .. })) => u64::MAX - 1,
        Some(Err(LockError::Io { .. })) => u64::MAX,
    };
    let code = comm.all_reduce_max(code);
    let dir = dir.to_path_buf();
    match mine {
        Some(lock) => Ok(Some(lock?)),
        None if code == 0 => Ok(None),
        None if code == u64::MAX => Err(LockError::Io {
            path: dir.join(crate::dir::lock::LOCK_FILE),
            source: std::io::Error::other("rank 0 could not lock it"),
        }
        .into()),
        None => Err(LockError::Held {
            dir,
            pid: u32::try_from(code - 1).ok(),
        }
        .into()),
    }
}

/// Refuses tier `tier` when it needs more than the `needed` bytes the filesystem of `dir`
/// has free (as rank 0 measures it, so that every rank decides alike). Where the free space
/// cannot be read, nothing is refused.
pub(super) fn check_disk(
    comm: &dyn Comm,
    dir: &TableDir,
    tier: u8,
    needed: u64,
) -> Result<(), GenerateError> {
    let free = if comm.rank() == 0 {
        dir.free_disk().unwrap_or(u64::MAX)
    } else {
        0
    };
    let free = if comm.size() > 1 {
        comm.all_reduce_max(free)
    } else {
        free
    };
    if needed > free {
        return Err(GenerateError::NoSpace {
            tier,
            dir: dir.path().to_path_buf(),
            needed,
            free,
        });
    }
    Ok(())
}

/// Reads this rank's range of places of tier `tier` from its table into `share` (a tier
/// kept from an earlier run, which every rank reads for its share).
///
/// # Errors
/// As [`Table::read_range`]; [`oware_db::Error::InvalidState`] if the table is of another
/// tier.
pub(crate) fn load_share(
    share: &mut LowerShare,
    tier: u8,
    table: &Table,
) -> Result<(), oware_db::Error> {
    if table.tier() != tier {
        return Err(oware_db::Error::InvalidState(format!(
            "{} is tier {}, not {tier}",
            table.path().display(),
            table.tier()
        )));
    }
    let part = share.partition(tier);
    let range = part.range(share.rank());
    let mut scores = crate::hugepage::vec_of((range.end - range.start) as usize, |_| 0i8);
    crate::dir::read::read_places_parallel(table, part, range.clone(), &mut scores)?;
    table.release_pages();
    share.insert(
        tier,
        LocalScores {
            start: range.start,
            scores,
        },
    )
}

/// Whether this rank's part of tier `tier` fits: `own` bytes of its own beside `held` of its
/// share of the lower tiers and the process's reserve ([`PROCESS_BYTES`]), within
/// `available`. Every rank checks its own; all stop if one
/// does not fit, that rank with [`RankError::TooLarge`], the others with
/// [`RankError::Failed`] naming the lowest such rank. A collective; `job` names the job in
/// the message.
pub(crate) fn check_rank_memory(
    comm: &dyn Comm,
    job: &'static str,
    tier: u8,
    own: u64,
    held: u64,
    available: u64,
) -> Result<(), RankError> {
    let rank = comm.rank();
    let needed = own + held + PROCESS_BYTES;
    let short = needed > available;
    let first_short = comm.all_reduce_max(if short { u64::MAX - rank as u64 } else { 0 });
    if first_short == 0 {
        return Ok(());
    }
    if short {
        return Err(RankError::TooLarge {
            job,
            tier,
            rank,
            ranks: comm.size(),
            needed,
            own,
            lower: held,
            available,
        });
    }
    Err(RankError::Failed {
        rank: (u64::MAX - first_short) as usize,
    })
}
