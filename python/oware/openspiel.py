"""A bridge to OpenSpiel's ``oware`` game (``pyspiel.load_game("oware")``).

OpenSpiel's observation string is ``to_move | score0 score1 | h0 ... h11``: the houses are
absolute, player 0's are 0..5 and player 1's 6..11, both sown counter-clockwise. A
``Position`` of this package is from the mover's side, so player 1's position starts at
house 6. An OpenSpiel action is the house played counted from the mover's side (0..5),
which is this package's ``house``.

OpenSpiel differs by design in how a game ends: it stops at the first repetition of a
position, and once a player has captured more than half of the seeds it gives each player
the seeds on their own row. The tables score the game played to its end under the rules
(``docs/RULES.md`` of the repository); both agree on every move, capture and next position.
"""

from typing import Optional, Tuple

from ._oware import MissingTierError, Position, Tablebase

try:  # OpenSpiel is optional: only the bot needs it.
    import pyspiel

    _Bot = pyspiel.Bot
except ImportError:  # pragma: no cover - exercised only without OpenSpiel
    pyspiel = None
    _Bot = object


def _fields(state) -> Tuple[int, Tuple[int, int], list]:
    text = state.observation_string(0)
    parts = [p.split() for p in text.split("|")]
    if len(parts) != 3 or len(parts[1]) != 2 or len(parts[2]) != 12:
        raise ValueError(
            f"not an observation of OpenSpiel's 6-house oware: {text!r}"
        )
    return int(parts[0][0]), (int(parts[1][0]), int(parts[1][1])), [int(h) for h in parts[2]]


def position(state) -> Position:
    """The position of an OpenSpiel ``oware`` state, from the side to move.

    Raises ``ValueError`` for a terminal state (no side to move) or another game.
    """
    if state.is_terminal():
        raise ValueError("the game is over: no side to move")
    player, _, houses = _fields(state)
    if player == 0:
        return Position(houses)
    return Position(houses[6:] + houses[:6])


def captured(state) -> Tuple[int, int]:
    """Seeds captured so far by the side to move and by its opponent."""
    player, scores, _ = _fields(state)
    if player == 1:
        return scores[1], scores[0]
    return scores[0], scores[1]


def to_action(house: int) -> int:
    """The OpenSpiel action of playing ``house`` (0..5, from the mover's side)."""
    if not 0 <= house < 6:
        raise ValueError(f"house {house} is not in 0..6")
    return house


def to_house(action: int) -> int:
    """The house (0..5, from the mover's side) of an OpenSpiel action."""
    return to_action(action)


class TablebaseBot(_Bot):
    """An OpenSpiel bot that plays perfectly from the tables.

    Where the position's tier (or a tier its moves reach) is in the tables it plays a move of
    the best score; among equal moves the one that converts (the shortest distance to the
    next capture when winning, the longest when losing; docs/RULES.md), so that a won game
    is won before a position repeats, then the lowest house, so that a game replays the
    same. Where the tables have no distances it takes the lowest house of the best score.
    Elsewhere it asks ``fallback`` (another ``pyspiel.Bot``), or raises
    ``MissingTierError`` if there is none. ``deferred`` counts the moves left to the
    fallback.
    """

    def __init__(self, tablebase: Tablebase, fallback: Optional[object] = None):
        if pyspiel is None:
            raise ImportError("TablebaseBot needs OpenSpiel: pip install open-spiel")
        _Bot.__init__(self)
        self.tablebase = tablebase
        self.fallback = fallback
        self.deferred = 0

    def best_move(self, state) -> Optional[dict]:
        """The move the tables choose at ``state``, or None if a tier is missing."""
        try:
            moves = self.tablebase.moves(position(state))
        except MissingTierError:
            return None
        return moves[0] if moves else None

    def step(self, state) -> int:
        move = self.best_move(state)
        if move is not None:
            return to_action(move["house"])
        if self.fallback is None:
            # Raise the tables' own error, naming the missing tier.
            self.tablebase.moves(position(state))
            raise ValueError("no legal move")
        self.deferred += 1
        return self.fallback.step(state)

    def restart_at(self, state) -> None:
        if self.fallback is not None:
            self.fallback.restart_at(state)

    def inform_action(self, state, player_id, action) -> None:
        if self.fallback is not None:
            self.fallback.inform_action(state, player_id, action)
