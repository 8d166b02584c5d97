"""What the benchmark suites share: registering a directory of generated
tables on a glint connection, shipped query texts, the data cache, and DuckDB
(the reference) with its pip-packaged extensions."""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path

import pyarrow as pa

from glint.errors import GlintError, GlintIOError
from glint.io.file_lists import tables_in_directory


def register_tables(
    con, directory, names, title: str, progress: bool | None = None, partition_keys: dict | None = None
) -> None:
    """con.read_parquet every table of `names` found in `directory` (one file or
    folder per table), with a progress bar on a terminal; ``partition_keys``
    (table -> column) hash-partitions those tables on a distributed connection."""
    found = tables_in_directory(directory)
    missing = [t for t in names if t not in found]
    if missing:
        raise GlintIOError(f"{title} tables missing in {str(directory)!r}: {', '.join(missing)}")
    show = progress if progress is not None else sys.stderr.isatty()

    def register(t):
        key = (partition_keys or {}).get(t)
        if key is None:
            con.read_parquet(found[t], t)
        else:
            con.read_parquet(found[t], t, partition_by=key)

    if not show:
        if not partition_keys and hasattr(con, "read_parquet_tables"):
            con.read_parquet_tables({t: found[t] for t in names})  # the footers read side by side
            return
        for t in names:
            register(t)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("loading {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("", total=len(names))
        for t in names:
            bar.update(task, description=t)
            register(t)
            bar.advance(task)


@cache
def read_query(path: Path, title: str) -> str:
    """A shipped query text, without its trailing semicolon."""
    try:
        text = path.read_text()
    except OSError as e:
        raise GlintIOError(f"cannot read the {title} query file {str(path)!r}: {e.strerror or e}") from None
    return text.strip().rstrip(";").rstrip()


def cache_dir(suite: str, label: str) -> Path:
    """Where a suite's generated Parquet files of one scale factor live:
    ``$GLINT_DATA/<suite>/sf<label>`` when GLINT_DATA is set, else
    ``~/.cache/glint/<suite>/sf<label>`` (``$XDG_CACHE_HOME/glint/...`` when set)."""
    root = os.environ.get("GLINT_DATA")
    if root:
        base = Path(root).expanduser()
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "glint"
    return base / suite / f"sf{label}"


def import_duckdb():
    """The duckdb module (the reference engine), or a GlintError saying how to install it."""
    try:
        import duckdb
    except ImportError:
        raise GlintError("DuckDB is not installed: pip install duckdb (or pip install -e '.[test]')") from None
    return duckdb


def duckdb_extension_path(name: str) -> Path:
    """The file of DuckDB's ``name`` extension (tpch, tpcds) shipped by the pip
    package ``duckdb-ext-<name>`` (its version must match duckdb's)."""
    import importlib.util

    duckdb = import_duckdb()
    spec = importlib.util.find_spec("duckdb_ext")
    roots = list(spec.submodule_search_locations or []) if spec else []
    version = duckdb.__version__
    for root in roots:
        base = Path(root) / "extensions" / f"v{version}"
        hits = sorted(base.glob(f"*/{name}.duckdb_extension"))
        if hits:
            try:
                platform = duckdb.connect().execute("PRAGMA platform").fetchone()[0]
                exact = base / platform / f"{name}.duckdb_extension"
                if exact.exists():
                    return exact
            except Exception:  # noqa: BLE001 - fall back to what exists
                pass
            return hits[0]
    raise GlintError(
        f"DuckDB's {name} extension for duckdb {version} is not installed: "
        f"pip install duckdb-ext-{name}=={version}.*  (or pip install -e '.[test]')"
    )


def load_duckdb_extension(con, name: str) -> None:
    """LOAD the pip-packaged extension into a DuckDB connection (or one the
    user installed with ``INSTALL name``)."""
    try:
        path = duckdb_extension_path(name)
    except GlintError as missing:
        try:
            con.execute(f"LOAD {name}")  # an extension the user installed with INSTALL
        except Exception:  # noqa: BLE001 - duckdb's IOException: not installed either way
            raise missing from None
        return
    con.execute(f"LOAD '{path}'")


def duckdb_arrow(con, sql: str) -> pa.Table:
    """Run sql on a DuckDB connection and return an Arrow table (DuckDB 1.4's
    ``.arrow()`` returns a RecordBatchReader, older ones a Table)."""
    res = con.sql(sql)
    if res is None:
        return pa.table({})
    t = res.arrow()
    return t.read_all() if isinstance(t, pa.RecordBatchReader) else t
