//! Writing a tier's table from the ranks' shares of its scores, without gathering them:
//! every rank counts and encodes the blocks of its own pieces of the tier (whole blocks,
//! [`Partition`]), the ctx-huffman counts are added up on every rank, and rank 0 writes the
//! file in index order, encoding its own pieces' blocks and receiving the other ranks' in
//! turn, a bounded batch at a time. The file is byte for byte the one
//! [`write_table_parallel`](crate::dir::write_table_parallel) writes from the whole tier.

use std::cell::Cell;
use std::ops::Range;

use oware_db::index::IndexKind;
use oware_db::write::{EncodeScratch, TableEncoder, WriteOptions, WrittenTable};
use oware_db::{Error, Rules};
use rayon::prelude::*;

use crate::dir::write::count_blocks;

use crate::comm::{pack_bytes, unpack_bytes, Comm, LocalScores, Partition, PARTITION_ALIGN};
use crate::dir::TableDir;

/// The table of tier `tier` from the ranks' [`LocalScores`] (rank `r` holding its range of
/// places of the tier's [`Partition`]) into `dir`, written by rank 0: `Ok(Some(_))` there,
/// `Ok(None)` elsewhere. Blocks travel `batch_blocks` at a time (at least 1), so rank 0
/// holds one batch of compressed blocks besides its own scores. A collective: every rank
/// calls it; an error on any rank (a bad score, a failed write, an interrupt on rank 0) is
/// an error on every rank, after every rank has taken part in every exchange.
///
/// # Errors
/// As [`write_table_parallel`](crate::dir::write_table_parallel); [`Error::InvalidState`] when
/// `local` is not this rank's range, when the options' blocks are not those the partition
/// aligns to, or on the ranks that learn that another rank failed.
pub fn write_table_distributed(
    comm: &dyn Comm,
    dir: &TableDir,
    rules: &Rules,
    tier: u8,
    local: &LocalScores,
    opts: &WriteOptions,
    batch_blocks: usize,
) -> Result<Option<WrittenTable>, Error> {
    let part = Partition::of_tier(tier, comm.size());
    let kind = IndexKind::Reachable;
    let mine = check_share(comm, &part, local, opts, None).and_then(|runs| {
        let encoder = |first: usize, scores| {
            TableEncoder::for_blocks(dir.path(), rules, tier, kind, first, scores, opts)
        };
        let pieces = runs
            .into_iter()
            .map(|(first, at)| encoder(first, &local.scores[at]))
            .collect::<Result<_, _>>()?;
        Ok(Encoders {
            model: encoder(0, &[])?,
            pieces,
        })
    });
    write_encoded(comm, dir, &part, opts, mine, batch_blocks)
}

/// The distance table of tier `tier` from the ranks' distances (rank `r` holding those of
/// its range of places of the tier's [`Partition`], `distances`, beside its scores `local`),
/// written by rank 0 as [`write_table_distributed`] writes the scores: the file is byte for
/// byte the one [`write_distances_parallel`](crate::dir::write::write_distances_parallel)
/// writes from the whole tier.
///
/// # Errors
/// As [`write_table_distributed`]; [`Error::InvalidState`] when `distances` is not as long
/// as `local`, or a distance does not go with its score.
pub fn write_distances_distributed(
    comm: &dyn Comm,
    dir: &TableDir,
    rules: &Rules,
    tier: u8,
    local: &LocalScores,
    distances: &[u8],
    batch_blocks: usize,
) -> Result<Option<WrittenTable>, Error> {
    let part = Partition::of_tier(tier, comm.size());
    let opts = WriteOptions::distances();
    let mine = check_share(comm, &part, local, &opts, Some(distances.len())).and_then(|runs| {
        let encoder = |first: usize, distances, scores| {
            TableEncoder::for_distance_blocks(
                dir.path(),
                rules,
                tier,
                first,
                distances,
                scores,
                &opts,
            )
        };
        let pieces = runs
            .into_iter()
            .map(|(first, at)| encoder(first, &distances[at.clone()], &local.scores[at]))
            .collect::<Result<_, _>>()?;
        Ok(Encoders {
            model: encoder(0, &[], &[])?,
            pieces,
        })
    });
    write_encoded(comm, dir, &part, &opts, mine, batch_blocks)
}

/// A rank's encoders of a table: one per piece of the tier it holds, and one holding no
/// block, whose counts and model are the table's (it writes the file on rank 0).
struct Encoders<'a> {
    model: TableEncoder<'a>,
    pieces: Vec<TableEncoder<'a>>,
}

/// Checks that `local` is this rank's share of the tier of `part` in a table of `opts`
/// (and `held` entries, if given, as many as its scores): its pieces, each as its first
/// block and its entries in `local`.
fn check_share(
    comm: &dyn Comm,
    part: &Partition,
    local: &LocalScores,
    opts: &WriteOptions,
    held: Option<usize>,
) -> Result<Vec<(usize, Range<usize>)>, Error> {
    let me = comm.rank();
    let tier = part.index().tier();
    let be = u64::from(opts.block_entries);
    if be == 0 || PARTITION_ALIGN % be != 0 {
        return Err(Error::InvalidState(format!(
            "tables of {be} entries a block, the ranks' pieces are blocks of {PARTITION_ALIGN}"
        )));
    }
    let range = part.range(me);
    if local.start != range.start || local.scores.len() as u64 != range.end - range.start {
        return Err(Error::InvalidState(format!(
            "tier {tier}: rank {me} owns places {}..{}, {} scores from {} given",
            range.start,
            range.end,
            local.scores.len(),
            local.start
        )));
    }
    if let Some(n) = held.filter(|&n| n != local.scores.len()) {
        return Err(Error::InvalidState(format!(
            "tier {tier}: rank {me} holds {n} distances for {} scores",
            local.scores.len()
        )));
    }
    let mut at = 0;
    Ok(part
        .index_runs(range)
        .map(|run| {
            let len = (run.end - run.start) as usize;
            at += len;
            ((run.start / be) as usize, at - len..at)
        })
        .collect())
}

/// Counts (over every rank) and encodes the blocks of each rank's `mine`, the encoders of
/// its pieces of `part` in a table of `opts`, and writes the file on rank 0, receiving the
/// other ranks' blocks `batch_blocks` at a time. A collective.
fn write_encoded(
    comm: &dyn Comm,
    dir: &TableDir,
    part: &Partition,
    opts: &WriteOptions,
    mine: Result<Encoders<'_>, Error>,
    batch_blocks: usize,
) -> Result<Option<WrittenTable>, Error> {
    let (me, ranks) = (comm.rank(), comm.size());
    let be = u64::from(opts.block_entries).max(1);
    let mut encoders = agree(comm, mine)?;
    if encoders.model.needs_counts() {
        let counts =
            encoders
                .pieces
                .iter()
                .try_fold(encoders.model.empty_counts(), |mut total, piece| {
                    total.add(&count_blocks(piece)?);
                    Ok(total)
                });
        let counts = agree(comm, counts)?;
        let bytes: Vec<u8> = counts
            .words()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let model = &mut encoders.model;
        let mut total = model.empty_counts();
        let mut bad = None;
        for part in comm.all_gather_bytes(&bytes) {
            let words = part
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect();
            match model.counts_from_words(words) {
                Ok(c) => total.add(&c),
                Err(e) => bad = Some(e),
            }
        }
        if let Some(e) = bad {
            return Err(e);
        }
        model.set_counts(&total);
        for piece in &mut encoders.pieces {
            piece.set_model_of(&encoders.model)?;
        }
    }
    let encoders = &encoders;
    let batch_blocks = batch_blocks.max(1);
    // Every piece's blocks in index order, in batches: (owner, blocks).
    let batches: Vec<(usize, Range<usize>)> = part
        .pieces()
        .iter()
        .flat_map(|p| {
            let blocks = (p.first / be) as usize..(p.first + p.len).div_ceil(be) as usize;
            let owner = p.owner as usize;
            blocks
                .clone()
                .step_by(batch_blocks)
                .map(move |first| (owner, first..(first + batch_blocks).min(blocks.end)))
        })
        .collect();
    let encode = |blocks: Range<usize>| -> Result<Vec<Vec<u8>>, Error> {
        let Some(encoder) = encoders
            .pieces
            .iter()
            .find(|e| e.held_blocks().contains(&blocks.start))
        else {
            return Err(Error::InvalidState(format!(
                "rank {me} holds no piece of blocks {blocks:?}"
            )));
        };
        blocks
            .into_par_iter()
            .map_init(EncodeScratch::default, |scratch, b| {
                encoder.encode_block(b, scratch)
            })
            .collect()
    };
    // The exchanges of the other ranks' batches, in order: every rank takes part in each.
    let rounds: Vec<(usize, Range<usize>)> =
        batches.iter().filter(|(r, _)| *r != 0).cloned().collect();
    let done = Cell::new(0usize);
    let round = |i: usize| -> Option<Result<Vec<Vec<u8>>, Error>> {
        let (r, blocks) = rounds[i].clone();
        let mut out = vec![Vec::new(); ranks];
        if me == r {
            out[0] = match encode(blocks) {
                Ok(encoded) => {
                    let mut words = vec![0, encoded.len() as u64];
                    for e in &encoded {
                        words.extend(pack_bytes(e));
                    }
                    words
                }
                Err(e) => {
                    let mut words = vec![1];
                    words.extend(pack_bytes(e.to_string().as_bytes()));
                    words
                }
            };
        }
        let got = comm.exchange(out);
        done.set(i + 1);
        (me == 0).then(|| unpack_blocks(r, &got[r]))
    };
    let result = if me == 0 {
        let blocks = batches.iter().flat_map(|(owner, blocks)| {
            if dir.cancel().is_cancelled() {
                let stop = std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted");
                return vec![Err(Error::io(dir.path(), stop))];
            }
            let encoded = match owner {
                0 => Some(encode(blocks.clone())),
                _ => round(done.get()),
            };
            match encoded {
                Some(Ok(v)) => v.into_iter().map(Ok).collect(),
                Some(Err(e)) => vec![Err(e)],
                None => Vec::new(),
            }
        });
        encoders.model.write(blocks).map(Some)
    } else {
        Ok(None)
    };
    // Rank 0 stops at its first error: the exchanges it left are still made.
    for i in done.get()..rounds.len() {
        round(i);
    }
    agree(comm, result)
}

/// The encoded blocks rank `r` sent, or the error it reported.
fn unpack_blocks(r: usize, words: &[u64]) -> Result<Vec<Vec<u8>>, Error> {
    let bad = || Error::InvalidState(format!("rank {r} sent a malformed batch of blocks"));
    match words.split_first() {
        Some((0, rest)) => {
            let (&count, mut rest) = rest.split_first().ok_or_else(bad)?;
            let mut out = Vec::with_capacity(count as usize);
            for _ in 0..count {
                let (&len, _) = rest.split_first().ok_or_else(bad)?;
                let n = 1 + (len as usize).div_ceil(8);
                let block = rest.get(..n).ok_or_else(bad)?;
                out.push(unpack_bytes(block));
                rest = &rest[n..];
            }
            Ok(out)
        }
        Some((1, msg)) => Err(Error::InvalidState(format!(
            "rank {r}: {}",
            String::from_utf8_lossy(&unpack_bytes(msg))
        ))),
        _ => Err(bad()),
    }
}

/// `result` on every rank if it is `Ok` everywhere; otherwise an error on every rank (its
/// own where it failed). A collective.
pub(crate) fn agree<T>(comm: &dyn Comm, result: Result<T, Error>) -> Result<T, Error> {
    if comm.size() == 1 {
        return result;
    }
    let failed = comm.all_reduce_max(match &result {
        Ok(_) => 0,
        Err(_) => comm.rank() as u64 + 1,
    });
    match result {
        Ok(_) if failed > 0 => Err(Error::InvalidState(format!("rank {} failed", failed - 1))),
        r => r,
    }
}
