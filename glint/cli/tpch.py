"""``glint tpch``: generate TPC-H data, run the 22 queries, check them against DuckDB
and the official answers."""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from glint.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    connect_from_args,
    console,
    parse_query_list,
    result_arrow,
    sync,
)
from glint.distributed.stats import summary
from glint.errors import GlintError, GlintIOError
from glint.testing.compare import compare_query_result
from glint.workloads import tpch


class _QueryRun:
    def __init__(self, n: int):
        self.n = n
        self.rows: int | None = None
        self.glint_s: float | None = None
        self.duck_s: float | None = None
        self.status = "ok"  # ok | diff | error | unchecked
        self.check = ""
        self.details: list[str] = []
        self.rank_stats: list | None = None  # a distributed run's per-rank breakdown


def _time_runs(fn, runs: int):
    best, result = None, None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t0
        best = dt if best is None or dt < best else best
    return result, best


def _data_and_reference(args, err, show: bool):
    """The Parquet directory (generated when missing), whether the official
    answers cover every column, and DuckDB over the data (None when results
    are not checked) with its load seconds."""
    if args.data:
        data = Path(os.path.expanduser(args.data))
    elif args.generator == "dbgen":  # (its progress also off a terminal: plain lines)
        data = tpch.ensure_dbgen_data(args.sf, progress=True)
    else:
        data = tpch.ensure_tpch_data(args.sf, progress=True)
    full_answers = args.generator == "dbgen" and not args.data
    duck, duck_load = None, None
    if not args.no_check:
        try:
            t0 = time.perf_counter()
            duck = tpch.duckdb_tpch_connection(data)
            duck_load = time.perf_counter() - t0
        except GlintIOError:
            raise  # the data itself is wrong
        except GlintError as e:  # DuckDB is not installed
            err.print(f"[yellow]DuckDB unavailable, results not checked:[/] {e}")
    return data, full_answers, duck, duck_load


def _load_glint(args, data: Path, err, show: bool, duck_load: float | None):
    """A connection with the TPC-H tables registered, and the device's description."""
    con = connect_from_args(args.device, args)
    t0 = time.perf_counter()
    tpch.load_tpch(
        con,
        directory=data,
        progress=show,
        partition_keys=tpch.PARTITION_KEYS if getattr(args, "hash_partition", False) else None,
    )
    load_s = time.perf_counter() - t0
    device = getattr(con, "device", args.device)
    if getattr(con, "ranks", None):
        device = f"{con.ranks} ranks on {device.type}"
    msg = f"TPC-H SF {tpch.sf_label(args.sf)} from {data}: loaded into glint in {load_s:.1f} s (device {device})"
    if duck_load is not None:
        msg += f", into DuckDB in {duck_load:.1f} s"
    err.print(msg, markup=False, highlight=False)
    return con, device


def _run_glint(con, r: _QueryRun, q: str, runs: int):
    """glint's result of the query (best of ``runs``), or None after recording its error."""

    def run_glint():
        res = con.sql(q)
        tbl = result_arrow(res)
        sync(con)
        r.rank_stats = getattr(res, "rank_stats", None)
        return tbl

    try:
        got, r.glint_s = _time_runs(run_glint, runs)
    except KeyboardInterrupt:
        raise
    except GlintError as e:
        r.status, r.check = "error", f"error: {type(e).__name__}"
        r.details.append(str(e))
        return None
    except Exception as e:  # noqa: BLE001 - reported in the table
        r.status, r.check = "error", f"internal error: {type(e).__name__}"
        r.details.append(f"{type(e).__name__}: {e}")
        if os.environ.get("GLINT_DEBUG"):
            r.details.append(traceback.format_exc())
        return None
    r.rows = got.num_rows
    return got


def _check_duckdb(r: _QueryRun, q: str, got, duck, runs: int) -> str:
    """Compare with DuckDB's result (timed, best of ``runs``); the check's word."""
    try:
        expected, r.duck_s = _time_runs(lambda: tpch.duckdb_arrow(duck, q), runs)
        diffs = compare_query_result(q, got, expected)
    except Exception as e:  # noqa: BLE001
        r.status = "error"
        r.details.append(f"DuckDB failed: {type(e).__name__}: {e}")
        return "DuckDB failed"
    if diffs:
        r.status = "diff"
        r.details.append("differs from DuckDB:")
        r.details.extend("  " + d for d in diffs)
        return "DIFF vs DuckDB"
    return "DuckDB"


def _check_answer(r: _QueryRun, q: str, got, sf: float, full_answers: bool) -> str | None:
    """Compare with the official answer (every column with dbgen's data, else
    those tpchgen-cli's data shares with it); the check's word, None when
    there is no answer."""
    try:
        answer = tpch.official_answer(r.n, sf)
    except GlintError as e:
        r.details.append(f"official answer unavailable: {e}")
        return None
    if answer is None:
        return None
    cols = (
        list(range(answer.num_columns)) if full_answers else tpch.answer_columns_for_tpchgen(r.n, answer.schema.names)
    )
    if cols is None:
        return "answer n/a"
    diffs = (
        compare_query_result(q, got.select(cols), answer.select(cols))
        if got.num_columns == answer.num_columns
        else [f"column count: actual {got.num_columns}, expected {answer.num_columns}"]
    )
    if diffs:
        r.status = "diff" if r.status == "ok" else r.status
        r.details.append("differs from the official answer:")
        r.details.extend("  " + d for d in diffs)
        return "DIFF vs answer"
    return "answer*" if len(cols) < answer.num_columns else "answer"


def _run_query(con, n: int, args, duck, full_answers: bool, status) -> _QueryRun:
    """One query: glint's run, then its checks against DuckDB and the official answer."""
    q = tpch.tpch_query(n)
    r = _QueryRun(n)
    got = _run_glint(con, r, q, args.runs)
    if got is None:
        return r
    if duck is None:
        r.status, r.check = "unchecked", "not checked"
        return r
    if status:
        status.update(f"Q{n}: DuckDB")
    checks = [_check_duckdb(r, q, got, duck, args.runs)]
    answer = _check_answer(r, q, got, args.sf, full_answers)
    if answer is not None:
        checks.append(answer)
    if r.status == "ok":
        r.check = "ok (" + ", ".join(checks) + ")"
    else:
        r.check = ", ".join(c for c in checks if c.startswith("DIFF") or c.endswith("failed"))
    return r


def cmd_tpch(args) -> int:
    out, err = console(), console(stderr=True)
    queries = parse_query_list(args.queries)
    if args.runs < 1:
        raise GlintError("--runs must be at least 1")
    tpch.sf_label(args.sf)
    show_progress = err.is_terminal
    data, full_answers, duck, duck_load = _data_and_reference(args, err, show_progress)
    con, device = _load_glint(args, data, err, show_progress, duck_load)
    results: list[_QueryRun] = []
    for n in queries:
        status = err.status(f"Q{n}: glint") if show_progress else None
        if status:
            status.start()
        try:
            results.append(_run_query(con, n, args, duck, full_answers, status))
        finally:
            if status:
                status.stop()
    _print_tpch_table(out, results, args, tpch.sf_label(args.sf), device, duck is not None)
    bad = [r for r in results if r.status in ("diff", "error")]
    return EXIT_ERROR if bad else EXIT_OK


def _print_tpch_table(out, results, args, sf: str, device, check: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    best = f" (best of {args.runs})" if args.runs > 1 else ""
    t = Table(title=f"TPC-H SF {sf} on {device}", header_style="bold")
    t.add_column("query")
    t.add_column("rows", justify="right")
    t.add_column(f"glint s{best}", justify="right")
    t.add_column(f"DuckDB s{best}", justify="right")
    ranks = any(r.rank_stats for r in results)
    if ranks:  # a distributed run: where the slowest rank's time went
        for col in ("compute s", "shuffle s", "bcast s", "gather s", "reduce s", "wait s", "moved MiB"):
            t.add_column(col, justify="right")
    t.add_column("check")
    styles = {"ok": "green", "unchecked": "dim", "diff": "bold red", "error": "bold red"}
    g_total = d_total = 0.0
    for r in results:
        if r.glint_s is not None:
            g_total += r.glint_s
        if r.duck_s is not None:
            d_total += r.duck_s
        cells = [
            f"Q{r.n:02d}",
            "-" if r.rows is None else str(r.rows),
            "-" if r.glint_s is None else f"{r.glint_s:.3f}",
            "-" if r.duck_s is None else f"{r.duck_s:.3f}",
        ]
        if ranks:
            cells += breakdown_cells(r.rank_stats)
        t.add_row(*cells, Text(r.check, style=styles.get(r.status, "")))
    t.add_section()
    n_ok = sum(r.status in ("ok", "unchecked") for r in results)
    t.add_row(
        "total",
        "",
        f"{g_total:.3f}",
        f"{d_total:.3f}" if check else "-",
        *([""] * (7 if ranks else 0)),
        f"{n_ok}/{len(results)} ok",
    )
    out.print(t)
    if any("answer*" in r.check for r in results):
        out.print(
            "* checked against the official answer without the address and comment columns: those answers "
            "come from DuckDB's dbgen, whose random text differs from tpchgen-cli's",
            style="dim",
        )
    for r in results:
        if r.details:
            out.print(Text(f"Q{r.n:02d}:", style="bold"))
            for d in r.details:
                out.print(Text("  " + d))


def breakdown_cells(rank_stats) -> list[str]:
    """compute / shuffle / broadcast / gather / all-reduce / wait seconds of
    the slowest rank and MiB moved between ranks, as table cells."""
    if not rank_stats:
        return ["-"] * 7
    s = summary(rank_stats)
    return [f"{s[k]:.3f}" for k in ("compute_s", "shuffle_s", "broadcast_s", "gather_s", "allreduce_s", "wait_s")] + [
        f"{s['bytes_sent'] / (1 << 20):,.1f}"
    ]
