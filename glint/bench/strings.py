"""Throughput of the string kernels on synthetic comment-like text (random
lowercase words, some holding 'special ... requests' as TPC-H Q13's
o_comment does): ``python -m glint.bench.strings --entries 150000000``.

Prints one line per operation: seconds (best of ``--runs``) and GB/s of
string bytes. On CUDA the Triton kernels run; ``GLINT_TRITON=0`` (the
triton_strings setting) times the torch code instead.
"""

from __future__ import annotations

import argparse
import time

import torch

from glint.kernels.backend import enable_triton
from glint.kernels.strings import equality, hashing, like, order, search
from glint.kernels.strings.counting import count_chars
from glint.kernels.strings.gather import gather
from glint.kernels.strings.pieces import Pieces, exclusive_cumsum
from glint.runtime.settings import Settings


def synthetic_comments(n: int, device, seed: int = 0, mean_len: int = 48) -> Pieces:
    """n strings of 10 .. 2 * mean_len - 10 bytes; about 1% hold 'special'
    followed later by 'requests'."""
    g = torch.Generator(device=device).manual_seed(seed)
    lengths = torch.randint(10, 2 * mean_len - 10, (n,), generator=g, device=device)
    offsets = exclusive_cumsum(lengths)
    total = int(offsets[-1])
    data = torch.randint(ord("a"), ord("z") + 1, (total,), generator=g, device=device, dtype=torch.uint8)
    data[torch.rand(total, generator=g, device=device) < 0.15] = ord(" ")
    planted = (torch.rand(n, generator=g, device=device) < 0.01).nonzero().squeeze(1)
    for word, at in ((b"special", 0), (b"requests", 8)):
        pos = offsets[planted] + at
        for i, byte in enumerate(word):
            data[pos + i] = byte
    return Pieces(data, offsets[:-1], lengths, contiguous=True)


def _time(fn, runs: int, device) -> float:
    best = float("inf")
    fn()
    for _ in range(runs):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    enable_triton(Settings.build().triton_strings)
    device = torch.device(args.device)
    p = synthetic_comments(args.entries, device)
    nbytes = int(p.lengths.sum())
    zero = torch.zeros(len(p), dtype=torch.int64, device=device)
    q13 = like.compile_like("%special%requests%")
    idx = torch.randperm(len(p), device=device)[: len(p) // 10]
    ops = {
        "hash64": lambda: hashing.hash_pieces(p),
        "find 'special'": lambda: search.find(p, b"special", zero),
        "LIKE '%special%requests%'": lambda: like.match(p, q13),
        "LIKE 'abc%'": lambda: like.match(p, like.compile_like("abc%")),
        "length (code points)": lambda: count_chars(p),
        "gather 10% of rows": lambda: gather(p.take(idx)),
        "dense ids (hash + verify)": lambda: equality.dense_ids([p]),
        "byte-order ranks": lambda: order.ranks(p),
    }
    print(
        f"{args.entries:,} strings, {nbytes / 1e9:.2f} GB on {device} "
        f"({torch.cuda.get_device_name(device) if device.type == 'cuda' else 'CPU'})"
    )
    hits = int(like.match(p, q13).sum())
    print(f"  rows matching '%special%requests%': {hits:,}")
    for name, fn in ops.items():
        s = _time(fn, args.runs, device)
        print(f"  {name:28s} {s * 1e3:9.2f} ms  {nbytes / s / 1e9:8.1f} GB/s")


if __name__ == "__main__":
    main()
