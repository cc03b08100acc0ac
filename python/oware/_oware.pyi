"""Type stubs of the extension module oware._oware."""

from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import Iterable, List, Literal, Optional, Sequence, Type, TypedDict, TypeVar, Union

PRESETS: List[str]
MAX_LINE_PLIES: int
__version__: str

_T = TypeVar("_T")

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
    @staticmethod
    def from_game(
        start: int, moves: Union[Sequence[int], str] = (), rules: RulesLike = "abapa"
    ) -> "Position":
        """The position a game reaches: from the start with ``start`` seeds in every house
        (1..=4), the houses of ``moves`` played in turn under ``rules``, each 0..=5 from the
        left of the side that plays it (``"5,2,3"`` as text, as the command line takes them).
        A move that cannot be played raises ``ValueError`` naming its place in the list, as
        the command line and the web API do:
        ``moves: move 3 (house 0) is illegal in ...: house 0 is empty``."""
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
    distance: Optional[int]
    position: Optional[str]

class Outcome(TypedDict):
    category: str
    difference: int
    mover_total: float
    opponent_total: float

StrPath = Union[str, "PathLike[str]"]

class Tablebase:
    """One or several directories of tables, probed lazily: each tier from the first
    directory that holds it. The rules are the tables' own unless given (and then they must
    match). A directory of Romein and Bal's ``scores.N`` files is read as such when it holds
    no ``tier-NN.owt``; ``format="romein"`` reads its ``scores.N`` files whatever else it
    holds (one directory, rules ``awari``). A context manager: the tables are closed at the
    end of the ``with`` block."""

    def __init__(
        self,
        *dirs: Union[StrPath, Sequence[StrPath]],
        rules: Optional[RulesLike] = None,
        format: Optional[Literal["romein"]] = None,
    ) -> None: ...
    @property
    def rules(self) -> Rules: ...
    @property
    def dir(self) -> Path: ...
    @property
    def dirs(self) -> List[Path]: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Tablebase": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...
    def score(self, position: PositionLike) -> int: ...
    def get_score(self, position: PositionLike, default: _T = None) -> Union[int, _T]: ...
    def distance(self, position: PositionLike) -> Optional[int]: ...
    def moves(self, position: PositionLike) -> List[MoveScore]: ...
    def get_moves(
        self, position: PositionLike, default: _T = None
    ) -> Union[List[MoveScore], _T]: ...
    def best_line(self, position: PositionLike, plies: int = 100) -> List[MoveScore]:
        """A best line of up to ``plies`` moves; ``plies`` is at most ``MAX_LINE_PLIES``
        (1000, as the command line's ``--max-plies``), more raises ``ValueError``."""
    def outcome(
        self, position: PositionLike, captured_mover: int, captured_opponent: int
    ) -> Outcome: ...
    def scores(self, positions: Iterable[PositionLike]) -> List[int]:
        """The scores of a batch, on every core without the GIL. Ctrl-C interrupts it
        (``KeyboardInterrupt``); a batch too large for memory raises ``MemoryError``."""
