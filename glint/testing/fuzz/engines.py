"""The two engines of a fuzz run over the same tables: glint in a worker
process (spawned, so that a hang past the time limit, a segmentation fault
or a SIGFPE is a crash and the worker is restarted; or in this process, for
debugging), and DuckDB in this process (interrupted past the time limit).
:class:`Engines` runs a query in both and classifies the outcome, asking the
probes of glint.testing.fuzz.oracle where DuckDB raised and glint answered."""

from __future__ import annotations

import logging
import multiprocessing as mp
import signal
import threading
import time
import traceback

import pyarrow as pa
import sqlglot
from sqlglot import exp

import glint
from glint.errors import GlintError, NotSupported
from glint.io.arrow_objects import table_from_ipc, table_to_ipc
from glint.sql.dialect import DIALECT
from glint.testing.fuzz.classify import classify
from glint.testing.fuzz.data import FuzzData
from glint.testing.fuzz.oracle import RUNTIME_ERROR, error_probe, frame_probe
from glint.testing.fuzz.results import MAX_RESULT_ROWS, Outcome, compare_results

CTAS_TABLE = "fuzz_ctas"


def glint_answer(con, sql: str, ctas: bool = False):
    """glint's Result for a query; with ``ctas``, by way of ``CREATE TABLE AS``
    and a scan of that table (the round trip must give the same rows)."""
    if ctas:
        con.sql(f"CREATE OR REPLACE TABLE {CTAS_TABLE} AS {sql}")
        return con.sql(f"SELECT * FROM {CTAS_TABLE}")
    return con.sql(sql)


def _worker_main(conn, device: str) -> None:  # pragma: no cover - runs in the worker process
    logging.disable(logging.WARNING)
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
            if self.started:  # killed after a hang or a death: a restart
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
        self.con = glint.connect(device=device)
        self.tables: dict[str, pa.Table] = {}
        self.restarts = 0

    def register(self, name, table):
        self.tables[name] = table
        self.con.register(name, table)

    def query(self, sql, timeout, ctas: bool = False):
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
_ORACLE_DISABLED = "join_filter_pushdown"  # always off in the oracle (see Duck._connect)
ORACLE_CHECK_OPTIMIZERS = "expression_rewriter"  # off for the second opinion on a mismatch


class Duck:
    def __init__(self):
        import duckdb  # optional: the test extra

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


class Engines:
    """glint (worker or in-process) and DuckDB, over the same tables."""

    def __init__(
        self,
        data: FuzzData,
        device: str = "cpu",
        time_limit: float = 30.0,
        in_process: bool = False,
        known_bugs: bool = False,
    ):
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
            if (
                o.duck_error.startswith("BinderException")
                and "INTEGER" in o.duck_error
                and "||" in sql
                and self._duckdb_null_concat(sql)
            ):
                o.status = "duck_only_error"
                o.details = [
                    "DuckDB limitation (a `||` with a NULL operand folds to an untyped NULL, typed "
                    f"INTEGER later): {o.duck_error}"
                ]
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
            o.details = ["DuckDB answers as glint does with its expression rewriter off: " + "; ".join(o.details[:2])]

    def _duckdb_null_concat(self, sql: str) -> bool:
        """Whether a `||` in ``sql`` has an operand without columns that is NULL:
        DuckDB folds such a concatenation into an untyped NULL that a derived
        table then types INTEGER (SELECT typeof(CAST(NULL AS VARCHAR) || 'x')
        is "NULL"), and later string functions on it fail to bind."""
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
        probe = error_probe(o.duck_error) if RUNTIME_ERROR.match(o.duck_error) else None
        if probe is None:
            probe = frame_probe(o.sql, o.duck_error)
        if probe is None and RUNTIME_ERROR.match(o.duck_error):
            probe = self._cte_probe(o)
        if probe is None:
            probe = self._window_probe(o)
        if probe is None:
            self._check_set_branches(o)
            return
        d = self.duck.query(probe, self.time_limit)
        g = self.glint.query(probe, self.time_limit)
        if d[0] == "error" and g[0] == "glint_error":
            o.status = "eval_order"
            o.details = [
                f"evaluation order: DuckDB raised {o.duck_error.splitlines()[0][:200]}; glint answered "
                f"({o.glint_table.num_rows} rows) without computing that value, and raises on it too "
                f"({probe}: {g[1]}: {g[2][:120]})"
            ]

    def _window_probe(self, o: Outcome) -> str | None:
        """DuckDB computes a window of a derived table whose column nothing
        reads, and fails where a RANGE frame's INTERVAL bound leaves the
        TIMESTAMP range (seed 9800 q3684); glint prunes the unread window. The
        probe: that derived table's SELECT on its own, where glint computes the
        window and must raise too (DuckDB must raise the same error on it)."""
        if "not in timestamp range" not in o.duck_error:
            return None
        try:
            tree = sqlglot.parse_one(o.sql, read=DIALECT)
        except Exception:  # noqa: BLE001
            return None
        with_ = tree.args.get("with") or tree.args.get("with_")
        head = with_.sql(dialect="duckdb") + " " if with_ is not None else ""
        for window in tree.find_all(exp.Window):
            spec = window.args.get("spec")
            if spec is None or spec.find(exp.Interval) is None:
                continue
            select = window.find_ancestor(exp.Select)
            if select is None or select is tree:
                continue
            probe = head + select.sql(dialect="duckdb")
            d = self.duck.query(probe, self.time_limit)
            if d[0] == "error" and d[1].splitlines()[0] == o.duck_error.splitlines()[0]:
                return probe
        return None

    def _check_set_branches(self, o: Outcome) -> None:
        """The rule classify applies to a query whose result glint computes as
        empty, applied to the branches of a set operation: DuckDB raised on a
        branch whose rows glint computes as none, so the failing value belongs
        to rows that never reach a result (seed 9700 q3880: DuckDB computed
        `tx + INTERVAL 1 DAY` for a timestamp in 294247 AD below a join that
        kept no rows, and raised without naming the operands; the UNION ALL's
        other branch had rows, so the empty-result rule did not apply)."""
        for branch in self._failing_branches(o):
            g = self.glint.query(branch, self.time_limit)
            if g[0] != "ok":
                continue
            rows = table_from_ipc(g[1]) if isinstance(g[1], (bytes, bytearray)) else g[1]
            if rows.num_rows == 0:
                o.status = "duck_only_error"
                o.details = [
                    "DuckDB limitation (evaluation order: DuckDB raised on a branch of a set operation whose "
                    f"rows glint computes as none: {branch[:200]}): {o.duck_error}"
                ]
                return

    def _failing_branches(self, o: Outcome) -> list[str]:
        """The branches of the query's set operations (its WITH clause kept)
        on which DuckDB raises the query's error."""
        try:
            tree = sqlglot.parse_one(o.sql, read=DIALECT)
        except Exception:  # noqa: BLE001
            return []
        if not isinstance(tree, exp.SetOperation):
            return []
        with_ = tree.args.get("with") or tree.args.get("with_")
        head = with_.sql(dialect="duckdb") + " " if with_ is not None else ""
        todo, failing = [tree.this, tree.expression], []
        while todo:
            node = todo.pop(0)
            node = node.this if isinstance(node, exp.Subquery) else node
            if isinstance(node, exp.SetOperation):
                todo[:0] = [node.this, node.expression]
                continue
            branch = head + node.sql(dialect="duckdb")
            d = self.duck.query(branch, self.time_limit)
            if d[0] == "error" and d[1].splitlines()[0] == o.duck_error.splitlines()[0]:
                failing.append(branch)
        return failing

    def _cte_probe(self, o: Outcome) -> str | None:
        """DuckDB materialises a CTE even where the query never reads its rows
        (seed 610 q1807: a CTE under CASE NULL WHEN ...), and fails on it; glint
        does not compute it. The probe: the first CTE DuckDB fails on read
        whole (WITH ... SELECT * FROM it), which glint must fail on too."""
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
