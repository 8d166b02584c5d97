"""What the commands share: printing results and errors, exit codes, the data-source,
memory and rank options, and connecting from them.

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
import traceback
from decimal import Decimal
from pathlib import Path

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.errors import GlintError
from glint.functions.strings.host import format_values
from glint.io.arrow_objects import to_arrow_table
from glint.io.file_lists import CSV_SUFFIXES, PARQUET_SUFFIXES, resolve_files, table_stem, tables_in_directory

EXIT_OK, EXIT_ERROR, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 130
REPORT_HINT = (
    "This is a bug in glint: please report it with the command or query that caused it "
    "(set GLINT_DEBUG=1 to see the traceback)."
)


# ------------------------------------------------------------------ output helpers
def console(stderr: bool = False):
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    tty = hasattr(stream, "isatty") and stream.isatty()
    # not a terminal (a pipe, a file, a test): no wrapping at 80 columns, no colours
    return Console(
        file=stream,
        width=None if tty else 100_000,
        no_color=not tty,
        force_terminal=None if tty else False,
        highlight=False,
        soft_wrap=not tty,
    )


def print_error(e: BaseException) -> None:
    print(f"Error: {e}", file=sys.stderr)


def print_internal(e: BaseException) -> None:
    print(f"internal error: {type(e).__name__}: {e}", file=sys.stderr)
    print(REPORT_HINT, file=sys.stderr)
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

    c = Column.from_arrow(col)
    texts = format_values(c.dtype, c.data).to_pylist()
    return [t if c.valid is None or bool(c.valid[i]) else None for i, t in enumerate(texts)]


def type_name(t) -> str:
    try:
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
        header.append("\n" + type_name(f.type), style="dim")
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


def result_arrow(res):

    if res is None:
        return None
    return to_arrow_table(res.arrow())


# ------------------------------------------------------------------ data sources
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _table_name_for(path: str) -> str:

    name = table_stem(Path(path.rstrip("/\\")).name)
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
            raise GlintError(
                f"two tables named {name!r}: {seen[name.lower()]!r} and {path!r} "
                f"(name one of them explicitly with NAME=PATH)"
            )
        seen[name.lower()] = path
    return out


def register_sources(con, sources) -> None:
    for name, kind, path in sources:
        if kind == "parquet":
            con.read_parquet(path, name)
        else:
            con.read_csv(path, name)


def connect_from_args(device: str, args=None):
    """A connection on ``device`` with the command's memory options; with
    ``--ranks``, over that many ranks."""
    import glint

    return glint.connect(device=device, **(connect_options(args) if args is not None else {}))


def memory_arguments(sp) -> None:
    """The memory options shared by sql, shell, tpch and bench."""
    sp.add_argument(
        "--gpu-memory-limit",
        "--memory-limit",
        dest="gpu_memory_limit",
        metavar="SIZE",
        help='bound glint\'s memory on its device, e.g. "16GB" (default: the free GPU memory; '
        "on the CPU 60%% of the available host memory); past it, operators spill",
    )
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
    """``--ranks`` and ``--rank-timeout`` (distributed runs, glint.distributed)."""
    env = os.environ.get("GLINT_RANKS")
    p.add_argument(
        "--ranks",
        type=parse_ranks,
        default=parse_ranks(env) if env else None,
        help="run on this many ranks (processes: one per GPU with --device cuda, Gloo on the CPU); "
        "env: the ranks torchrun started (torchrun ... -m glint COMMAND ... --ranks env)",
    )
    p.add_argument(
        "--rank-timeout",
        type=float,
        default=None,
        help="seconds a rank waits for the others before the query fails naming the late rank",
    )


def sync(con) -> None:
    dev = getattr(con, "device", None)
    if dev is not None and getattr(dev, "type", None) == "cuda":
        import torch

        torch.cuda.synchronize(dev)


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


def connect_options(args) -> dict:
    """glint.connect keyword arguments from a command's memory and rank options."""
    opts = {}
    if getattr(args, "gpu_memory_limit", None):
        opts["memory_limit"] = args.gpu_memory_limit
    if getattr(args, "chunk_rows", None):
        opts["chunk_rows"] = args.chunk_rows
    if getattr(args, "spill_dir", None):
        opts["spill_dir"] = args.spill_dir
    if getattr(args, "ranks", None) is not None:
        opts["ranks"] = args.ranks
        if getattr(args, "rank_timeout", None):
            opts["timeout"] = args.rank_timeout
    return opts
