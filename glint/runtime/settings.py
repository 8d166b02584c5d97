"""Tuning knobs read from the environment (``GLINT_*``), checked: a value
that is not a whole number in range raises a GlintError naming the variable
when the module that reads it is imported, not a ValueError from deep inside
(or a silent misreading)."""
from __future__ import annotations

import os

from glint.errors import GlintError


def env_int(name: str, default: int, lo: int = 0, hi: int | None = None) -> int:
    """The integer in environment variable ``name`` (``default`` when unset
    or empty), which must lie in [lo, hi].

    >>> os.environ["GLINT_DOCTEST_KNOB"] = "12"; env_int("GLINT_DOCTEST_KNOB", 3, 1, 16)
    12
    >>> os.environ["GLINT_DOCTEST_KNOB"] = "lots"; env_int("GLINT_DOCTEST_KNOB", 3)
    Traceback (most recent call last):
    ...
    glint.errors.GlintError: GLINT_DOCTEST_KNOB must be a whole number, got 'lots'
    >>> os.environ["GLINT_DOCTEST_KNOB"] = "7"; env_int("GLINT_DOCTEST_KNOB", 0, 0, 2)
    Traceback (most recent call last):
    ...
    glint.errors.GlintError: GLINT_DOCTEST_KNOB must be between 0 and 2, got 7
    >>> del os.environ["GLINT_DOCTEST_KNOB"]; env_int("GLINT_DOCTEST_KNOB", 3)
    3
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        v = int(raw)
    except ValueError:
        raise GlintError(f"{name} must be a whole number, got {raw!r}") from None
    if v < lo or (hi is not None and v > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        raise GlintError(f"{name} must be {bound}, got {v}")
    return v
