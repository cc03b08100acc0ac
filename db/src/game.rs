//! Positions named by the game that reaches them: a start position and the houses played
//! from it ([`Position::from_game`], [`Position::from_game_text`], [`GameError`]).
//!
//! The command line (`probe --start K --moves H,H,...`), the web API (`start=K&moves=...`)
//! and the Python package (`Position.from_game`) replay a game here, with the same messages.

use thiserror::Error;

use crate::moves::Outcome;
use crate::position::{Position, HOUSES};
use crate::rules::Rules;

/// The fewest seeds per house a start position may have.
pub const MIN_START_SEEDS: u8 = 1;
/// The most seeds per house a start position may have: 4, the 48 seeds of a whole game.
pub const MAX_START_SEEDS: u8 = 4;

/// Why a game could not be replayed. Its message names the move by its place in the list
/// (`move 3`, counted from 1), without the name of the argument that gave the list: the
/// caller prefixes it ([`GameError::argument`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GameError {
    /// The start's seeds per house are not 1..=4.
    #[error("`{word}` is not a count of seeds per house in 1..=4")]
    Start {
        /// The count as given, cut as an error quotes it ([`crate::shorten`]).
        word: String,
    },
    /// A word of the list is not a house 0..=5.
    #[error("move {at}: `{word}` is not a house 0..=5")]
    NotAHouse {
        /// The move's place in the list, from 1.
        at: usize,
        /// The word as given, cut as an error quotes it ([`crate::shorten`]).
        word: String,
    },
    /// The house is not a legal move where it is played.
    #[error("move {at} (house {house}) is illegal in {position}: {reason}")]
    Illegal {
        /// The move's place in the list, from 1.
        at: usize,
        /// The house played, 0..=5 from the left of the side that plays it.
        house: u8,
        /// The position it is played in, from the side that plays it.
        position: Position,
        /// Why it is illegal there: the house is empty, the game is over, or the rules
        /// forbid it (the message then lists the legal houses).
        reason: String,
    },
    /// The move ends the game: no position is left after it.
    #[error("move {at} (house {house}) ends the game in {position}: no position is left to probe")]
    Ends {
        /// The move's place in the list, from 1.
        at: usize,
        /// The house played, 0..=5 from the left of the side that plays it.
        house: u8,
        /// The position it is played in, from the side that plays it.
        position: Position,
    },
}

impl GameError {
    /// The argument at fault: `"start"` for [`GameError::Start`], `"moves"` otherwise. The
    /// command line prefixes its messages with the flag (`--moves: move 3 ...`), the web API
    /// and the Python package with the parameter (`moves: move 3 ...`).
    pub fn argument(&self) -> &'static str {
        match self {
            GameError::Start { .. } => "start",
            _ => "moves",
        }
    }
}

impl Position {
    /// The start position with `seeds` seeds in every house, 1..=4 (4 is
    /// [`Position::START`]).
    ///
    /// # Errors
    /// [`GameError::Start`] for a count outside 1..=4.
    pub fn start(seeds: u8) -> Result<Position, GameError> {
        if !(MIN_START_SEEDS..=MAX_START_SEEDS).contains(&seeds) {
            return Err(GameError::Start {
                word: seeds.to_string(),
            });
        }
        Ok(Position::from_houses_unchecked([seeds; HOUSES]))
    }

    /// The position reached from the start with `start` seeds in every house (1..=4) by
    /// playing `moves` in turn under `rules`, each house numbered 0..=5 from the left of the
    /// side that plays it (the [`crate::Move::house`] of the position it is played in). No
    /// moves: the start itself.
    ///
    /// ```
    /// use oware_db::{Position, Rules};
    /// let p = Position::from_game(&Rules::ABAPA, 1, &[5]).unwrap();
    /// assert_eq!(p.to_string(), "0 1 1 1 1 1 1 1 1 1 1 0");
    /// let e = Position::from_game(&Rules::ABAPA, 1, &[5, 2, 9]).unwrap_err();
    /// assert_eq!(e.to_string(), "move 3: `9` is not a house 0..=5");
    /// ```
    ///
    /// # Errors
    /// [`GameError::Start`] for a start outside 1..=4; for the first move that cannot be
    /// played, naming its place in the list: [`GameError::NotAHouse`] for a house over 5,
    /// [`GameError::Illegal`] for a move not legal where it is played (or one played once
    /// the game is over), [`GameError::Ends`] for a move that ends the game.
    pub fn from_game(rules: &Rules, start: u8, moves: &[u8]) -> Result<Position, GameError> {
        replay(
            rules,
            start,
            moves.iter().enumerate().map(|(i, &house)| {
                if usize::from(house) < HOUSES / 2 {
                    Ok(house)
                } else {
                    Err(GameError::NotAHouse {
                        at: i + 1,
                        word: house.to_string(),
                    })
                }
            }),
        )
    }

    /// [`Position::from_game`] with the moves as text, as the command line and the web API
    /// take them: houses separated by commas, spaces around each allowed, `5,2,3`; an empty
    /// (or blank) text is the start itself. Each word is read when its move is played, so
    /// that the error is that of the first move at fault.
    ///
    /// # Errors
    /// As [`Position::from_game`]; [`GameError::NotAHouse`] also for a word that is not
    /// digits only (`x`, `+1`, an empty word between two commas).
    pub fn from_game_text(rules: &Rules, start: u8, moves: &str) -> Result<Position, GameError> {
        if moves.trim().is_empty() {
            return Position::start(start);
        }
        replay(
            rules,
            start,
            moves
                .split(',')
                .map(str::trim)
                .enumerate()
                .map(|(i, word)| match word.parse::<u8>() {
                    Ok(h)
                        if usize::from(h) < HOUSES / 2
                            && word.bytes().all(|b| b.is_ascii_digit()) =>
                    {
                        Ok(h)
                    }
                    _ => Err(GameError::NotAHouse {
                        at: i + 1,
                        word: crate::shorten(word),
                    }),
                }),
        )
    }
}

/// Plays `houses` in turn from the start with `start` seeds per house; the iterator gives
/// each house, or the error of a word that is not one, as its move comes.
fn replay(
    rules: &Rules,
    start: u8,
    houses: impl Iterator<Item = Result<u8, GameError>>,
) -> Result<Position, GameError> {
    let mut p = Position::start(start)?;
    for (i, house) in houses.enumerate() {
        let at = i + 1;
        let house = house?;
        let legal = p.moves(rules);
        let Some(m) = legal.iter().find(|m| m.house == house) else {
            let reason = if legal.is_empty() {
                "the side to move has no legal move: the game is over".to_string()
            } else if p.houses()[usize::from(house)] == 0 {
                format!("house {house} is empty")
            } else {
                let houses: Vec<String> = legal.iter().map(|m| m.house.to_string()).collect();
                format!(
                    "house {house} is not legal under rules {rules}: the legal houses are {}",
                    houses.join(",")
                )
            };
            return Err(GameError::Illegal {
                at,
                house,
                position: p,
                reason,
            });
        };
        match m.outcome {
            Outcome::Continue { child, .. } => p = child,
            Outcome::End { .. } => {
                return Err(GameError::Ends {
                    at,
                    house,
                    position: p,
                })
            }
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_is_replayed_from_its_start() {
        assert_eq!(Position::start(4), Ok(Position::START));
        assert_eq!(
            Position::from_game(&Rules::ABAPA, 1, &[])
                .unwrap()
                .to_string(),
            "1 1 1 1 1 1 1 1 1 1 1 1"
        );
        let p = Position::from_game(&Rules::ABAPA, 1, &[5, 2, 3]).unwrap();
        for text in ["5,2,3", " 5, 2 ,3 "] {
            assert_eq!(Position::from_game_text(&Rules::ABAPA, 1, text), Ok(p));
        }
        assert_eq!(
            Position::from_game_text(&Rules::ABAPA, 1, " ").unwrap(),
            Position::start(1).unwrap()
        );
    }

    #[test]
    fn the_first_move_at_fault_is_named_by_its_place() {
        let e = |start: u8, moves: &str| {
            Position::from_game_text(&Rules::ABAPA, start, moves)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            e(1, "0,0,0"),
            "move 3 (house 0) is illegal in 0 2 1 1 1 1 0 2 1 1 1 1: house 0 is empty"
        );
        assert_eq!(e(1, "5,9"), "move 2: `9` is not a house 0..=5");
        assert_eq!(e(1, "5,,3"), "move 2: `` is not a house 0..=5");
        assert_eq!(e(1, "+1"), "move 1: `+1` is not a house 0..=5");
        // An illegal move before a word that is not a house: the illegal move is named.
        assert_eq!(
            e(1, "0,0,0,x"),
            "move 3 (house 0) is illegal in 0 2 1 1 1 1 0 2 1 1 1 1: house 0 is empty"
        );
        assert_eq!(e(5, "0"), "`5` is not a count of seeds per house in 1..=4");
        assert_eq!(
            Position::from_game(&Rules::ABAPA, 0, &[])
                .unwrap_err()
                .argument(),
            "start"
        );
        let long = Position::from_game_text(&Rules::ABAPA, 1, &"7".repeat(5000))
            .unwrap_err()
            .to_string();
        assert!(long.len() < 200, "{long}");
        assert_eq!(
            Position::from_game(&Rules::ABAPA, 1, &[6]).unwrap_err(),
            GameError::NotAHouse {
                at: 1,
                word: "6".into()
            }
        );
    }

    /// Under rules where a move can end the game (a starved side forfeits), the first game
    /// from the 1-seed start whose last move ends it is refused, that move named.
    #[test]
    fn a_move_that_ends_the_game_is_named() {
        let rules: Rules = "abapa+starve=forfeit".parse().unwrap();
        // Breadth first over positions, each reached once, with the houses that reach it.
        let start = Position::start(1).unwrap();
        let mut seen = std::collections::HashSet::from([start]);
        let mut frontier = vec![(start, Vec::<u8>::new())];
        let game = 'search: loop {
            assert!(!frontier.is_empty(), "no game ends");
            let mut next = Vec::new();
            for (p, houses) in &frontier {
                let mut ending = None;
                p.for_each_move(&rules, |m| match m.outcome {
                    Outcome::End { .. } => {
                        ending = ending.or(Some(m.house));
                    }
                    Outcome::Continue { child, .. } => {
                        if seen.insert(child) {
                            let mut h = houses.clone();
                            h.push(m.house);
                            next.push((child, h));
                        }
                    }
                });
                if let Some(house) = ending {
                    let mut h = houses.clone();
                    h.push(house);
                    break 'search h;
                }
            }
            frontier = next;
        };
        let e = Position::from_game(&rules, 1, &game).unwrap_err();
        let (last, n) = (game[game.len() - 1], game.len());
        assert!(
            matches!(e, GameError::Ends { at, house, .. } if at == n && house == last),
            "{e:?}"
        );
        assert!(e.to_string().contains("ends the game"), "{e}");
        assert_eq!(e.argument(), "moves");
        // The game up to its last move is a position.
        assert!(Position::from_game(&rules, 1, &game[..n - 1]).is_ok());
    }
}
