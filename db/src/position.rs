//! Positions: 12 house counts seen from the side to move.

use std::fmt;
use std::str::FromStr;

use crate::parse_error::ParseError;

/// Number of houses on the board.
pub const HOUSES: usize = 12;
/// Total number of seeds in the game.
pub const MAX_SEEDS: u8 = 48;

/// A board seen from the side to move: houses `0..6` are the mover's, `6..12` the opponent's.
///
/// Captured seeds are not part of a position. The tier of a position is its seed count.
///
/// Positions compare (`Ord`) as their arrays of house counts, house 0 first.
///
/// Packed (byte-aligned, 16 bytes), so that moves and move lists holding positions stay small.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(C, packed)]
pub struct Position(
    /// The houses packed one per byte, house 0 in the low byte; bytes 12..16 are zero.
    u128,
);

/// Packs 12 house counts one per byte, house 0 in the low byte.
#[inline]
const fn pack(houses: [u8; HOUSES]) -> u128 {
    let mut b = [0u8; 16];
    let mut i = 0;
    while i < HOUSES {
        b[i] = houses[i];
        i += 1;
    }
    u128::from_le_bytes(b)
}

impl Position {
    /// The start position: four seeds in every house.
    pub const START: Position = Position(pack([4; HOUSES]));

    /// Builds a position from 12 house counts.
    ///
    /// # Errors
    /// [`ParseError::Position`] if the counts add up to more than 48 seeds.
    pub fn new(houses: [u8; HOUSES]) -> Result<Self, ParseError> {
        let total: u32 = houses.iter().map(|&h| u32::from(h)).sum();
        if total > u32::from(MAX_SEEDS) {
            return Err(ParseError::Position {
                field: 0,
                message: format!("{total} seeds on the board; at most {MAX_SEEDS}"),
            });
        }
        Ok(Position(pack(houses)))
    }

    /// Builds a position without checking the seed total. The caller guarantees that the
    /// counts add up to at most 48 (checked in debug builds).
    #[inline]
    pub fn from_houses_unchecked(houses: [u8; HOUSES]) -> Self {
        debug_assert!(houses.iter().map(|&h| u32::from(h)).sum::<u32>() <= 48);
        Position(pack(houses))
    }

    /// The position from 12 house counts packed one per byte in a little-endian `u128`
    /// (bytes 12..16 zero); the caller guarantees at most 48 seeds.
    #[inline]
    pub(crate) fn from_packed(x: u128) -> Self {
        debug_assert!(x >> (8 * HOUSES) == 0);
        let p = Position(x);
        debug_assert!(p.seeds() <= MAX_SEEDS);
        p
    }

    /// The houses packed one per byte in a little-endian `u128`.
    #[inline]
    pub(crate) fn packed(&self) -> u128 {
        self.0
    }

    /// [`Position::packed`], loaded as its two 8-byte words and held in registers: for a
    /// position just stored to memory, such as a move's child or a position popped from a
    /// work stack.
    ///
    /// Code that takes a part of the board, such as the opponent's side (bytes 6..12),
    /// lets the compiler load that part on its own, with a load that spans the two 8-byte
    /// stores that wrote the position. The core cannot forward such a load from the stores,
    /// so it waits until they reach the cache. Loaded as two whole words, the board is
    /// forwarded (deep verification of tier 22: 3 % faster, docs/BENCHMARKS.md).
    /// [`crate::retro::rank_of_child`] ranks through it.
    #[inline(always)]
    pub(crate) fn packed_whole(&self) -> u128 {
        let x = self.0;
        #[cfg(target_arch = "x86_64")]
        {
            let (mut lo, mut hi) = (x as u64, (x >> 64) as u64);
            // SAFETY: the block is empty: it reads and writes no memory, changes no flag and
            // leaves both registers as they were, so the result is `self.0`; it only keeps
            // the compiler from narrowing the two loads.
            unsafe {
                std::arch::asm!(
                    "/* {0} {1} */",
                    inout(reg) lo,
                    inout(reg) hi,
                    options(pure, nomem, nostack, preserves_flags)
                );
            }
            u128::from(hi) << 64 | u128::from(lo)
        }
        #[cfg(not(target_arch = "x86_64"))]
        x
    }

    /// The 12 house counts, mover's houses first.
    #[inline]
    pub fn houses(&self) -> [u8; HOUSES] {
        let b = self.0.to_le_bytes();
        let mut h = [0u8; HOUSES];
        h.copy_from_slice(&b[..HOUSES]);
        h
    }

    /// The houses as two little-endian words (houses 0..8 and 8..12).
    #[inline]
    fn words(&self) -> (u64, u32) {
        (self.0 as u64, (self.0 >> 64) as u32)
    }

    /// The seeds on the board: the tier of this position.
    #[inline]
    pub fn seeds(&self) -> u8 {
        // One multiply adds the bytes of a word: no partial sum exceeds 48, so no carries.
        let (lo, hi) = self.words();
        (lo.wrapping_mul(0x0101_0101_0101_0101) >> 56) as u8
            + (hi.wrapping_mul(0x0101_0101) >> 24) as u8
    }

    /// Seeds in the mover's houses `0..6`.
    #[inline]
    pub fn mover_seeds(&self) -> u8 {
        let (lo, _) = self.words();
        ((lo & 0xFFFF_FFFF_FFFF).wrapping_mul(0x0101_0101_0101_0101) >> 56) as u8
    }

    /// Seeds in the opponent's houses `6..12`.
    #[inline]
    pub fn opponent_seeds(&self) -> u8 {
        self.seeds() - self.mover_seeds()
    }

    /// The same board seen from the other side (houses rotated by 6).
    #[inline]
    pub fn flipped(&self) -> Position {
        const SIDE: u128 = (1 << 48) - 1;
        Position((self.0 >> 48) & SIDE | (self.0 & SIDE) << 48)
    }

    /// Whether a move can lead here: the side that just moved (houses `6..12`) has at least
    /// one empty house, because a move always empties its origin house. The start position,
    /// and every position whose opponent houses all hold seeds, cannot be reached by a move.
    #[inline]
    pub fn is_reachable(&self) -> bool {
        let (lo, hi) = self.words();
        let h6 = (lo >> 48) as u8;
        let h7 = (lo >> 56) as u8;
        // A zero byte in `hi`: the classic test, exact when it says "none".
        let zero_in_hi = hi.wrapping_sub(0x0101_0101) & !hi & 0x8080_8080 != 0;
        h6 == 0 || h7 == 0 || zero_in_hi
    }
}

impl PartialOrd for Position {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Position {
    /// As the arrays of house counts, house 0 first.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.houses().cmp(&other.houses())
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Position").field(&self.houses()).finish()
    }
}

impl fmt::Display for Position {
    /// Prints the 12 counts separated by single spaces, mover's houses first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, h) in self.houses().iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{h}")?;
        }
        Ok(())
    }
}

impl FromStr for Position {
    type Err = ParseError;

    /// Parses 12 counts separated by spaces and/or commas.
    ///
    /// # Errors
    /// [`ParseError::Position`] naming the field that is not a number, the wrong number of
    /// fields, or a total over 48 seeds.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut split = s
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty());
        // At most 12 fields are held: an input of millions is counted, not collected.
        let fields: Vec<&str> = split.by_ref().take(HOUSES).collect();
        let found = fields.len() + split.count();
        if found != HOUSES {
            return Err(ParseError::Position {
                field: 0,
                message: format!(
                    "expected {HOUSES} house counts, found {found} in `{}`",
                    crate::shorten(s.trim())
                ),
            });
        }
        let mut houses = [0u8; HOUSES];
        for (i, f) in fields.iter().enumerate() {
            // Only digits: `u8`'s parser also takes a leading `+`.
            let digits = f.bytes().all(|b| b.is_ascii_digit());
            houses[i] = match f.parse::<u8>() {
                Ok(v) if digits && v <= MAX_SEEDS => v,
                _ => {
                    return Err(ParseError::Position {
                        field: i + 1,
                        message: format!(
                            "field {} (house {i}) is `{}`, not a count in 0..=48",
                            i + 1,
                            crate::shorten(f)
                        ),
                    })
                }
            };
        }
        Position::new(houses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        let p: Position = "4 4 4 4 4 4 4 4 4 4 4 4".parse().unwrap();
        assert_eq!(p, Position::START);
        assert_eq!(p.seeds(), 48);
        let q: Position = "1,1,1,1,1,2, 4,2,3,0,0,0".parse().unwrap();
        assert_eq!(q.to_string(), "1 1 1 1 1 2 4 2 3 0 0 0");
        assert_eq!(q.seeds(), 16);
        assert!("+1 1 1 1 1 2 4 2 3 0 0 0".parse::<Position>().is_err());
        assert_eq!(q.to_string().parse::<Position>().unwrap(), q);
        assert_eq!(q.flipped().flipped(), q);
        assert!(q.is_reachable());
        assert!(!Position::START.is_reachable());
    }

    #[test]
    fn packed_whole_is_packed() {
        // Every house at counts 1, 7 and 48 (house h + 5 holding the rest): the two words
        // differ in each case, so that a swap or a loss of either word shows.
        for h in 0..HOUSES {
            for c in [1u8, 7, 48] {
                let mut houses = [0u8; HOUSES];
                houses[h] = c;
                houses[(h + 5) % HOUSES] = 48 - c;
                let p = Position::from_packed(pack(houses));
                assert_eq!(p.packed_whole(), p.packed(), "{p}");
                assert_eq!(Position::from_packed(p.packed_whole()).houses(), houses);
            }
        }
    }

    #[test]
    fn errors_name_the_field() {
        match "1 2 3".parse::<Position>() {
            Err(ParseError::Position { field: 0, message }) => assert!(message.contains("found 3")),
            other => panic!("{other:?}"),
        }
        match "1 2 3 4 x 0 0 0 0 0 0 0".parse::<Position>() {
            Err(ParseError::Position { field: 5, .. }) => {}
            other => panic!("{other:?}"),
        }
        match "1 2 3 4 5 0 0 0 0 0 0 -1".parse::<Position>() {
            Err(ParseError::Position { field: 12, .. }) => {}
            other => panic!("{other:?}"),
        }
        match "1 2 3 4 5 0 0 0 0 0 0 300".parse::<Position>() {
            Err(ParseError::Position { field: 12, .. }) => {}
            other => panic!("{other:?}"),
        }
        match "10 10 10 10 10 0 0 0 0 0 0 0".parse::<Position>() {
            Err(ParseError::Position { field: 0, message }) => assert!(message.contains("50")),
            other => panic!("{other:?}"),
        }
    }
}
