"""glint.kernels.strings: each kernel against Python's own string semantics
on random strings, and each Triton kernel against the torch code it
replaces: under the Triton interpreter on the CPU (TRITON_INTERPRET=1), and
on CUDA when a GPU is present."""

from __future__ import annotations

import random
import re

import pytest
import torch

from glint.kernels.strings import equality, hashing, like, order, search
from glint.kernels.strings.codepoints import char_to_byte
from glint.kernels.strings.counting import count_chars, count_non_ascii
from glint.kernels.strings.gather import gather
from glint.kernels.strings.pieces import Pieces, chunk_bounds, from_strings, to_pylist

try:
    import triton  # noqa: F401

    HAS_TRITON = True
except ImportError:
    HAS_TRITON = False

CUDA = torch.cuda.is_available()
gpu = [pytest.mark.gpu, pytest.mark.skipif(not CUDA, reason="needs CUDA")]

ALPHABETS = ["ab", "abc \n", "aé日\x00", "xyz👍🏽", "special requests"]


def random_strings(seed: int, n: int = 200, long: bool = True) -> list[str]:
    """Empty, short, long (past the 8-byte words and 7-byte levels), repeated,
    non-ASCII, NUL bytes, and strings with a pattern inside."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        alpha = rng.choice(ALPHABETS)
        size = rng.choice([0, 1, 2, 7, 8, 9, rng.randint(0, 40)] + ([rng.randint(100, 300)] if long else []))
        s = "".join(rng.choice(alpha) for _ in range(size))
        if rng.random() < 0.2:
            s = s[: len(s) // 2] + "special" + s[len(s) // 2 :] + rng.choice(["requests", "", "request"])
        out.append(s)
    out += rng.sample(out, min(len(out), 30))  # duplicates
    rng.shuffle(out)
    return out


def scattered(values: list[str], seed: int = 0) -> Pieces:
    """Pieces in a shuffled order over a buffer with junk between them, so no
    kernel can assume contiguous, ordered or aligned strings."""
    rng = random.Random(seed)
    order_ = list(range(len(values)))
    rng.shuffle(order_)
    buf, starts = bytearray(), [0] * len(values)
    for i in order_:
        buf += bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 3)))
        starts[i] = len(buf)
        buf += values[i].encode()
    data = torch.frombuffer(buf + b"\xff", dtype=torch.uint8)[: len(buf)].clone()
    lengths = torch.tensor([len(v.encode()) for v in values], dtype=torch.int64)
    return Pieces(data, torch.tensor(starts, dtype=torch.int64), lengths)


@pytest.fixture(params=[0, 1, 2])
def strings(request) -> list[str]:
    return random_strings(request.param)


# -------------------------------------------------------------- pieces, gather
def test_chunk_bounds_cover_every_piece():
    lengths = torch.tensor([5, 0, 100, 3, 3, 3, 0, 7])
    bounds = chunk_bounds(lengths, budget=8)
    assert bounds[0][0] == 0 and bounds[-1][1] == 8
    assert all(a < b for a, b in bounds) and all(x[1] == y[0] for x, y in zip(bounds, bounds[1:]))


def test_gather(strings, monkeypatch):
    p = scattered(strings)
    idx = torch.randint(0, len(strings), (300,), generator=torch.Generator().manual_seed(1))
    offsets, data = gather(p.take(idx))
    assert to_pylist(Pieces(data, offsets[:-1], offsets[1:] - offsets[:-1])) == [strings[i] for i in idx.tolist()]
    # the torch path in small chunks gives the same bytes
    monkeypatch.setattr("glint.kernels.strings.pieces.CHUNK_BYTES", 64)
    assert torch.equal(gather(p.take(idx))[1], data)


# --------------------------------------------------------------------- hashing
GOLDEN = {
    "": -824098762345677140,
    "a": -6252230058015607918,
    "special requests": -3380999741550166013,
    "héllo wörld, a string longer than sixteen bytes": 8252767266201925769,
}


def python_hash(s: str) -> int:
    """The definition in glint.kernels.strings.hashing, in plain Python."""
    mask = (1 << 64) - 1

    def fmix(x):
        x ^= x >> 33
        x = (x * hashing.F1) & mask
        x ^= x >> 33
        x = (x * hashing.F2) & mask
        return x ^ (x >> 33)

    b = s.encode()
    total = 0
    for j in range(0, len(b), 8):
        w = int.from_bytes(b[j : j + 8].ljust(8, b"\0"), "little")
        total = (total + fmix(w ^ (((j // 8 + 1) * hashing.K1) & mask))) & mask
    h = fmix((total + len(b) * hashing.K2 + hashing.K3) & mask)
    return h - (1 << 64) if h >= 1 << 63 else h


def test_hash_values_are_fixed():
    """The hash is a format: partitions written by one process are read by
    another. These values must never change."""
    got = hashing.hash_pieces(from_strings(list(GOLDEN))).tolist()
    assert got == list(GOLDEN.values()) == [python_hash(s) for s in GOLDEN]


def test_hash_depends_on_bytes_only(strings):
    a = hashing.hash_pieces(from_strings(strings))
    b = hashing.hash_pieces(scattered(strings, seed=5))
    assert torch.equal(a, b) and a.tolist() == [python_hash(s) for s in strings]
    by_value = {}
    for s, h in zip(strings, a.tolist()):
        assert by_value.setdefault(s, h) == h
    assert len(set(by_value.values())) == len(by_value)  # no collisions among these


def test_hash_separates_near_misses():
    words = [
        "",
        "\x00",
        "\x00\x00",
        "a",
        "a\x00",
        "ab",
        "ba",
        "abcdefgh",
        "abcdefgh\x00",
        "abcdefghabcdefgh",
        "abcdefgi",
        "bbcdefgh",
        "habcdefg",
    ]
    h = hashing.hash_pieces(from_strings(words)).tolist()
    assert len(set(h)) == len(words)


# -------------------------------------------------------------------- counting
def test_counts(strings):
    p = scattered(strings)
    assert count_chars(p).tolist() == [len(s) for s in strings]
    assert count_non_ascii(p).tolist() == [sum(b >= 0x80 for b in s.encode()) for s in strings]


def test_char_to_byte(strings):
    rng = random.Random(4)
    chars = [rng.randint(-2, len(s) + 2) for s in strings]
    got = char_to_byte(scattered(strings), torch.tensor(chars)).tolist()
    assert got == [len(s[: max(c, 0)].encode()) for s, c in zip(strings, chars)]


# ---------------------------------------------------------------------- search
@pytest.mark.parametrize("lit", ["a", "é", "special", "requests", "ab", "\x00", "日\x00", "zzz", "aaaaaaaaaaaaa"])
def test_find_and_match_at(strings, lit):
    p = scattered(strings)
    rng = random.Random(len(lit))
    starts = [rng.choice([-1, 0, 0, 1, 3]) for _ in strings]
    b = lit.encode()
    raw = [s.encode() for s in strings]
    want = [-1 if st < 0 or st > len(r) else r.find(b, st) for r, st in zip(raw, starts)]
    assert search.find(p, b, torch.tensor(starts)).tolist() == want
    at = [max(w, 0) for w in want]
    assert search.match_at(p, b, torch.tensor(at)).tolist() == [r[a : a + len(b)] == b for r, a in zip(raw, at)]


def test_find_run_with_underscores(strings):
    p = scattered(strings)
    run = [("L", b"a"), ("_", 2), ("L", b"b")]
    rx = re.compile("(?s)a..b")
    start, end = search.find_run(p, run, torch.zeros(len(strings), dtype=torch.int64))
    for s, st, en in zip(strings, start.tolist(), end.tolist()):
        m = rx.search(s)
        if m is None:
            assert st == en == -1
        else:
            assert (st, en) == (len(s[: m.start()].encode()), len(s[: m.end()].encode()))


# ------------------------------------------------------------------------ LIKE
def like_regex(pattern: str, escape: str | None = None) -> re.Pattern:
    body = "".join(re.escape(t) if k == "L" else (".*" if k == "%" else ".") for k, t in like.tokens(pattern, escape))
    return re.compile("(?s)" + body)


LIKE_PATTERNS = [
    "%special%requests%",
    "special%",
    "%requests",
    "%a%b%c%",
    "a_b%",
    "%_é_%",
    "_",
    "%",
    "",
    "%a_%_b%",
    "%\x00%",
    "日%",
    "%👍🏽",
    "a%a",
    "%ab%ba%",
    "__%__",
    "%special_requests%",
]


@pytest.mark.parametrize("pattern", LIKE_PATTERNS)
def test_like_matches_python_regex(strings, pattern):
    rx = like_regex(pattern)
    got = like.match(scattered(strings), like.compile_like(pattern)).tolist()
    assert got == [rx.fullmatch(s) is not None for s in strings]


def test_like_random_patterns():
    rng = random.Random(9)
    for _ in range(300):
        values = random_strings(rng.randint(0, 10**6), n=20, long=False)
        alpha = rng.choice(ALPHABETS)
        pattern = "".join(rng.choice(alpha + "%%__") for _ in range(rng.randint(0, 8)))
        got = like.match(from_strings(values), like.compile_like(pattern)).tolist()
        assert got == [like_regex(pattern).fullmatch(v) is not None for v in values], pattern


def test_like_escape():
    values = ["a%b", "axb", "a_b", "a#b"]
    got = like.match(from_strings(values), like.compile_like("a#%b", "#")).tolist()
    assert got == [True, False, False, False]
    with pytest.raises(like.PatternError):
        like.compile_like("ab#", "#")


# ----------------------------------------------------------------------- order
def test_ranks_order_bytes(strings):
    r, n = order.ranks(scattered(strings))
    distinct = sorted({s.encode() for s in strings})
    assert n == len(distinct)
    assert r.tolist() == [distinct.index(s.encode()) for s in strings]


def test_ranks_with_long_shared_prefixes():
    base = "x" * 50
    words = [base + s for s in ["", "a", "b", "a\x00", "ab"]] * 3 + [base[:-1], base + "a" * 40, base + "a" * 41]
    r, _ = order.ranks(from_strings(words))
    distinct = sorted({w.encode() for w in words})
    assert r.tolist() == [distinct.index(w.encode()) for w in words]


@pytest.mark.parametrize("lit", ["", "a", "special", "aé", "abcdefg", "abcdefgh", "zzzzzzzzzzzzzzzzzz"])
def test_compare_literal(strings, lit):
    b = lit.encode()
    want = [(s.encode() > b) - (s.encode() < b) for s in strings]
    assert order.compare_literal(scattered(strings), lit).tolist() == want


def test_is_one_of_short_literals(strings):
    """Membership in short literals by each piece's first word and length:
    strings with NUL bytes (a word equal to a shorter literal's), prefixes of
    8 bytes of longer strings, the empty string, multi-byte characters."""
    words = strings + ["A", "A\x00", "A\x00\x00", "abcdefgh", "abcdefghi", "", "aé", "MAIL"]
    lits = ["A", "abcdefgh", "", "aé", "\x00", "MAIL", "zz"]
    got = search.is_one_of(scattered(words), [w.encode() for w in lits]).tolist()
    assert got == [w in lits for w in words]
    assert any(got) and not all(got)
    assert search.is_one_of(scattered(words), []).tolist() == [False] * len(words)


# -------------------------------------------------------------------- equality
def test_dense_ids_across_sources(strings):
    half = len(strings) // 2
    a, b = scattered(strings[:half], 1), from_strings(strings[half:])
    (ia, ib), n = equality.dense_ids([a, b])
    ids = ia.tolist() + ib.tolist()
    assert n == len(set(strings))
    seen = {}
    for s, i in zip(strings, ids):
        assert seen.setdefault(s, i) == i
    assert len(set(seen.values())) == len(seen) and max(ids) < n


def test_dense_ids_survive_hash_collisions(strings, monkeypatch):
    """A hash is never trusted alone: with every string hashing alike, the
    verification finds the collision and the exact sort decides."""
    monkeypatch.setattr(equality, "hash_pieces", lambda p: torch.zeros(len(p), dtype=torch.int64, device=p.device))
    (ids,), n = equality.dense_ids([scattered(strings)])
    distinct = sorted({s.encode() for s in strings})
    assert n == len(distinct) and ids.tolist() == [distinct.index(s.encode()) for s in strings]


def test_pair_equal(strings):
    rng = random.Random(3)
    other = [s if rng.random() < 0.5 else (s[:-1] + "x" if s else "x") for s in strings]
    got = equality.pair_equal(scattered(strings), from_strings(other)).tolist()
    assert got == [a == b for a, b in zip(strings, other)]


# ---------------------------------------------------------- Triton, interpreted
def _triton_version() -> tuple[int, int]:
    import triton

    return tuple(int(x) for x in triton.__version__.split(".")[:2])


@pytest.mark.skipif(not HAS_TRITON, reason="needs Triton")
@pytest.mark.skipif(
    HAS_TRITON and _triton_version() < (3, 7),
    reason="Triton 3.6's interpreter gives a reduction such as tl.max a 1-element array, not a "
    "scalar, so a loop bounded by it fails (compiled, the kernels are tested on CUDA)",
)
def test_triton_kernels_interpreted(cached_tpch):
    """Each Triton kernel against its torch code under TRITON_INTERPRET=1, on
    the CPU. Triton reads the variable when triton.language is first
    imported (its own helpers such as tl.max are kernels too), so the checks
    run in a fresh process: tests/kernels/triton_interpreted.py (which also
    reads TPC-H's lineitem at SF 0.01, generated here first)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    cached_tpch(0.01)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--no-header",
            str(here / "triton_interpreted.py"),
        ],
        env=env,
        capture_output=True,
        text=True,
        cwd=here.parents[1],
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert " passed" in r.stdout


# ------------------------------------------------------------------ on CUDA
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="needs CUDA")
def test_cuda_kernels_match_cpu(seed):
    strings = random_strings(seed, n=3000)
    cpu = scattered(strings, seed)
    dev = Pieces(cpu.data.cuda(), cpu.starts.cuda(), cpu.lengths.cuda())
    idx = torch.randint(0, len(strings), (5000,), generator=torch.Generator().manual_seed(seed))
    assert torch.equal(gather(dev.take(idx.cuda()))[1].cpu(), gather(cpu.take(idx))[1])
    assert torch.equal(hashing.hash_pieces(dev).cpu(), hashing.hash_pieces(cpu))
    assert torch.equal(count_chars(dev).cpu(), count_chars(cpu))
    assert torch.equal(count_non_ascii(dev).cpu(), count_non_ascii(cpu))
    dense = from_strings(strings)
    dense_dev = Pieces(dense.data.cuda(), dense.starts.cuda(), dense.lengths.cuda(), contiguous=True)
    for lit in [b"special", b"requests", b"a", "é".encode()]:
        pos = torch.randint(-1, 3, (len(strings),), generator=torch.Generator().manual_seed(7))
        assert torch.equal(search.find(dev, lit, pos.cuda()).cpu(), search.find(cpu, lit, pos))
        assert torch.equal(search.find(dense_dev, lit, pos.cuda()).cpu(), search.find(dense, lit, pos))
    other = from_strings([s if i % 3 else s[::-1] for i, s in enumerate(strings)])
    other_dev = Pieces(other.data.cuda(), other.starts.cuda(), other.lengths.cuda())
    assert torch.equal(equality.pair_equal(dev, other_dev).cpu(), equality.pair_equal(cpu, other))
    assert torch.equal(order.ranks(dev)[0].cpu(), order.ranks(cpu)[0])
    for pattern in LIKE_PATTERNS:
        pat = like.compile_like(pattern)
        assert torch.equal(like.match(dev, pat).cpu(), like.match(cpu, pat)), pattern
    (ids,), n = equality.dense_ids([dev])
    (ref,), m = equality.dense_ids([cpu])
    assert n == m and torch.equal(ids.cpu() == ids.cpu()[0], ref == ref[0])


def test_word_loads_in_small_chunks_agree(strings, monkeypatch):
    """Per-string byte loads go in bounded chunks; chunk edges change nothing."""
    p = scattered(strings)
    want = (
        order.ranks(p)[0],
        order.compare_literal(p, "special"),
        search.match_at(p, b"ab", torch.zeros(len(p), dtype=torch.int64)),
    )
    from glint.kernels.strings import pieces

    monkeypatch.setattr(pieces, "WORD_ROWS", 7)
    monkeypatch.setattr(order, "WORD_ROWS", 7)
    got = (
        order.ranks(p)[0],
        order.compare_literal(p, "special"),
        search.match_at(p, b"ab", torch.zeros(len(p), dtype=torch.int64)),
    )
    assert all(torch.equal(a, b) for a, b in zip(want, got))
