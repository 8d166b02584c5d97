"""``glint bench tpch|ssb``: glint (warm and cold) against DuckDB (in-memory and
on the Parquet files), every glint result checked against DuckDB's.

What is measured, per query (times in seconds, wall clock; on CUDA the device is
synchronised before a timer starts and before it is read):

- **glint warm**: the tables are registered once with ``read_parquet`` (lazy:
  glint reads a column's data when a query first needs it; ``--eager`` reads
  every column up front). Each query is run once (this reads the columns it
  needs and copies them to the device, where they stay: ``glint_first_s``),
  ``--warmup`` times untimed, then ``--runs`` times timed; the median is
  reported. Data resident on the device, as the warm runs of "Terabyte-scale
  analytics in the blink of an eye".
- **glint cold**: after the warm phase has released everything, a fresh
  connection per query, timed from ``read_parquet`` of the tables the query
  reads through its result: Parquet -> host -> device -> result, once (the
  paper's cold runs, plus the Parquet decode). The OS page cache is not
  dropped, so the files usually come from memory rather than disk.
- **DuckDB in-memory**: the tables loaded into DuckDB (all host cores; from
  SF 30 on into ``ATTACH ':memory:' AS m (COMPRESS)``, since plain in-memory
  tables do not fit at SF 100), ``--warmup`` runs, then the median of ``--runs``.
- **DuckDB on Parquet**: the same over views on ``read_parquet``.

DuckDB runs first and is closed before glint starts, so the two never hold the
data at once. Every glint result (warm and cold) is compared with DuckDB's
(:func:`~glint.testing.compare.compare_query_result`); a difference, a glint
error or a result that could not be checked marks the query failed and makes
the command exit with 1. Peak GPU memory per query: ``peak_gpu_bytes`` is
``torch.cuda.max_memory_allocated`` over the query's warm runs (it includes
the columns resident from earlier queries, ``gpu_baseline_bytes``);
``cold_peak_gpu_bytes`` that of its cold run alone.

``--profile`` runs each query once more after every query's timed runs, under
torch.profiler, and adds per query the GPU's busy time, kernel launches,
memory copies, host synchronisations and the top kernels
(glint.bench.profile), and the rate at which the warm runs went through the
columns they touched (glint.bench.records).

Writes ``<out>/<benchmark>_sf<sf>_<device>.json``, ``.md`` and ``.png``.

The parts: glint.bench.suites (the benchmarks), .duckdb_runs and .glint_runs
(the two engines' runs), .profile, .records (what is recorded and the JSON
report), .report (the table and the files), .machine (the host and device).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from glint.bench.duckdb_runs import require_duckdb, run_duckdb_phases
from glint.bench.exchange import cmd_exchange
from glint.bench.glint_runs import run_glint_cold, run_glint_warm
from glint.bench.machine import device_name, host_probe_s, machine_info
from glint.bench.records import QueryRecord, RunFacts, build_report, merge_reports
from glint.bench.report import default_out_dir, print_table, write_outputs
from glint.bench.serve import cmd_bench_serve
from glint.bench.suites import BENCHMARKS, Suite, get_suite, query_tables
from glint.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    add_rank_arguments,
    connect_options,
    console,
    memory_arguments,
)
from glint.distributed.launch import rank_devices, torchrun_device, torchrun_env
from glint.engine.connection import resolve_device
from glint.errors import GlintError, GlintIOError
from glint.io.file_lists import tables_in_directory
from glint.workloads.tpch import sf_label

__all__ = ["add_arguments", "cmd_bench", "cmd_merge", "run_bench"]


# ------------------------------------------------------------------ the run
@dataclass
class BenchPlan:
    """What a run will do, from its arguments and the data found."""

    suite: Suite
    names: list[str]  # the queries of the warm runs
    cold_names: list[str]  # ... of the cold runs
    device: torch.device
    device_label: str
    ranks: int | str | None
    partition_keys: dict | None
    duckdb_runs: int
    data: Path
    found: dict[str, str]  # table -> Parquet path
    tables_of: dict[str, list[str]]  # query -> the tables it reads
    prep_s: float

    @property
    def all_names(self) -> list[str]:
        return list(dict.fromkeys(self.names + self.cold_names))

    @property
    def tables(self) -> list[str]:
        return sorted({t for ts in self.tables_of.values() for t in ts})


def _check_arguments(args) -> int:
    """Reject impossible counts; the number of timed DuckDB runs."""
    if args.runs < 1:
        raise GlintError("--runs must be at least 1")
    if args.warmup < 0:
        raise GlintError("--warmup must be 0 or more")
    duckdb_runs = args.duckdb_runs if args.duckdb_runs is not None else args.runs
    if duckdb_runs < 1:
        raise GlintError("--duckdb-runs must be at least 1")
    return duckdb_runs


def _plan(args, err, show: bool) -> BenchPlan:
    duckdb_runs = _check_arguments(args)
    suite = get_suite(args.benchmark)
    names = suite.parse(args.queries)
    cold_names = [] if not args.cold else (suite.parse(args.cold_queries) if args.cold_queries else list(names))
    ranks = getattr(args, "ranks", None)
    device = resolve_device(args.device) if ranks is None else _rank0_device(args.device, ranks)
    device_label = device_name(device) if ranks is None else f"{ranks} ranks x {device_name(device)}"
    keys = suite.partition_keys if getattr(args, "hash_partition", False) else None
    if not args.no_duckdb:
        require_duckdb()
    t0 = time.perf_counter()
    # data generation reports its progress also off a terminal (plain lines: glint.workloads.progress)
    skew = getattr(args, "skew", None)
    if skew is not None:
        if args.benchmark != "tpch" or args.data:
            raise GlintError("--skew makes a skewed TPC-H: it goes with tpch, without --data")
        from glint.workloads.tpch_skew import ensure_skewed_tpch_data

        data = ensure_skewed_tpch_data(args.sf, skew, progress=True)
    else:
        data = Path(os.path.expanduser(args.data)) if args.data else suite.ensure_data(args.sf, progress=True)
    found = tables_in_directory(data)
    tables_of = {n: query_tables(suite.query(n), sorted(found)) for n in dict.fromkeys(names + cold_names)}
    for n, ts in tables_of.items():
        if not ts:
            raise GlintIOError(
                f"{suite.title} {suite.label(n)} reads none of the tables in {str(data)!r} ({', '.join(sorted(found))})"
            )
    plan = BenchPlan(
        suite, names, cold_names, device, device_label, ranks, keys, duckdb_runs, data, found, tables_of, 0.0
    )
    err.print(
        f"{suite.title} SF {sf_label(args.sf)} from {data} ({len(names)} queries, {len(plan.tables)} tables; "
        f"glint on {device_label}; median of {_n(args.runs, 'run')} after {_n(args.warmup, 'warm-up')})",
        markup=False,
        highlight=False,
    )
    plan.prep_s = time.perf_counter() - t0
    return plan


def _run_facts(args, plan: BenchPlan, opts: dict) -> RunFacts:
    ranks = plan.ranks
    return RunFacts(
        benchmark=plan.suite.key,
        title=plan.suite.title + (f" skewed (Zipf {args.skew:g})" if getattr(args, "skew", None) else ""),
        sf=args.sf,
        sf_label=sf_label(args.sf),
        device=plan.device_label,
        device_type=plan.device.type,
        ranks=1 if ranks is None else (ranks if ranks != "env" else torchrun_env()[1]),
        hash_partition=bool(plan.partition_keys),
        runs=args.runs,
        warmup=args.warmup,
        duckdb_runs=plan.duckdb_runs,
        duckdb=not args.no_duckdb,
        cold=bool(plan.cold_names),
        eager=args.eager,
        glint_options=opts,
        data_dir=str(plan.data),
        profile=bool(getattr(args, "profile", False)),
        drop_device_cache=bool(getattr(args, "drop_device_cache", False)),
        settings_changed=settings_changed(),
    )


def settings_changed(environ=None) -> dict:
    """The settings the environment (GLINT_*) sets away from their defaults,
    by name, as text (paths and sizes as given there).

    >>> settings_changed({"GLINT_HOST_PAGES": "0", "GLINT_CHUNK_ROWS": "4096", "HOME": "/"})
    {'chunk_rows': '4096', 'host_pages': 'False'}
    """
    import dataclasses

    from glint.runtime.settings import Settings

    env = os.environ if environ is None else environ
    default, got = Settings(), Settings.build(environ=env)
    return {
        f.name: str(getattr(got, f.name))
        for f in dataclasses.fields(Settings)
        if getattr(got, f.name) != getattr(default, f.name)
    }


def run_bench(args, err=None, show: bool | None = None) -> dict:
    """Run the benchmark described by the parsed arguments; returns the report
    (the JSON document) and leaves writing it to the caller."""
    err = err or console(stderr=True)
    show = err.is_terminal if show is None else show
    plan = _plan(args, err, show)
    suite, all_names = plan.suite, plan.all_names
    records = {n: QueryRecord(n, suite.label(n), tables=plan.tables_of[n]) for n in all_names}
    reference: dict = {}
    load = {"data_prepare_s": plan.prep_s, "glint_host_s": None, "duckdb_memory_s": None}
    info: dict = {
        "duckdb_threads": None,
        "duckdb_memory_compressed": None,
        "duckdb_memory_error": None,
        "duckdb_parquet_error": None,
    }
    # DuckDB first, and closed before glint runs, so both never hold the data at once
    if not args.no_duckdb:
        load["duckdb_memory_s"], info = run_duckdb_phases(
            plan.found,
            plan.tables,
            all_names,
            suite,
            records,
            reference,
            plan.duckdb_runs,
            args.warmup if getattr(args, "duckdb_warmup", None) is None else args.duckdb_warmup,
            args.sf,
            err,
            show,
            memory=not getattr(args, "no_duckdb_memory", False),
            parquet=not args.no_duckdb_parquet,
        )
    # glint warm, then cold (after the warm data is released); the host's speed before and after
    probe = {"before_glint": host_probe_s()}
    warm_tables = sorted({t for n in plan.names for t in plan.tables_of[n]})
    t0 = time.perf_counter()
    opts = connect_options(args)
    facts = _run_facts(args, plan, opts)
    load["glint_host_s"] = run_glint_warm(
        plan.device,
        suite,
        plan.names,
        records,
        reference,
        plan.found,
        warm_tables,
        args.eager,
        args.runs,
        args.warmup,
        err,
        show,
        opts,
        plan.partition_keys,
        profile=facts.profile,
        drop_device_cache=facts.drop_device_cache,
    )
    if plan.cold_names:
        # ranks torchrun started cannot be joined from a fresh process
        fresh = getattr(args, "cold_process", True) and plan.ranks != "env"
        load["glint_cold_process_start_s"] = run_glint_cold(
            plan.device,
            suite,
            plan.cold_names,
            records,
            reference,
            plan.found,
            args.eager,
            err,
            show,
            opts,
            fresh,
            plan.partition_keys,
        )
    wall = time.perf_counter() - t0
    probe["after_glint"] = host_probe_s()
    machine = machine_info(plan.device)
    machine["host_probe_s"] = probe
    return build_report(facts, [records[n] for n in all_names], load, info, machine, wall)


def _rank0_device(device: str, ranks):
    """The device of rank 0 of a distributed run (cuda:0, or the CPU)."""
    if ranks == "env":
        return torchrun_device(device, torchrun_env()[2])
    return rank_devices(device, ranks)[0]


def _n(k: int, what: str) -> str:
    return f"{k} {what}" + ("" if k == 1 else "s")


# ------------------------------------------------------------------ command line
def add_arguments(p) -> None:
    """The options of ``glint bench`` on an argparse (sub)parser."""
    p.add_argument(
        "benchmark",
        choices=BENCHMARKS + ("exchange", "serve"),
        help="tpch or ssb; exchange: glint's shuffle and broadcast against raw collectives on --ranks "
        "(glint.bench.exchange); serve: glint serve's result streaming (GB/s) and small-query latency "
        "over loopback (glint.bench.serve)",
    )
    p.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    p.add_argument("--device", default="auto", help='"auto" (default), "cpu", "cuda" or "cuda:N"')
    p.add_argument(
        "--queries", help="e.g. 1,5,9 or 1-6 for TPC-H; 1.1,2.3, a flight (2) or 1.1-2.3 for SSB (default: all)"
    )
    p.add_argument("--runs", type=int, default=5, help="timed runs per query; the median is reported (default 5)")
    p.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="untimed runs before the timed ones (glint: after the first run, which loads the "
        "columns to the device) (default 1)",
    )
    p.add_argument("--out", help="output directory (default bench/results/<benchmark>-sf<sf>-<device>-<date>)")
    p.add_argument("--data", help="use the Parquet files in this directory instead of the generated cache")
    p.add_argument(
        "--skew",
        type=float,
        metavar="Z",
        help="tpch: a skewed TPC-H in the style of JCC-H, its customers, parts and suppliers drawn from a Zipf "
        "distribution of exponent Z (glint.workloads.tpch_skew), generated on first use",
    )
    p.add_argument("--no-duckdb", action="store_true", help="no DuckDB runs, so no result checks")
    p.add_argument("--no-duckdb-parquet", action="store_true", help="skip DuckDB on the Parquet files")
    p.add_argument(
        "--no-duckdb-memory",
        action="store_true",
        help="skip DuckDB's in-memory tables (results are then checked against DuckDB on Parquet)",
    )
    p.add_argument("--duckdb-runs", type=int, help="timed DuckDB runs per query (default: --runs)")
    p.add_argument(
        "--duckdb-warmup",
        type=int,
        help="untimed DuckDB runs per query before its timed ones (default: --warmup)",
    )
    p.add_argument(
        "--cold",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time glint cold runs: fresh connection, read_parquet through the result (default on)",
    )
    p.add_argument("--cold-queries", help="queries for the cold runs (default: --queries)")
    p.add_argument(
        "--cold-process",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the cold phase in a fresh Python process (default on; its start-up, imports and "
        "CUDA context, is reported apart from the query times)",
    )
    memory_arguments(p)
    p.add_argument(
        "--eager",
        action="store_true",
        help="read every column of the tables at read_parquet (default: glint reads a column "
        "when a query first needs it)",
    )
    add_rank_arguments(p)
    p.add_argument(
        "--sizes", help="exchange: bytes per rank to move, e.g. 1MB,16MB,1GB (default 1MB,4MB,16MB,64MB,256MB,1GB)"
    )
    p.add_argument("--seed", type=int, default=0, help="exchange: seed of the generated rows (default 0)")
    p.add_argument("--clients", type=int, default=8, help="serve: clients at once (default 8)")
    p.add_argument(
        "--calls", type=int, default=400, help="serve: timed calls of each small query, over the clients (default 400)"
    )
    p.add_argument(
        "--hash-partition",
        action="store_true",
        help="with --ranks: hash-partition the tables on their keys at load (TPC-H: lineitem and "
        "orders on the order key, ...), so joins on them need no exchange",
    )
    p.add_argument(
        "--drop-device-cache",
        action="store_true",
        help="before each timed glint run, drop the table chunks cached on the device (the host tier keeps "
        "its pages), so that the scans copy every chunk up: the host-to-device path's share of a warm run",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="run each query once more after every query's timed runs under torch.profiler (CPU and, on CUDA, "
        "CUDA activity) and report per query the GPU's busy time (the union of its kernels, "
        "copies and memsets), kernel launches, memory copies, host synchronisations (cudaStream/"
        "Device/EventSynchronize and synchronous cudaMemcpy calls), the 3 kernels with the most "
        "GPU time, and the columns touched per second of a warm run against the device's "
        "memory bandwidth; the device fields are null on the CPU",
    )


def _write(report: dict, args, err) -> None:
    out_dir = Path(os.path.expanduser(args.out)) if args.out else default_out_dir(report)
    paths = write_outputs(report, out_dir, err)
    err.print("wrote " + ", ".join(str(p) for p in paths.values()), markup=False, highlight=False)


def cmd_merge(args) -> int:
    out, err = console(), console(stderr=True)
    reports = []
    for p in args.reports:
        try:
            reports.append(json.loads(Path(p).read_text()))
        except (OSError, ValueError) as e:
            raise GlintIOError(f"cannot read the report {p!r}: {e}") from None
    report = merge_reports(reports)
    print_table(out, report)
    _write(report, args, err)
    return EXIT_ERROR if report["queries_failed"] else EXIT_OK


def cmd_bench(args) -> int:
    if args.benchmark == "exchange":
        return cmd_exchange(args)
    if args.benchmark == "serve":
        return cmd_bench_serve(args)
    out, err = console(), console(stderr=True)
    report = run_bench(args, err=err)
    print_table(out, report)
    _write(report, args, err)
    if report["queries_failed"]:
        err.print(
            f"[bold red]{len(report['queries_failed'])} of {report['queries_total']} queries failed:[/] "
            + ", ".join(report["queries_failed"]),
            highlight=False,
        )
        return EXIT_ERROR
    return EXIT_OK
