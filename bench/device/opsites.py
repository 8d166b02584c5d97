"""Where a query's launches and host waits come from: each warm query run once
more with every torch operation and Triton launch counted by glint's call
site (the innermost glint frames), and the operations that make the host wait
for the device listed apart:

    python3 bench/device/opsites.py tpch 10 [--queries 2,21 | all] [--device cuda] [--out FILE]

Reads the Parquet files of ``$GLINT_DATA/<suite>/sf<SF>`` (``gendata.py``
makes TPC-H and SSB; ``glint bench tpcds`` makes TPC-DS's). Prints, per query,
the median warm time of three runs and the counted operations and waits,
then the totals; with ``--out`` the sites of each query (25 of each) and of
all queries go to FILE. With ``--cprofile FILE``, each query runs three more
times under cProfile (all queries in one profile), and FILE gets the
functions by own time and by cumulative time, and the own time summed per
glint module and for torch's and Triton's Python code: where the host's time
goes between launches.

What counts as a wait: ``.item()`` / ``.tolist()`` / ``bool()`` of a device
tensor (``_local_scalar_dense``), copies to the host, ``nonzero``, ``unique``
and boolean-mask indexing (their result's size), ``repeat_interleave`` without
its output size. Copies to pinned memory without waiting are counted too; on
the CPU nothing waits, and the count is of the operations that would. View
operations (slices, reshapes) and empty allocations launch nothing and are
not counted.

The counts are of what reaches torch's dispatcher and Triton's launcher, not of
kernels (a sort is several): ``glint bench --profile`` counts kernels and
waits from the device's side, per query, without sites.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import glint

VIEWS = frozenset(
    "view as_strided _reshape_alias slice select unsqueeze squeeze expand t transpose permute alias detach "
    "empty empty_strided new_empty new_empty_strided unbind split split_with_sizes narrow lift_fresh".split()
)
WAITS = frozenset(
    "_local_scalar_dense nonzero _unique2 unique_dim unique_consecutive masked_select equal is_nonzero".split()
)


def site(depth: int = 3) -> str:
    """The innermost ``depth`` glint frames of the caller, innermost first."""
    f, chain = sys._getframe(2), []
    while f is not None and len(chain) < depth:
        name = f.f_code.co_filename
        if "/glint/" in name:
            chain.append(f"{name.split('/glint/')[-1]}:{f.f_code.co_name}:{f.f_lineno}")
        f = f.f_back
    return " < ".join(chain) or "?"


def waits(name: str, args, kwargs, out) -> bool:
    if name in WAITS:
        return True
    if name in ("_to_copy", "copy_") and isinstance(out, torch.Tensor) and out.device.type == "cpu":
        return any(isinstance(a, torch.Tensor) and a.device.type != "cpu" for a in args)
    if name == "repeat_interleave":
        return "output_size" not in (kwargs or {})
    if name == "index" and len(args) > 1:
        return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in args[1] if i is not None)
    return False


class Sites(TorchDispatchMode):
    """Counts torch operations (and, through :func:`count_triton`, Triton
    launches) by call site while active."""

    active: Sites | None = None

    def __init__(self):
        super().__init__()
        self.ops: collections.Counter = collections.Counter()
        self.waits: collections.Counter = collections.Counter()

    def __enter__(self):
        Sites.active = self
        return super().__enter__()

    def __exit__(self, *exc):
        Sites.active = None
        return super().__exit__(*exc)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func._schema.name.split("::")[-1]
        if name not in VIEWS:
            where = site()
            self.ops[(name, where)] += 1
            if waits(name, args, kwargs, out):
                self.waits[(name, where)] += 1
        return out


def count_triton() -> None:
    """Count each Triton kernel launch as an operation of the active Sites."""
    try:
        from triton.runtime import jit
    except ImportError:
        return
    run = jit.JITFunction.run

    def counted(self, *args, **kwargs):
        if Sites.active is not None:
            Sites.active.ops[(f"triton:{self.fn.__name__}", site())] += 1
        return run(self, *args, **kwargs)

    jit.JITFunction.run = counted


def queries_of(suite: str) -> dict:
    if suite == "tpch":
        from glint.workloads.tpch import tpch_queries

        return tpch_queries()
    if suite == "tpcds":
        from glint.workloads.tpcds import tpcds_queries

        return tpcds_queries()
    from glint.workloads.ssb import ssb_queries

    return ssb_queries()


def data_of(suite: str, sf: float) -> Path:
    from glint.workloads import ssb, tpcds, tpch

    return {"tpch": tpch, "tpcds": tpcds, "ssb": ssb}[suite].data_dir(sf)


def host_profile(run, sync, out: str) -> None:
    """``run()`` under cProfile; the summary described in the module's doc to ``out``."""
    import cProfile
    import io
    import pstats

    sync()
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    run()
    sync()
    prof.disable()
    wall = time.perf_counter() - t0
    stats = pstats.Stats(prof)
    by_module: collections.Counter = collections.Counter()
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():
        if "/glint/" in filename:
            key = "glint/" + filename.split("/glint/")[-1]
        elif "/triton/" in filename:
            key = "triton (Python)"
        elif "/torch/" in filename:
            key = "torch (Python)"
        elif filename == "~":
            key = "built-in (torch operations, C calls)"
        else:
            key = "other Python"
        by_module[key] += tottime
    buf = io.StringIO()
    buf.write(f"wall under the profiler {wall:.3f} s\n== own time by module\n")
    buf.writelines(f"  {v:8.3f} s  {k}\n" for k, v in by_module.most_common(40))
    for order in ("tottime", "cumulative"):
        buf.write(f"== by {order}\n")
        pstats.Stats(prof, stream=buf).sort_stats(order).print_stats(70)
    Path(out).write_text(buf.getvalue())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench/device/opsites.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", choices=["tpch", "tpcds", "ssb"])
    ap.add_argument("sf", type=float)
    ap.add_argument("--queries", default="all", help="e.g. 2,21 (default: all)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", help="write the sites here")
    ap.add_argument("--cprofile", help="profile the warm runs on the host and write the summary here")
    args = ap.parse_args(argv)
    data = data_of(args.suite, args.sf)
    if not data.is_dir():
        ap.error(f"no data in {data}: make it first (bench/device/gendata.py, or glint bench {args.suite})")
    qs = queries_of(args.suite)
    chosen = list(qs) if args.queries == "all" else [type(next(iter(qs)))(q) for q in args.queries.split(",")]
    con = glint.connect(args.device)
    tables = {p.stem: str(p) for p in sorted(data.glob("*.parquet"))}
    # (a table written in parts is a directory of files)
    tables |= {p.name: str(p / "**" / "*.parquet") for p in sorted(data.iterdir()) if p.is_dir()}
    con.read_parquet_tables(tables)
    device = torch.device(args.device)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    count_triton()
    total_ops: collections.Counter = collections.Counter()
    total_waits: collections.Counter = collections.Counter()
    lines = []
    for q in chosen:
        for _ in range(2):
            con.sql(qs[q]).arrow()
        times = []
        for _ in range(3):
            sync()
            t0 = time.perf_counter()
            con.sql(qs[q]).arrow()
            sync()
            times.append(time.perf_counter() - t0)
        with Sites() as s:
            con.sql(qs[q]).arrow()
            sync()
        total_ops.update(s.ops)
        total_waits.update(s.waits)
        ms = statistics.median(times) * 1000
        print(f"Q{q}: {ms:.1f} ms, {sum(s.ops.values())} operations, {sum(s.waits.values())} waits")
        lines.append(f"== Q{q} {ms:.1f} ms, operations {sum(s.ops.values())}, waits {sum(s.waits.values())}")
        lines += [f"  {v:6d} {n:28s} {w}" for (n, w), v in s.ops.most_common(25)]
        lines.append("  -- waits")
        lines += [f"  {v:6d} {n:28s} {w}" for (n, w), v in s.waits.most_common(12)]
    print(f"total: {sum(total_ops.values())} operations, {sum(total_waits.values())} waits")
    if args.cprofile:
        host_profile(lambda: [con.sql(qs[q]).arrow() for q in chosen for _ in range(3)], sync, args.cprofile)
    if args.out:
        by_site: collections.Counter = collections.Counter()
        for (_, where), v in total_ops.items():
            by_site[where.split(" < ")[0]] += v
        lines.append(f"== all: operations {sum(total_ops.values())}, waits {sum(total_waits.values())}")
        lines += [f"  {v:6d} {w}" for w, v in by_site.most_common(50)]
        lines.append("  -- waits")
        lines += [f"  {v:6d} {n:28s} {w}" for (n, w), v in total_waits.most_common(60)]
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
