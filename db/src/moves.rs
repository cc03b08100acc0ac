//! Legal moves, their results, and un-moves (the inverse of non-capturing moves).
//!
//! Everything here follows `docs/RULES.md` exactly: sowing skips the origin house on every lap,
//! captures run backwards from the house of the last seed while the house is the
//! opponent's and holds a count of the capture set, and the options of [`Rules`] decide
//! grand slams, feeding and eradication.

use std::ops::Deref;

use crate::position::{Position, HOUSES};
use crate::rules::{GrandSlam, Rules, Starve};

/// What a legal move leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The game goes on from `child` (seen from the next mover, who owns houses `0..6`),
    /// after the mover captured `captured` seeds. `captured == 0` means the child is in the
    /// same tier (this includes a grand slam that captures nothing).
    Continue {
        /// The next position, rotated so that the next mover owns houses `0..6`.
        child: Position,
        /// Seeds captured by this move.
        captured: u8,
    },
    /// The move ends the game (`starve=forfeit`, or `grand-slam=to-opponent`): `score` is the
    /// rest of the game's score from the mover's side, including this move's captures.
    End {
        /// Final score of the rest of the game for the side that made this move.
        score: i8,
    },
}

impl Outcome {
    /// The value of this move for the mover, given the score of the child position
    /// (`score_of` is called only for [`Outcome::Continue`]):
    /// `captured − score(child)`, or the end score.
    #[inline]
    pub fn value(&self, score_of: impl FnOnce(&Position) -> i8) -> i8 {
        match *self {
            Outcome::Continue { child, captured } => captured as i8 - score_of(&child),
            Outcome::End { score } => score,
        }
    }
}

/// One legal move: the house played (`0..6`) and what it leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    /// The house played, `0..6` from the mover's side.
    pub house: u8,
    /// Seeds this move captures (also counted inside an [`Outcome::End`] score).
    pub captured: u8,
    /// What the move leads to.
    pub outcome: Outcome,
}

const NO_MOVE: Move = Move {
    house: 0,
    captured: 0,
    outcome: Outcome::End { score: 0 },
};

/// The legal moves of a position, in house order (at most 6; no allocation).
#[derive(Clone, Copy, Debug)]
pub struct MoveList {
    moves: [Move; 6],
    len: u8,
}

impl MoveList {
    fn new() -> Self {
        MoveList {
            moves: [NO_MOVE; 6],
            len: 0,
        }
    }

    fn push(&mut self, m: Move) {
        self.moves[self.len as usize] = m;
        self.len += 1;
    }
}

impl Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        &self.moves[..self.len as usize]
    }
}

/// What sowing does, for every origin house `0..6` and seed count `0..=48`: the change of
/// every house (one byte per house of a little-endian `u128`, as a wrapping difference: the
/// origin loses its seeds, the others gain what is sown into them) and the house of the
/// last seed.
struct SowTable {
    delta: [[u128; 49]; 6],
    last: [[u8; 49]; 6],
}

const fn sow_table() -> SowTable {
    let mut t = SowTable {
        delta: [[0; 49]; 6],
        last: [[0; 49]; 6],
    };
    let mut i = 0;
    while i < 6 {
        let mut s = 1;
        while s < 49 {
            let laps = (s / 11) as u128;
            let rem = s % 11;
            let mut d = 0u128;
            let mut h = 0;
            while h < HOUSES {
                if h != i {
                    d += laps << (8 * h);
                }
                h += 1;
            }
            let mut k = 1;
            while k <= rem {
                d += 1u128 << (8 * ((i + k) % HOUSES));
                k += 1;
            }
            // Taking the `s` seeds out of the origin, in the same addition (wrapping: the
            // origin holds exactly `s`, so no byte borrows once the board is added).
            t.delta[i][s] = d.wrapping_sub((s as u128) << (8 * i));
            t.last[i][s] = if rem == 0 {
                ((i + 11) % HOUSES) as u8
            } else {
                ((i + rem) % HOUSES) as u8
            };
            s += 1;
        }
        i += 1;
    }
    t
}

static SOW: SowTable = sow_table();

/// The board with house `i` (holding `seeds`) sown (12 bytes of a little-endian `u128`, no
/// byte overflows since a board holds at most 48 seeds), and the house of the last seed.
#[inline]
fn sow(board: u128, i: usize, seeds: u8) -> (u128, usize) {
    (
        board.wrapping_add(SOW.delta[i][seeds as usize]),
        SOW.last[i][seeds as usize] as usize,
    )
}

/// House `h` of a packed board.
#[inline]
fn byte(x: u128, h: usize) -> u8 {
    x.to_le_bytes()[h]
}

/// Seeds in houses `6..12` of a packed board (one multiply adds the six bytes; no partial
/// sum exceeds 48, so no byte carries).
#[inline]
fn opp_sum(x: u128) -> u8 {
    let y = ((x >> 48) as u64) & 0xFFFF_FFFF_FFFF;
    (y.wrapping_mul(0x0101_0101_0101_0101) >> 40) as u8
}

/// Empties houses `from..to` (at most 6 of them) of a packed board.
#[inline]
fn clear(x: u128, from: usize, to: usize) -> u128 {
    if from >= to {
        return x;
    }
    let mask = ((1u128 << (8 * (to - from))) - 1) << (8 * from);
    x & !mask
}

/// The move generator of one position: the board and the counts every move needs.
struct Sower {
    packed: u128,
    n: u8,
    opp_before: u8,
}

impl Sower {
    #[inline(always)]
    fn new(p: &Position) -> Self {
        let packed = p.packed();
        Sower {
            packed,
            n: p.seeds(),
            opp_before: opp_sum(packed),
        }
    }

    /// The move from house `i` (`0..6`), if the options allow it (all but the eradication
    /// rule of `starve`, which depends on the other moves), and whether it leaves the
    /// opponent without seeds.
    #[inline(always)]
    fn play(&mut self, i: usize, rules: &Rules) -> Option<(Move, bool)> {
        let (packed, n, opp_before) = (self.packed, self.n, self.opp_before);
        let s = byte(packed, i);
        if s == 0 {
            return None;
        }
        if rules.starve == Starve::Feed && opp_before == 0 && (s as usize) < 6 - i {
            return None;
        }
        let (mut a, last) = sow(packed, i, s);
        let opp_after_sow = opp_sum(a);
        let mut captured = 0u8;
        let mut end = None;
        if last >= 6 {
            let mut lo = last + 1;
            while lo > 6 && rules.capture.contains(byte(a, lo - 1)) {
                lo -= 1;
                captured += byte(a, lo);
            }
            if captured > 0 {
                // The chain is lo..=last.
                let (from, to) = if captured == opp_after_sow {
                    match rules.grand_slam {
                        GrandSlam::NoCapture => {
                            captured = 0;
                            (lo, lo)
                        }
                        GrandSlam::Illegal => return None,
                        GrandSlam::CaptureAll => (lo, last + 1),
                        GrandSlam::ToOpponent => {
                            end = Some(captured as i8 - (n - captured) as i8);
                            (lo, last + 1)
                        }
                        GrandSlam::KeepLast => {
                            captured -= byte(a, last);
                            (lo, last)
                        }
                        GrandSlam::KeepFirst => {
                            captured -= byte(a, lo);
                            (lo + 1, last + 1)
                        }
                    }
                } else {
                    (lo, last + 1)
                };
                a = clear(a, from, to);
            }
        }
        let erad = opp_after_sow == captured;
        if end.is_none() && erad && rules.starve == Starve::Forfeit {
            end = Some(captured as i8 - (n - captured) as i8);
        }
        let outcome = match end {
            Some(score) => Outcome::End { score },
            None => Outcome::Continue {
                child: Position::from_packed(a).flipped(),
                captured,
            },
        };
        Some((
            Move {
                house: i as u8,
                captured,
                outcome,
            },
            erad,
        ))
    }
}

/// The moves that leave a tier (captures and ends of the game) of many positions in a row:
/// the first pass of a retrograde solver, which visits a tier in index order.
///
/// Consecutive indices share the mover's side, so what depends on it alone (which houses
/// hold seeds, where the last seed of each sowing lands) is worked out once per side. A
/// sowing of at most 11 seeds puts one seed in each house after its origin, so while the
/// opponent has seeds it stays in the tier unless its last seed lands on an opponent house
/// whose count, plus one, captures; only the moves that may capture, or that go around the
/// board, are played. Under the `eradicate` starving option only a capture can take every
/// seed the opponent has, so the moves played decide which moves are legal: those that do are
/// held back, and played only if every legal move does. Positions whose opponent has no
/// seeds take the general path.
#[derive(Clone, Debug)]
pub struct ExitMoves {
    rules: Rules,
    /// The mover's side the fields below describe (houses `0..6` packed), or `u64::MAX`.
    side: u64,
    /// Moves that stay in the tier whatever the opponent's side.
    open: u8,
    /// Houses whose sowing of at most 11 seeds ends on an opponent house (a bit per house).
    ends: u8,
    /// The house where each of those sowings ends.
    last: [u8; 6],
    /// Houses of 12 seeds or more, whose sowing goes around the board (a bit per house).
    laps: u8,
    /// Bit `c` is set when a house that held `c` seeds captures after one more.
    capture_next: u64,
}

impl ExitMoves {
    /// A finder for positions under `rules`.
    pub fn new(rules: &Rules) -> Self {
        ExitMoves {
            rules: *rules,
            side: u64::MAX,
            open: 0,
            ends: 0,
            last: [0; 6],
            laps: 0,
            capture_next: u64::from(rules.capture.bits()) >> 1,
        }
    }

    /// Calls `f` for every legal move of `p` that captures or ends the game, in house order
    /// (the same calls as [`Position::for_each_move`] without the moves that stay in the
    /// tier), and returns how many legal moves stay in the tier (non-capturing moves, grand
    /// slams that capture nothing included), or `None` when `p` has no legal move.
    #[inline]
    pub fn for_each(&mut self, p: &Position, f: impl FnMut(&Move)) -> Option<u8> {
        if self.rules.starve == Starve::Eradicate {
            self.for_each_in::<true>(p, f)
        } else {
            self.for_each_in::<false>(p, f)
        }
    }

    /// [`ExitMoves::for_each`] under the `eradicate` starving option (`ERADICATE`) or
    /// another.
    #[inline(always)]
    fn for_each_in<const ERADICATE: bool>(
        &mut self,
        p: &Position,
        mut f: impl FnMut(&Move),
    ) -> Option<u8> {
        const SIDE: u128 = (1 << 48) - 1;
        let packed = p.packed();
        let rules = self.rules;
        if packed >> 48 == 0 {
            // Legality depends on feeding the opponent.
            let mut open = 0u8;
            let any = p.for_each_move(&rules, |m| match m.outcome {
                Outcome::Continue { captured: 0, .. } => open += 1,
                _ => f(m),
            });
            return any.then_some(open);
        }
        let side = (packed & SIDE) as u64;
        if side != self.side {
            self.prepare(side);
        }
        let mut open = self.open;
        let mut play = self.laps;
        let mut ends = self.ends;
        while ends != 0 {
            let i = ends.trailing_zeros() as usize;
            ends &= ends - 1;
            let count = byte(packed, usize::from(self.last[i]));
            if (self.capture_next >> count) & 1 != 0 {
                play |= 1 << i;
            } else {
                open += 1;
            }
        }
        let mut any = open > 0;
        if play != 0 {
            // Under `eradicate`, the houses whose move takes every seed of the opponent (a
            // capture: the opponent has seeds), legal only if every legal move does.
            let mut held = 0u8;
            let mut sower = Sower::new(p);
            while play != 0 {
                let i = play.trailing_zeros() as usize;
                play &= play - 1;
                if let Some((m, erad)) = sower.play(i, &rules) {
                    if ERADICATE && erad {
                        held |= 1 << i;
                        continue;
                    }
                    any = true;
                    match m.outcome {
                        Outcome::Continue { captured: 0, .. } => open += 1,
                        _ => f(&m),
                    }
                }
            }
            if ERADICATE && !any {
                // Every legal move takes every seed of the opponent: all are legal.
                while held != 0 {
                    let i = held.trailing_zeros() as usize;
                    held &= held - 1;
                    if let Some((m, _)) = sower.play(i, &rules) {
                        any = true;
                        match m.outcome {
                            Outcome::Continue { captured: 0, .. } => open += 1,
                            _ => f(&m),
                        }
                    }
                }
            }
        }
        any.then_some(open)
    }

    /// Works out what depends on the mover's side `side` alone.
    fn prepare(&mut self, side: u64) {
        self.side = side;
        (self.open, self.ends, self.laps) = (0, 0, 0);
        for (i, &s) in side.to_le_bytes()[..6].iter().enumerate() {
            let last = i + usize::from(s);
            if s == 0 {
                continue;
            } else if s >= 12 {
                self.laps |= 1 << i;
            } else if (6..HOUSES).contains(&last) {
                self.ends |= 1 << i;
                self.last[i] = last as u8;
            } else {
                // The last seed lands on the mover's own side: nothing to capture.
                self.open += 1;
            }
        }
    }
}

impl Position {
    /// The score of the game ended here by rule 6 (no legal move): each side takes the seeds
    /// on its own side, so the score is `(seeds in 0..6) − (seeds in 6..12)`.
    #[inline]
    pub fn end_score(&self) -> i8 {
        self.mover_seeds() as i8 - self.opponent_seeds() as i8
    }

    /// The legal moves under `rules`, in house order. An empty list means the game is over
    /// and the position scores [`Position::end_score`].
    pub fn moves(&self, rules: &Rules) -> MoveList {
        let mut list = MoveList::new();
        let mut eradicating = [false; 6];
        let mut any_non_eradicating = false;
        let mut sower = Sower::new(self);
        for i in 0..6 {
            if let Some((m, erad)) = sower.play(i, rules) {
                eradicating[list.len as usize] = erad;
                any_non_eradicating |= !erad;
                list.push(m);
            }
        }
        if rules.starve == Starve::Eradicate && any_non_eradicating {
            let mut kept = MoveList::new();
            for (k, m) in list.iter().enumerate() {
                if !eradicating[k] {
                    kept.push(*m);
                }
            }
            return kept;
        }
        list
    }

    /// Calls `f` for each legal move under `rules`, in house order: the same moves as
    /// [`Position::moves`], without building a list (the fast path of a solver's inner
    /// loop). Returns whether there was any legal move.
    #[inline]
    pub fn for_each_move(&self, rules: &Rules, mut f: impl FnMut(&Move)) -> bool {
        if rules.starve == Starve::Eradicate {
            // Which moves are legal depends on all of them.
            let list = self.moves(rules);
            list.iter().for_each(&mut f);
            return !list.is_empty();
        }
        let mut sower = Sower::new(self);
        let mut any = false;
        for i in 0..6 {
            if let Some((m, _)) = sower.play(i, rules) {
                any = true;
                f(&m);
            }
        }
        any
    }

    /// The un-moves of this position whose parent is reachable ([`Position::is_reachable`]):
    /// the same calls as [`Position::unmoves`], in the same order, without those of
    /// unreachable parents. This is what a solver over an index of reachable positions needs
    /// (see [`crate::retro`]; probers do not need it).
    ///
    /// Most positions take a branch-light path that finds every un-move from bit masks of
    /// the board (empty houses, counts that capture, single seeds) and builds each parent
    /// with one table lookup and one addition; the rare positions it does not cover (a sowing
    /// of 11 seeds or more, a possible grand slam, an opponent left without seeds) go through
    /// [`Position::unmoves`].
    #[inline]
    pub fn unmoves_reachable(&self, rules: &Rules, mut f: impl FnMut(Position, u8)) {
        self.unmoves_reachable_in::<false>(rules, |p, house, _| f(p, house));
    }

    /// [`Position::unmoves_reachable`] with a third argument to `f`: `true` when the parent's
    /// opponent side (houses 6..12) is this position's side to move, flipped (the sowing
    /// stayed on the parent's own side: most parents), so that what depends on that side
    /// alone, such as the opponent's half of an index rank
    /// ([`crate::index::TierIndex::opponent_half`]), is worked out once for all of them. On
    /// the common path those parents come first, then the others; otherwise in the order of
    /// [`Position::unmoves`].
    #[inline]
    pub fn unmoves_reachable_by_side(&self, rules: &Rules, f: impl FnMut(Position, u8, bool)) {
        self.unmoves_reachable_in::<true>(rules, f);
    }

    /// The un-moves of [`Position::unmoves_reachable`], each with whether its parent's
    /// opponent side is this position's mover side; `SPLIT`: those parents first on the
    /// common path (otherwise in order).
    #[inline(always)]
    fn unmoves_reachable_in<const SPLIT: bool>(
        &self,
        rules: &Rules,
        mut f: impl FnMut(Position, u8, bool),
    ) {
        let after = self.flipped().packed();
        let nonzero = nonzero_houses(after);
        let opp_nonzero = nonzero >> 6;
        let opp = (after >> 48) as u64;
        let captures = capture_houses(opp, rules.capture.bits()) << 6;
        let slam_may_keep = matches!(
            rules.grand_slam,
            GrandSlam::NoCapture | GrandSlam::KeepLast | GrandSlam::KeepFirst
        );
        // Exactly one empty house (the one sown from): `empty` is a single bit. Tested
        // without `count_ones`, which a baseline x86-64 build computes in 15 instructions.
        let empty = !nonzero & 0xFFF;
        if opp_nonzero == 0
            || (empty != 0 && empty & (empty - 1) == 0)
            || (slam_may_keep && opp_nonzero & !(captures >> 6) == 0)
        {
            // An opponent without seeds (legality depends on the starving option), a sowing
            // that may go all around the board, or a possible grand slam.
            self.unmoves(rules, |p, house| {
                if p.is_reachable() {
                    let same = SPLIT && p.packed() >> 48 == after >> 48;
                    f(p, house, same);
                }
            });
            return;
        }
        // Every sowing is of at most 10 seeds, so it takes back one seed from each of the
        // houses after `i` up to the first empty one; it captures exactly when its last seed
        // made an opponent house's count one that captures (no grand slam is possible).
        // With every opponent house holding seeds, the parent is reachable only if the
        // sowing passed an opponent house that holds a single seed now.
        // Each of the three is one look-up of a table of the un-moves it allows.
        let mut found =
            FAST_RUNS[nonzero as usize & 0xFFF] & FAST_NO_CAPTURE[(captures >> 6) as usize & 63];
        if opp_nonzero == 0x3F {
            let singles = gather_bytes(count_bytes(opp, 1));
            found &= FAST_SINGLES[singles as usize & 63];
        }
        let mut emit = |mut bits: u64, same: bool| {
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                f(
                    Position::from_packed(after.wrapping_add(UNSOW[b])),
                    (b / FAST_SOWN) as u8,
                    same,
                );
            }
        };
        if SPLIT {
            emit(found & SAME_SIDE, true);
            emit(found & !SAME_SIDE, false);
        } else {
            emit(found, false);
        }
    }

    /// The un-moves of this position: calls `f(parent, house)` for every position `parent`
    /// of the same tier whose legal, non-capturing move from `house` yields `self`.
    ///
    /// Candidates are found by taking seeds back in reverse sowing order and then confirmed
    /// with the forward move generator, so the result is exact under every rules option.
    /// Parents are reported whether or not they are reachable; an index that holds only
    /// reachable positions skips the others. For retrograde analysis (see [`crate::retro`]).
    pub fn unmoves(&self, rules: &Rules, mut f: impl FnMut(Position, u8)) {
        // The board right after the move, from the parent's side (read whole: this
        // position was often just stored, see `Position::packed_whole`).
        let flipped = Position::from_packed(self.packed_whole()).flipped();
        let (after_h, after) = (flipped.houses(), flipped.packed());
        let n = self.seeds();
        let opp_after = opp_sum(after);
        for i in 0..6 {
            if after_h[i] != 0 {
                continue;
            }
            // The board with the seeds taken back so far (house `i` is empty), as bytes to
            // test and packed to build the parent from: building it from the bytes would
            // read a word over a byte just stored, which stalls.
            let mut left = after_h;
            let mut p = after;
            let mut h = i;
            for s in 1..=n {
                // The house of the `s`-th seed sown from `i` (sowing skips `i`).
                h = NEXT_SOWN[i][h] as usize;
                if left[h] == 0 {
                    break;
                }
                left[h] -= 1;
                p -= ONE_SEED[h];
                // Quick rejection: the last seed lands on an opponent house whose count
                // captures, so the move captures, unless it is a grand slam that captures
                // nothing (the forward check below decides those).
                if h >= 6 && rules.capture.contains(after_h[h]) {
                    let mut chain = 0u8;
                    let mut lo = h + 1;
                    while lo > 6 && rules.capture.contains(after_h[lo - 1]) {
                        lo -= 1;
                        chain += after_h[lo];
                    }
                    let slam_may_keep = matches!(
                        rules.grand_slam,
                        GrandSlam::NoCapture | GrandSlam::KeepLast | GrandSlam::KeepFirst
                    );
                    if chain < opp_after || !slam_may_keep {
                        continue;
                    }
                }
                let parent = Position::from_packed(p + u128::from(u64::from(s) << (8 * i)));
                let grand_slam_like = h >= 6 && rules.capture.contains(after_h[h]);
                let eradicating = opp_after == 0;
                let yields = if grand_slam_like
                    || (eradicating && rules.starve == Starve::Eradicate)
                {
                    // Rare cases that depend on the other moves or on the grand-slam
                    // option: ask the forward generator.
                    forward_yields(&parent, i, self, rules)
                } else {
                    // The sowing yields `after` by construction and captures nothing; only
                    // legality is left to check.
                    // A non-capturing move leaves the opponent empty only if it was empty and
                    // was not fed: illegal under `feed`, a forfeit (an end) under `forfeit`.
                    let ok = !eradicating || rules.starve == Starve::Eradicate;
                    debug_assert_eq!(ok, forward_yields(&parent, i, self, rules), "{parent} {i}");
                    ok
                };
                if yields {
                    f(parent, i as u8);
                }
            }
        }
    }
}

/// Longest sowing the fast path of [`Position::unmoves_reachable`] takes back: 10 seeds.
/// With 11 or more, every other house is sown, which only the general path handles.
const FAST_SOWN: usize = 10;

/// `UNSOW[FAST_SOWN * i + s - 1]`: what taking back a sowing of `s` seeds from house `i`
/// adds to the packed board after the move (modulo 2¹²⁸): `s` seeds back into house `i`, one
/// seed out of each of the `s` houses after it. `s` is at most [`FAST_SOWN`], so no house is
/// sown twice and house `i` is not skipped.
const UNSOW: [u128; 6 * FAST_SOWN] = {
    let mut t = [0u128; 6 * FAST_SOWN];
    let mut i = 0;
    while i < 6 {
        let mut s = 1;
        while s <= FAST_SOWN {
            let mut d = (s as u128) << (8 * i);
            let mut k = 1;
            while k <= s {
                d = d.wrapping_sub(ONE_SEED[(i + k) % HOUSES]);
                k += 1;
            }
            t[FAST_SOWN * i + s - 1] = d;
            s += 1;
        }
        i += 1;
    }
    t
};

/// `FAST_RUNS[nz]`: the fast un-moves (bit `FAST_SOWN * i + s - 1`: a sowing of `s` seeds
/// from house `i` of the mover taken back) that the houses holding seeds allow, `nz` (a bit
/// per house): from each empty house `i`, sowings of 1 up to [`FAST_SOWN`] seeds that put a
/// seed only in houses holding seeds now (the houses after `i` up to the first empty one).
static FAST_RUNS: [u64; 1 << HOUSES] = {
    let mut t = [0u64; 1 << HOUSES];
    let mut nz = 0;
    while nz < 1 << HOUSES {
        let mut m = 0u64;
        let mut i = 0;
        while i < 6 {
            if nz >> i & 1 == 0 {
                let mut s = 1;
                while s <= FAST_SOWN && nz >> ((i + s) % HOUSES) & 1 != 0 {
                    m |= 1 << (FAST_SOWN * i + s - 1);
                    s += 1;
                }
            }
            i += 1;
        }
        t[nz] = m;
        nz += 1;
    }
    t
};

/// `FAST_NO_CAPTURE[c]`: the fast un-moves whose last seed does not land on an opponent house
/// of `c` (bit `h − 6` for house `h`: the houses whose count captures), that is those whose
/// move captured nothing.
static FAST_NO_CAPTURE: [u64; 64] = {
    let mut t = [0u64; 64];
    let mut c = 0;
    while c < 64 {
        let mut m = 0u64;
        let mut i = 0;
        while i < 6 {
            let mut s = 1;
            while s <= FAST_SOWN {
                let last = (i + s) % HOUSES;
                if last < 6 || c >> (last - 6) & 1 == 0 {
                    m |= 1 << (FAST_SOWN * i + s - 1);
                }
                s += 1;
            }
            i += 1;
        }
        t[c] = m;
        c += 1;
    }
    t
};

/// `FAST_SINGLES[g]`: the fast un-moves whose sowing put a seed in an opponent house of `g`
/// (bit `h − 6` for house `h`: the houses holding a single seed now), so that the parent left
/// the opponent a house without seeds. With every opponent house holding seeds, a parent is
/// reachable only then.
static FAST_SINGLES: [u64; 64] = {
    let mut t = [0u64; 64];
    let mut g = 0;
    while g < 64 {
        let mut m = 0u64;
        let mut i = 0;
        while i < 6 {
            let mut s = 1;
            let mut passed = false;
            while s <= FAST_SOWN {
                let h = (i + s) % HOUSES;
                passed = passed || (h >= 6 && g >> (h - 6) & 1 != 0);
                if passed {
                    m |= 1 << (FAST_SOWN * i + s - 1);
                }
                s += 1;
            }
            i += 1;
        }
        t[g] = m;
        g += 1;
    }
    t
};

/// The bits `FAST_SOWN * i + s - 1` of the fast un-moves whose sowing of `s` seeds from house
/// `i` stays on the mover's side (`i + s <= 5`): the parent's opponent side is the child's.
const SAME_SIDE: u64 = {
    let mut m = 0u64;
    let mut i = 0;
    while i < 6 {
        let mut s = 1;
        while i + s <= 5 {
            m |= 1 << (FAST_SOWN * i + s - 1);
            s += 1;
        }
        i += 1;
    }
    m
};

/// Every byte of a word at 1.
const BYTES_1: u64 = 0x0101_0101_0101_0101;

/// The high bit of every byte of `x` (bytes under 128) that is zero, the other bits clear.
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    // A byte `b < 128` plus 0x7F reaches the high bit exactly when `b > 0`, without a carry.
    !(x + 0x7F * BYTES_1) & (0x80 * BYTES_1)
}

/// The high bit of every byte of `x` (bytes under 128) equal to `count` (1..=127).
#[inline(always)]
fn count_bytes(x: u64, count: u8) -> u64 {
    zero_bytes(x ^ (u64::from(count) * BYTES_1))
}

/// Gathers the high bits of the bytes of `x` (the others clear) into bits `0..8`.
#[inline(always)]
fn gather_bytes(x: u64) -> u32 {
    ((x >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
}

/// The 12-bit mask of the houses of a packed board that hold seeds.
#[inline(always)]
fn nonzero_houses(x: u128) -> u32 {
    let (lo, hi) = (x as u64, (x >> 64) as u64);
    !(gather_bytes(zero_bytes(lo)) | gather_bytes(zero_bytes(hi)) << 8) & 0xFFF
}

/// The 6-bit mask of the houses of a side (`side`: six packed houses, the top bytes zero)
/// whose count is in the capture set `set` (bit `c` for count `c`, counts 1..=3).
#[inline(always)]
fn capture_houses(side: u64, set: u8) -> u32 {
    let m = if set == 0b1100 {
        // Counts 2 and 3 (both presets): the bytes that are 3 once their low bit is set.
        count_bytes(side | BYTES_1, 3)
    } else {
        let mut m = 0;
        for c in 1..=3 {
            if set >> c & 1 != 0 {
                m |= count_bytes(side, c);
            }
        }
        m
    };
    gather_bytes(m) & 0x3F
}

/// `ONE_SEED[h]`: one seed in house `h` of a packed board.
const ONE_SEED: [u128; HOUSES] = {
    let mut t = [0u128; HOUSES];
    let mut h = 0;
    while h < HOUSES {
        t[h] = 1 << (8 * h);
        h += 1;
    }
    t
};

/// `NEXT_SOWN[i][h]`: the house that receives the seed after house `h` when house `i`
/// (of the mover, 0..6) is sown: `h + 1` around the board, skipping `i`.
const NEXT_SOWN: [[u8; HOUSES]; 6] = {
    let mut t = [[0u8; HOUSES]; 6];
    let mut i = 0;
    while i < 6 {
        let mut h = 0;
        while h < HOUSES {
            let mut next = (h + 1) % HOUSES;
            if next == i {
                next = (next + 1) % HOUSES;
            }
            t[i][h] = next as u8;
            h += 1;
        }
        i += 1;
    }
    t
};

/// Whether the legal move of `parent` from `house` is non-capturing and yields `child`.
fn forward_yields(parent: &Position, house: usize, child: &Position, rules: &Rules) -> bool {
    parent.moves(rules).iter().any(|m| {
        m.house as usize == house
            && m.outcome
                == Outcome::Continue {
                    child: *child,
                    captured: 0,
                }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(s: &str) -> Position {
        s.parse().unwrap()
    }

    #[test]
    fn start_moves() {
        let m = Position::START.moves(&Rules::ABAPA);
        assert_eq!(m.len(), 6);
        let Outcome::Continue { child, captured } = m[0].outcome else {
            panic!()
        };
        assert_eq!(captured, 0);
        // house 0 sows into 1..4; rotated: the opponent's houses first.
        assert_eq!(child, pos("4 4 4 4 4 4 0 5 5 5 5 4"));
    }

    #[test]
    fn simple_capture() {
        // house 5 with 1 seed lands on house 6 holding 1 -> 2, captured.
        let p = pos("0 0 0 0 0 1 1 1 0 0 0 0");
        let m = p.moves(&Rules::ABAPA);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].captured, 2);
        assert_eq!(
            m[0].outcome,
            Outcome::Continue {
                child: pos("0 1 0 0 0 0 0 0 0 0 0 0"),
                captured: 2
            }
        );
    }

    #[test]
    fn grand_slam_no_capture() {
        let p = pos("0 0 0 0 0 1 1 0 0 0 0 0");
        let m = p.moves(&Rules::ABAPA);
        assert_eq!(
            m[0].outcome,
            Outcome::Continue {
                child: pos("2 0 0 0 0 0 0 0 0 0 0 0"),
                captured: 0
            }
        );
    }

    #[test]
    fn unmoves_invert_start_children() {
        for m in Position::START.moves(&Rules::ABAPA).iter() {
            let Outcome::Continue { child, .. } = m.outcome else {
                panic!()
            };
            let mut found = false;
            child.unmoves(&Rules::ABAPA, |p, h| {
                found |= p == Position::START && h == m.house;
            });
            assert!(found);
        }
    }
}
