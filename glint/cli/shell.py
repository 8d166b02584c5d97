"""``glint shell``: the interactive SQL shell."""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

from glint import __version__
from glint.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    REPORT_HINT,
    collect_sources,
    connect_from_args,
    console,
    print_error,
    register_sources,
    render_table,
    result_arrow,
    sync,
    type_name,
)
from glint.cli.running import run_query
from glint.errors import GlintError, GlintIOError, Interrupted


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
                break  # unterminated quote: the statement goes on
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
            print_error(e)
        else:
            print(f"internal error: {type(e).__name__}: {e}", file=sys.stderr)
            print(REPORT_HINT, file=sys.stderr)
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
            _, tbl = run_query(self.con, sql)
            sync(self.con)
        except (KeyboardInterrupt, Interrupted):
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
            tbl = result_arrow(self.con.sql(f"SELECT * FROM {quoted} LIMIT 0"))
            t = Table(title=n, header_style="bold")
            t.add_column("column")
            t.add_column("type")
            for f in tbl.schema:
                t.add_row(f.name, type_name(f.type))
            self.out.print(t)

    def load(self, arg: str) -> None:
        parts = arg.split()
        if not parts or len(parts) > 2:
            raise GlintError(".load PATH [NAME]")
        path = parts[0]
        from glint.io.file_lists import CSV_SUFFIXES, has_suffix

        if len(parts) == 2:
            spec = f"{parts[1]}={path}"
        else:
            spec = path
        is_csv = has_suffix(path, CSV_SUFFIXES)
        sources = collect_sources(None if is_csv else [spec], [spec] if is_csv else None)
        register_sources(self.con, sources)
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
    out = console()
    sources = collect_sources(args.parquet, args.csv)
    con = connect_from_args(args.device, args)
    register_sources(con, sources)
    interactive = sys.stdin.isatty()
    save = None
    if interactive:
        save = _setup_readline()
        out.print(
            f"glint {__version__} on {getattr(con, 'device', args.device)}. "
            f"Enter .help for help; statements end with ';'.",
            markup=False,
        )
    try:
        return Shell(con, sources, out, interactive, max_rows=args.max_rows).loop()
    finally:
        if save:
            save()
