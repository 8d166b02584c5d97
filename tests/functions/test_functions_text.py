"""Regular expressions, per-row LIKE patterns and the string functions of
glint.functions.strings.{regex, like, text_search, text_build}, checked
row by row against DuckDB running the same SQL on the same values, on
random strings (ASCII, accents, combining marks, emoji, CJK, NULLs)."""

from __future__ import annotations

import random

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from glint.errors import ExecutionError
from glint.functions.strings import regex as R
from glint.functions.strings import text_build as B
from glint.functions.strings import text_search as Q
from glint.functions.strings.like import like_rows
from glint.kernels.strings import grapheme_table as G
from glint.kernels.strings.graphemes import reverse as reverse_pieces
from glint.kernels.strings.like_rows import match_pairs
from glint.kernels.strings.pieces import from_strings, to_pylist
from tests.functions.test_functions_strings import col, device, rows  # noqa: F401  (device: a fixture)

_DUCK = duckdb.connect()
ALPHABET = list("abcAB_%#\\.,x ") + ["é", "É", "ß", "日", "👍", "🏽", "\u0301", "\n"]


def random_strings(n: int, seed: int, alphabet=ALPHABET, nulls: float = 0.1) -> list:
    r = random.Random(seed)
    return [
        None if r.random() < nulls else "".join(r.choice(alphabet) for _ in range(r.randint(0, 6))) for _ in range(n)
    ]


def duck(expr: str, **cols) -> list:
    n = len(next(iter(cols.values())))
    table = pa.table(
        {
            **{
                k: pa.array(v, pa.string())
                if isinstance(v, list) and (not v or isinstance(next((x for x in v if x is not None), ""), str))
                else pa.array(v)
                for k, v in cols.items()
            },
            "row_id": pa.array(np.arange(n, dtype=np.int64)),
        }
    )
    _DUCK.register("t", table)
    try:
        return [r[0] for r in _DUCK.execute(f"SELECT {expr} FROM t ORDER BY row_id").fetchall()]
    finally:
        _DUCK.unregister("t")


# ------------------------------------------------------------------- LIKE
def test_like_rows_matches_duckdb(device):
    s = random_strings(600, 1, list("abé_%#x"))
    p = random_strings(600, 2, list("ab%_é#x"))
    p = [None if x is None else x.rstrip("#") for x in p]  # no lone escape at the end
    for esc in (None, "#"):
        tail = "" if esc is None else " ESCAPE '#'"
        got = rows(like_rows(col(s, device), col(p, device), esc))
        assert got == duck(f"s LIKE p{tail}", s=s, p=p)
        got = rows(like_rows(col(s, device), col(p, device), esc, case_insensitive=True))
        assert got == duck(f"s ILIKE p{tail}", s=s, p=p)


def test_like_pairs_lone_escape_reports_reached_rows():
    s = from_strings(["ab", "a", "abc", "xyz", ""])
    p = from_strings(["a#", "a#", "%#", "a%#", "#"])
    ok, err = match_pairs(s, p, ord("#"))
    assert ok.tolist() == [False] * 5
    assert err.tolist() == [True, False, True, False, False]


def test_like_rows_long_strings_chunked(device, monkeypatch):
    import glint.kernels.strings.like_rows as K

    monkeypatch.setattr(K, "_CANDIDATES", 64)  # many small chunks of candidate starts
    s = ["x" * 40 + "abc" + "y" * i for i in range(30)] + ["short", ""]
    p = ["%abc%", "x%c_%y", "%y%y%"] * 10 + ["s%o%t", "%"]
    assert rows(like_rows(col(s, device), col(p, device), None)) == duck("s LIKE p", s=s, p=p)


# ------------------------------------------------------- regular expressions
PATTERNS = [
    "a",
    "^a",
    "a$",
    "[a-c]+",
    "é.",
    "(a)(b)?",
    "\\.",
    "x*",
    "",
    "(?i)AB",
    "\\bx",
    "x\\B",
    "[^a]",
    "\\p{L}+",
    "👍.",
    "a|b|",
    "(?s)a.b",
    "[[:space:]]",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_regex_functions_match_duckdb(device, pattern):
    s = random_strings(300, hash(pattern) % 1000)
    c = col(s, device)
    lit = "'" + pattern.replace("'", "''") + "'"
    o = R.RegexOptions()
    assert rows(R.regexp_matches(c, pattern, o)) == duck(f"regexp_matches(s, {lit})", s=s)
    assert rows(R.regexp_matches(c, pattern, o, full=True)) == duck(f"regexp_full_match(s, {lit})", s=s)
    for rw in ("<\\0>", "[\\1]", "x\\\\y", "-"):
        rl = "'" + rw + "'"
        assert rows(R.regexp_replace(c, pattern, rw, o)) == duck(f"regexp_replace(s, {lit}, {rl})", s=s), rw
        g = R.parse_options("g", True)
        assert rows(R.regexp_replace(c, pattern, rw, g)) == duck(f"regexp_replace(s, {lit}, {rl}, 'g')", s=s), rw
    for group in (0, 1, 2):
        assert rows(R.regexp_extract(c, pattern, group, o)) == duck(f"regexp_extract(s, {lit}, {group})", s=s)


@pytest.mark.parametrize("options", ["i", "l", "s", "ns", "ig", "lg", "c"])
def test_regex_options_match_duckdb(device, options):
    s = random_strings(300, 7)
    c = col(s, device)
    g = "g" in options
    o = R.parse_options(options, allow_global=True)
    for pattern in ("A.", "a\\.", ".", "B|é"):
        lit = "'" + pattern + "'"
        if not g:
            assert rows(R.regexp_matches(c, pattern, o)) == duck(f"regexp_matches(s, {lit}, '{options}')", s=s)
        assert rows(R.regexp_replace(c, pattern, "_", o)) == duck(f"regexp_replace(s, {lit}, '_', '{options}')", s=s)


def test_regex_per_row_patterns_match_duckdb(device):
    s = random_strings(400, 3)
    r = random.Random(4)
    p = [None if r.random() < 0.1 else r.choice(PATTERNS) for _ in s]
    rw = [r.choice(["\\0\\0", "", "<\\1>", "z"]) for _ in s]
    c, pc_, rc = col(s, device), col(p, device), col(rw, device)
    o = R.RegexOptions()
    assert rows(R.regexp_matches(c, pc_, o)) == duck("regexp_matches(s, p)", s=s, p=p)
    assert rows(R.regexp_matches(c, pc_, o, full=True)) == duck("regexp_full_match(s, p)", s=s, p=p)
    assert rows(R.regexp_replace(c, pc_, rc, o)) == duck("regexp_replace(s, p, r)", s=s, p=p, r=rw)
    assert rows(R.regexp_replace(c, pc_, "#", R.parse_options("g", True))) == duck(
        "regexp_replace(s, p, '#', 'g')", s=s, p=p
    )
    assert rows(R.regexp_extract(c, pc_, 1, o)) == duck("regexp_extract(s, p, 1)", s=s, p=p)


def test_regex_errors_name_duckdbs_message():
    c = col(["abc"])
    with pytest.raises(ExecutionError, match=r"missing \): \("):
        R.regexp_matches(c, "(", R.RegexOptions())
    with pytest.raises(ExecutionError, match="missing"):
        R.regexp_matches(c, col(["("]), R.RegexOptions())
    # a bad pattern only used by NULL strings is never compiled (DuckDB skips those rows)
    assert rows(R.regexp_matches(col([None, "a"]), col(["(", "a"]), R.RegexOptions())) == [None, True]


# ------------------------------------------------------ search and building
NEEDLES = ["", "a", "é", "ab", "_", "👍🏽", "x x"]


def test_search_functions_per_row_match_duckdb(device):
    s = random_strings(500, 11)
    t = random_strings(500, 12, list("abé_👍"))
    c, n = col(s, device), col(t, device)
    assert rows(Q.starts_with(c, n)) == duck("starts_with(s, t)", s=s, t=t)
    assert rows(Q.ends_with(c, n)) == duck("ends_with(s, t)", s=s, t=t)
    assert rows(Q.contains(c, n)) == duck("contains(s, t)", s=s, t=t)
    assert rows(Q.strpos(c, n)) == duck("strpos(s, t)", s=s, t=t)
    assert rows(Q.replace(c, n, "<>")) == duck("replace(s, t, '<>')", s=s, t=t)
    for lit in NEEDLES:
        q = "'" + lit + "'"
        assert rows(Q.ends_with(c, lit)) == duck(f"ends_with(s, {q})", s=s), lit
        assert rows(Q.replace(c, "a", n)) == duck("replace(s, 'a', t)", s=s, t=t)


@pytest.mark.parametrize("delim", [",", "a", "ab", "", "é"])
def test_split_part_matches_duckdb(device, delim):
    s = random_strings(300, 21, list("a,bé") + [",", ",,"])
    c = col(s, device)
    for i in (-4, -2, -1, 0, 1, 2, 3, 7):
        assert rows(Q.split_part(c, delim, i)) == duck(f"split_part(s, '{delim}', {i})", s=s), i
    idx = [random.Random(i).randint(-4, 4) for i in range(len(s))]
    assert rows(Q.split_part(c, delim, col(idx, device, pa.int64()))) == duck(
        f"split_part(s, '{delim}', i)", s=s, i=idx
    )


def test_pad_left_right_repeat_match_duckdb(device):
    s = random_strings(300, 31)
    c = col(s, device)
    r = random.Random(5)
    n = [r.randint(-4, 9) for _ in s]
    nc = col(n, device, pa.int32())
    for fill in ("x", "é👍", "ab"):
        assert rows(B.pad(c, nc, fill, left=True)) == duck(f"lpad(s, n::INTEGER, '{fill}')", s=s, n=n)
        assert rows(B.pad(c, 6, fill, left=False)) == duck(f"rpad(s, 6, '{fill}')", s=s)
    fills = random_strings(300, 32, list("xé"), nulls=0.05)
    fills = [f if f != "" else "z" for f in fills]
    assert rows(B.pad(c, nc, col(fills, device), left=False)) == duck("rpad(s, n::INTEGER, f)", s=s, n=n, f=fills)
    nb = col(n, device, pa.int64())
    assert rows(B.left(c, nb)) == duck("left(s, n::BIGINT)", s=s, n=n)
    assert rows(B.right(c, nb)) == duck("right(s, n::BIGINT)", s=s, n=n)
    assert rows(B.repeat(c, nb)) == duck("repeat(s, n::BIGINT)", s=s, n=n)
    for k in (-3, 0, 2, 100):
        assert rows(B.left(c, k)) == duck(f"left(s, {k})", s=s)
        assert rows(B.right(c, k)) == duck(f"right(s, {k})", s=s)


def test_codes_lengths_md5_concat_ws_match_duckdb(device):
    s = random_strings(300, 41)
    c = col(s, device)
    assert rows(B.ascii(c)) == duck("ascii(s)", s=s)
    assert rows(B.unicode(c)) == duck("unicode(s)", s=s)
    assert rows(B.byte_length(c)) == duck("strlen(s)", s=s)
    assert rows(B.byte_length(c, bits=True)) == duck("bit_length(s)", s=s)
    assert rows(B.md5(c)) == duck("md5(s)", s=s)
    t = random_strings(300, 42)
    sep = random_strings(300, 43, [",", "--"], nulls=0.05)
    assert rows(B.concat_ws(col(sep, device), [c, col(t, device)])) == duck("concat_ws(sep, s, t)", s=s, t=t, sep=sep)
    points = [0, 65, 127, 128, 233, 2047, 2048, 0xFFFF, 0x10000, 0x1F44D, 0x10FFFF]
    assert rows(B.chr_(col(points, device, pa.int32()))) == [chr(p) for p in points]


def _grapheme_samples(n: int, seed: int) -> list[str]:
    """Strings of code points drawn from every grapheme property run."""
    r = random.Random(seed)
    runs = [(G.STARTS[i], G.STARTS[i + 1] if i + 1 < len(G.STARTS) else 0x110000) for i in range(len(G.STARTS))]
    special = [
        0x61,
        0xD,
        0xA,
        0x200D,
        0x1F1E6,
        0x1F1E9,
        0x1100,
        0x1161,
        0x11A8,
        0xAC00,
        0xAC01,
        0x915,
        0x94D,
        0x930,
        0x1F44D,
        0x1F3FD,
        0x301,
        0x2764,
        0xFE0F,
    ]

    def one():
        x = r.random()
        c = r.choice(special) if x < 0.3 else r.randrange(*r.choice(runs))
        return chr(0x41 if 0xD800 <= c <= 0xDFFF or c == 0 else c)

    return ["".join(one() for _ in range(r.randint(1, 8))) for _ in range(n)]


def test_reverse_keeps_grapheme_clusters_as_duckdb():
    s = _grapheme_samples(4000, 9)
    assert to_pylist(reverse_pieces(from_strings(s))) == duck("reverse(s)", s=s)


def test_reverse_column(device):
    s = random_strings(300, 51)
    assert rows(B.reverse(col(s, device))) == duck("reverse(s)", s=s)
