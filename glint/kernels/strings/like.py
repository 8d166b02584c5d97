"""LIKE over pieces: a pattern is split at '%' into runs of literals and '_'
(one code point each); the first run is anchored at the start, the last at
the end, and each run between is matched leftmost after the previous one.

Leftmost matching is exact: a run matches a fixed number of code points, so
a match that starts earlier also ends earlier and leaves the most room for
the runs after it. Literal runs between '%' use :func:`.search.find_seq`
(one pass over each string for consecutive literals, a Triton kernel on
CUDA); a run with '_' between two literals uses :func:`.search.find_run`.

>>> from .pieces import from_strings
>>> p = from_strings(["special requests", "requests special", "spécial_requests", ""])
>>> match(p, compile_like("%special%requests%")).tolist()
[True, False, False, False]
>>> match(p, compile_like("sp_cial%")).tolist(), match(p, compile_like("%s")).tolist()
([True, False, True, False], [True, False, True, False])
>>> match(p, compile_like("%l#_r%", "#")).tolist(), match(p, compile_like("")).tolist()
([False, False, True, False], [False, False, False, True])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from glint.kernels.strings.pieces import Pieces
from glint.kernels.strings.search import advance_chars, find, find_run, find_seq, match_at, retreat_chars

_ANY, _ONE = "%", "_"


class PatternError(ValueError):
    """A malformed pattern (bad escape); the caller turns it into a SQL error."""


def tokens(pattern: str, escape: str | None) -> list[tuple[str, str]]:
    """Pattern as [(kind, text)] with kind 'L' (literal), '%' or '_'; runs of
    '%' collapse into one and escaped characters become literals.

    >>> tokens("a%%b_\\\\%", "\\\\")
    [('L', 'a'), ('%', '%'), ('L', 'b'), ('_', '_'), ('L', '%')]
    """
    if escape is not None and len(escape) > 1:
        raise PatternError(f"LIKE escape string must be empty or one character, got '{escape}'")
    esc = escape or None
    out: list[tuple[str, str]] = []
    lit: list[str] = []

    def flush() -> None:
        if lit:
            out.append(("L", "".join(lit)))
            lit.clear()

    i = 0
    while i < len(pattern):  # over the pattern's characters, not rows
        ch = pattern[i]
        if ch == esc:
            if i + 1 == len(pattern):
                raise PatternError(f"LIKE pattern must not end with the escape character: '{pattern}'")
            lit.append(pattern[i + 1])
            i += 2
            continue
        if ch in (_ANY, _ONE):
            flush()
            if not (ch == _ANY and out and out[-1][0] == _ANY):
                out.append((ch, ch))
        else:
            lit.append(ch)
        i += 1
    flush()
    return out


@dataclass(frozen=True, slots=True)
class LikePattern:
    """Runs between '%': each a tuple of ('L', bytes) and ('_', count)."""

    runs: tuple[tuple[tuple[str, object], ...], ...]


def compile_like(pattern: str, escape: str | None = None, fold: Callable[[str], str] | None = None) -> LikePattern:
    """The pattern's runs; ``fold`` maps each literal (ILIKE lower-cases them).

    >>> compile_like("ab_%__c").runs
    ((('L', b'ab'), ('_', 1)), (('_', 2), ('L', b'c')))
    """
    runs: list[list[tuple[str, object]]] = [[]]
    for kind, text in tokens(pattern, escape):
        if kind == _ANY:
            runs.append([])
        elif kind == _ONE:
            run = runs[-1]
            if run and run[-1][0] == _ONE:
                run[-1] = (_ONE, run[-1][1] + 1)
            else:
                run.append((_ONE, 1))
        else:
            runs[-1].append(("L", (fold(text) if fold else text).encode()))
    return LikePattern(tuple(tuple(r) for r in runs))


def match(p: Pieces, pattern: LikePattern) -> torch.Tensor:
    """Does each piece match the pattern (bool per piece)?"""
    runs = pattern.runs
    zero = torch.zeros(len(p), dtype=torch.int64, device=p.device)
    ok, pos = _forward(p, runs[0], zero)
    if len(runs) == 1:
        return ok & (pos == p.lengths)
    pos = torch.where(ok, pos, -1)
    lits: list[bytes] = []  # runs of one literal each, searched for in one pass
    for run in runs[1:-1]:
        if len(run) == 1 and run[0][0] == "L":
            lits.append(run[0][1])
            continue
        if lits:
            pos = find_seq(p, lits, pos)
            lits = []
        pos = _search(p, run, pos)
    if lits:
        pos = find_seq(p, lits, pos)
    return _backward(p, runs[-1], pos)


def _forward(p: Pieces, run, pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The run anchored at pos: (matched, end)."""
    ok = pos >= 0
    for kind, val in run:
        if kind == "L":
            ok &= match_at(p, val, pos)
            pos = pos + len(val)
        else:
            pos = advance_chars(p, torch.where(ok, pos, -1), val)
            ok &= pos >= 0
    return ok, pos


def _backward(p: Pieces, run, lower: torch.Tensor) -> torch.Tensor:
    """The run anchored at each piece's end, starting at or after ``lower``."""
    ok = lower >= 0
    end = p.lengths
    for kind, val in reversed(run):
        if kind == "L":
            end = end - len(val)
            ok &= (end >= lower) & match_at(p, val, end)
        else:
            end = retreat_chars(p, torch.where(ok, end, -1), val, lower)
            ok &= end >= 0
    return ok & (end >= lower)


def _search(p: Pieces, run, pos: torch.Tensor) -> torch.Tensor:
    """End of the leftmost match of the run at or after pos, or -1."""
    run = list(run)
    lead = run.pop(0)[1] if run[0][0] == _ONE else 0
    trail = run.pop()[1] if run and run[-1][0] == _ONE else 0
    pos = advance_chars(p, pos, lead)
    if not run:
        end = pos
    elif len(run) == 1:
        lit = run[0][1]
        start = find(p, lit, pos)
        end = torch.where(start >= 0, start + len(lit), -1)
    else:
        _, end = find_run(p, run, pos)
    return advance_chars(p, end, trail)
