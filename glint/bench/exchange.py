"""``glint bench exchange``: glint's shuffle and broadcast operators against
the raw collectives of the same sizes, on N ranks.

For each message size S (bytes per rank) every rank builds a batch of
realistic columns, ``S`` bytes in all (BIGINT key, BIGINT value,
DECIMAL(15,2) price, VARCHAR comment of 8 to 24 distinct bytes per row: the
column buffers, strings in Arrow layout), and the ranks time, each after a
barrier and an untimed warm-up, the median of ``--runs``:

- ``glint shuffle``: :class:`~glint.distributed.shuffle.ShuffleExec` on the key, as
  in a query: hashing, grouping rows by destination, the size exchange and
  one uneven all-to-all per column buffer, the received batch assembled;
- ``raw all-to-all``: one ``all_to_all_single`` of S bytes (uint8, even
  splits) on the same process group (``ProcessGroup.alltoall_base``, the call
  ``torch.distributed.all_to_all_single`` makes);
- ``glint broadcast``: :class:`~glint.distributed.broadcast.BroadcastExec` of rank
  0's batch to every rank (``source="root"``);
- ``raw broadcast``: one ``broadcast`` of S bytes from rank 0.

A run's time is the slowest rank's (the ranks start together after a
barrier; CUDA work is synchronised before the clock stops). GB/s = S / time /
1e9: for the all-to-alls the bytes each rank sends (its whole batch, the
1/N it keeps included), for the broadcasts the bytes rank 0 broadcasts.
``ratio`` = glint GB/s / raw GB/s.

Every rank checks what the glint operators delivered: after the shuffle its
rows all hash to it and their count and sums (keys, values, prices, string
lengths and bytes) equal what the other ranks computed they sent it; after
the broadcast they equal rank 0's. The report carries each rank's received
rows and key sum, so a test can recompute them from the generator.

Sizes are binary (1MB = 2**20 bytes), GB/s decimal.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import statistics
import time
from pathlib import Path

import torch

import glint
from glint.bench.machine import device_name, machine_info, slug
from glint.cli.common import EXIT_ERROR, EXIT_OK, connect_options
from glint.cli.common import console as _console
from glint.columnar import types as T
from glint.columnar.column import Batch, Column, Dictionary
from glint.distributed.broadcast import BroadcastExec
from glint.distributed.shuffle import ShuffleExec
from glint.errors import GlintError, GlintIOError
from glint.exec.hashing import hash_columns, partition_of
from glint.plan.expr import ColRef, Field
from glint.runtime.memory import parse_size
from glint.runtime.spill import batch_to

DEFAULT_SIZES = "1MB,4MB,16MB,64MB,256MB,1GB"
KEY = Field(1, "key", T.BIGINT)
VALUE = Field(2, "value", T.BIGINT)
PRICE = Field(3, "price", T.DECIMAL(15, 2))
COMMENT = Field(4, "comment", T.VARCHAR)
MIN_LEN, LEN_SPREAD = 8, 17  # string lengths 8..24 bytes, 16 on average
ROW_BYTES = 8 + 8 + 8 + 4 + 4 + (MIN_LEN + (LEN_SPREAD - 1) / 2)  # codes, int32 offsets, bytes
CHECKS = ("rows", "key_sum", "value_sum", "price_sum", "string_bytes", "byte_sum")
TARGET = "glint.bench.exchange:measure"


# ------------------------------------------------------------------ data
def parse_sizes(text: str) -> list[int]:
    """``--sizes``: bytes per rank, binary units.

    >>> parse_sizes("64KB,1MB")
    [65536, 1048576]
    """
    sizes = [parse_size(s) for s in text.split(",") if s.strip()]
    if not sizes:
        raise GlintError("--sizes needs at least one size, e.g. 1MB,16MB")
    return sizes


def size_label(n: int) -> str:
    """A size as ``--sizes`` writes it.

    >>> size_label(65536), size_label(3 << 20), size_label(1 << 30), size_label(1000)
    ('64KB', '3MB', '1GB', '1000B')
    """
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return f"{n}B"


def make_batch(rank: int, size: int, seed: int = 0, device="cpu") -> Batch:
    """Rank ``rank``'s batch of about ``size`` bytes (the same on any device
    and in any process, so its rows can be recomputed).

    >>> b = make_batch(0, 1 << 16)
    >>> b.num_rows, abs(batch_bytes(b) - (1 << 16)) < 64
    (1365, True)
    """
    n = max(1, int(size // ROW_BYTES))
    g = torch.Generator().manual_seed(seed * 1_000_003 + rank)
    key = torch.randint(0, 1 << 31, (n,), generator=g, dtype=torch.int64)
    value = torch.randint(-(1 << 31), 1 << 31, (n,), generator=g, dtype=torch.int64)
    price = torch.randint(0, 10_000_000, (n,), generator=g, dtype=torch.int64)  # cents, < 100,000.00
    lengths = MIN_LEN + (torch.arange(n, dtype=torch.int64) * 7) % LEN_SPREAD
    offsets = torch.zeros(n + 1, dtype=torch.int64)
    torch.cumsum(lengths, 0, out=offsets[1:])
    chars = torch.randint(ord("a"), ord("z") + 1, (int(offsets[-1]),), generator=g, dtype=torch.uint8)
    cols = {
        KEY.id: Column(KEY.type, key),
        VALUE.id: Column(VALUE.type, value),
        PRICE.id: Column(PRICE.type, price),
        COMMENT.id: Column(COMMENT.type, torch.arange(n, dtype=torch.int32), None, Dictionary(offsets, chars)),
    }
    return batch_to(Batch(cols, n), torch.device(device))


def batch_bytes(batch: Batch) -> int:
    """Bytes of the batch's column buffers (strings: codes, offsets, bytes)."""
    return sum(c.nbytes() for c in batch.columns.values())


def destinations(batch: Batch, ranks: int) -> torch.Tensor:
    """Each row's rank under the shuffle on the key (the hash queries use)."""
    return partition_of(hash_columns([batch[KEY.id]]), ranks)


def checksums(batches: list[Batch]) -> torch.Tensor:
    """int64 [rows, key sum, value sum, price sum, string bytes, sum of the
    string bytes] of the rows of ``batches`` (on their device)."""
    device = batches[0].device if batches else torch.device("cpu")
    out = torch.zeros(len(CHECKS), dtype=torch.int64, device=device)
    for b in batches:
        if not b.num_rows:
            continue
        s = b[COMMENT.id]
        strings = s.dictionary.take(s.data)
        out += torch.stack(
            [
                torch.tensor(b.num_rows, device=device),
                b[KEY.id].data.sum(),
                b[VALUE.id].data.sum(),
                b[PRICE.id].data.sum(),
                torch.tensor(strings.data.shape[0], device=device),
                strings.data.sum(dtype=torch.int64),
            ]
        )
    return out


def expected_by_destination(batch: Batch, ranks: int) -> torch.Tensor:
    """[ranks, len(CHECKS)]: the checksums of the rows this batch sends to each rank."""
    dest = destinations(batch, ranks)
    return torch.stack([checksums([batch.filter(dest == r, int((dest == r).sum()))]) for r in range(ranks)])


# ------------------------------------------------------------------ on every rank
def measure(rank, sizes: list[int], runs: int, seed: int = 0) -> dict:
    """One rank's part (run through DistConnection.call): for each size, the
    slowest rank's seconds of every run of the four exchanges, and what this
    rank's glint exchanges delivered."""
    comm, device = rank.comm, rank.comm.device
    ctx = rank.engine.execution_context(rank.catalog)
    ctx.dist = comm
    me, n = comm.rank, comm.size
    shuffle = ShuffleExec(None, (ColRef(KEY),))
    broadcast = BroadcastExec(None, source="root")
    out = []
    for size in sizes:
        batch = make_batch(me, size, seed, device)
        nbytes = batch_bytes(batch)
        flat = max(n, nbytes - nbytes % n)  # even splits for the raw all-to-all
        send = torch.randint(0, 256, (flat,), dtype=torch.uint8, device=device)
        recv = torch.empty_like(send)
        split = [flat // n] * n

        def glint_shuffle():
            return list(shuffle.stream(ctx, iter([batch])))

        def glint_broadcast():
            return list(broadcast.stream(ctx, iter([batch])))

        def raw_alltoall():
            comm.alltoall(recv, send, split, split, "raw all-to-all")

        def raw_broadcast():
            comm.broadcast(send, 0, "raw broadcast")

        times = {}
        got = {}
        for name, fn in (
            ("glint_shuffle", glint_shuffle),
            ("raw_alltoall", raw_alltoall),
            ("glint_broadcast", glint_broadcast),
            ("raw_broadcast", raw_broadcast),
        ):
            got[name] = _timed(comm, fn)[0]  # warm-up, and what is checked
            times[name] = [_timed(comm, fn)[1] for _ in range(runs)]
        out.append(
            {
                "size": size,
                "bytes": nbytes,
                "raw_bytes": flat,
                "times": times,
                "check": _check(comm, batch, got["glint_shuffle"], got["glint_broadcast"]),
            }
        )
        batch = send = recv = got = None  # this size's buffers freed before the next
    return {"rank": me, "device": str(device), "sizes": out}


def _barrier(comm) -> None:
    t = torch.zeros(1, dtype=torch.float64, device=comm.device)
    comm.all_reduce(t, "sum", "barrier")
    _sync(comm.device)


def _sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _timed(comm, fn):
    """(fn's value, the slowest rank's seconds), all ranks starting together."""
    _barrier(comm)
    t0 = time.perf_counter()
    value = fn()
    _sync(comm.device)
    t = torch.tensor([time.perf_counter() - t0], dtype=torch.float64, device=comm.device)
    comm.all_reduce(t, "max", "slowest rank")
    return value, float(t.item())


def _check(comm, batch: Batch, shuffled: list[Batch], broadcast: list[Batch]) -> dict:
    """This rank's verdict on what the glint shuffle and broadcast delivered."""
    me, n = comm.rank, comm.size
    # what every rank sends each rank, summed over senders: row r is what rank r must receive
    expected = expected_by_destination(batch, n)
    comm.all_reduce(expected, "sum", "shuffle checksums")
    received = checksums(shuffled)
    misplaced = sum(int((destinations(b, n) != me).sum()) for b in shuffled if b.num_rows)
    root = checksums([batch]) if me == 0 else torch.zeros(len(CHECKS), dtype=torch.int64, device=comm.device)
    comm.all_reduce(root, "sum", "broadcast checksums")
    got_b = checksums(broadcast)
    return {
        "shuffle_ok": bool(torch.equal(received, expected[me])) and misplaced == 0,
        "shuffle_received": dict(zip(CHECKS, received.tolist())),
        "shuffle_expected": dict(zip(CHECKS, expected[me].tolist())),
        "shuffle_misplaced_rows": misplaced,
        "broadcast_ok": bool(torch.equal(got_b, root)),
        "broadcast_received": dict(zip(CHECKS, got_b.tolist())),
    }


# ------------------------------------------------------------------ report
OPS = (("shuffle", "glint_shuffle", "raw_alltoall"), ("broadcast", "glint_broadcast", "raw_broadcast"))


def build_report(per_rank: list[dict], ranks: int, runs: int, seed: int, device_label: str, machine: dict) -> dict:
    """The report of a run from every rank's ``measure`` result.

    >>> r = {"rank": 0, "device": "cpu", "sizes": [{"size": 1024, "bytes": 1000, "raw_bytes": 1000, "times": {
    ...     "glint_shuffle": [2e-6, 4e-6, 3e-6], "raw_alltoall": [1e-6] * 3, "glint_broadcast": [1e-6] * 3,
    ...     "raw_broadcast": [1e-6] * 3}, "check": {"shuffle_ok": True, "broadcast_ok": True,
    ...     "shuffle_received": {"rows": 5, "key_sum": 7}, "broadcast_received": {"rows": 9, "key_sum": 8}}}]}
    >>> s = build_report([r], 1, 3, 0, "cpu", {})["sizes"][0]
    >>> s["glint_shuffle_s"], round(s["glint_shuffle_gbps"], 3), round(s["shuffle_ratio"], 3), s["correct"]
    (3e-06, 0.333, 0.333, True)
    """
    sizes = []
    for i, first in enumerate(per_rank[0]["sizes"]):
        rec = {
            "size": first["size"],
            "label": size_label(first["size"]),
            "bytes_per_rank": first["bytes"],
            "raw_bytes_per_rank": first["raw_bytes"],
        }
        for op, glint_key, raw_key in OPS:
            for key in (glint_key, raw_key):
                ts = first["times"][key]  # every rank holds the same slowest-rank times
                rec[f"{key}_s"] = statistics.median(ts)
                rec[f"{key}_runs_s"] = ts
                nbytes = rec["bytes_per_rank"] if key == glint_key else rec["raw_bytes_per_rank"]
                rec[f"{key}_gbps"] = nbytes / rec[f"{key}_s"] / 1e9 if rec[f"{key}_s"] > 0 else None
            g, r = rec[f"{glint_key}_gbps"], rec[f"{raw_key}_gbps"]
            rec[f"{op}_ratio"] = g / r if g and r else None
        checks = [p["sizes"][i]["check"] for p in per_rank]
        rec["shuffle_ok"] = all(c["shuffle_ok"] for c in checks)
        rec["broadcast_ok"] = all(c["broadcast_ok"] for c in checks)
        rec["correct"] = rec["shuffle_ok"] and rec["broadcast_ok"]
        rec["per_rank"] = [{"rank": p["rank"], **c} for p, c in zip(per_rank, checks)]
        sizes.append(rec)
    return {
        "benchmark": "exchange",
        "timestamp": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "ranks": ranks,
        "device": device_label,
        "rank_devices": [p["device"] for p in per_rank],
        "runs": runs,
        "warmup": 1,
        "seed": seed,
        "raw": "ProcessGroup.alltoall_base (even splits) and ProcessGroup.broadcast of uint8 tensors on glint's "
        "process group: the calls torch.distributed.all_to_all_single and broadcast make",
        "columns": "key BIGINT, value BIGINT, price DECIMAL(15,2), comment VARCHAR (8-24 bytes, distinct per row)",
        "gbps_definition": "bytes per rank / seconds of the slowest rank / 1e9; all-to-all: the bytes each rank "
        "sends (its whole batch, the share it keeps included); broadcast: the bytes rank 0 "
        "broadcasts; ratio = glint GB/s / raw GB/s",
        "sizes": sizes,
        "all_correct": all(s["correct"] for s in sizes),
        "machine": machine,
    }


def print_table(out, report: dict) -> None:
    from rich.table import Table

    t = Table(
        title=f"glint bench exchange: {report['ranks']} ranks x {report['device']} "
        f"(median of {report['runs']} runs, GB/s per rank)"
    )
    for col in (
        "size",
        "glint shuffle s",
        "GB/s",
        "raw all-to-all s",
        "GB/s",
        "ratio",
        "glint broadcast s",
        "GB/s",
        "raw broadcast s",
        "GB/s",
        "ratio",
        "checked",
    ):
        t.add_column(col, justify="left" if col in ("size", "checked") else "right")

    def f(x, fmt):
        return "-" if x is None else format(x, fmt)

    for s in report["sizes"]:
        t.add_row(
            s["label"],
            f(s["glint_shuffle_s"], ".5f"),
            f(s["glint_shuffle_gbps"], ".2f"),
            f(s["raw_alltoall_s"], ".5f"),
            f(s["raw_alltoall_gbps"], ".2f"),
            f(s["shuffle_ratio"], ".0%"),
            f(s["glint_broadcast_s"], ".5f"),
            f(s["glint_broadcast_gbps"], ".2f"),
            f(s["raw_broadcast_s"], ".5f"),
            f(s["raw_broadcast_gbps"], ".2f"),
            f(s["broadcast_ratio"], ".0%"),
            "ok" if s["correct"] else "[bold red]WRONG[/]",
        )
    out.print(t)


def markdown(report: dict) -> str:
    lines = [
        f"# glint bench exchange: {report['ranks']} ranks, {report['device']}",
        "",
        f"- {report['timestamp']}; median of {report['runs']} runs after {report['warmup']} warm-up run",
        f"- columns per row: {report['columns']}",
        f"- GB/s: {report['gbps_definition']}",
        f"- every rank checked what glint's shuffle and broadcast delivered: "
        f"{'all correct' if report['all_correct'] else 'WRONG rows delivered'}",
        "",
        "| size | glint shuffle s | GB/s | raw all-to-all s | GB/s | ratio | glint broadcast s | GB/s "
        "| raw broadcast s | GB/s | ratio | checked |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]

    def f(x, fmt):
        return "-" if x is None else format(x, fmt)

    for s in report["sizes"]:
        lines.append(
            f"| {s['label']} | {f(s['glint_shuffle_s'], '.5f')} | {f(s['glint_shuffle_gbps'], '.2f')} "
            f"| {f(s['raw_alltoall_s'], '.5f')} | {f(s['raw_alltoall_gbps'], '.2f')} "
            f"| {f(s['shuffle_ratio'], '.0%')} | {f(s['glint_broadcast_s'], '.5f')} "
            f"| {f(s['glint_broadcast_gbps'], '.2f')} | {f(s['raw_broadcast_s'], '.5f')} "
            f"| {f(s['raw_broadcast_gbps'], '.2f')} | {f(s['broadcast_ratio'], '.0%')} "
            f"| {'ok' if s['correct'] else 'WRONG'} |"
        )
    m = report.get("machine") or {}
    lines += [
        "",
        f"Machine: {m.get('cpu_model')} ({m.get('cpu_count')} cores), GPU {m.get('gpu_name')} "
        f"x{m.get('gpu_count')}, torch {m.get('torch_version')}, glint {m.get('glint_version')} "
        f"({m.get('glint_commit')})",
        "",
    ]
    return "\n".join(lines)


def plot(report: dict, path: Path) -> Path:
    """GB/s per rank against the size (log x) of the four exchanges."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    xs = [s["bytes_per_rank"] for s in report["sizes"]]
    for key, name, style in (
        ("glint_shuffle", "glint shuffle", "-o"),
        ("raw_alltoall", "raw all-to-all", "--o"),
        ("glint_broadcast", "glint broadcast", "-s"),
        ("raw_broadcast", "raw broadcast", "--s"),
    ):
        ax.plot(xs, [s[f"{key}_gbps"] or float("nan") for s in report["sizes"]], style, label=name)
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [s["label"] for s in report["sizes"]])
    ax.set_xlabel("bytes per rank")
    ax.set_ylabel("GB/s per rank")
    ax.set_title(f"exchange throughput, {report['ranks']} ranks, {report['device']}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.savefig(path, dpi=120)
    return path


def write_outputs(report: dict, out_dir: Path, err) -> dict[str, Path]:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise GlintIOError(f"cannot create the output directory {str(out_dir)!r}: {e.strerror or e}") from None
    paths = {"json": out_dir / "report.json", "md": out_dir / "report.md"}
    paths["json"].write_text(json.dumps(report, indent=2) + "\n")
    paths["md"].write_text(markdown(report))
    try:
        paths["png"] = plot(report, out_dir / "report.png")
    except ImportError:
        err.print("matplotlib is not installed: no chart (pip install matplotlib)", markup=False, highlight=False)
    return paths


# ------------------------------------------------------------------ command line
def cmd_exchange(args) -> int:
    """``glint bench exchange --ranks N [--device cuda|cpu] [--sizes ...] [--runs K] [--out DIR]``."""
    out, err = _console(), _console(stderr=True)
    if args.ranks is None:
        raise GlintError("glint bench exchange needs --ranks N (N >= 2), or --ranks env under torchrun")
    if args.runs < 1:
        raise GlintError("--runs must be at least 1")
    sizes = parse_sizes(args.sizes or DEFAULT_SIZES)
    opts = connect_options(args)
    con = glint.connect(device=args.device, **opts)
    try:
        if con.ranks < 2:
            raise GlintError("glint bench exchange needs at least 2 ranks")
        err.print(
            f"{con.ranks} ranks on {con.device.type}: sizes {', '.join(map(size_label, sizes))}, {args.runs} runs each",
            markup=False,
            highlight=False,
        )
        per_rank = con.call(TARGET, sizes=sizes, runs=args.runs, seed=args.seed)
        label = device_name(con.device)
        report = build_report(per_rank, con.ranks, args.runs, args.seed, label, machine_info(con.device))
    finally:
        con.close()
    print_table(out, report)
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = (
        Path(os.path.expanduser(args.out))
        if args.out
        else Path("bench")
        / "results"
        / f"exchange-{slug(report['rank_devices'][0].split(':')[0])}-{report['ranks']}r-{stamp}"
    )
    paths = write_outputs(report, out_dir, err)
    err.print("wrote " + ", ".join(str(p) for p in paths.values()), markup=False, highlight=False)
    if not report["all_correct"]:
        bad = [s["label"] for s in report["sizes"] if not s["correct"]]
        err.print(f"[bold red]glint's exchanges delivered wrong rows at {', '.join(bad)}[/]", highlight=False)
        return EXIT_ERROR
    return EXIT_OK
