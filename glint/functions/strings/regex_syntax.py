"""Regular expressions as DuckDB reads them, turned into the RE2 text that
pyarrow.compute runs (RE2 is the engine of both, so a pattern means the same
in each): DuckDB's option letters, validation with DuckDB's error messages,
the anchored forms that full matches, first replacements and extractions
need, and RE2's rewrite strings (``\\1``, ``\\0``, ``\\\\``).

>>> o = parse_options("ig", allow_global=True)
>>> o.case_insensitive, o.global_replace, o.dot_nl
(True, True, False)
>>> Regex("a.c", parse_options("si")).search
'(?is)a.c'
>>> Regex("a|b", RegexOptions()).full
'\\\\A(?:a|b)\\\\z'
>>> parse_rewrite(r"<\\1\\\\x>")
Rewrite(parts=(('L', '<'), ('G', 1), ('L', '\\\\x>')), valid=True, max_group=1)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from glint.errors import ExecutionError

_INVALID = "Invalid Input Error: "


@dataclass(frozen=True, slots=True)
class RegexOptions:
    """DuckDB's regex options: 'c' / 'i' case (sensitive by default), 'l'
    literal, 's' dot matches newline / 'm', 'n', 'p' it does not (the
    default), 'g' global replace (regexp_replace only); the last of two
    contradicting letters wins, whitespace is ignored."""

    case_insensitive: bool = False
    literal: bool = False
    dot_nl: bool = False
    global_replace: bool = False


def parse_options(text: str | None, allow_global: bool = False) -> RegexOptions:
    """DuckDB's option string, with its error messages.

    >>> parse_options("x")
    Traceback (most recent call last):
    ...
    glint.errors.ExecutionError: Invalid Input Error: Unrecognized Regex option x
    """
    if text is None:
        raise ExecutionError(_INVALID + "Regex options field must not be NULL")
    ci = literal = dot_nl = glob = False
    for ch in text:  # over the option letters, not rows
        if ch == "c":
            ci = False
        elif ch == "i":
            ci = True
        elif ch == "l":
            literal = True
        elif ch in "mnp":
            dot_nl = False
        elif ch == "s":
            dot_nl = True
        elif ch == "g":
            if not allow_global:
                raise ExecutionError(_INVALID + "Option 'g' (global replace) is only valid for regexp_replace")
            glob = True
        elif ch not in " \t\n":
            raise ExecutionError(_INVALID + f"Unrecognized Regex option {ch}")
    return RegexOptions(ci, literal, dot_nl, glob)


# one empty string, built from its buffers: pa.array([...]) would import pandas (pyarrow's
# check for pandas inputs), a tenth of a second of every start
_ONE = pa.StringArray.from_buffers(1, pa.py_buffer(bytes(8)), pa.py_buffer(b""))


@functools.lru_cache(maxsize=4096)
def validate(pattern: str) -> None:
    """Raise DuckDB's error for a pattern RE2 does not accept ("missing ): (")."""
    try:
        pc.match_substring_regex(_ONE, pattern)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        msg = str(e).removeprefix("Invalid regular expression: ")
        raise ExecutionError(_INVALID + msg) from None


@functools.lru_cache(maxsize=4096)
def has_groups(pattern: str, count: int) -> bool:
    """Does the (valid) pattern have at least ``count`` capturing groups?"""
    if count == 0:
        return True
    try:
        pc.replace_substring_regex(_ONE, pattern, f"\\{count}")
    except pa.ArrowInvalid:
        return False
    return True


def quote_meta(s: str) -> str:
    """RE2::QuoteMeta: every ASCII character but letters, digits and '_'
    escaped with a backslash (NUL as \\x00).

    >>> quote_meta("a.b*c_d é")
    'a\\\\.b\\\\*c_d\\\\ é'
    """
    out = []
    for ch in s:  # over the pattern's characters, not rows
        if ch == "\0":
            out.append("\\x00")
        elif ord(ch) < 0x80 and not (ch.isalnum() or ch == "_"):
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def close_quote(pattern: str) -> str:
    """The pattern with a ``\\E`` appended when it ends inside a ``\\Q`` quote
    (RE2 quotes to the end of the pattern then), so that text put after it
    is not quoted too. Character classes are skipped: ``\\Q`` there is no quote.

    >>> close_quote(r"a\\Qb)"), close_quote(r"\\Qa\\E"), close_quote(r"[\\Q]")
    ('a\\\\Qb)\\\\E', '\\\\Qa\\\\E', '[\\\\Q]')
    """
    i, n = 0, len(pattern)
    while i < n:  # over the pattern's characters, not rows
        ch = pattern[i]
        if ch == "\\" and i + 1 < n and pattern[i + 1] == "Q":
            end = pattern.find("\\E", i + 2)
            if end < 0:
                return pattern + "\\E"
            i = end + 2
        elif ch == "\\":
            i += 2
        elif ch == "[":
            i = _class_end(pattern, i + 1)
        else:
            i += 1
    return pattern


def _class_end(p: str, i: int) -> int:
    """Position after the ']' closing a class whose body starts at i."""
    if i < len(p) and p[i] == "^":
        i += 1
    if i < len(p) and p[i] == "]":
        i += 1
    while i < len(p) and p[i] != "]":
        if p[i] == "\\":
            i += 2
        elif p.startswith("[:", i):
            end = p.find(":]", i + 2)
            i = end + 2 if end >= 0 else i + 1
        else:
            i += 1
    return i + 1


class Regex:
    """One pattern with its options, as RE2 texts (see the module doc):

    - ``search``: matches where the pattern matches anywhere;
    - ``full``: matches where it matches the whole string;
    - ``split(kind)``: the whole string, split at the first match:
      kind "head" captures (as group 1) the text before the first match,
      "through" the text up to its end, "match" the match itself, and
      "groups" keeps the pattern's own group numbers (its \\1..\\9).

    Each puts the options in front as flags; the pattern is validated first,
    so its errors read as DuckDB's.
    """

    __slots__ = ("pattern", "options", "core", "flags")

    def __init__(self, pattern: str, options: RegexOptions):
        if not options.literal:
            validate(pattern)
        self.pattern = pattern
        self.options = options
        self.core = quote_meta(pattern) if options.literal else close_quote(pattern)
        f = ("i" if options.case_insensitive else "") + ("s" if options.dot_nl else "")
        self.flags = f"(?{f})" if f else ""

    @property
    def search(self) -> str:
        return self.flags + self.core

    @property
    def full(self) -> str:
        return self.flags + r"\A(?:" + self.core + r")\z"

    def split(self, kind: str) -> str:
        any_ = "(?s:.)"
        c = f"(?:{self.core})"
        body = {
            "head": f"({any_}*?){c}{any_}*",
            "through": f"({any_}*?{c}){any_}*",
            "match": f"{any_}*?({self.core}){any_}*",
            "groups": f"{any_}*?{c}{any_}*",
        }[kind]
        return self.flags + r"\A" + body + r"\z"

    def groups_at_least(self, count: int) -> bool:
        return has_groups(self.search, count)


@dataclass(frozen=True, slots=True)
class Rewrite:
    """An RE2 rewrite string: literal text ('L') and group references
    ('G', n). ``valid``: every backslash is followed by a digit or a
    backslash; when it is not, ``parts`` stop where RE2's rewriting stops.
    ``max_group``: the highest \\n anywhere in the string (RE2 refuses to
    rewrite when the pattern has fewer groups)."""

    parts: tuple
    valid: bool
    max_group: int

    def as_re2(self) -> str:
        """The parts as a valid RE2 rewrite string (literal backslashes doubled)."""
        return "".join(v.replace("\\", "\\\\") if k == "L" else f"\\{v}" for k, v in self.parts)


def parse_rewrite(text: str) -> Rewrite:
    parts: list = []
    lit: list[str] = []
    valid, max_group, stop = True, 0, False
    i = 0
    while i < len(text):  # over the rewrite's characters, not rows
        ch = text[i]
        if ch != "\\":
            if not stop:
                lit.append(ch)
            i += 1
            continue
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if "0" <= nxt <= "9":
            max_group = max(max_group, int(nxt))
            if not stop:
                if lit:
                    parts.append(("L", "".join(lit)))
                    lit = []
                parts.append(("G", int(nxt)))
        elif nxt == "\\":
            if not stop:
                lit.append("\\")
        else:
            valid, stop = False, True
        i += 2
    if lit:
        parts.append(("L", "".join(lit)))
    return Rewrite(tuple(parts), valid, max_group)
