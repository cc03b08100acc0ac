//! Reading a whole table on every thread of the pool.

use oware_db::table::Table;
use oware_db::Error;
use rayon::prelude::*;
use std::ops::Range;

use crate::comm::Partition;

/// Blocks that one parallel task decodes.
const TASK_BLOCKS: usize = 64;

/// Every score of `table`, in index order, decoded on the current rayon thread pool: what
/// [`Table::read_all`] does on one thread. The pages of the table's file leave the
/// process's resident set as they are decoded, a group of 8 M scores' pages at a time
/// ([`Table::release_entries`]): the caller holds the scores, not the compressed table too.
///
/// # Errors
/// [`Error::CorruptBlock`] (the first corrupt block found, not necessarily the lowest), or
/// [`Error::InvalidState`] when the table has more entries than this machine can address or
/// its scores cannot be allocated.
pub fn read_table(table: &Table) -> Result<Vec<i8>, Error> {
    let entries = usize::try_from(table.len()).map_err(|_| {
        Error::InvalidState(format!(
            "{}: {} entries, too many for this machine",
            table.path().display(),
            table.len()
        ))
    })?;
    let mut out = Vec::new();
    crate::hugepage::try_reserve(&mut out, entries).map_err(|e| {
        Error::InvalidState(format!(
            "{}: cannot allocate the {entries} bytes of its scores: {e}",
            table.path().display()
        ))
    })?;
    out.resize(entries, 0);
    read_range_parallel(table, 0, &mut out)?;
    Ok(out)
}

/// Every distance of the distance table `table`, in index order (one byte each, 255 for
/// none), decoded on the current rayon thread pool in tasks of 64 blocks, given the tier's
/// `scores` (every entry): a ctx-huffman distance table is coded in the context of each
/// position's score. The pages of the table's file leave the process's resident set as they
/// are decoded, as with the score tables read in ranges.
///
/// # Errors
/// As [`Table::read_distances_into`]; [`Error::InvalidState`] when `scores` is not of the
/// table's length.
pub fn read_distances(table: &Table, scores: &[i8]) -> Result<Vec<u8>, Error> {
    if scores.len() as u64 != table.len() {
        return Err(Error::InvalidState(format!(
            "{}: {} scores given for {} distances",
            table.path().display(),
            scores.len(),
            table.len()
        )));
    }
    let mut out = vec![0u8; scores.len()];
    read_distances_range(table, scores, 0, &mut out)?;
    Ok(out)
}

/// [`read_distances`] of the entries `first..first + out.len()` only (whole blocks, or up to
/// the table's end), into `out`, given the scores of every entry of the tier.
///
/// # Errors
/// As [`read_distances`]; [`Error::InvalidState`] when the range is not within `scores`.
pub fn read_distances_range(
    table: &Table,
    scores: &[i8],
    first: u64,
    out: &mut [u8],
) -> Result<(), Error> {
    let scores = usize::try_from(first)
        .ok()
        .and_then(|f| scores.get(f..f.checked_add(out.len())?))
        .ok_or_else(|| {
            Error::InvalidState(format!(
                "{}: distances {first}.. (+{}) outside the {} scores given",
                table.path().display(),
                out.len(),
                scores.len()
            ))
        })?;
    read_distances_window(table, first, scores, out)
}

/// [`read_distances_range`] given the scores of the entries `first..first + out.len()`
/// only (`scores`, as long as `out`).
///
/// # Errors
/// As [`read_distances_range`].
pub(crate) fn read_distances_window(
    table: &Table,
    first: u64,
    scores: &[i8],
    out: &mut [u8],
) -> Result<(), Error> {
    if scores.len() != out.len() {
        return Err(Error::InvalidState(format!(
            "{}: {} distances asked with {} scores",
            table.path().display(),
            out.len(),
            scores.len()
        )));
    }
    let step = u64::from(table.block_entries()).max(1) * TASK_BLOCKS as u64;
    let group = (GROUP_ENTRIES / step).max(1) * step;
    for (g, (part, context)) in out
        .chunks_mut(group as usize)
        .zip(scores.chunks(group as usize))
        .enumerate()
    {
        let at = first + g as u64 * group;
        let len = part.len() as u64;
        let r = part
            .par_chunks_mut(step as usize)
            .zip(context.par_chunks(step as usize))
            .enumerate()
            .try_for_each(|(k, (chunk, ctx))| {
                table.read_distances_into(at + k as u64 * step, ctx, chunk)
            });
        table.release_entries(at, len);
        r?;
    }
    Ok(())
}

/// Bytes of a Romein-Bal file read by one task of [`read_romein_parallel`].
const ROMEIN_TASK: u64 = 1 << 22;

/// Where parallel tasks scatter their scores (each to bytes no other task writes).
#[derive(Clone, Copy)]
pub(super) struct Scattered(pub(super) *mut i8);

// SAFETY: the tasks write through the pointer at distinct indices only (see its use).
unsafe impl Send for Scattered {}
// SAFETY: as above.
unsafe impl Sync for Scattered {}

impl Scattered {
    /// Writes `v` at `i`.
    ///
    /// # Safety
    /// `i` is within the slice the pointer came from, which outlives the call, and no other
    /// access to byte `i` happens meanwhile.
    pub(super) unsafe fn write(&self, i: usize, v: i8) {
        // SAFETY: as the caller guarantees.
        unsafe { self.0.add(i).write(v) };
    }
}

/// [`read_range_parallel`] of a Romein-Bal file ([`Table::romein`]): the whole file read in
/// order, in tasks of [`ROMEIN_TASK`] bytes on the rayon pool, each score whose entry
/// (reachable index) falls in `first..first + out.len()` scattered to its place. Every
/// task's pages leave the resident set once read ([`Table::for_each_romein`]).
fn read_romein_parallel(table: &Table, first: u64, out: &mut [i8]) -> Result<(), Error> {
    if out.is_empty() {
        return Ok(());
    }
    let end = first
        .checked_add(out.len() as u64)
        .filter(|&e| e <= table.len())
        .ok_or(Error::IndexOutOfRange {
            index: first.saturating_add(out.len() as u64).saturating_sub(1),
            len: table.len(),
        })?;
    let to = Scattered(out.as_mut_ptr());
    let tasks = table.len().div_ceil(ROMEIN_TASK);
    (0..tasks).into_par_iter().try_for_each(|t| {
        let g = t * ROMEIN_TASK..((t + 1) * ROMEIN_TASK).min(table.len());
        table.for_each_romein(g, |i, v| {
            if (first..end).contains(&i) {
                // SAFETY: `i - first < out.len()`, and each entry is the index of exactly one
                // Goedel number (the two numberings are bijections of the same positions),
                // so no two writes, on any thread, reach the same byte, and `out` is not
                // otherwise touched until every task has finished.
                unsafe { to.write((i - first) as usize, v) };
            }
        })
    })
}

/// Scores decoded before the pages of their compressed blocks are released together.
const GROUP_ENTRIES: u64 = 8 << 20;

/// The scores of indices `first..first + out.len()` of `table` into `out`, decoded on the
/// current rayon thread pool in tasks of 64 blocks cut at the table's block bounds: what
/// [`Table::read_range`] does on one thread.
///
/// The pages of the table's file leave the process's resident set as they are decoded
/// ([`Table::release_entries`]), each group of [`GROUP_ENTRIES`] scores' pages as a whole
/// once the group is decoded, with the 2 MiB before it: a page fault maps pages around it
/// too (the kernel's fault-around window, or the whole large folio of the page cache that
/// holds the page), so the first tasks of a group map pages of the group before, released
/// already. About one group's compressed pages and block-index entries stay resident (not
/// a few more for every group read: 35 MB over a slice of 7 GB), so the memory plan counts
/// the scores, not the tables under them.
///
/// # Errors
/// As [`Table::read_range`].
pub fn read_range_parallel(table: &Table, first: u64, out: &mut [i8]) -> Result<(), Error> {
    if table.romein().is_some() {
        return read_romein_parallel(table, first, out);
    }
    let be = u64::from(table.block_entries()).max(1);
    let step = be * TASK_BLOCKS as u64;
    let head_end = ((first / step + 1) * step).min(first + out.len() as u64);
    let (head, rest) = out.split_at_mut((head_end - first) as usize);
    let read = |at: u64, chunk: &mut [i8]| table.read_range(at, chunk);
    read(first, head)?;
    table.release_entries(first, head.len() as u64);
    let group = (GROUP_ENTRIES / step).max(1) * step;
    for (g, part) in rest.chunks_mut(group as usize).enumerate() {
        let at = head_end + g as u64 * group;
        let len = part.len() as u64;
        let r = part
            .par_chunks_mut(step as usize)
            .enumerate()
            .try_for_each(|(k, chunk)| read(at + k as u64 * step, chunk));
        table.release_entries(at, len);
        r?;
    }
    Ok(())
}

/// [`read_range_parallel`] of the places `places` of the tier split by `part` (a rank's
/// range, in split order: a few runs of the index) into `out`, as long as the range.
///
/// # Errors
/// As [`read_range_parallel`]; [`Error::InvalidState`] when `out` is not as long as `places`.
pub(crate) fn read_places_parallel(
    table: &Table,
    part: &Partition,
    places: Range<u64>,
    out: &mut [i8],
) -> Result<(), Error> {
    let mut at = 0;
    for run in part.index_runs(places.clone()) {
        let len = (run.end - run.start) as usize;
        let chunk = out
            .get_mut(at..at + len)
            .ok_or_else(|| places_error(table, &places))?;
        read_range_parallel(table, run.start, chunk)?;
        at += len;
    }
    match at == out.len() {
        true => Ok(()),
        false => Err(places_error(table, &places)),
    }
}

/// [`read_distances_window`] of the places `places` of the tier split by `part`, given
/// their scores (`scores`, in split order, as long as `out`).
///
/// # Errors
/// As [`read_places_parallel`].
pub(crate) fn read_distances_places(
    table: &Table,
    part: &Partition,
    places: Range<u64>,
    scores: &[i8],
    out: &mut [u8],
) -> Result<(), Error> {
    let mut at = 0;
    for run in part.index_runs(places.clone()) {
        let len = (run.end - run.start) as usize;
        let (Some(s), Some(d)) = (scores.get(at..at + len), out.get_mut(at..at + len)) else {
            return Err(places_error(table, &places));
        };
        read_distances_window(table, run.start, s, d)?;
        at += len;
    }
    match at == out.len() && at == scores.len() {
        true => Ok(()),
        false => Err(places_error(table, &places)),
    }
}

fn places_error(table: &Table, places: &Range<u64>) -> Error {
    Error::InvalidState(format!(
        "{}: places {}..{} and the buffer differ in length",
        table.path().display(),
        places.start,
        places.end
    ))
}
