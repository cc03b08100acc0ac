//! Legal moves, their results, and un-moves (the inverse of non-capturing moves).
//!
//! Everything here follows `RULES.md` exactly: sowing skips the origin house on every lap,
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

/// Sows house `i` of `board` in place; returns the house of the last seed.
#[inline]
fn sow(board: &mut [u8; HOUSES], i: usize) -> usize {
    let s = board[i] as usize;
    board[i] = 0;
    let laps = s / 11;
    let rem = s % 11;
    if laps > 0 {
        let laps = laps as u8;
        for (h, v) in board.iter_mut().enumerate() {
            if h != i {
                *v += laps;
            }
        }
    }
    for k in 1..=rem {
        board[(i + k) % HOUSES] += 1;
    }
    if rem == 0 {
        (i + 11) % HOUSES
    } else {
        (i + rem) % HOUSES
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
        let b = *self.houses();
        let n = self.seeds();
        let opp_before: u8 = b[6..].iter().sum();
        let mut list = MoveList::new();
        let mut eradicating = [false; 6];
        let mut any_non_eradicating = false;
        for i in 0..6 {
            let s = b[i];
            if s == 0 {
                continue;
            }
            if rules.starve == Starve::Feed && opp_before == 0 && (s as usize) < 6 - i {
                continue;
            }
            let mut a = b;
            let last = sow(&mut a, i);
            let mut captured = 0u8;
            let mut end = None;
            if last >= 6 {
                let mut lo = last + 1;
                while lo > 6 && rules.capture.contains(a[lo - 1]) {
                    lo -= 1;
                    captured += a[lo];
                }
                if captured > 0 {
                    // chain is lo..=last
                    let opp_after_sow: u8 = a[6..].iter().sum();
                    let (from, to) = if captured == opp_after_sow {
                        match rules.grand_slam {
                            GrandSlam::NoCapture => {
                                captured = 0;
                                (lo, lo)
                            }
                            GrandSlam::Illegal => continue,
                            GrandSlam::CaptureAll | GrandSlam::ToOpponent => (lo, last + 1),
                            GrandSlam::KeepLast => {
                                captured -= a[last];
                                (lo, last)
                            }
                            GrandSlam::KeepFirst => {
                                captured -= a[lo];
                                (lo + 1, last + 1)
                            }
                        }
                    } else {
                        (lo, last + 1)
                    };
                    for v in &mut a[from..to] {
                        *v = 0;
                    }
                    if rules.grand_slam == GrandSlam::ToOpponent && captured == opp_after_sow {
                        end = Some(captured as i8 - (n - captured) as i8);
                    }
                }
            }
            let opp_after: u8 = a[6..].iter().sum();
            let erad = opp_after == 0;
            if end.is_none() && erad && rules.starve == Starve::Forfeit {
                end = Some(captured as i8 - (n - captured) as i8);
            }
            eradicating[list.len as usize] = erad;
            any_non_eradicating |= !erad;
            let outcome = match end {
                Some(score) => Outcome::End { score },
                None => Outcome::Continue {
                    child: Position::from_houses_unchecked(a).flipped(),
                    captured,
                },
            };
            list.push(Move {
                house: i as u8,
                captured,
                outcome,
            });
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

    /// The un-moves of this position: calls `f(parent, house)` for every position `parent`
    /// of the same tier whose legal, non-capturing move from `house` yields `self`.
    ///
    /// Candidates are found by taking seeds back in reverse sowing order and then confirmed
    /// with the forward move generator, so the result is exact under every rules option.
    /// Parents are reported whether or not they are reachable; an index that holds only
    /// reachable positions skips the others.
    pub fn unmoves(&self, rules: &Rules, mut f: impl FnMut(Position, u8)) {
        // The board right after the move, from the parent's side.
        let after = *self.flipped().houses();
        let n = self.seeds();
        let opp_after: u8 = after[6..].iter().sum();
        for i in 0..6 {
            if after[i] != 0 {
                continue;
            }
            let mut p = after;
            for s in 1..=n {
                let h = (i + 1 + (s as usize - 1) % 11) % HOUSES;
                if p[h] == 0 {
                    break;
                }
                p[h] -= 1;
                // Quick rejection: the last seed lands on an opponent house whose count
                // captures, so the move captures, unless it is a grand slam that captures
                // nothing (the forward check below decides those).
                if h >= 6 && rules.capture.contains(after[h]) {
                    let mut chain = 0u8;
                    let mut lo = h + 1;
                    while lo > 6 && rules.capture.contains(after[lo - 1]) {
                        lo -= 1;
                        chain += after[lo];
                    }
                    let slam_may_keep = matches!(
                        rules.grand_slam,
                        GrandSlam::NoCapture | GrandSlam::KeepLast | GrandSlam::KeepFirst
                    );
                    if chain < opp_after || !slam_may_keep {
                        continue;
                    }
                }
                let mut cand = p;
                cand[i] = s;
                let parent = Position::from_houses_unchecked(cand);
                let grand_slam_like = h >= 6 && rules.capture.contains(after[h]);
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
