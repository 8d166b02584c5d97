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
    :data:`DUCKDB_LIMITATIONS`), glint answered; recorded, not a failure.
``eval_order``
    DuckDB raised a run-time error (overflow, failed cast) on a value that
    glint's plan never computed, and glint answered. SQL leaves the order of
    evaluation to the engine, so both are right; but this is only accepted when
    a probe (:func:`error_probe`) that computes exactly the operation DuckDB
    names makes both engines raise, so that glint would have raised too had it
    computed that value (an unchecked overflow stays a mismatch). Recorded,
    not a failure.
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

``glint fuzz`` (:func:`cmd_fuzz`) is the command line.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Callable

import pyarrow as pa

from glint.io.arrow_objects import table_from_ipc, table_to_ipc
from glint.sql.dialect import DIALECT
from glint.testing.fuzz.data import FuzzData, make_data
from glint.testing.fuzz.generator import QueryGenerator

STATUSES = ("match", "mismatch", "crash", "refusal", "error_mismatch", "both_error", "duck_only_error",
            "eval_order", "oracle_bug", "known_bug", "skipped")
FAILURES = ("mismatch", "crash")
MAX_RESULT_ROWS = 200_000

# DuckDB errors that are DuckDB's own limitation, not a property of the query:
# glint answering these is recorded (duck_only_error), not a mismatch.
DUCKDB_LIMITATIONS = [
    (re.compile(r"Overflow in (addition|subtract\w*|multiplication) of DECIMAL\(18\)"),
     "DuckDB keeps a DECIMAL(<=18) result at width 18 and overflows where the exact result needs 19+ digits"),
    (re.compile(r"Casting value \"[^\"]*\" to type DECIMAL\(18,\d+\) failed: value is out of range!"),
     "DuckDB casts a DECIMAL operand to a DECIMAL(18,s) that cannot hold it"),
    (re.compile(r"Not implemented", re.I), "not implemented in DuckDB"),
    # DuckDB rewrites NOT (x IN (...)) before matching select expressions against the
    # GROUP BY list, so an expression built on a grouped one can fail to match; glint
    # matches the grouped expression inside it, as SQL allows (seed 21 q1987)
    (re.compile(r"must appear in the GROUP BY clause"), "DuckDB does not find a grouped expression inside a larger one"),
    # the generated tables have no BLOB column: DuckDB resolves a string function of an
    # untyped NULL to its BLOB overload (repeat(NULL || s, 2) is a BLOB, since NULL || s
    # folds to an untyped NULL) and then refuses to compare it with a VARCHAR; glint types
    # it VARCHAR, as PostgreSQL does (seed 604 q947)
    # (also "No function matches ... replace(BLOB, VARCHAR, ...)": seed 613 q173)
    (re.compile(r"Binder Error: .*\bBLOB\b"),
     "DuckDB types a string function of an untyped NULL as a BLOB"),
]


@dataclass
class KnownBug:
    """A temporary filter: failures whose SQL matches ``predicate`` are counted
    as this known bug (and not reduced) when ``known_bugs`` is on, so that one
    frequent bug does not drown a run. Remove the entry once the bug is fixed."""
    name: str
    description: str
    predicate: Callable[[str, "Outcome"], bool]


def _same_rows(o: "Outcome") -> bool:
    """The results hold the same rows (as multisets): only the order differs."""
    if o.glint_table is None or o.duck_table is None:
        return False
    try:
        g, e = _normalize(o.glint_table)[0], _normalize(o.duck_table)[0]
        from glint.testing.compare import compare_tables
        return not compare_tables(g, e, ordered=False)
    except Exception:  # noqa: BLE001
        return False


def _msg(o: "Outcome") -> str:
    return (o.glint_error or "") + "\n" + "\n".join(o.details)


# Bugs the fuzzer found (reported to the engine's owner), each keyed by a
# predicate on the query text and the outcome. Used only with known_bugs=True
# (``glint fuzz --known-bugs``); remove an entry when its bug is fixed.
KNOWN_BUGS: list[KnownBug] = [
    KnownBug("int-overflow-unchecked",
             "BIGINT + - * and negation/ABS of any integer wrap around instead of raising DuckDB's overflow error",
             lambda sql, o: o.status == "mismatch" and o.duck_error is not None and bool(re.search(
                 r"Overflow in (addition|subtraction|multiplication|negation) of (INT64|integer)|Overflow on abs",
                 o.duck_error))),
    KnownBug("integer-division-sigfpe",
             "INT_MIN // -1 (and % -1) kills the process with SIGFPE",
             lambda sql, o: o.status == "crash" and "SIGFPE" in (o.glint_error or "")),
    KnownBug("join-double-key-empty-crash",
             "an equi-join between a DOUBLE key and a key of another type crashes when a side is empty/NULL-only "
             "(RuntimeError: cannot reshape tensor of 0 elements)",
             lambda sql, o: o.status == "crash" and "cannot reshape tensor of 0 elements" in _msg(o)),
    KnownBug("wide-decimal-indexerror",
             "arithmetic / COALESCE / set operations mixing a wide DECIMAL (a SUM, DECIMAL(38,s)) with another "
             "DECIMAL crash with IndexError: list index out of range",
             lambda sql, o: o.status == "crash" and (o.glint_error_type == "IndexError" or (
                 "Sizes of tensors must match except in dimension 0" in _msg(o)))),
    KnownBug("decimal-scale-tensor-size",
             "COALESCE / IN lists over DECIMALs of different scales crash (The size of tensor a (3) must match "
             "the size of tensor b (2))",
             lambda sql, o: o.status == "crash" and bool(re.search(r"The size of tensor a \(\d+\) must match",
                                                                    _msg(o)))),
    KnownBug("decimal-rescale-int64-overflow",
             "a DECIMAL literal/value rescaled past 18 digits crashes (value cannot be converted to int64_t / "
             "int too big to convert / Overflow when unpacking long long) instead of NotSupported or a result",
             lambda sql, o: o.status == "crash" and bool(re.search(
                 r"cannot be converted to type int64_t|int too big to convert|Overflow when unpacking long"
                 r"|can't convert negative int to unsigned", _msg(o)))),
    KnownBug("null-literal-typemismatch",
             "an untyped NULL in arithmetic / ROUND / SUBSTRING(MAX(NULL)) raises TypeMismatch where DuckDB answers",
             lambda sql, o: o.status == "error_mismatch" and o.glint_error_type == "TypeMismatch"
             and "NULL" in (o.glint_error or "")),
    KnownBug("setop-null-literal-type",
             "UNION/INTERSECT/EXCEPT with an untyped NULL column types the column INTEGER (casts strings to INT32)",
             lambda sql, o: bool(re.search(r"\b(UNION|INTERSECT|EXCEPT)\b", sql)) and (
                 (o.status in ("error_mismatch", "crash") and "Could not convert string" in _msg(o))
                 or (o.status == "mismatch" and "actual type" in _msg(o)))),
    KnownBug("in-subquery-null-semantics",
             "x [NOT] IN (SELECT ...) is TRUE/FALSE where DuckDB says NULL (no match, NULLs in the subquery): "
             "with a constant or NULL on the left, a subquery of only NULLs, or sides of different types",
             lambda sql, o: o.status == "mismatch" and bool(re.search(r"\bIN\s*\(\s*SELECT", sql)) and (
                 bool(re.search(r"\bNULL\s+(NOT\s+)?IN\s*\(\s*SELECT", sql))
                 or bool(re.search(r"actual (True|False), expected NULL", _msg(o))))),
    KnownBug("bigint-decimal-arith-wrap",
             "BIGINT +/- DECIMAL (result wider than 18 digits) wraps the BIGINT around when rescaling: "
             "b - 1.5 with b = -9223372036854775808 gives -1.5",
             lambda sql, o: o.status == "mismatch" and bool(re.search(r"expected -?92\d{17}", _msg(o)))),
    KnownBug("using-after-comma",
             "FROM a, b JOIN c USING (k): glint binds the USING column to a (comma binds tighter than JOIN), "
             "DuckDB to b (JOIN first): a wrong answer, or an answer where DuckDB rejects the query",
             lambda sql, o: o.status == "mismatch" and bool(re.search(r",[^,()]*\bJOIN\b[^()]*\bUSING\b", sql))
             and ("row count" in _msg(o) or "does not exist on left side of join" in (o.duck_error or ""))),
    KnownBug("round-double",
             "ROUND(x, n) on DOUBLE: overflows to inf for huge x, loses the sign of negative zero",
             lambda sql, o: o.status == "mismatch" and "ROUND(" in sql and bool(re.search(
                 r"actual inf|expected -inf|'-0\.0'|expected -0\.0", _msg(o)))),
    KnownBug("min-max-nan",
             "MIN/MAX over DOUBLEs with NaN: DuckDB orders NaN above every number (MIN ignores it), glint "
             "returns NaN",
             lambda sql, o: o.status == "mismatch" and bool(re.search(r"actual nan, expected", _msg(o)))),
    KnownBug("order-by-null-garbage",
             "ORDER BY a computed key (x - NULL, f / k, d4 - d15, ...): its NULL rows are ordered by the "
             "undefined values stored under the NULLs instead of by the next keys",
             lambda sql, o: o.status == "mismatch" and "ORDER BY" in sql and _same_rows(o)),
]


# ------------------------------------------------------------------ outcome
@dataclass
class Outcome:
    status: str
    sql: str
    details: list[str] = field(default_factory=list)
    duck_error: str | None = None
    glint_error: str | None = None          # "Type: message"
    glint_error_type: str | None = None
    construct: str | None = None
    known: str | None = None
    glint_s: float = 0.0
    duck_s: float = 0.0
    glint_table: pa.Table | None = None
    duck_table: pa.Table | None = None

    def summary(self) -> str:
        if self.status in ("mismatch",) and self.details:
            return self.details[0]
        if self.glint_error:
            return self.glint_error
        return self.status

    def to_json(self) -> dict:
        return {"status": self.status, "sql": self.sql, "details": self.details, "duck_error": self.duck_error,
                "glint_error": self.glint_error, "construct": self.construct, "known": self.known}


# ------------------------------------------------------------------ glint worker
CTAS_TABLE = "fuzz_ctas"


def glint_answer(con, sql: str, ctas: bool = False):
    """glint's Result for a query; with ``ctas``, by way of ``CREATE TABLE AS``
    and a scan of that table (the round trip must give the same rows)."""
    if ctas:
        con.sql(f"CREATE OR REPLACE TABLE {CTAS_TABLE} AS {sql}")
        return con.sql(f"SELECT * FROM {CTAS_TABLE}")
    return con.sql(sql)


def _worker_main(conn, device: str) -> None:   # pragma: no cover - runs in the worker process
    import logging
    logging.disable(logging.WARNING)
    import glint
    from glint.errors import GlintError, NotSupported
    con = glint.connect(device=device)
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        op = msg[0]
        try:
            if op == "quit":
                return
            if op == "register":
                con.register(msg[1], table_from_ipc(msg[2]))
                conn.send(("ok",))
            elif op == "unregister":
                if con.has_table(msg[1]):
                    con.unregister(msg[1])
                conn.send(("ok",))
            elif op == "query":
                res = glint_answer(con, msg[1], msg[2])
                if res is None:
                    conn.send(("crash", "NoResult", "con.sql() returned None for a query", ""))
                    continue
                table = res.arrow()
                if table.num_rows > MAX_RESULT_ROWS:
                    table = table.slice(0, MAX_RESULT_ROWS + 1)
                conn.send(("ok", table_to_ipc(table)))
        except NotSupported as e:
            conn.send(("refusal", type(e).__name__, str(e), getattr(e, "construct", str(e))))
        except GlintError as e:
            conn.send(("glint_error", type(e).__name__, str(e), ""))
        except BaseException as e:  # noqa: BLE001 - that is what we look for
            conn.send(("crash", type(e).__name__, str(e)[:2000], traceback.format_exc()[-4000:]))


class GlintWorker:
    """glint in a child process; :meth:`query` returns the worker's reply or a
    ("crash", ...) when it hangs past ``timeout`` or dies."""

    def __init__(self, device: str = "cpu"):
        self.device = device
        self.tables: dict[str, pa.Table] = {}
        self.proc = None
        self.conn = None
        self.restarts = 0
        self.started = False

    def start(self) -> None:
        self.started = True
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, self.device), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        for name, t in self.tables.items():
            self._call(("register", name, table_to_ipc(t)), 120)

    def _call(self, msg, timeout: float):
        if self.proc is None or not self.proc.is_alive():
            self.restart()
        self.conn.send(msg)
        if not self.conn.poll(timeout):
            self.kill()
            return ("crash", "Timeout", f"no answer within {timeout:g} s (hang or far too slow)", "")
        try:
            return self.conn.recv()
        except (EOFError, ConnectionError, OSError):
            self.proc.join(5)
            code = self.proc.exitcode
            self.kill()
            sig = ""
            if code is not None and code < 0:
                import signal
                try:
                    sig = f" ({signal.Signals(-code).name})"
                except ValueError:
                    pass
            return ("crash", "WorkerDied", f"the glint process died with exit code {code}{sig}", "")

    def kill(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.proc = None

    def restart(self) -> None:
        self.kill()
        self.restarts += 1
        self.start()

    def register(self, name: str, table: pa.Table) -> None:
        self.tables[name] = table
        if self.proc is not None and self.proc.is_alive():
            r = self._call(("register", name, table_to_ipc(table)), 120)
            if r[0] != "ok":
                raise RuntimeError(f"registering {name} in glint failed: {r}")

    def query(self, sql: str, timeout: float, ctas: bool = False):
        if self.proc is None:
            if self.started:           # killed after a hang or a death: a restart
                self.restarts += 1
            self.start()
        return self._call(("query", sql, ctas), timeout)

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(("quit",))
                self.proc.join(2)
            except Exception:  # noqa: BLE001
                pass
        self.kill()


class InProcessGlint:
    """glint in this process (for debugging and tests); time limit by signal.alarm
    where available. A SIGFPE or a segfault takes this process down."""

    def __init__(self, device: str = "cpu"):
        import glint
        self.con = glint.connect(device=device)
        self.tables: dict[str, pa.Table] = {}
        self.restarts = 0

    def register(self, name, table):
        self.tables[name] = table
        self.con.register(name, table)

    def query(self, sql, timeout, ctas: bool = False):
        import signal

        from glint.errors import GlintError, NotSupported

        def on_alarm(*_):
            raise TimeoutError(f"no answer within {timeout:g} s")
        use_alarm = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
        if use_alarm:
            old = signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            res = glint_answer(self.con, sql, ctas)
            return ("ok", res.arrow())
        except NotSupported as e:
            return ("refusal", type(e).__name__, str(e), getattr(e, "construct", str(e)))
        except GlintError as e:
            return ("glint_error", type(e).__name__, str(e), "")
        except TimeoutError as e:
            return ("crash", "Timeout", str(e), "")
        except Exception as e:  # noqa: BLE001
            return ("crash", type(e).__name__, str(e)[:2000], traceback.format_exc()[-4000:])
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)

    def close(self):
        self.con.close()


# ------------------------------------------------------------------ DuckDB
_ORACLE_DISABLED = "join_filter_pushdown"       # always off in the oracle (see Duck._connect)
ORACLE_CHECK_OPTIMIZERS = "expression_rewriter"  # off for the second opinion on a mismatch


class Duck:
    def __init__(self):
        import duckdb
        self.duckdb = duckdb
        self.con = self._connect()
        self.tables: dict[str, pa.Table] = {}
        self.reconnects = 0

    def reconnect(self) -> None:
        """A fatal DuckDB error invalidates the database: start a new one."""
        try:
            self.con.close()
        except Exception:  # noqa: BLE001
            pass
        self.reconnects += 1
        self.con = self._connect()
        for name, t in self.tables.items():
            self.con.register(name, t)

    def _connect(self):
        con = self.duckdb.connect(":memory:")
        # DuckDB up to 1.5 pushes a hash join's run-time filter below a LIMIT /
        # TOP_N on the probe side, which changes the rows the LIMIT keeps
        # (duckdb/duckdb#22924, fixed by #22963; seed 133 q18 joined a row
        # outside an ORDER BY ... LIMIT 10). The oracle runs without it.
        con.execute(f"SET disabled_optimizers = '{_ORACLE_DISABLED}'")
        return con

    def register(self, name: str, table: pa.Table) -> None:
        self.tables[name] = table
        try:
            self.con.unregister(name)
        except Exception:  # noqa: BLE001
            pass
        self.con.register(name, table)

    def query(self, sql: str, timeout: float, disable: str = ""):
        """DuckDB's answer; ``disable`` names more optimizers to switch off for
        this query (see Engines._check_oracle)."""
        if disable:
            self.con.execute(f"SET disabled_optimizers = '{_ORACLE_DISABLED},{disable}'")
        try:
            return self._query(sql, timeout)
        finally:
            if disable:
                self.con.execute(f"SET disabled_optimizers = '{_ORACLE_DISABLED}'")

    def _query(self, sql: str, timeout: float):
        timer = threading.Timer(timeout, self.con.interrupt)
        timer.start()
        try:
            t = self.con.execute(sql).fetch_arrow_table()
            return ("ok", t)
        except self.duckdb.InterruptException:
            return ("timeout", f"DuckDB ran past {timeout:g} s")
        except (self.duckdb.FatalException, self.duckdb.InternalException) as e:
            timer.cancel()
            self.reconnect()
            return ("internal", f"{type(e).__name__}: {str(e).splitlines()[0][:300]}")
        except self.duckdb.Error as e:
            return ("error", f"{type(e).__name__}: {e}")
        except Exception as e:  # noqa: BLE001 - e.g. a result Arrow cannot convert
            return ("error", f"{type(e).__name__}: {e}")
        finally:
            timer.cancel()

    def close(self):
        self.con.close()


# ------------------------------------------------------------------ comparison
def _normalize(t: pa.Table) -> tuple[pa.Table, list[str]]:
    """Dates as day numbers and timestamps as microseconds (years past 9999
    do not fit Python's datetime). Returns the table and the type classes
    ("date", "timestamp" or None), which must agree between the engines."""
    cols, classes = [], []
    for f, c in zip(t.schema, t.columns):
        typ = f.type
        if pa.types.is_dictionary(typ):
            c = c.cast(typ.value_type)
            typ = typ.value_type
        if pa.types.is_string_view(typ) or pa.types.is_large_string(typ):
            c = c.cast(pa.string())
        if c.null_count == len(c) and not pa.types.is_null(typ):
            # all NULL (or no rows): the type carries no value (DuckDB types NULL || 'x' INTEGER)
            cols.append(pa.nulls(len(c)))
            classes.append(None)
            continue
        if pa.types.is_timestamp(typ):
            c = c.cast(pa.int64())
            classes.append("timestamp")
        elif pa.types.is_date(typ):
            c = c.cast(pa.date32()).cast(pa.int32()).cast(pa.int64())
            classes.append("date")
        else:
            classes.append(None)
        cols.append(c)
    return pa.Table.from_arrays(cols, names=[f"col{i}" for i in range(len(cols))]) if cols else t, classes


def compare_results(sql: str, got: pa.Table, expected: pa.Table) -> list[str]:
    from glint.testing.compare import compare_query_result
    if got.num_columns != expected.num_columns:
        return [f"column count: glint {got.num_columns} {got.schema.names}, DuckDB {expected.num_columns} "
                f"{expected.schema.names}"]
    g, gc = _normalize(got)
    e, ec = _normalize(expected)
    diffs = []
    for i, (a, b) in enumerate(zip(gc, ec)):
        if pa.types.is_null(g.schema.types[i]) or pa.types.is_null(e.schema.types[i]):
            continue
        if a != b:
            diffs.append(f"column {i + 1}: glint type {got.schema.types[i]}, DuckDB type {expected.schema.types[i]}")
    if diffs:
        return diffs
    return compare_query_result(sql, g, e, rel_tol=1e-9)


def _construct_key(construct: str) -> str:
    m = re.match(r"(expression \w+):", construct or "")
    if m:
        return m.group(1)
    s = re.sub(r'"[^"]*"', '"…"', construct or "?")
    s = re.sub(r"'[^']*'", "'…'", s)
    s = re.sub(r"\b\d+\b", "N", s)
    return s.strip()[:120]


_RUNTIME_ERROR = re.compile(r"(OutOfRangeException|ConversionException|InvalidInputException)")


_INT_TYPES = {"INT8": "TINYINT", "INT16": "SMALLINT", "INT32": "INTEGER", "INT64": "BIGINT", "INT128": "HUGEINT",
              "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INTEGER": "INTEGER", "BIGINT": "BIGINT",
              "HUGEINT": "HUGEINT"}
_CAST_TYPES = dict(_INT_TYPES, DOUBLE="DOUBLE", FLOAT="FLOAT")
_OVERFLOW = re.compile(r"Overflow in (?:addition|subtract(?:ion)?|multiplication|division) of (\w+) "
                       r"\((-?\d+) ([-+*/]) (-?\d+)\)")
_CAST_RANGE = re.compile(r"Type (\w+) with value (\S+) can't be cast because the value is out of range for "
                         r"the destination type (\w+)")
_CAST_DECIMAL = re.compile(r'Casting value "(-?\d+(?:\.\d+)?)" to type (DECIMAL\(\d+,\d+\)) failed')
_CAST_STRING = re.compile(r"Could not convert string '([^']*)' to (\w+)")
_CAST_DECIMAL_VALUE = re.compile(r"Failed to cast decimal value (-?\d+) to type (\w+)")
_CAST_VALUE = re.compile(r"Could not cast value (-?\d+(?:\.\d+)?) to (DECIMAL\(\d+,\d+\))")
_TIME_RANGE = re.compile(r"Time out of range: (-?\d+):(-?\d+):(-?\d+(?:\.\d+)?)")
_DATE_RANGE = re.compile(r"Date out of range: (-?\d+)-(-?\d+)-(-?\d+)\b")
_ABS = re.compile(r"Overflow on abs\((-?\d+)\)")
_INT_MIN = {-2**31: "INTEGER", -2**63: "BIGINT"}  # the types glint computes in


def error_probe(duck_error: str) -> str | None:
    """A query without tables that computes exactly the operation a DuckDB
    run-time error names, or None when the message does not say enough.

    >>> error_probe("Out of Range Error: Overflow in subtraction of INT64 (-9223372036854775808 - 9)!")
    'SELECT CAST(-9223372036854775808 AS BIGINT) - CAST(9 AS BIGINT)'
    >>> error_probe("Conversion Error: Type INT64 with value -9223372036854775808 can't be cast because "
    ...             "the value is out of range for the destination type INT32")
    'SELECT CAST(CAST(-9223372036854775808 AS BIGINT) AS INTEGER)'
    >>> error_probe("Overflow in division of INT32 (-2147483648 / -1)!")
    'SELECT CAST(-2147483648 AS INTEGER) // CAST(-1 AS INTEGER)'
    >>> error_probe("Out of Range Error: Overflow on abs(-9223372036854775808)")
    'SELECT ABS(CAST(-9223372036854775808 AS BIGINT))'
    >>> error_probe("Conversion Error: Date out of range: 2021-2-30")
    'SELECT make_date(2021, 2, 30)'
    >>> error_probe("Conversion Error: Time out of range: 25:1:7.500000")
    'SELECT make_timestamp(2000, 1, 1, 25, 1, 7.500000)'
    >>> error_probe("Conversion Error: Unimplemented type for cast") is None
    True
    """
    m = _OVERFLOW.search(duck_error)
    if m and m.group(1) in _INT_TYPES:
        t = _INT_TYPES[m.group(1)]
        op = "//" if m.group(3) == "/" else m.group(3)
        return f"SELECT CAST({m.group(2)} AS {t}) {op} CAST({m.group(4)} AS {t})"
    m = _CAST_RANGE.search(duck_error)
    if m and m.group(1) in _CAST_TYPES and m.group(3) in _CAST_TYPES:
        v = m.group(2)
        try:
            float(v)
        except ValueError:
            return None
        return f"SELECT CAST(CAST({v} AS {_CAST_TYPES[m.group(1)]}) AS {_CAST_TYPES[m.group(3)]})"
    m = _CAST_DECIMAL.search(duck_error)
    if m:
        return f"SELECT CAST({m.group(1)} AS {m.group(2)})"
    m = _CAST_STRING.search(duck_error)
    if m and m.group(2) in _CAST_TYPES:
        return f"SELECT CAST('{m.group(1)}' AS {_CAST_TYPES[m.group(2)]})"
    # the messages below name the value without its type: the probe casts a
    # value of the same magnitude (the unscaled one is at least as large)
    m = _CAST_DECIMAL_VALUE.search(duck_error)
    if m and m.group(2) in _INT_TYPES and abs(int(m.group(1))) < 2**63:
        return f"SELECT CAST(CAST({m.group(1)} AS BIGINT) AS {_INT_TYPES[m.group(2)]})"
    m = _CAST_VALUE.search(duck_error)
    if m:
        return f"SELECT CAST({float(m.group(1))!r} AS {m.group(2)})"
    if "Overflow in negation of integer" in duck_error:
        return "SELECT -CAST(-2147483648 AS INTEGER)"
    m = _ABS.search(duck_error)
    if m and int(m.group(1)) in _INT_MIN:
        return f"SELECT ABS(CAST({m.group(1)} AS {_INT_MIN[int(m.group(1))]}))"
    m = _DATE_RANGE.search(duck_error)       # make_date / make_timestamp of a day that does not exist
    if m:
        return f"SELECT make_date({m.group(1)}, {m.group(2)}, {m.group(3)})"
    m = _TIME_RANGE.search(duck_error)       # make_timestamp of a time that does not exist
    if m:
        return f"SELECT make_timestamp(2000, 1, 1, {m.group(1)}, {m.group(2)}, {m.group(3)})"
    return None


_FRAMELESS = re.compile(r"\b(?:RANK|DENSE_RANK|PERCENT_RANK|CUME_DIST|ROW_NUMBER)\(\s*\)|\bNTILE\(\s*\d+\s*\)", re.I)


def frame_probe(sql: str, duck_error: str) -> str | None:
    """DuckDB computes a RANGE frame's bounds (key ± INTERVAL) also for the
    ranking functions, which ignore the frame, and fails where a bound leaves
    the TIMESTAMP range (seeds 607 q119, 610 q488, 614 q1639); glint does not
    compute them. The probe: the same query with those functions as COUNT(*),
    which reads the frame, so glint computes the bounds and must raise too.

    >>> frame_probe("SELECT CUME_DIST() OVER (ORDER BY t RANGE BETWEEN INTERVAL 3 HOUR PRECEDING "
    ...             "AND CURRENT ROW) FROM x", "Conversion Error: Date and time not in timestamp range")
    'SELECT COUNT(*) OVER (ORDER BY t RANGE BETWEEN INTERVAL 3 HOUR PRECEDING AND CURRENT ROW) FROM x'
    """
    if "not in timestamp range" not in duck_error or not re.search(r"\bRANGE\s+BETWEEN\b[^)]*\bINTERVAL\b",
                                                                    sql, re.I):
        return None
    probe = _FRAMELESS.sub("COUNT(*)", sql)
    return probe if probe != sql else None


def _before_caret(msg: str) -> str:
    """The query text DuckDB quotes before its ^ marker ('' without one)."""
    lines = msg.splitlines()
    for i, line in enumerate(lines[1:], 1):
        if line.strip() == "^" and lines[i - 1].startswith("LINE"):
            return lines[i - 1][:line.index("^")]
    return ""


def duckdb_limitation(msg: str) -> str | None:
    """Why DuckDB's error ``msg`` is DuckDB's limitation, or None.

    >>> duckdb_limitation('Conversion Error: Casting value "-999.900" to type DECIMAL(4,1) failed')[:40]
    'DuckDB rejects a DECIMAL cast whose roun'
    >>> duckdb_limitation('Conversion Error: Casting value "1000.0" to type DECIMAL(4,1) failed') is None
    True
    """
    m = _CAST_DECIMAL.search(msg)
    if m:
        # DuckDB 1.4 rejects some scale-reducing casts whose rounded value fits,
        # e.g. CAST(999.90 AS DECIMAL(4,1)); the message has all it takes to check
        p, s = map(int, re.findall(r"\d+", m.group(2)))
        rounded = Decimal(m.group(1)).quantize(Decimal(1).scaleb(-s), rounding=ROUND_HALF_UP)
        if abs(rounded) < 10 ** (p - s):
            return f"DuckDB rejects a DECIMAL cast whose rounded value {rounded} fits {m.group(2)}"
    m = re.search(r'Referenced table "(\w+)" not found', msg)
    if m and "HAVING" in _before_caret(msg):
        # DuckDB rewrites NOT (...) in HAVING before matching it against the
        # GROUP BY expressions, then binds the table it came from out of scope
        # (seed 53 q1759, seed 95 q973); glint matches the grouped expression
        return "DuckDB loses a grouped expression's table under NOT in HAVING"
    for pat, why in DUCKDB_LIMITATIONS:
        if pat.search(msg):
            return why
    return None


def classify(sql: str, duck_res, glint_res, known_bugs: bool = False) -> Outcome:
    o = Outcome("match", sql)
    if duck_res[0] in ("timeout", "internal"):
        # DuckDB ran too long, or hit an internal error of its own (a DuckDB bug): no reference answer
        o.status, o.details = "skipped", [("DuckDB internal error: " if duck_res[0] == "internal" else "")
                                          + duck_res[1]]
        return o
    if duck_res[0] == "ok":
        o.duck_table = duck_res[1]
        if o.duck_table.num_rows > MAX_RESULT_ROWS:
            o.status, o.details = "skipped", [f"DuckDB result has {o.duck_table.num_rows} rows"]
            return o
    else:
        o.duck_error = duck_res[1]
    kind = glint_res[0]
    if kind == "ok":
        o.glint_table = glint_res[1]
    else:
        o.glint_error_type = glint_res[1]
        o.glint_error = f"{glint_res[1]}: {glint_res[2]}"
    if kind == "crash":
        o.status = "crash"
        o.details = [o.glint_error] + ([glint_res[3]] if len(glint_res) > 3 and glint_res[3] else [])
    elif kind == "refusal":
        o.status = "refusal"
        o.construct = _construct_key(glint_res[3])
    elif kind == "glint_error":
        if o.duck_error is not None:
            o.status = "both_error"
        else:
            o.status = "error_mismatch"
            o.details = [f"DuckDB answered ({o.duck_table.num_rows} rows); glint raised {o.glint_error}"]
            if o.duck_table.num_rows == 0:
                o.details.append("(possibly evaluation order: DuckDB's result is empty)")
    else:  # glint answered
        if o.duck_error is not None:
            why = duckdb_limitation(o.duck_error)
            if why is None and o.glint_table.num_rows == 0 and _RUNTIME_ERROR.match(o.duck_error):
                why = ("evaluation order: DuckDB evaluated an expression that fails on a row glint never had to "
                       "evaluate it for (glint's result is empty)")
            if why:
                o.status = "duck_only_error"
                o.details = [f"DuckDB limitation ({why}): {o.duck_error}"]
            else:
                o.status = "mismatch"
                o.details = [f"glint returned {o.glint_table.num_rows} rows where DuckDB raised: {o.duck_error}"]
        else:
            try:
                diffs = compare_results(sql, o.glint_table, o.duck_table)
            except Exception as e:  # noqa: BLE001
                diffs = [f"comparison failed: {type(e).__name__}: {e}"]
            if diffs:
                o.status, o.details = "mismatch", diffs
    if known_bugs and o.status in ("mismatch", "crash", "error_mismatch"):
        for kb in KNOWN_BUGS:
            try:
                hit = kb.predicate(sql, o)
            except Exception:  # noqa: BLE001
                hit = False
            if hit:
                o.known = kb.name
                o.status = "known_bug"
                break
    return o


class Engines:
    """glint (worker or in-process) and DuckDB, over the same tables."""

    def __init__(self, data: FuzzData, device: str = "cpu", time_limit: float = 30.0, in_process: bool = False,
                 known_bugs: bool = False):
        self.data = data
        self.time_limit = time_limit
        self.known_bugs = known_bugs
        self.duck = Duck()
        self.glint = InProcessGlint(device) if in_process else GlintWorker(device)
        self.set_tables(data.tables)
        if isinstance(self.glint, GlintWorker):
            self.glint.start()

    def set_tables(self, tables: dict[str, pa.Table]) -> None:
        for name, t in tables.items():
            self.duck.register(name, t)
            self.glint.register(name, t)

    def run(self, sql: str, ctas: bool = False) -> Outcome:
        """``ctas``: glint answers through CREATE TABLE AS (see glint_answer)."""
        t0 = time.perf_counter()
        d = self.duck.query(sql, self.time_limit)
        t1 = time.perf_counter()
        if d[0] == "ok" and d[1].num_rows > MAX_RESULT_ROWS:
            g = ("ok", pa.table({}))
        else:
            g = self.glint.query(sql, self.time_limit, ctas)
            if g[0] == "ok" and isinstance(g[1], (bytes, bytearray)):
                g = ("ok", table_from_ipc(g[1]))
        t2 = time.perf_counter()
        o = classify(sql, d, g, self.known_bugs)
        o.duck_s, o.glint_s = t1 - t0, t2 - t1
        if o.status == "mismatch" and o.glint_table is not None and o.duck_error is not None:
            if (o.duck_error.startswith("BinderException") and "INTEGER" in o.duck_error and "||" in sql
                    and self._duckdb_null_concat(sql)):
                o.status = "duck_only_error"
                o.details = ["DuckDB limitation (a `||` with a NULL operand folds to an untyped NULL, typed "
                             f"INTEGER later): {o.duck_error}"]
            else:
                self._check_evaluation_order(o)
        elif o.status == "mismatch" and o.glint_table is not None and o.duck_table is not None:
            self._check_oracle(o)
        return o

    def _check_oracle(self, o: Outcome) -> None:
        """DuckDB again without its expression rewriter: when that answer is
        glint's, DuckDB's optimizer changed its own result (an oracle bug)."""
        d = self.duck.query(o.sql, self.time_limit, disable=ORACLE_CHECK_OPTIMIZERS)
        if d[0] != "ok":
            return
        try:
            diffs = compare_results(o.sql, o.glint_table, d[1])
        except Exception:  # noqa: BLE001
            return
        if not diffs:
            o.status = "oracle_bug"
            o.details = ["DuckDB answers as glint does with its expression rewriter off: "
                         + "; ".join(o.details[:2])]

    def _duckdb_null_concat(self, sql: str) -> bool:
        """Whether a `||` in ``sql`` has an operand without columns that is NULL:
        DuckDB folds such a concatenation into an untyped NULL that a derived
        table then types INTEGER (SELECT typeof(CAST(NULL AS VARCHAR) || 'x')
        is "NULL"), and later string functions on it fail to bind."""
        import sqlglot
        from sqlglot import exp
        try:
            tree = sqlglot.parse_one(sql, read=DIALECT)
        except Exception:  # noqa: BLE001
            return False
        for node in tree.find_all(exp.DPipe):
            for side in (node.this, node.expression):
                if side.find(exp.Column) is None and side.find(exp.Select) is None:
                    r = self.duck.query(f"SELECT ({side.sql(dialect='duckdb')}) IS NULL", self.time_limit)
                    if r[0] == "ok" and r[1].num_rows == 1 and r[1].column(0)[0].as_py() is True:
                        return True
        return False

    def _check_evaluation_order(self, o: Outcome) -> None:
        """glint answered where DuckDB raised a run-time error: an evaluation-order
        difference if glint raises too when it computes the failing operation."""
        probe = error_probe(o.duck_error) if _RUNTIME_ERROR.match(o.duck_error) else None
        if probe is None:
            probe = frame_probe(o.sql, o.duck_error)
        if probe is None and _RUNTIME_ERROR.match(o.duck_error):
            probe = self._cte_probe(o)
        if probe is None:
            return
        d = self.duck.query(probe, self.time_limit)
        g = self.glint.query(probe, self.time_limit)
        if d[0] == "error" and g[0] == "glint_error":
            o.status = "eval_order"
            o.details = [f"evaluation order: DuckDB raised {o.duck_error.splitlines()[0][:200]}; glint answered "
                         f"({o.glint_table.num_rows} rows) without computing that value, and raises on it too "
                         f"({probe}: {g[1]}: {g[2][:120]})"]

    def _cte_probe(self, o: Outcome) -> str | None:
        """DuckDB materialises a CTE even where the query never reads its rows
        (seed 610 q1807: a CTE under CASE NULL WHEN ...), and fails on it; glint
        does not compute it. The probe: the first CTE DuckDB fails on read
        whole (WITH ... SELECT * FROM it), which glint must fail on too."""
        import sqlglot
        from sqlglot import exp
        try:
            tree = sqlglot.parse_one(o.sql, read=DIALECT)
        except Exception:  # noqa: BLE001
            return None
        with_ = tree.args.get("with") or tree.args.get("with_")
        if with_ is None:
            return None
        head = with_.sql(dialect="duckdb")
        for cte in with_.expressions:
            probe = f"{head} SELECT * FROM {exp.to_identifier(cte.alias_or_name).sql(dialect='duckdb')}"
            d = self.duck.query(probe, self.time_limit)
            if d[0] == "error" and d[1].splitlines()[0] == o.duck_error.splitlines()[0]:
                return probe
        return None

    def close(self) -> None:
        self.glint.close()
        self.duck.close()


# ------------------------------------------------------------------ a run
@dataclass
class Summary:
    seed: int
    queries: int = 0
    counts: Counter = field(default_factory=Counter)
    refusals: Counter = field(default_factory=Counter)
    both_errors: Counter = field(default_factory=Counter)
    duck_only: Counter = field(default_factory=Counter)
    eval_order: Counter = field(default_factory=Counter)   # DuckDB's errors, glint answered (see eval_order)
    duck_rejects: Counter = field(default_factory=Counter)     # DuckDB errors (any glint outcome)
    known: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)
    failures: list[tuple[int, Outcome, str | None]] = field(default_factory=list)  # (query no, outcome, repro dir)
    error_mismatches: list[tuple[int, Outcome]] = field(default_factory=list)
    seconds: float = 0.0
    glint_restarts: int = 0

    @property
    def ok(self) -> bool:
        return not any(self.counts[s] for s in FAILURES)


def query_seed(seed: int, i: int) -> int:
    return seed * 1_000_003 + i


def generate_query(data: FuzzData, seed: int, i: int):
    """Query ``i`` of the run with ``seed`` (each query has its own generator,
    so that one can be regenerated alone)."""
    return QueryGenerator(data.info, seed=query_seed(seed, i)).generate()


def _msg_key(msg: str) -> str:
    s = re.sub(r"\(.*?\)", "(…)", msg or "")
    s = re.sub(r'"[^"]*"', '"…"', s)
    s = re.sub(r"\d+", "N", s)
    return s[:140]


def failure_signature(o: Outcome) -> str:
    """A coarse key of a failure, to reduce only a few failures of each kind."""
    first = (lambda m: (m or "").splitlines()[0] if m else "")
    if o.status in ("crash", "error_mismatch"):
        return f"{o.status}:{o.glint_error_type}:{_msg_key(first(o.glint_error))}"
    if o.duck_error is not None:
        return f"mismatch:duckdb-error:{_msg_key(first(o.duck_error))}"
    d = first(o.details[0]) if o.details else ""
    return "mismatch:" + ("row count" if d.startswith("row count") else "column" if d.startswith("column")
                          else "values")


def run_fuzz(seed: int = 0, queries: int = 100, device: str = "cpu", tpch: bool = False,
             out: str | os.PathLike | None = "fuzz-failures", time_limit: float = 30.0, rows: int = 150,
             reduce: bool = True, max_reductions: int = 20, reduce_seconds: float = 60.0,
             reduce_per_signature: int = 2,
             known_bugs: bool = False, in_process: bool = False, log: str | None = None,
             progress: Callable[[int, Summary], None] | None = None, data: FuzzData | None = None) -> Summary:
    """Generate and run ``queries`` queries; return a :class:`Summary`.
    Failures (mismatches, crashes; and error mismatches) are written as
    reproducers under ``out``; the first ``reduce_per_signature`` of each
    :func:`failure_signature` (``max_reductions`` in all) are reduced first
    (mismatches of values: 5 per signature)."""
    data = data or make_data(seed, rows=rows, tpch=tpch)
    summary = Summary(seed)
    t0 = time.perf_counter()
    engines = Engines(data, device, time_limit, in_process=in_process, known_bugs=known_bugs)
    logf = open(log, "a", encoding="utf-8") if log else None
    reductions = 0
    per_sig: Counter = Counter()
    try:
        for i in range(queries):
            q = generate_query(data, seed, i)
            o = engines.run(q.sql, q.ctas)
            if q.ctas and o.status in FAILURES and engines.run(q.sql).status not in FAILURES:
                o.details = [f"only through CREATE TABLE {CTAS_TABLE} AS <query>; SELECT * FROM {CTAS_TABLE}"] + \
                    list(o.details or [])
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
            if o.status in FAILURES or o.status == "error_mismatch":
                path = None
                if out is not None:
                    from glint.testing.fuzz.reduce import write_reproducer
                    sig = failure_signature(o)
                    limit = reduce_per_signature * (5 if sig == "mismatch:values" else 1)
                    do_reduce = reduce and reductions < max_reductions and per_sig[sig] < limit
                    per_sig[sig] += 1
                    reductions += do_reduce
                    try:
                        path = write_reproducer(engines, data, o, Path(out), seed=seed, index=i,
                                                reduce=do_reduce, seconds=reduce_seconds)
                    except Exception as e:  # noqa: BLE001 - never lose the run over a reproducer
                        path = f"(reproducer failed: {type(e).__name__}: {e})"
                    engines.set_tables(data.tables)
                if o.status in FAILURES:
                    summary.failures.append((i, o, str(path) if path else None))
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
def print_summary(summary: Summary, console=None) -> None:
    from rich.console import Console
    from rich.table import Table

    if console is None:
        tty = sys.stdout.isatty()
        console = Console(width=None if tty else 160, no_color=not tty, highlight=False)
    n = max(1, summary.queries)
    t = Table(title=f"glint fuzz: seed {summary.seed}, {summary.queries} queries in {summary.seconds:.1f} s",
              header_style="bold")
    t.add_column("outcome")
    t.add_column("queries", justify="right")
    t.add_column("share", justify="right")
    styles = {"match": "green", "mismatch": "bold red", "crash": "bold red", "refusal": "yellow",
              "error_mismatch": "magenta", "known_bug": "red", "oracle_bug": "cyan"}
    for s in STATUSES:
        c = summary.counts.get(s, 0)
        if c or s in ("match", "mismatch", "crash", "refusal"):
            t.add_row(f"[{styles.get(s, '')}]{s}[/]" if styles.get(s) else s, str(c), f"{100 * c / n:.1f}%")
    console.print(t)

    def counter_table(title, counter: Counter, total: int, limit: int = 25):
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

    counter_table("refusals (NotSupported) by construct (share of refusals)", summary.refusals,
                  summary.counts["refusal"])
    counter_table("DuckDB-only errors (DuckDB limitation; glint answered)", summary.duck_only,
                  summary.counts["duck_only_error"])
    counter_table("evaluation order (DuckDB raised on a value glint never computed; glint raises on it too)",
                  summary.eval_order, summary.counts["eval_order"])
    counter_table("both engines raised (glint's message)", summary.both_errors, summary.counts["both_error"], 10)
    counter_table("DuckDB errors (any glint outcome; share of all queries)", summary.duck_rejects, summary.queries,
                  10)
    counter_table("known bugs (filtered)", summary.known, summary.counts["known_bug"])
    counter_table("skipped (no reference answer)", summary.skipped, summary.counts["skipped"])
    if summary.error_mismatches:
        console.print(f"[magenta]error mismatches[/] (DuckDB answered, glint raised an error): "
                      f"{len(summary.error_mismatches)}")
        for i, o in summary.error_mismatches[:10]:
            console.print(f"  query {i}: {o.glint_error}", markup=False, highlight=False)
    if summary.failures:
        console.print(f"[bold red]{len(summary.failures)} failure(s)[/]:")
        for i, o, path in summary.failures[:50]:
            console.print(f"  query {i} {o.status}: {o.summary()[:200]}", markup=False, highlight=False)
            if path:
                console.print(f"    reproducer: {path}", markup=False, highlight=False)
    if summary.glint_restarts:
        console.print(f"glint worker restarts: {summary.glint_restarts}")


def add_parser(sub) -> None:
    """Register ``glint fuzz`` on the CLI's subparsers."""
    f = sub.add_parser("fuzz", help="differential SQL fuzzing of glint against DuckDB")
    f.add_argument("--seed", type=int, default=0, help="seed of the data and the queries (default 0)")
    f.add_argument("--queries", type=int, default=200, help="number of queries (default 200)")
    f.add_argument("--device", default="cpu", help='"cpu" (default), "cuda", "cuda:N" or "auto"')
    f.add_argument("--tpch", action="store_true", help="add the TPC-H SF 0.01 tables to the generated ones")
    f.add_argument("--out", default="fuzz-failures", help="directory for reproducers (default ./fuzz-failures)")
    f.add_argument("--time-limit", type=float, default=30.0, help="seconds per query before a hang is a crash")
    f.add_argument("--rows", type=int, default=150, help="rows per generated table (default 150)")
    f.add_argument("--no-reduce", action="store_true", help="write failures unreduced")
    f.add_argument("--max-reductions", type=int, default=20, help="reduce at most this many failures (default 20)")
    f.add_argument("--known-bugs", action="store_true",
                   help="count failures matching the KNOWN_BUGS filters separately (not reduced, not failing)")
    f.add_argument("--log", help="append every outcome other than a match to this JSON-lines file")
    f.set_defaults(func=cmd_fuzz)


def cmd_fuzz(args) -> int:
    last = [time.perf_counter()]

    def progress(done, s: Summary):
        if time.perf_counter() - last[0] > 10 or done == args.queries:
            last[0] = time.perf_counter()
            fails = s.counts["mismatch"] + s.counts["crash"]
            print(f"[fuzz seed {args.seed}] {done}/{args.queries} queries: {s.counts['match']} match, "
                  f"{fails} failing, {s.counts['refusal']} refused", file=sys.stderr, flush=True)

    if args.queries < 0:
        from glint.errors import GlintError
        raise GlintError("--queries must be at least 0")
    summary = run_fuzz(args.seed, args.queries, device=args.device, tpch=args.tpch, out=args.out,
                       time_limit=args.time_limit, rows=args.rows, reduce=not args.no_reduce,
                       max_reductions=args.max_reductions, known_bugs=args.known_bugs, log=args.log,
                       progress=progress)
    print_summary(summary)
    return 0 if summary.ok else 1
