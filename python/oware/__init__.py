"""Exact endgame databases for Oware (Awari, Abapa).

Probe the tables that ``oware generate`` writes::

    import oware
    tb = oware.Tablebase("tables", rules="abapa")
    p = oware.Position("1 1 1 1 1 2 4 2 3 0 0 0")
    tb.score(p)          # the exact score for the side to move
    tb.moves(p)          # every move with its value, best first

A position is 12 house counts, the mover's houses (0..6) first. A score is the seeds the
side to move gains over the rest of the game with perfect play, over what the opponent
gains (docs/RULES.md of the repository). ``oware.openspiel`` converts OpenSpiel states and
plays OpenSpiel games with the tables.

Errors: ``ValueError`` for a malformed position or rules, ``MissingTierError`` (a
``FileNotFoundError``) for a tier not in the directory, ``TableError`` for a damaged table.
"""

from ._oware import (
    PRESETS,
    MissingTierError,
    Move,
    Position,
    Rules,
    Tablebase,
    TableError,
)

__all__ = [
    "PRESETS",
    "MissingTierError",
    "Move",
    "Position",
    "Rules",
    "Tablebase",
    "TableError",
]
