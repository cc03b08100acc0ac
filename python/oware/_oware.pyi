"""Type stubs of the extension module oware._oware."""

from os import PathLike
from pathlib import Path
from typing import List, Optional, Sequence, TypedDict, Union

PRESETS: List[str]

class TableError(Exception):
    """A table or manifest is damaged (the message names the file); a file that cannot be
    read at all raises OSError."""

class MissingTierError(FileNotFoundError):
    """The table of a tier a probe needs is not in the directory."""

class Rules:
    """A rules value: a preset (``abapa``, ``awari``) with options."""

    def __init__(self, text: str = "abapa") -> None: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

PositionLike = Union["Position", str, Sequence[int]]
RulesLike = Union[Rules, str]

class Move:
    """A legal move: ``child`` after it, or ``end_score`` if it ends the game."""

    house: int
    captured: int
    child: Optional["Position"]
    end_score: Optional[int]

class Position:
    """12 house counts, the mover's houses (0..6) first, then the opponent's."""

    def __init__(self, houses: PositionLike) -> None: ...
    @property
    def seeds(self) -> int: ...
    @property
    def houses(self) -> List[int]: ...
    def flipped(self) -> "Position": ...
    def moves(self, rules: RulesLike = "abapa") -> List[Move]: ...
    def end_score(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class MoveScore(TypedDict):
    house: int
    captures: int
    score: int
    category: str
    position: Optional[str]

class Outcome(TypedDict):
    category: str
    difference: int
    mover_total: float
    opponent_total: float

class Tablebase:
    """A directory of tables, probed lazily."""

    def __init__(self, dir: Union[str, PathLike], rules: RulesLike = "abapa") -> None: ...
    @property
    def rules(self) -> Rules: ...
    @property
    def dir(self) -> Path: ...
    def score(self, position: PositionLike) -> int: ...
    def moves(self, position: PositionLike) -> List[MoveScore]: ...
    def best_line(self, position: PositionLike, plies: int = 100) -> List[MoveScore]: ...
    def outcome(
        self, position: PositionLike, captured_mover: int, captured_opponent: int
    ) -> Outcome: ...
    def scores(self, positions: Sequence[PositionLike]) -> List[int]: ...
