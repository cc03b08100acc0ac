//! Reading a whole table on every thread of the pool.

use oware_db::table::Table;
use oware_db::Error;
use rayon::prelude::*;

/// Blocks that one parallel task decodes.
const TASK_BLOCKS: usize = 64;

/// Every score of `table`, in index order, decoded on the current rayon thread pool: what
/// [`Table::read_all`] does on one thread. The pages of the table's file read leave the
/// process's resident set as they are decoded ([`Table::release_entries`]): the caller holds
/// the scores, not the compressed table too.
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
    let step = table.block_entries() as usize * TASK_BLOCKS;
    out.par_chunks_mut(step)
        .enumerate()
        .try_for_each(|(k, chunk)| {
            let r = table.read_into((k * step) as u64, chunk);
            table.release_entries((k * step) as u64, chunk.len() as u64);
            r
        })?;
    Ok(out)
}

/// The scores of indices `first..first + out.len()` of `table` into `out`, decoded on the
/// current rayon thread pool, the pages read released as in [`read_table`]: what
/// [`Table::read_range`] does on one thread.
///
/// # Errors
/// As [`Table::read_range`].
pub fn read_range_parallel(table: &Table, first: u64, out: &mut [i8]) -> Result<(), Error> {
    let step = table.block_entries() as usize * TASK_BLOCKS;
    out.par_chunks_mut(step)
        .enumerate()
        .try_for_each(|(k, chunk)| {
            let at = first + (k * step) as u64;
            let r = table.read_range(at, chunk);
            table.release_entries(at, chunk.len() as u64);
            r
        })
}
