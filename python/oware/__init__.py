"""Exact endgame databases for Oware (Awari, Abapa).

Probe the tables that ``oware generate`` writes::

    import oware
    with oware.Tablebase("tables") as tb:      # the rules are the tables' own
        p = oware.Position("1 1 1 1 1 2 4 2 3 0 0 0")
        tb.score(p)          # the exact score for the side to move
        tb.moves(p)          # every move with its value, best first
        tb.get_score(p)      # the score, or None when a tier it needs is missing

``Tablebase("d1", "d2")`` (or ``Tablebase(["d1", "d2"])``) probes each tier from the first
directory that holds it.

``Position.from_game(4, [5, 2, 3])`` is the position a game reaches: from the start with 4
seeds in every house (1..=4), the houses played in turn, each 0..5 from the left of the side
that plays it, as ``oware probe --start 4 --moves 5,2,3`` and the web API's
``start=4&moves=5,2,3`` name it (the moves may be that text too).

A position is 12 house counts, the mover's houses (0..6) first; houses are numbered 0..5
for the mover, as on the command line and in its JSON (the web page shows them 1..6). A score is the seeds the
side to move gains over the rest of the game with perfect play, over what the opponent
gains (docs/RULES.md of the repository). ``oware.openspiel`` converts OpenSpiel states and
plays OpenSpiel games with the tables.

Errors: ``ValueError`` for a malformed position or rules, or a move of ``from_game`` that
cannot be played (``moves: move 3 (house 0) is illegal in ...``, the command line's
message), ``MissingTierError`` (a ``FileNotFoundError``) for a tier not in the directory,
``TableError`` for a damaged table. A batch (``scores``) raises the error of the first position that fails, its message and its
``index`` and ``position`` attributes naming it. A message quotes at most 100 characters of
the input (then ``…``), as the command line does. ``best_line`` gives at most
``MAX_LINE_PLIES`` (1000) plies, as the command line and the web API: a longer request is a
``ValueError``. Long calls (``scores``, ``best_line``) stop on Ctrl-C with
``KeyboardInterrupt``, and a batch too large for memory raises ``MemoryError``.
"""

from ._oware import (
    MAX_LINE_PLIES,
    PRESETS,
    MissingTierError,
    Move,
    Position,
    Rules,
    Tablebase,
    TableError,
    __version__,
)

__all__ = [
    "MAX_LINE_PLIES",
    "PRESETS",
    "MissingTierError",
    "Move",
    "Position",
    "Rules",
    "Tablebase",
    "TableError",
    "__version__",
]
