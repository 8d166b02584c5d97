"""Run generated queries in glint and DuckDB on the same data and classify the outcome.

glint runs in a worker process (``multiprocessing``, spawn), so that a hang
(past the time limit), a segmentation fault or a SIGFPE is recorded as a
crash and the worker is restarted; DuckDB runs in this process (interrupted
past the time limit).

Outcomes (:data:`STATUSES`):

``match``
    glint's result equals DuckDB's (rows as multisets, or in order where the
    outer ORDER BY fixes it; decimals and integers exactly, doubles within
    1e-9 relative).
``mismatch``
    the results differ, or glint returned a result where DuckDB raised an
    error that is not a DuckDB limitation.
``crash``
    glint raised something that is not a :class:`glint.GlintError`, ran past
    the time limit, or its process died.
``refusal``
    glint raised :class:`glint.NotSupported` (counted per construct).
``error_mismatch``
    DuckDB answered, glint raised another GlintError (ExecutionError...).
``both_error``
    both raised (glint a GlintError): fine.
``duck_only_error``
    DuckDB raised an error that is a DuckDB limitation (see
    :data:`DUCKDB_LIMITATIONS`), glint answered; recorded, not a failure. So
    is a run-time error DuckDB raised where glint's result is empty, or where
    DuckDB raises it on a branch of a set operation whose rows glint computes
    as none (the failing value belongs to rows no result keeps).
``eval_order``
    DuckDB raised a run-time error (overflow, failed cast) on a value that
    glint's plan never computed, and glint answered. SQL leaves the order of
    evaluation to the engine, so both are right; but this is only accepted when
    a probe (:func:`error_probe`) that computes exactly the operation DuckDB
    names makes both engines raise, so that glint would have raised too had it
    computed that value (an unchecked overflow stays a mismatch). Other
    probes: a RANGE frame read by COUNT(*) instead of a ranking function, a
    CTE read whole, and a derived table's window that nothing reads
    computed on its own. Recorded, not a failure.
``oracle_bug``
    glint's answer differs from DuckDB's, but equals the answer DuckDB gives
    to the same query with its expression rewriter off: DuckDB disagrees with
    itself, a DuckDB optimizer bug (DuckDB 1.4 folds date_trunc(part, x)
    compared with a constant wrongly, NULL x included). Recorded, not a failure.
``known_bug``
    a mismatch/crash/error mismatch matching an entry of :data:`KNOWN_BUGS`
    (only with ``known_bugs=True``).
``skipped``
    DuckDB's result was too large or DuckDB ran past the time limit.

Mismatches, crashes and error mismatches are written as reproducers
(glint.testing.fuzz.reduce): by default under glint-fuzz in the system's
temporary directory, each with a ``repro.test`` of sqllogictest records to
append to tests/sqllogic/fuzz/regressions.test.

The parts: glint.testing.fuzz.engines (the two engines), .classify (the
statuses), .results (an outcome, the comparison), .oracle (DuckDB's
limitations and the evaluation-order probes), .known_bugs.
``glint fuzz`` (:func:`cmd_fuzz`) is the command line.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from glint.errors import GlintError
from glint.testing.fuzz.data import FuzzData, make_data
from glint.testing.fuzz.engines import CTAS_TABLE, Engines
from glint.testing.fuzz.generator import generate_query
from glint.testing.fuzz.reduce import default_out_dir, write_reproducer
from glint.testing.fuzz.results import FAILURES, STATUSES, Outcome


# ------------------------------------------------------------------ a run
@dataclass
class Summary:
    seed: int
    queries: int = 0
    counts: Counter = field(default_factory=Counter)
    refusals: Counter = field(default_factory=Counter)
    both_errors: Counter = field(default_factory=Counter)
    duck_only: Counter = field(default_factory=Counter)
    eval_order: Counter = field(default_factory=Counter)  # DuckDB's errors, glint answered (see eval_order)
    duck_rejects: Counter = field(default_factory=Counter)  # DuckDB errors (any glint outcome)
    known: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)
    failures: list[tuple[int, Outcome, str | None]] = field(default_factory=list)  # (query no, outcome, repro dir)
    error_mismatches: list[tuple[int, Outcome]] = field(default_factory=list)
    seconds: float = 0.0
    glint_restarts: int = 0
    reproducers: int = 0  # reproducers written
    out: Path | None = None  # ... into this directory

    @property
    def ok(self) -> bool:
        return not any(self.counts[s] for s in FAILURES)


def _msg_key(msg: str) -> str:
    s = re.sub(r"\(.*?\)", "(…)", msg or "")
    s = re.sub(r'"[^"]*"', '"…"', s)
    s = re.sub(r"\d+", "N", s)
    return s[:140]


def failure_signature(o: Outcome) -> str:
    """A coarse key of a failure, to reduce only a few failures of each kind."""
    first = lambda m: (m or "").splitlines()[0] if m else ""
    if o.status in ("crash", "error_mismatch"):
        return f"{o.status}:{o.glint_error_type}:{_msg_key(first(o.glint_error))}"
    if o.duck_error is not None:
        return f"mismatch:duckdb-error:{_msg_key(first(o.duck_error))}"
    d = first(o.details[0]) if o.details else ""
    return "mismatch:" + (
        "row count" if d.startswith("row count") else "column" if d.startswith("column") else "values"
    )


def _tally(summary: Summary, i: int, o: Outcome) -> None:
    """Count one query's outcome into the summary."""
    summary.queries += 1
    summary.counts[o.status] += 1
    if o.duck_error is not None:
        summary.duck_rejects[_msg_key(o.duck_error)] += 1
    if o.status == "refusal":
        summary.refusals[o.construct] += 1
    elif o.status == "both_error":
        summary.both_errors[_msg_key(o.glint_error or "")] += 1
    elif o.status == "duck_only_error":
        summary.duck_only[_msg_key(o.duck_error or "")] += 1
    elif o.status == "eval_order":
        summary.eval_order[_msg_key(o.duck_error or "")] += 1
    elif o.status == "known_bug":
        summary.known[o.known] += 1
    elif o.status == "skipped":
        summary.skipped[_msg_key(o.details[0] if o.details else "")] += 1
    elif o.status == "error_mismatch":
        summary.error_mismatches.append((i, o))


class _Reproducers:
    """Writes the reproducers of a run's failures: the first
    ``per_signature`` of each :func:`failure_signature` (``max_reductions``
    in all; mismatches of values: 5 per signature) reduced first."""

    def __init__(
        self,
        engines: Engines,
        data: FuzzData,
        out: Path,
        seed: int,
        reduce: bool,
        max_reductions: int,
        seconds: float,
        per_signature: int,
    ):
        self.engines, self.data, self.out, self.seed = engines, data, out, seed
        self.reduce, self.max_reductions, self.seconds, self.per_signature = (
            reduce,
            max_reductions,
            seconds,
            per_signature,
        )
        self.reductions = 0
        self.per_sig: Counter = Counter()

    def write(self, i: int, o: Outcome) -> str:
        sig = failure_signature(o)
        limit = self.per_signature * (5 if sig == "mismatch:values" else 1)
        do_reduce = self.reduce and self.reductions < self.max_reductions and self.per_sig[sig] < limit
        self.per_sig[sig] += 1
        self.reductions += do_reduce
        try:
            path = str(
                write_reproducer(
                    self.engines,
                    self.data,
                    o,
                    self.out,
                    seed=self.seed,
                    index=i,
                    reduce=do_reduce,
                    seconds=self.seconds,
                )
            )
        except Exception as e:  # noqa: BLE001 - never lose the run over a reproducer
            path = f"(reproducer failed: {type(e).__name__}: {e})"
        self.engines.set_tables(self.data.tables)
        return path


def run_fuzz(
    seed: int = 0,
    queries: int = 100,
    device: str = "cpu",
    tpch: bool = False,
    out: str | os.PathLike | None = None,
    time_limit: float = 30.0,
    rows: int = 150,
    reduce: bool = True,
    max_reductions: int = 20,
    reduce_seconds: float = 60.0,
    reduce_per_signature: int = 2,
    reproducers: bool = True,
    known_bugs: bool = False,
    in_process: bool = False,
    log: str | None = None,
    progress: Callable[[int, Summary], None] | None = None,
    data: FuzzData | None = None,
) -> Summary:
    """Generate and run ``queries`` queries; return a :class:`Summary`.
    Failures (mismatches, crashes; and error mismatches) are written as
    reproducers (unless ``reproducers`` is False) under ``out``, by default
    :func:`~glint.testing.fuzz.reduce.default_out_dir` (under the system's
    temporary directory); the first ``reduce_per_signature`` of each
    :func:`failure_signature` (``max_reductions`` in all) are reduced first
    (mismatches of values: 5 per signature)."""
    data = data or make_data(seed, rows=rows, tpch=tpch)
    summary = Summary(seed)
    t0 = time.perf_counter()
    engines = Engines(data, device, time_limit, in_process=in_process, known_bugs=known_bugs)
    out_dir = Path(out) if out is not None else default_out_dir()
    writer = (
        _Reproducers(engines, data, out_dir, seed, reduce, max_reductions, reduce_seconds, reduce_per_signature)
        if reproducers
        else None
    )
    logf = open(log, "a", encoding="utf-8") if log else None
    try:
        for i in range(queries):
            q = generate_query(data, seed, i)
            o = engines.run(q.sql, q.ctas)
            if q.ctas and o.status in FAILURES and engines.run(q.sql).status not in FAILURES:
                o.details = [f"only through CREATE TABLE {CTAS_TABLE} AS <query>; SELECT * FROM {CTAS_TABLE}"] + list(
                    o.details or []
                )
            _tally(summary, i, o)
            if o.status in FAILURES or o.status == "error_mismatch":
                path = writer.write(i, o) if writer is not None else None
                if path is not None and not path.startswith("("):
                    summary.reproducers += 1
                    summary.out = out_dir
                if o.status in FAILURES:
                    summary.failures.append((i, o, path))
            if logf is not None and o.status not in ("match",):
                rec = o.to_json()
                rec.update(seed=seed, index=i)
                logf.write(json.dumps(rec) + "\n")
                logf.flush()
            if progress is not None:
                progress(i + 1, summary)
    finally:
        summary.glint_restarts = engines.glint.restarts
        engines.close()
        if logf is not None:
            logf.close()
    summary.seconds = time.perf_counter() - t0
    return summary


# ------------------------------------------------------------------ printing / CLI
def _counter_table(console, title, counter: Counter, total: int, limit: int = 25) -> None:
    from rich.table import (
        Table,  # rich is imported when it is used: the glint command imports this module
    )

    if not counter:
        return
    tt = Table(title=title, header_style="bold")
    tt.add_column("what", overflow="fold")
    tt.add_column("queries", justify="right")
    tt.add_column("share", justify="right")
    for k, v in counter.most_common(limit):
        tt.add_row(k, str(v), f"{100 * v / max(1, total):.1f}%")
    if len(counter) > limit:
        tt.add_row(f"... {len(counter) - limit} more", "", "")
    console.print(tt)


def _outcome_table(summary: Summary):
    from rich.table import Table

    n = max(1, summary.queries)
    t = Table(
        title=f"glint fuzz: seed {summary.seed}, {summary.queries} queries in {summary.seconds:.1f} s",
        header_style="bold",
    )
    t.add_column("outcome")
    t.add_column("queries", justify="right")
    t.add_column("share", justify="right")
    styles = {
        "match": "green",
        "mismatch": "bold red",
        "crash": "bold red",
        "refusal": "yellow",
        "error_mismatch": "magenta",
        "known_bug": "red",
        "oracle_bug": "cyan",
    }
    for s in STATUSES:
        c = summary.counts.get(s, 0)
        if c or s in ("match", "mismatch", "crash", "refusal"):
            t.add_row(f"[{styles.get(s, '')}]{s}[/]" if styles.get(s) else s, str(c), f"{100 * c / n:.1f}%")
    return t


def print_summary(summary: Summary, console=None) -> None:
    from rich.console import Console

    if console is None:
        tty = sys.stdout.isatty()
        console = Console(width=None if tty else 160, no_color=not tty, highlight=False)
    console.print(_outcome_table(summary))
    _counter_table(
        console, "refusals (NotSupported) by construct (share of refusals)", summary.refusals, summary.counts["refusal"]
    )
    _counter_table(
        console,
        "DuckDB-only errors (DuckDB limitation; glint answered)",
        summary.duck_only,
        summary.counts["duck_only_error"],
    )
    _counter_table(
        console,
        "evaluation order (DuckDB raised on a value glint never computed; glint raises on it too)",
        summary.eval_order,
        summary.counts["eval_order"],
    )
    _counter_table(
        console, "both engines raised (glint's message)", summary.both_errors, summary.counts["both_error"], 10
    )
    _counter_table(
        console, "DuckDB errors (any glint outcome; share of all queries)", summary.duck_rejects, summary.queries, 10
    )
    _counter_table(console, "known bugs (filtered)", summary.known, summary.counts["known_bug"])
    _counter_table(console, "skipped (no reference answer)", summary.skipped, summary.counts["skipped"])
    if summary.error_mismatches:
        console.print(
            f"[magenta]error mismatches[/] (DuckDB answered, glint raised an error): {len(summary.error_mismatches)}"
        )
        for i, o in summary.error_mismatches[:10]:
            console.print(f"  query {i}: {o.glint_error}", markup=False, highlight=False)
    if summary.failures:
        console.print(f"[bold red]{len(summary.failures)} failure(s)[/]:")
        for i, o, path in summary.failures[:50]:
            console.print(f"  query {i} {o.status}: {o.summary()[:200]}", markup=False, highlight=False)
            if path:
                console.print(f"    reproducer: {path}", markup=False, highlight=False)
    if summary.reproducers:
        console.print(
            f"{summary.reproducers} reproducer(s) in {summary.out}: each repro.test holds sqllogictest "
            "records; append one to tests/sqllogic/fuzz/regressions.test to keep its failure as a regression "
            "test",
            markup=False,
            highlight=False,
        )
    if summary.glint_restarts:
        console.print(f"glint worker restarts: {summary.glint_restarts}")


def add_parser(sub) -> None:
    """Register ``glint fuzz`` on the CLI's subparsers."""
    f = sub.add_parser("fuzz", help="differential SQL fuzzing of glint against DuckDB")
    f.add_argument("--seed", type=int, default=0, help="seed of the data and the queries (default 0)")
    f.add_argument("--queries", type=int, default=200, help="number of queries (default 200)")
    f.add_argument("--device", default="cpu", help='"cpu" (default), "cuda", "cuda:N" or "auto"')
    f.add_argument("--tpch", action="store_true", help="add the TPC-H SF 0.01 tables to the generated ones")
    f.add_argument(
        "--out",
        help=f"directory for reproducers (default {default_out_dir()}, under the system's "
        "temporary directory): one folder per failure, seed<S>-q<N>-<status>, whose "
        "repro.test holds sqllogictest records (the tables' CREATE and INSERT, then the "
        "query with DuckDB's answer) that can be appended to "
        "tests/sqllogic/fuzz/regressions.test as they are",
    )
    f.add_argument("--time-limit", type=float, default=30.0, help="seconds per query before a hang is a crash")
    f.add_argument("--rows", type=int, default=150, help="rows per generated table (default 150)")
    f.add_argument("--no-reduce", action="store_true", help="write failures unreduced")
    f.add_argument("--max-reductions", type=int, default=20, help="reduce at most this many failures (default 20)")
    f.add_argument(
        "--known-bugs",
        action="store_true",
        help="count failures matching the KNOWN_BUGS filters separately (not reduced, not failing)",
    )
    f.add_argument("--log", help="append every outcome other than a match to this JSON-lines file")
    f.set_defaults(func=cmd_fuzz)


def cmd_fuzz(args) -> int:
    last = [time.perf_counter()]

    def progress(done, s: Summary):
        if time.perf_counter() - last[0] > 10 or done == args.queries:
            last[0] = time.perf_counter()
            fails = s.counts["mismatch"] + s.counts["crash"]
            print(
                f"[fuzz seed {args.seed}] {done}/{args.queries} queries: {s.counts['match']} match, "
                f"{fails} failing, {s.counts['refusal']} refused",
                file=sys.stderr,
                flush=True,
            )

    if args.queries < 0:
        raise GlintError("--queries must be at least 0")
    summary = run_fuzz(
        args.seed,
        args.queries,
        device=args.device,
        tpch=args.tpch,
        out=args.out,
        time_limit=args.time_limit,
        rows=args.rows,
        reduce=not args.no_reduce,
        max_reductions=args.max_reductions,
        known_bugs=args.known_bugs,
        log=args.log,
        progress=progress,
    )
    print_summary(summary)
    return 0 if summary.ok else 1
