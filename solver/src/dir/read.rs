//! Reading a whole table on every thread of the pool.

use oware_db::table::Table;
use oware_db::Error;
use rayon::prelude::*;

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
    out.try_reserve_exact(entries).map_err(|e| {
        Error::InvalidState(format!(
            "{}: cannot allocate the {entries} bytes of its scores: {e}",
            table.path().display()
        ))
    })?;
    out.resize(entries, 0);
    read_range_parallel(table, 0, &mut out)?;
    Ok(out)
}

/// Scores decoded before the pages of their compressed blocks are released together.
const GROUP_ENTRIES: u64 = 8 << 20;

/// The scores of indices `first..first + out.len()` of `table` into `out`, decoded on the
/// current rayon thread pool in tasks of 64 blocks cut at the table's block bounds: what
/// [`Table::read_range`] does on one thread.
///
/// The pages of the table's file leave the process's resident set as they are decoded
/// ([`Table::release_entries`]), each group of [`GROUP_ENTRIES`] scores' pages as a whole
/// once the group is decoded: a page fault maps the cached pages around it too (the
/// kernel's fault-around, 64 KiB), so a task maps pages of the tasks beside it, which may
/// have released theirs already. At most one group's compressed pages stay resident, so the
/// memory plan counts the scores, not the tables under them.
///
/// # Errors
/// As [`Table::read_range`].
pub fn read_range_parallel(table: &Table, first: u64, out: &mut [i8]) -> Result<(), Error> {
    let be = u64::from(table.block_entries()).max(1);
    let step = be * TASK_BLOCKS as u64;
    let head_end = ((first / step + 1) * step).min(first + out.len() as u64);
    let (head, rest) = out.split_at_mut((head_end - first) as usize);
    let read = |at: u64, chunk: &mut [i8]| {
        let r = table.read_range(at, chunk);
        table.release_entries(at, chunk.len() as u64);
        r
    };
    read(first, head)?;
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
