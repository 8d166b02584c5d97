"""DuckDB's strftime / strptime format strings, parsed once per call into
literals and specifiers (DuckDB's StrTimeFormat::ParseFormatSpecifier).

A format is a list of items: ``("lit", b"text")`` or ``("spec", code)``,
where the code is the specifier's letter with ``-`` for the unpadded forms
(``"d"``, ``"-d"``). ``%c``, ``%x``, ``%X`` and ``%T`` expand to their ISO
forms; ``%h`` is ``%b``; ``%%`` is a literal ``%``.

>>> parse_format("%Y-%m-%d %%%-H")
[('spec', 'Y'), ('lit', b'-'), ('spec', 'm'), ('lit', b'-'), ('spec', 'd'), ('lit', b' %'), ('spec', '-H')]
>>> parse_format("%q")
Traceback (most recent call last):
glint.errors.ExecutionError: Invalid Input Error: Failed to parse format specifier %q: Unrecognized format for strftime/strptime: %q
"""

from __future__ import annotations

from glint.errors import ExecutionError

# specifiers DuckDB recognises, by letter
SPECIFIERS = frozenset("aAwudbBmyYGHIpMSnfgzZjUWV")
UNPADDED = frozenset("dmyHIMSj")  # %-d ...
_EXPANSIONS = {"c": "%Y-%m-%d %H:%M:%S", "x": "%Y-%m-%d", "X": "%H:%M:%S", "T": "%H:%M:%S"}

MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
MONTH_ABBREVIATIONS = tuple(m[:3] for m in MONTH_NAMES)
DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
DAY_ABBREVIATIONS = tuple(d[:3] for d in DAY_NAMES)


def format_error(fmt: str, why: str) -> ExecutionError:
    return ExecutionError(f"Invalid Input Error: Failed to parse format specifier {fmt}: {why}")


def parse_format(fmt: str) -> list[tuple[str, object]]:
    """The items of a format string, or DuckDB's error for a bad one."""
    if not fmt:
        raise format_error(fmt, "Empty format string")
    items: list[tuple[str, object]] = []
    literal = bytearray()

    def flush():
        if literal:
            items.append(("lit", bytes(literal)))
            literal.clear()

    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch != "%":
            literal += ch.encode()
            i += 1
            continue
        if i + 1 == len(fmt):
            raise format_error(fmt, "Trailing format character %")
        code = fmt[i + 1]
        i += 2
        if code == "%":
            literal += b"%"
            continue
        if code == "-" and i < len(fmt):
            code = fmt[i]
            i += 1
            if code not in UNPADDED:
                raise format_error(fmt, f"Unrecognized format for strftime/strptime: %-{code}")
            flush()
            items.append(("spec", "-" + code))
            continue
        if code in _EXPANSIONS:
            for kind, value in parse_format(_EXPANSIONS[code]):
                if kind == "lit":
                    literal += value
                else:
                    flush()
                    items.append((kind, value))
            continue
        if code == "h":
            code = "b"
        if code not in SPECIFIERS:
            raise format_error(fmt, f"Unrecognized format for strftime/strptime: %{code}")
        flush()
        items.append(("spec", code))
    flush()
    return items
