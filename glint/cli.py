"""The ``glint`` command: ``glint sql``, ``glint shell`` and ``glint tpch``.

Errors glint raises on purpose (:class:`~glint.errors.GlintError`) are printed
as ``Error: <message>`` with exit code 1, never with a traceback; anything else
is an internal error (exit code 2; ``GLINT_DEBUG=1`` shows the traceback).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import math
import os
import re
import sys
import time
import traceback
from decimal import Decimal
from pathlib import Path

from . import __version__
from .errors import GlintError, GlintIOError

EXIT_OK, EXIT_ERROR, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 130
_REPORT_HINT = ("This is a bug in glint: please report it with the command or query that caused it "
                "(set GLINT_DEBUG=1 to see the traceback).")


# ------------------------------------------------------------------ output helpers
def _console(stderr: bool = False):
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    tty = hasattr(stream, "isatty") and stream.isatty()
    # not a terminal (a pipe, a file, a test): no wrapping at 80 columns, no colours
    return Console(file=stream, width=None if tty else 100_000, no_color=not tty,
                   force_terminal=None if tty else False, highlight=False, soft_wrap=not tty)


def _print_error(e: BaseException) -> None:
    print(f"Error: {e}", file=sys.stderr)


def _print_internal(e: BaseException) -> None:
    print(f"internal error: {type(e).__name__}: {e}", file=sys.stderr)
    print(_REPORT_HINT, file=sys.stderr)
    if os.environ.get("GLINT_DEBUG"):
        traceback.print_exc()


def _fmt_value(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return repr(v)
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, (_dt.date, _dt.datetime)):
        return v.isoformat(sep=" ") if isinstance(v, _dt.datetime) else v.isoformat()
    return str(v)


def _display_values(col) -> list:
    """A column's values for display: DATE and TIMESTAMP as DuckDB prints
    them (years past 9999, BC, infinity included), the rest as Python values."""
    import pyarrow as pa
    temporal = pa.types.is_date(col.type) or (pa.types.is_timestamp(col.type) and col.type.tz is None)
    if not temporal:
        return col.to_pylist()
    from .storage.column import Column
    from .exec.functions.strings_host import format_values
    c = Column.from_arrow(col)
    texts = format_values(c.dtype, c.data).to_pylist()
    return [t if c.valid is None or bool(c.valid[i]) else None for i, t in enumerate(texts)]


def _type_name(t) -> str:
    try:
        from . import types as T

        return str(T.from_arrow(t))
    except Exception:  # noqa: BLE001 - any type glint does not map: show Arrow's name
        return str(t)


def render_table(tbl, max_rows: int = 40, title: str | None = None):
    """A rich Table of an Arrow table: column names with their SQL types,
    NULLs dimmed, numbers right-aligned; the first and last max_rows/2 rows of
    a longer result (max_rows=0: all)."""
    import pyarrow as pa
    from rich.table import Table
    from rich.text import Text

    n = tbl.num_rows
    table = Table(title=title, show_lines=False, header_style="bold")
    numeric = []
    for f in tbl.schema:
        is_num = pa.types.is_integer(f.type) or pa.types.is_floating(f.type) or pa.types.is_decimal(f.type)
        numeric.append(is_num)
        header = Text(f.name)
        header.append("\n" + _type_name(f.type), style="dim")
        table.add_column(header, justify="right" if is_num else "left", overflow="fold")
    if max_rows and n > max_rows:
        head, tail = max_rows // 2, max_rows - max_rows // 2
        parts = [(tbl.slice(0, head), False), (tbl.slice(n - tail, tail), True)]
    else:
        parts = [(tbl, False)]
    for part, is_tail in parts:
        if is_tail:
            table.add_row(*[Text("…", style="dim") for _ in tbl.schema])
        cols = [_display_values(c) for c in part.columns]
        for row in zip(*cols):
            table.add_row(*[Text("NULL", style="dim") if v is None else Text(_fmt_value(v)) for v in row])
    shown = "" if not (max_rows and n > max_rows) else f" (showing {max_rows})"
    table.caption = f"{n} row{'s' if n != 1 else ''}{shown}"
    return table


def _result_arrow(res):
    from .storage.loaders import to_arrow_table

    if res is None:
        return None
    return to_arrow_table(res.arrow())


# ------------------------------------------------------------------ data sources
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _table_name_for(path: str) -> str:
    from .storage.loaders import _table_stem

    name = _table_stem(Path(path.rstrip("/\\")).name)
    name = re.sub(r"[^A-Za-z0-9_]", "_", name) or "t"
    return "t_" + name if name[0].isdigit() else name


def _split_named(spec: str) -> tuple[str | None, str]:
    """'name=path' -> (name, path); a plain path -> (None, path)."""
    if "=" in spec and not os.path.exists(spec):
        name, path = spec.split("=", 1)
        if _IDENT.match(name):
            return name, path
    return None, spec


def collect_sources(parquet: list[str] | None, csv: list[str] | None) -> list[tuple[str, str, str]]:
    """(name, kind, path) of each table to register, checked to exist before
    any engine work: ``--parquet DIR`` gives one table per Parquet file or
    subdirectory of DIR, ``--parquet FILE`` one table named after the file;
    ``name=PATH`` names a table explicitly (PATH: a file, directory or glob)."""
    from .storage.loaders import CSV_SUFFIXES, PARQUET_SUFFIXES, resolve_files, tables_in_directory

    out: list[tuple[str, str, str]] = []
    for spec in parquet or []:
        name, path = _split_named(spec)
        p = os.path.expanduser(path)
        if name is None and os.path.isdir(p):
            out.extend((n, "parquet", f) for n, f in tables_in_directory(p).items())
            continue
        files = resolve_files(p, PARQUET_SUFFIXES, "Parquet")
        if name is None and any(c in p for c in "*?[") and not os.path.exists(p):
            out.extend((_table_name_for(str(f)), "parquet", str(f)) for f in files)
        else:
            out.append((name or _table_name_for(p), "parquet", p))
    for spec in csv or []:
        name, path = _split_named(spec)
        p = os.path.expanduser(path)
        resolve_files(p, CSV_SUFFIXES, "CSV")
        out.append((name or _table_name_for(p), "csv", p))
    seen: dict[str, str] = {}
    for name, _, path in out:
        if name.lower() in seen:
            raise GlintError(f"two tables named {name!r}: {seen[name.lower()]!r} and {path!r} "
                             f"(name one of them explicitly with NAME=PATH)")
        seen[name.lower()] = path
    return out


def _register(con, sources) -> None:
    for name, kind, path in sources:
        if kind == "parquet":
            con.read_parquet(path, name)
        else:
            con.read_csv(path, name)


def _connect(device: str, args=None):
    """A connection on ``device`` with the command's memory options; with
    ``--ranks``, over that many ranks."""
    import glint
    from .bench.harness import connect_options

    return glint.connect(device=device, **(connect_options(args) if args is not None else {}))


def memory_arguments(sp) -> None:
    """The memory options shared by sql, shell, tpch and bench."""
    sp.add_argument("--gpu-memory-limit", "--memory-limit", dest="gpu_memory_limit", metavar="SIZE",
                    help='bound glint\'s memory on its device, e.g. "16GB" (default: the free GPU memory; '
                         'on the CPU 60%% of the available host memory); past it, operators spill')
    sp.add_argument("--chunk-rows", type=int, help="rows per scan chunk (default: from the memory limit)")
    sp.add_argument("--spill-dir", help="directory for spilled data (default: the system's temporary directory)")


def parse_ranks(text: str):
    """``--ranks``: a number of ranks, or "env" (the ranks torchrun started).

    >>> parse_ranks("4"), parse_ranks("env")
    (4, 'env')
    """
    if text == "env":
        return text
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--ranks takes a number or env, not {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("--ranks must be at least 1")
    return n


def add_rank_arguments(p) -> None:
    """``--ranks`` and ``--rank-timeout`` (distributed runs, glint.dist)."""
    env = os.environ.get("GLINT_RANKS")
    p.add_argument("--ranks", type=parse_ranks, default=parse_ranks(env) if env else None,
                   help="run on this many ranks (processes: one per GPU with --device cuda, Gloo on the CPU); "
                        "env: the ranks torchrun started (python -m glint.dist.run)")
    p.add_argument("--rank-timeout", type=float, default=None,
                   help="seconds a rank waits for the others before the query fails naming the late rank")


def _sync(con) -> None:
    dev = getattr(con, "device", None)
    if dev is not None and getattr(dev, "type", None) == "cuda":
        import torch

        torch.cuda.synchronize(dev)


# ------------------------------------------------------------------ glint sql
def cmd_sql(args) -> int:
    out = _console()
    query = args.query
    if args.file:
        try:
            query = Path(args.file).read_text()
        except OSError as e:
            raise GlintIOError(f"cannot read {args.file!r}: {e.strerror or e}") from None
    elif query is None or query == "-":
        query = sys.stdin.read()
    if not query or not query.strip():
        raise GlintError("no SQL given")
    sources = collect_sources(args.parquet, args.csv)
    con = _connect(args.device, args)
    _register(con, sources)
    t0 = time.perf_counter()
    res = con.sql(query)
    if args.explain:
        text = res.explain()
        if text is not None:
            print(text)
        return EXIT_OK
    tbl = _result_arrow(res)
    _sync(con)
    elapsed = time.perf_counter() - t0
    if tbl is not None:
        out.print(render_table(tbl, max_rows=args.max_rows))
    if args.timer:
        out.print(f"Run time: {elapsed:.3f} s", style="dim")
        if getattr(res, "rank_stats", None):
            from .dist.stats import format_rank_stats
            out.print(format_rank_stats(res.rank_stats), style="dim", markup=False)
    return EXIT_OK


# ------------------------------------------------------------------ glint shell
def split_statements(buffer: str) -> tuple[list[str], str]:
    """Complete statements (ended by ';' outside quotes and comments) and the
    unfinished rest.

    >>> split_statements("select 1; select ';' as x;\\nselect")
    (['select 1', "select ';' as x"], '\\nselect')
    """
    stmts, start, i, n = [], 0, 0, len(buffer)
    while i < n:
        c = buffer[i]
        if c in "'\"":
            j = i + 1
            while j < n:
                if buffer[j] == c:
                    if j + 1 < n and buffer[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            if j >= n:
                break            # unterminated quote: the statement goes on
            i = j + 1
            continue
        if buffer.startswith("--", i):
            j = buffer.find("\n", i)
            if j == -1:
                break
            i = j + 1
            continue
        if buffer.startswith("/*", i):
            j = buffer.find("*/", i + 2)
            if j == -1:
                break
            i = j + 2
            continue
        if c == ";":
            s = buffer[start:i].strip()
            if s:
                stmts.append(s)
            start = i + 1
        i += 1
    return stmts, buffer[start:]


_SHELL_HELP = """\
Enter SQL statements ending with ';' (they may span several lines).
  .tables              list the tables
  .schema [NAME]       columns and types of a table (all tables without NAME)
  .explain SQL         show the plan of a query
  .timer on|off        show the run time of each query
  .load PATH [NAME]    register a Parquet or CSV file, directory or glob
  .read FILE           run the statements of a SQL file
  .help                this text
  .quit / .exit        leave (Ctrl-D also)"""


class Shell:
    def __init__(self, con, sources, out, interactive: bool, max_rows: int = 40):
        self.con = con
        self.out = out
        self.interactive = interactive
        self.max_rows = max_rows
        self.timer = False
        self.errors = 0
        self.tables: dict[str, str] = {name: path for name, _, path in sources}

    # -- helpers
    def _error(self, e: BaseException) -> None:
        self.errors += 1
        if isinstance(e, GlintError):
            _print_error(e)
        else:
            print(f"internal error: {type(e).__name__}: {e}", file=sys.stderr)
            print(_REPORT_HINT, file=sys.stderr)
            if os.environ.get("GLINT_DEBUG"):
                traceback.print_exc()

    def table_names(self) -> list[str]:
        names = set(self.tables)
        for attr in ("tables", "catalog"):
            obj = getattr(self.con, attr, None)
            try:
                obj = obj() if callable(obj) else obj
                if isinstance(obj, dict) or hasattr(obj, "keys"):
                    names.update(str(k) for k in obj.keys())
                elif isinstance(obj, (list, tuple, set)):
                    names.update(str(getattr(x, "name", x)) for x in obj)
            except Exception:  # noqa: BLE001 - the catalog API is optional
                pass
        return sorted(names, key=str.lower)

    def run_sql(self, sql: str) -> None:
        t0 = time.perf_counter()
        try:
            res = self.con.sql(sql)
            tbl = _result_arrow(res)
            _sync(self.con)
        except KeyboardInterrupt:
            print("Interrupted", file=sys.stderr)
            return
        except Exception as e:  # noqa: BLE001 - printed, the shell goes on
            self._error(e)
            return
        elapsed = time.perf_counter() - t0
        if tbl is not None and (tbl.num_columns or tbl.num_rows):
            self.out.print(render_table(tbl, max_rows=self.max_rows))
        if self.timer:
            self.out.print(f"Run time: {elapsed:.3f} s", style="dim")

    # -- dot commands
    def dot(self, line: str) -> bool:
        """Run a dot command; False when the shell should stop."""
        parts = line.strip().split(None, 1)
        cmd, arg = parts[0].lower(), (parts[1].strip() if len(parts) > 1 else "")
        try:
            if cmd in (".quit", ".exit", ".q"):
                return False
            if cmd == ".help":
                self.out.print(_SHELL_HELP, markup=False)
            elif cmd == ".tables":
                names = self.table_names()
                self.out.print("  ".join(names) if names else "(no tables)", markup=False)
            elif cmd == ".schema":
                self.schema(arg)
            elif cmd == ".explain":
                if not arg:
                    raise GlintError(".explain needs a query: .explain SELECT ...")
                text = self.con.sql(arg.rstrip().rstrip(";")).explain()
                if text is not None:
                    self.out.print(str(text), markup=False)
            elif cmd == ".timer":
                if arg.lower() not in ("on", "off"):
                    raise GlintError(".timer takes on or off")
                self.timer = arg.lower() == "on"
            elif cmd == ".load":
                self.load(arg)
            elif cmd == ".read":
                if not arg:
                    raise GlintError(".read needs a file name")
                try:
                    text = Path(os.path.expanduser(arg)).read_text()
                except OSError as e:
                    raise GlintIOError(f"cannot read {arg!r}: {e.strerror or e}") from None
                stmts, rest = split_statements(text)
                for s in stmts + ([rest.strip()] if rest.strip() else []):
                    self.run_sql(s)
            else:
                raise GlintError(f"unknown command {cmd} (.help lists the commands)")
        except Exception as e:  # noqa: BLE001
            self._error(e)
        return True

    def schema(self, name: str) -> None:
        from rich.table import Table

        names = [name.strip().rstrip(";")] if name.strip() else self.table_names()
        if not names:
            self.out.print("(no tables)")
            return
        for n in names:
            quoted = '"' + n.replace('"', '""') + '"'
            tbl = _result_arrow(self.con.sql(f"SELECT * FROM {quoted} LIMIT 0"))
            t = Table(title=n, header_style="bold")
            t.add_column("column")
            t.add_column("type")
            for f in tbl.schema:
                t.add_row(f.name, _type_name(f.type))
            self.out.print(t)

    def load(self, arg: str) -> None:
        parts = arg.split()
        if not parts or len(parts) > 2:
            raise GlintError(".load PATH [NAME]")
        path = parts[0]
        from .storage.loaders import CSV_SUFFIXES, _has_suffix

        if len(parts) == 2:
            spec = f"{parts[1]}={path}"
        else:
            spec = path
        is_csv = _has_suffix(path, CSV_SUFFIXES)
        sources = collect_sources(None if is_csv else [spec], [spec] if is_csv else None)
        _register(self.con, sources)
        for name, _, p in sources:
            self.tables[name] = p
        self.out.print(f"loaded {', '.join(n for n, _, _ in sources)}", markup=False)

    # -- loop
    def read_line(self, prompt: str) -> str | None:
        if self.interactive:
            try:
                return input(prompt)
            except EOFError:
                print()
                return None
        line = sys.stdin.readline()
        return None if line == "" else line.rstrip("\n")

    def loop(self) -> int:
        buffer = ""
        while True:
            try:
                line = self.read_line("glint> " if not buffer.strip() else "  ...> ")
            except KeyboardInterrupt:
                print("^C")
                buffer = ""
                continue
            if line is None:
                if buffer.strip():
                    self.run_sql(buffer.strip())
                break
            if not buffer.strip() and line.strip().startswith("."):
                if not self.dot(line):
                    break
                continue
            buffer += line + "\n"
            stmts, buffer = split_statements(buffer)
            for s in stmts:
                self.run_sql(s)
        return EXIT_ERROR if (self.errors and not self.interactive) else EXIT_OK


def _setup_readline():
    try:
        import readline
    except ImportError:
        return None
    hist = os.path.expanduser(os.environ.get("GLINT_HISTORY", "~/.glint_history"))
    try:
        readline.read_history_file(hist)
    except (OSError, ValueError):
        pass
    readline.set_history_length(2000)

    def save():
        try:
            readline.write_history_file(hist)
        except OSError:
            pass
    return save


def cmd_shell(args) -> int:
    out = _console()
    sources = collect_sources(args.parquet, args.csv)
    con = _connect(args.device, args)
    _register(con, sources)
    interactive = sys.stdin.isatty()
    save = None
    if interactive:
        save = _setup_readline()
        out.print(f"glint {__version__} on {getattr(con, 'device', args.device)}. "
                  f"Enter .help for help; statements end with ';'.", markup=False)
    try:
        return Shell(con, sources, out, interactive, max_rows=args.max_rows).loop()
    finally:
        if save:
            save()


# ------------------------------------------------------------------ glint tpch
def parse_query_list(text: str | None) -> list[int]:
    """'1,5,9' or '1-5,7' -> [1, 5, 9] / [1, 2, 3, 4, 5, 7]; None -> 1..22.

    >>> parse_query_list("3, 1-2"), len(parse_query_list(None))
    ([3, 1, 2], 22)
    """
    if text is None or not text.strip():
        return list(range(1, 23))
    out: list[int] = []
    for part in text.split(","):
        part = part.strip().lower().lstrip("q")
        if not part:
            continue
        try:
            if "-" in part:
                a, b = (int(x.strip().lstrip("q")) for x in part.split("-", 1))
                nums = list(range(a, b + 1))
            else:
                nums = [int(part)]
        except ValueError:
            raise GlintError(f"invalid query list {text!r}: use numbers like 1,5,9 or ranges like 1-5") from None
        for n in nums:
            if not 1 <= n <= 22:
                raise GlintError(f"there is no TPC-H query {n}: the queries are 1 to 22")
            if n not in out:
                out.append(n)
    if not out:
        raise GlintError(f"invalid query list {text!r}")
    return out


class _QueryRun:
    def __init__(self, n: int):
        self.n = n
        self.rows: int | None = None
        self.glint_s: float | None = None
        self.duck_s: float | None = None
        self.status = "ok"          # ok | diff | error | unchecked
        self.check = ""
        self.details: list[str] = []
        self.rank_stats: list | None = None     # a distributed run's per-rank breakdown


def _time_runs(fn, runs: int):
    best, result = None, None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t0
        best = dt if best is None or dt < best else best
    return result, best


def cmd_tpch(args) -> int:
    from .bench import tpch
    from .testing.compare import compare_query_result

    out, err = _console(), _console(stderr=True)
    queries = parse_query_list(args.queries)
    if args.runs < 1:
        raise GlintError("--runs must be at least 1")
    tpch.sf_label(args.sf)
    show_progress = err.is_terminal
    if args.data:
        data = Path(os.path.expanduser(args.data))
    elif args.generator == "dbgen":
        data = tpch.ensure_dbgen_data(args.sf, progress=show_progress)
    else:
        data = tpch.ensure_tpch_data(args.sf, progress=show_progress)
    full_answers = args.generator == "dbgen" and not args.data
    check = not args.no_check
    duck = None
    if check:
        try:
            t0 = time.perf_counter()
            duck = tpch.duckdb_tpch_connection(data)
            duck_load = time.perf_counter() - t0
        except GlintIOError:
            raise                      # the data itself is wrong
        except GlintError as e:        # DuckDB is not installed
            err.print(f"[yellow]DuckDB unavailable, results not checked:[/] {e}")
            check = False
    con = _connect(args.device, args)
    t0 = time.perf_counter()
    tpch.load_tpch(con, directory=data, progress=show_progress,
                   partition_keys=tpch.PARTITION_KEYS if getattr(args, "hash_partition", False) else None)
    load_s = time.perf_counter() - t0
    device = getattr(con, "device", args.device)
    if getattr(con, "ranks", None):
        device = f"{con.ranks} ranks on {device.type}"
    msg = f"TPC-H SF {tpch.sf_label(args.sf)} from {data}: loaded into glint in {load_s:.1f} s (device {device})"
    if duck is not None:
        msg += f", into DuckDB in {duck_load:.1f} s"
    err.print(msg, markup=False, highlight=False)

    results: list[_QueryRun] = []
    for n in queries:
        q = tpch.tpch_query(n)
        r = _QueryRun(n)
        results.append(r)
        status = err.status(f"Q{n}: glint") if show_progress else None
        if status:
            status.start()
        try:
            def run_glint():
                res = con.sql(q)
                tbl = _result_arrow(res)
                _sync(con)
                r.rank_stats = getattr(res, "rank_stats", None)
                return tbl
            try:
                got, r.glint_s = _time_runs(run_glint, args.runs)
                r.rows = got.num_rows
            except KeyboardInterrupt:
                raise
            except GlintError as e:
                r.status, r.check = "error", f"error: {type(e).__name__}"
                r.details.append(str(e))
                continue
            except Exception as e:  # noqa: BLE001 - reported in the table
                r.status, r.check = "error", f"internal error: {type(e).__name__}"
                r.details.append(f"{type(e).__name__}: {e}")
                if os.environ.get("GLINT_DEBUG"):
                    r.details.append(traceback.format_exc())
                continue
            if not check:
                r.status, r.check = "unchecked", "not checked"
                continue
            if status:
                status.update(f"Q{n}: DuckDB")
            checks = []
            try:
                expected, r.duck_s = _time_runs(lambda: tpch.duckdb_arrow(duck, q), args.runs)
                diffs = compare_query_result(q, got, expected)
                if diffs:
                    r.status = "diff"
                    r.details.append("differs from DuckDB:")
                    r.details.extend("  " + d for d in diffs)
                    checks.append("DIFF vs DuckDB")
                else:
                    checks.append("DuckDB")
            except Exception as e:  # noqa: BLE001
                r.status = "error"
                r.details.append(f"DuckDB failed: {type(e).__name__}: {e}")
                checks.append("DuckDB failed")
            try:
                answer = tpch.official_answer(n, args.sf)
            except GlintError as e:
                answer = None
                r.details.append(f"official answer unavailable: {e}")
            if answer is not None:
                cols = (list(range(answer.num_columns)) if full_answers
                        else tpch.answer_columns_for_tpchgen(n, answer.schema.names))
                if cols is None:
                    checks.append("answer n/a")
                else:
                    diffs = (compare_query_result(q, got.select(cols), answer.select(cols))
                             if got.num_columns == answer.num_columns else
                             [f"column count: actual {got.num_columns}, expected {answer.num_columns}"])
                    if diffs:
                        r.status = "diff" if r.status == "ok" else r.status
                        r.details.append("differs from the official answer:")
                        r.details.extend("  " + d for d in diffs)
                        checks.append("DIFF vs answer")
                    else:
                        checks.append("answer*" if len(cols) < answer.num_columns else "answer")
            if r.status == "ok":
                r.check = "ok (" + ", ".join(checks) + ")"
            else:
                r.check = ", ".join(c for c in checks if c.startswith("DIFF") or c.endswith("failed"))
        finally:
            if status:
                status.stop()

    _print_tpch_table(out, results, args, tpch.sf_label(args.sf), device, check)
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
    if ranks:                       # a distributed run: where the slowest rank's time went
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
        cells = [f"Q{r.n:02d}", "-" if r.rows is None else str(r.rows),
                 "-" if r.glint_s is None else f"{r.glint_s:.3f}",
                 "-" if r.duck_s is None else f"{r.duck_s:.3f}"]
        if ranks:
            cells += breakdown_cells(r.rank_stats)
        t.add_row(*cells, Text(r.check, style=styles.get(r.status, "")))
    t.add_section()
    n_ok = sum(r.status in ("ok", "unchecked") for r in results)
    t.add_row("total", "", f"{g_total:.3f}", f"{d_total:.3f}" if check else "-", *([""] * (7 if ranks else 0)),
              f"{n_ok}/{len(results)} ok")
    out.print(t)
    if any("answer*" in r.check for r in results):
        out.print("* checked against the official answer without the address and comment columns: those answers "
                  "come from DuckDB's dbgen, whose random text differs from tpchgen-cli's", style="dim")
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
    from .dist.stats import summary
    s = summary(rank_stats)
    return [f"{s[k]:.3f}" for k in ("compute_s", "shuffle_s", "broadcast_s", "gather_s", "allreduce_s", "wait_s")] + \
        [f"{s['bytes_sent'] / (1 << 20):,.1f}"]


# ------------------------------------------------------------------ argument parsing
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="glint", description="glint: a SQL analytics engine on PyTorch tensors")
    p.add_argument("--version", action="version", version=f"glint {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def sources(sp):
        sp.add_argument("--parquet", action="append", metavar="DIR|FILE|NAME=PATH",
                        help="register each Parquet file / subdirectory of DIR as a table named after it "
                             "(or one file; NAME=PATH names it); repeatable")
        sp.add_argument("--csv", nargs="+", action="extend", metavar="FILE|NAME=PATH",
                        help="register CSV files as tables named after the files")
        sp.add_argument("--device", default="auto", help='"auto" (default), "cpu", "cuda" or "cuda:N"')
        sp.add_argument("--max-rows", type=int, default=40, help="rows shown of a longer result (0: all)")
        memory_arguments(sp)
        add_rank_arguments(sp)

    s = sub.add_parser("sql", help="run one SQL query and print its result")
    s.add_argument("query", nargs="?", help="the SQL text ('-' or nothing: read it from stdin)")
    s.add_argument("-f", "--file", help="read the SQL from this file")
    s.add_argument("--explain", action="store_true", help="print the plan instead of running the query")
    s.add_argument("--timer", action="store_true", help="print the run time")
    sources(s)
    s.set_defaults(func=cmd_sql)

    sh = sub.add_parser("shell", help="interactive SQL shell")
    sources(sh)
    sh.set_defaults(func=cmd_shell)

    t = sub.add_parser("tpch", help="run TPC-H and check the results against DuckDB and the official answers")
    t.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    t.add_argument("--device", default="auto", help='"auto" (default), "cpu", "cuda" or "cuda:N"')
    t.add_argument("--queries", help="e.g. 1,5,9 or 1-6 (default: all 22)")
    t.add_argument("--no-check", action="store_true", help="only time glint: no DuckDB run, no comparison")
    t.add_argument("--runs", type=int, default=1, help="runs per query; the best time is shown (default 1)")
    t.add_argument("--data", help="use the TPC-H Parquet files in this directory instead of the cache")
    t.add_argument("--generator", choices=["tpchgen", "dbgen"], default="tpchgen",
                   help="tpchgen (tpchgen-cli, default) or dbgen (DuckDB's dbgen, whose data the official "
                        "answers were made from, so every column of every query is checked against them)")
    memory_arguments(t)
    add_rank_arguments(t)
    t.add_argument("--hash-partition", action="store_true",
                   help="with --ranks: hash-partition the tables on their keys at load (lineitem and orders "
                        "on the order key...), so joins on them need no exchange")
    t.set_defaults(func=cmd_tpch)

    from .bench import harness
    b = sub.add_parser("bench", help="benchmark TPC-H or SSB (glint warm and cold against DuckDB, results checked), or exchange (shuffle and broadcast against raw collectives)")
    harness.add_arguments(b)
    b.set_defaults(func=harness.cmd_bench)
    bm = sub.add_parser("bench-merge", help="merge the JSON reports of one benchmark run in parts")
    bm.add_argument("reports", nargs="+", help="JSON reports written by glint bench")
    bm.add_argument("--out", help="output directory")
    bm.set_defaults(func=harness.cmd_merge)

    from .testing.fuzz.runner import add_parser as add_fuzz_parser   # glint fuzz
    add_fuzz_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_INTERNAL
    try:
        return args.func(args)
    except GlintError as e:
        _print_error(e)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("Interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 - never a traceback for users
        _print_internal(e)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
