//! The one-byte cell of a position while its tier is solved (by the single-process and the
//! distributed solver alike): its codes ([`Codes`]), their decoding, and the rule that updates
//! a cell when a child is decided ([`Codes::child_decided`]).
//!
//! A cell holds what the solver needs of a position in one of these codes (tier `n`):
//!
//! | code | meaning |
//! | --- | --- |
//! | `s as u8`, `−n ≤ s ≤ n` | decided with score `s`; propagated, or on its way |
//! | `n + e`, `1 ≤ e ≤ n` | *waiting*: undecided with a positive exit `e` |
//! | `2n + e`, `1 ≤ e ≤ n` | *pending*: decided `−e` at a level above `e`, acts at level `e` |
//! | `3n + 1 + (c − 1)·S + x` | undecided with `c` open moves (1..=6) and exit class `x` |
//!
//! A waiting position needs no open count: its count could only make it pending `+e`, and
//! the scan that starts level `e` decides it `+e` anyway (a low child at a higher level
//! decides it first). An undecided position with an exit of 0 or less, or none, keeps its
//! open count, and its exit in the class `x`: `x = −exit` for exits down to `−X`, `X + 1`
//! for no exit, and `X + 2` for an exit below `−X`, kept in a short list per `CHUNK`
//! positions ([`FarExits`]), looked up when the count reaches 0. `S = X + 3` classes fit in
//! the codes left over by the scores, so `X` shrinks as the tier grows (23 at tier 24, 19 at
//! tier 30, 7 at tier 48), but an exit below `−X` is rare: a capture of `c` seeds scores at
//! least `2c − n`, and tier 30 lists 2.4 M of its 2.74 G positions.
//!
//! A decided cell is its score, so the finished cells are the table once every undecided
//! one is set to 0.

/// Exit value of a position without exits.
pub(crate) const NO_EXIT: i8 = i8::MIN;

/// The codes of one tier (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Codes {
    n: u8,
    /// Exits down to `−exact` have a class of their own.
    exact: u8,
    /// Classes per open count: `exact + 3`.
    stride: u8,
    /// The first code with an open count: `3n + 1`.
    first_open: u8,
}

impl Codes {
    /// The codes of tier `n` (at most 48), with exits down to `−min(limit, largest)` in a
    /// class of their own, where `largest` is what the byte leaves room for.
    pub(crate) fn new(n: u8, limit: u8) -> Self {
        assert!(n <= 48, "tier {n} has no one-byte cells");
        let largest = ((255 - 4 * u16::from(n)) / 6 - 3) as u8;
        let exact = limit.min(largest).min(n);
        Codes {
            n,
            exact,
            stride: exact + 3,
            first_open: 3 * n + 1,
        }
    }

    /// Exits down to `−exact()` have a class of their own; lower ones are looked up.
    pub(crate) fn exact(&self) -> u8 {
        self.exact
    }

    /// The cell of a position decided with score `s`.
    #[inline(always)]
    pub(crate) fn decided(s: i8) -> u8 {
        s as u8
    }

    /// Whether `c` is decided (pending cells are not).
    #[inline(always)]
    pub(crate) fn is_decided(&self, c: u8) -> bool {
        c.wrapping_add(self.n) <= 2 * self.n
    }

    /// The cell of an undecided position with exit `e > 0`.
    #[inline(always)]
    pub(crate) fn waiting(&self, e: i8) -> u8 {
        self.n + e as u8
    }

    /// The cell of a position decided `s < 0` that acts at level `−s`.
    #[inline(always)]
    pub(crate) fn pending(&self, s: i8) -> u8 {
        2 * self.n + s.unsigned_abs()
    }

    /// The cell of an undecided position with `open` moves (1..=6) in the tier and exit
    /// class `class`.
    #[inline(always)]
    fn open(&self, open: u8, class: u8) -> u8 {
        self.first_open + (open - 1) * self.stride + class
    }

    /// Whether `c` is undecided with an open count.
    #[inline(always)]
    pub(crate) fn is_open(&self, c: u8) -> bool {
        c.wrapping_sub(self.first_open) < 6 * self.stride
    }

    /// Whether `c` is waiting (undecided with a positive exit).
    #[inline(always)]
    pub(crate) fn is_waiting(&self, c: u8) -> bool {
        c.wrapping_sub(self.n + 1) < self.n
    }

    /// For a cell with an open count: the cell with one less, or `None` when this was the
    /// last open move.
    #[inline(always)]
    pub(crate) fn lowered(&self, c: u8) -> Option<u8> {
        (c >= self.first_open + self.stride).then(|| c - self.stride)
    }

    /// For a cell with an open count: its exit, `NO_EXIT` for none, or `None` when it is
    /// below `−exact()` and must be looked up.
    #[inline(always)]
    pub(crate) fn exit(&self, c: u8) -> Option<i8> {
        let class = (c - self.first_open) % self.stride;
        if class <= self.exact {
            Some(-(class as i8))
        } else if class == self.exact + 1 {
            Some(NO_EXIT)
        } else {
            None
        }
    }

    /// What a child decided at level `k` (low if `child_low`: it scores `−k`; else `+k`)
    /// does to the cell `c` of its parent: the parent's new cell and what changed, or `None`
    /// when the cell stays as it is (decided, pending, or waiting, which a high child cannot
    /// change). `far` gives the parent's exit when its cell does not hold it.
    #[inline(always)]
    pub(crate) fn child_decided(
        &self,
        c: u8,
        child_low: bool,
        k: i8,
        far: impl FnOnce() -> i8,
    ) -> Option<(u8, Change)> {
        if self.is_open(c) {
            if child_low {
                Some((Self::decided(k), Change::Decided { low: false }))
            } else if let Some(lowered) = self.lowered(c) {
                Some((lowered, Change::Quiet))
            } else {
                // The last open move: every in-tier child scores at least `k`.
                let score = self.exit(c).unwrap_or_else(far).max(-k);
                Some(if score == -k {
                    (Self::decided(score), Change::Decided { low: true })
                } else if score != 0 {
                    let level = score.unsigned_abs();
                    (self.pending(score), Change::Pending { level })
                } else {
                    (Self::decided(0), Change::Quiet)
                })
            }
        } else if child_low && self.is_waiting(c) {
            Some((Self::decided(k), Change::Decided { low: false }))
        } else {
            None
        }
    }

    /// The scan of level `k` at cell `c`: the score it decides there (`+k` for a waiting
    /// cell of exit `k`, `−k` for a pending cell of that score), or `None`.
    #[inline(always)]
    pub(crate) fn starts_at(&self, c: u8, k: i8) -> Option<i8> {
        if c == self.waiting(k) {
            Some(k)
        } else if c == self.pending(-k) {
            Some(-k)
        } else {
            None
        }
    }

    /// The first cell of a position of best exit value `e` (`NO_EXIT` for none; with no
    /// legal move, the end score) and `open` legal moves in the tier (`None` when it has no
    /// legal move): its score if no move stays in the tier (a nonzero score waits for its
    /// level: positive as waiting, negative as pending), otherwise its open count and exit
    /// class. The second value is the exit when it is below `−exact()`, to be kept in the
    /// chunk's [`FarExits`].
    #[inline]
    pub(crate) fn initial(&self, e: i8, open: Option<u8>) -> (u8, Option<i8>) {
        match open {
            Some(open) if open > 0 => {
                if e > 0 {
                    (self.waiting(e), None)
                } else if e == NO_EXIT {
                    (self.open(open, self.exact + 1), None)
                } else if e.unsigned_abs() <= self.exact {
                    (self.open(open, e.unsigned_abs()), None)
                } else {
                    (self.open(open, self.exact + 2), Some(e))
                }
            }
            // No move stays in the tier: some move leaves it, or the game is over.
            _ if e > 0 => (self.waiting(e), None),
            _ if e < 0 => {
                debug_assert!(e != NO_EXIT, "a closed position without an exit");
                (self.pending(e), None)
            }
            _ => (Self::decided(0), None),
        }
    }

    /// The level-mask bit of a cell: `1 << e` for a waiting or pending cell of exit or score
    /// `±e`, 0 for the others.
    #[inline]
    pub(crate) fn level_bit(&self, c: u8) -> u64 {
        if self.is_waiting(c) {
            1u64 << (c - self.n)
        } else if c.wrapping_sub(2 * self.n + 1) < self.n {
            1u64 << (c - 2 * self.n)
        } else {
            0
        }
    }

    /// The score of a finished cell: a decided cell's score, 0 for an undecided one (endless
    /// play). Waiting and pending cells are all taken by the level of their value.
    #[inline]
    pub(crate) fn finished(&self, c: u8) -> i8 {
        debug_assert!(
            self.is_decided(c) || self.is_open(c),
            "cell {c} left at the end"
        );
        if self.is_decided(c) {
            c as i8
        } else {
            0
        }
    }
}

/// What [`Codes::child_decided`] did to a parent, besides its new cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// Nothing to propagate: one open move fewer, or decided 0.
    Quiet,
    /// Decided at this level, `−k` if `low`, else `+k`: to be propagated now.
    Decided {
        /// The parent scores `−k`.
        low: bool,
    },
    /// Decided with the negative score `−level`, above `−k`: it acts at that level.
    Pending {
        /// `|score|`.
        level: u8,
    },
}

/// The exits below `−Codes::exact()` of one chunk's undecided positions with an open count,
/// by offset in the chunk, in increasing order.
pub(crate) type FarExits = Box<[(u16, i8)]>;

/// Bytes one chunk's far-exit list takes in memory, its pointer in the tier's vector
/// included: 16 for the pointer and, when the list is not empty, 4 per entry and at most 28
/// of the allocator's header, rounding and smallest block (the transient growth of the list being built is
/// part of the process's working buffers, [`PROCESS_BYTES`](crate::memory::PROCESS_BYTES)).
pub(crate) fn far_list_bytes(entries: usize) -> u64 {
    if entries == 0 {
        FAR_POINTER_BYTES
    } else {
        FAR_POINTER_BYTES + FAR_ALLOC_BYTES + entries as u64 * FAR_ENTRY_BYTES
    }
}

/// Bytes of a chunk's pointer to its far-exit list (see [`far_list_bytes`]).
pub(crate) const FAR_POINTER_BYTES: u64 = std::mem::size_of::<FarExits>() as u64;

/// Bytes of one far exit in its list (see [`far_list_bytes`]).
pub(crate) const FAR_ENTRY_BYTES: u64 = std::mem::size_of::<(u16, i8)>() as u64;

/// Most bytes the allocator adds to a list that is not empty: glibc's 8-byte header and
/// rounding to 16 bytes, or its smallest block of 32 bytes for a list of one entry (see
/// [`far_list_bytes`]).
pub(crate) const FAR_ALLOC_BYTES: u64 = 28;

/// The exit at `offset` in `far` (which must hold it).
#[inline]
pub(crate) fn far_exit(far: &FarExits, offset: u16) -> i8 {
    match far.binary_search_by_key(&offset, |&(o, _)| o) {
        Ok(i) => far[i].1,
        Err(_) => unreachable!("no far exit recorded at offset {offset}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code is distinct and decodes to what it was made from, at every tier.
    #[test]
    fn codes_round_trip() {
        for n in 0..=48u8 {
            for limit in [0, 1, 5, 48] {
                let codes = Codes::new(n, limit);
                let mut seen = std::collections::HashSet::new();
                let ni = n as i8;
                for s in -ni..=ni {
                    let c = Codes::decided(s);
                    assert!(codes.is_decided(c) && seen.insert(c));
                    assert_eq!(codes.finished(c), s);
                }
                for e in 1..=ni {
                    let w = codes.waiting(e);
                    assert!(codes.is_waiting(w) && !codes.is_decided(w) && seen.insert(w));
                    assert_eq!(codes.level_bit(w), 1 << e);
                    let p = codes.pending(-e);
                    assert!(!codes.is_waiting(p) && !codes.is_open(p) && seen.insert(p));
                    assert!(!codes.is_decided(p));
                    assert_eq!(codes.level_bit(p), 1 << e);
                }
                for open in 1..=6u8 {
                    let mut exits: Vec<i8> = (-ni..=0).collect();
                    exits.push(NO_EXIT);
                    for e in exits {
                        let (c, far) = codes.initial(e, Some(open));
                        assert!(codes.is_open(c) && !codes.is_decided(c));
                        assert_eq!(codes.level_bit(c), 0);
                        assert_eq!(codes.finished(c), 0);
                        let looked_up = e != NO_EXIT && e.unsigned_abs() > codes.exact();
                        assert_eq!(far, looked_up.then_some(e), "n {n} exit {e}");
                        assert_eq!(codes.exit(c), (!looked_up).then_some(e));
                        let mut d = c;
                        for _ in 1..open {
                            d = codes.lowered(d).unwrap();
                            assert_eq!(codes.exit(d), codes.exit(c));
                        }
                        assert_eq!(codes.lowered(d), None);
                        seen.insert(c);
                    }
                }
            }
        }
    }
}
