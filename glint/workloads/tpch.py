"""TPC-H: query texts, data generation (tpchgen-cli), loading, and the DuckDB
reference (same Parquet files) plus the official answers of DuckDB's tpch
extension.

The 22 query texts under ``queries/tpch/`` are DuckDB's (``tpch_queries()`` of
its tpch extension), exported once by ``python -m glint.workloads.tpch --export-queries``.

>>> tpch_query(6).splitlines()[0]
'SELECT'
>>> data_dir(0.01).name, data_dir(1).name, data_dir(1.0).name
('sf0.01', 'sf1', 'sf1')
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from decimal import Decimal, InvalidOperation
from functools import cache, lru_cache
from pathlib import Path

import pyarrow as pa

from glint.errors import GlintError, GlintIOError
from glint.io.file_lists import tables_in_directory
from glint.workloads.common import duckdb_arrow, duckdb_extension_path, import_duckdb, load_duckdb_extension
from glint.workloads.progress import GenerationProgress

__all__ = [
    "tpch_tables",
    "tpch_query",
    "tpch_queries",
    "QUERY_DIR",
    "ANSWER_SCALE_FACTORS",
    "data_dir",
    "ensure_tpch_data",
    "find_tpchgen",
    "load_tpch",
    "tpch_extension_path",
    "duckdb_tpch_connection",
    "duckdb_arrow",
    "official_answer",
    "parse_answer",
    "answer_columns_for_tpchgen",
    "export_queries",
    "sf_label",
]

QUERY_DIR = Path(__file__).resolve().parent / "queries" / "tpch"
NUM_QUERIES = 22
tpch_tables = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]
# the columns a distributed run hash-partitions the tables on (--hash-partition): as
# "Terabyte-scale analytics in the blink of an eye" does, lineitem and orders on the
# order key, partsupp on the part key, the others on their primary keys
PARTITION_KEYS = {
    "lineitem": "l_orderkey",
    "orders": "o_orderkey",
    "partsupp": "ps_partkey",
    "part": "p_partkey",
    "customer": "c_custkey",
    "supplier": "s_suppkey",
}
ANSWER_SCALE_FACTORS = (0.01, 0.1, 1.0)  # scale factors tpch_answers() has answers for


# ------------------------------------------------------------------ queries
def tpch_query(n: int) -> str:
    """The text of TPC-H query ``n`` (1..22), DuckDB's version, without the
    trailing semicolon."""
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= NUM_QUERIES:
        raise GlintError(f"there is no TPC-H query {n!r}: the queries are 1 to {NUM_QUERIES}")
    return _query_text(n)


def _query_text(n: int) -> str:
    from glint.workloads.common import read_query

    return read_query(QUERY_DIR / f"q{n:02d}.sql", "TPC-H")


def tpch_queries() -> dict[int, str]:
    """All 22 query texts, number -> SQL."""
    return {n: tpch_query(n) for n in range(1, NUM_QUERIES + 1)}


# ------------------------------------------------------------------ DuckDB's tpch extension
def tpch_extension_path() -> Path:
    """The file of DuckDB's tpch extension shipped by the pip package
    ``duckdb-ext-tpch`` (its version must match duckdb's)."""
    return duckdb_extension_path("tpch")


def _load_tpch_extension(con) -> None:
    load_duckdb_extension(con, "tpch")


@lru_cache(maxsize=1)
def _reference_connection():
    """In-memory DuckDB with the extension loaded and empty TPC-H tables
    (``dbgen(sf=0)``): the source of result schemas and answers."""
    duckdb = import_duckdb()
    con = duckdb.connect()
    _load_tpch_extension(con)
    con.execute("CALL dbgen(sf=0)")
    return con


def export_queries(dest: Path = QUERY_DIR) -> list[Path]:
    """Write q01.sql ... q22.sql from the extension's tpch_queries()."""
    con = _reference_connection()
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for n, text in con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY query_nr").fetchall():
        p = dest / f"q{n:02d}.sql"
        p.write_text(text.rstrip() + "\n")
        out.append(p)
    _query_text.cache_clear()
    return out


def duckdb_tpch_connection(directory: str | os.PathLike, views: bool = False, threads: int | None = None):
    """A DuckDB connection holding the 8 TPC-H tables of the Parquet files in
    ``directory`` (as produced by tpchgen-cli, single files or ``--parts``
    subdirectories): in-memory tables, or views over the files with ``views=True``."""
    duckdb = import_duckdb()
    found = tables_in_directory(directory)
    missing = [t for t in tpch_tables if t not in found]
    if missing:
        raise GlintIOError(f"TPC-H tables missing in {os.fspath(directory)!r}: {', '.join(missing)}")
    con = duckdb.connect()
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    for t in tpch_tables:
        p = Path(found[t])
        pattern = str(p / "**" / "*.parquet") if p.is_dir() else str(p)
        pattern = pattern.replace("'", "''")
        kind = "VIEW" if views else "TABLE"
        con.execute(f"CREATE {kind} {t} AS SELECT * FROM read_parquet('{pattern}')")
    return con


# ------------------------------------------------------------------ official answers
def _answer_sf(sf) -> float | None:
    for a in ANSWER_SCALE_FACTORS:
        if abs(float(sf) - a) < 1e-9:
            return a
    return None


def official_answer(n: int, sf) -> pa.Table | None:
    """The official answer of query ``n`` at scale factor ``sf`` from the tpch
    extension's ``tpch_answers()`` (exists for SF 0.01, 0.1 and 1; None
    otherwise), typed like DuckDB's result of the query (DECIMAL as decimal128,
    dates as date32...), with the query's column names."""
    tpch_query(n)
    a = _answer_sf(sf)
    if a is None:
        return None
    con = _reference_connection()
    row = con.execute(
        "SELECT answer FROM tpch_answers() WHERE query_nr = ? AND abs(scale_factor - ?) < 1e-9", [n, a]
    ).fetchone()
    if row is None:
        return None
    schema = duckdb_arrow(con, tpch_query(n)).schema  # the tables are empty: this is instant
    return parse_answer(row[0], schema)


# DuckDB's tpch_answers() were computed on DuckDB's own dbgen data, whose random
# text (addresses and comments) differs from the reference dbgen that tpchgen-cli
# reproduces; keys, numbers, dates, names and flags agree. So on tpchgen-cli data,
# compare answers without these columns, and not at all for Q13 (it filters on
# o_comment, so its counts differ).
ANSWER_TEXT_COLUMNS = frozenset(
    {
        "s_address",
        "s_comment",
        "c_address",
        "c_comment",
        "p_comment",
        "ps_comment",
        "o_comment",
        "l_comment",
        "n_comment",
        "r_comment",
    }
)
ANSWER_UNUSABLE_ON_TPCHGEN = frozenset({13})


def answer_columns_for_tpchgen(n: int, names: list[str]) -> list[int] | None:
    """Positions of the columns of query n's result that can be checked against
    tpch_answers() when the data came from tpchgen-cli (None: none can).

    >>> answer_columns_for_tpchgen(20, ["s_name", "s_address"]), answer_columns_for_tpchgen(13, ["a"])
    ([0], None)
    """
    if n in ANSWER_UNUSABLE_ON_TPCHGEN:
        return None
    return [i for i, c in enumerate(names) if c.lower() not in ANSWER_TEXT_COLUMNS]


def parse_answer(text: str, schema: pa.Schema) -> pa.Table:
    """Parse an answer of tpch_answers(): a header line and one line per row,
    fields separated by '|', NULL written as an empty field."""
    if text.endswith("\n"):
        text = text[:-1]  # (a row of one NULL column is an empty line: strip only the last newline)
    lines = text.split("\n")
    if not lines or not lines[0]:
        raise GlintError("empty TPC-H answer text")
    header = lines[0].split("|")
    if len(header) != len(schema):
        raise GlintError(f"TPC-H answer has {len(header)} columns ({header}), the query {len(schema)}")
    cols: list[list] = [[] for _ in schema]
    for ln, line in enumerate(lines[1:], start=2):
        fields = line.split("|")
        if len(fields) != len(schema):
            raise GlintError(f"TPC-H answer line {ln} has {len(fields)} fields, expected {len(schema)}: {line!r}")
        for i, (f, field) in enumerate(zip(fields, schema)):
            cols[i].append(_parse_field(f, field.type))
    return pa.table([pa.array(c, type=f.type) for c, f in zip(cols, schema)], schema=schema)


def _parse_field(s: str, t: pa.DataType):
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return s
    if s == "" or s == "NULL":
        return None
    try:
        if pa.types.is_decimal(t):
            return Decimal(s)
        if pa.types.is_integer(t):
            return int(s)
        if pa.types.is_floating(t):
            return float(s)
        if pa.types.is_date(t):
            return _dt.date.fromisoformat(s)
        if pa.types.is_boolean(t):
            return s.lower() in ("true", "t", "1")
    except (ValueError, InvalidOperation):
        raise GlintError(f"cannot parse {s!r} as {t} in a TPC-H answer") from None
    raise GlintError(f"unexpected column type {t} in a TPC-H answer")


# ------------------------------------------------------------------ data
def sf_label(sf) -> str:
    """'1' for 1 or 1.0, '0.01' for 0.01, '100' for 100."""
    d = Decimal(str(sf))
    if d <= 0:
        raise GlintError(f"the scale factor must be positive, got {sf}")
    if d == d.to_integral_value():
        return str(int(d))
    return format(d.normalize(), "f")


def data_dir(sf) -> Path:
    """Where the Parquet files of scale factor ``sf`` live (see common.cache_dir)."""
    from glint.workloads.common import cache_dir

    return cache_dir("tpch", sf_label(sf))


def dbgen_data_dir(sf) -> Path:
    return data_dir(sf).parent.parent / "tpch-dbgen" / f"sf{sf_label(sf)}"


def ensure_dbgen_data(sf, progress: bool = True) -> Path:
    """TPC-H Parquet files made by DuckDB's dbgen (the generator the official
    answer sets come from), cached like tpchgen-cli's."""
    dest = dbgen_data_dir(sf)
    if _complete(dest):
        return dest
    duckdb = import_duckdb()
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    con = duckdb.connect()
    report = (
        GenerationProgress(f"DuckDB dbgen SF {sf_label(sf)}", total=len(tpch_tables), unit="tables written")
        if progress
        else nullcontext()
    )
    try:
        _load_tpch_extension(con)
        with report as p:
            if progress:
                p.update(info=f"generating into {dest}")
            con.execute(f"CALL dbgen(sf={float(sf)})")
            for i, t in enumerate(tpch_tables):
                if progress:
                    p.update(completed=i, info=f"writing {t}")
                con.execute(f"COPY {t} TO '{tmp / (t + '.parquet')}' (FORMAT parquet)")
            if progress:
                p.update(completed=len(tpch_tables), info="")
    finally:
        con.close()
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)
    return dest


def find_tpchgen() -> str:
    """The tpchgen-cli executable: next to the running Python (a venv's bin/)
    or on PATH."""
    exe_dir = Path(sys.executable).parent
    for name in ("tpchgen-cli", "tpchgen-cli.exe"):
        p = exe_dir / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    found = shutil.which("tpchgen-cli")
    if found:
        return found
    raise GlintError(
        "tpchgen-cli was not found (next to the Python interpreter or on PATH): "
        "pip install tpchgen-cli  (or pip install -e '.[bench]')"
    )


@cache
def _tpchgen_command(exe: str) -> tuple[str, ...]:
    """Arguments selecting Parquet output: tpchgen-cli >= 2 has a ``parquet``
    subcommand; 1.x took ``--format parquet``."""
    try:
        help_text = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise GlintError(f"cannot run {exe}: {e}") from None
    if "--format" in help_text and "Commands:" not in help_text:
        return ("--format", "parquet")
    return ("parquet",)


def _complete(d: Path) -> bool:
    try:
        found = tables_in_directory(d)
    except GlintIOError:
        return False
    return all(t in found for t in tpch_tables)


def _dir_bytes(d: Path) -> int:
    total = 0
    for root, _, files in os.walk(d):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def ensure_tpch_data(sf, progress: bool = True, parts: int | None = None) -> Path:
    """The directory of TPC-H Parquet files at scale factor ``sf``, generated
    with tpchgen-cli into :func:`data_dir` when not there yet. Generation writes
    into a temporary sibling directory that is renamed when complete, so an
    interrupted run never leaves a half-written cache behind."""
    target = data_dir(sf)
    if _complete(target):
        return target
    if target.exists() and any(target.iterdir()):
        raise GlintIOError(
            f"{str(target)!r} exists but does not hold the 8 TPC-H tables: remove it "
            f"(or point GLINT_DATA elsewhere) to have it generated again"
        )
    exe = find_tpchgen()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)  # mkdtemp makes it private; the cache is an ordinary folder
    cmd = [exe, *_tpchgen_command(exe), "--scale-factor", sf_label(sf), "--output-dir", str(tmp)]
    if parts:
        cmd += ["--parts", str(int(parts))]
    try:
        with tempfile.TemporaryFile() as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
            try:
                _watch(proc, tmp, sf, progress)
            except BaseException:
                proc.kill()
                proc.wait()
                raise
            if proc.returncode != 0:
                log.seek(0)
                tail = log.read().decode(errors="replace").strip()[-2000:]
                raise GlintError(f"tpchgen-cli failed (exit code {proc.returncode}): {' '.join(cmd)}\n{tail}")
        if not _complete(tmp):
            raise GlintError(f"tpchgen-cli finished but did not write all 8 TPC-H tables into {str(tmp)!r}")
        try:
            if target.exists():
                target.rmdir()  # empty (checked above)
            os.replace(tmp, target)
        except OSError:
            if not _complete(target):  # another process may have won the race
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _watch(proc: subprocess.Popen, tmp: Path, sf, progress: bool) -> None:
    """Waits for tpchgen-cli, reporting the tables it has begun and the bytes
    written (glint.workloads.progress: a bar on a terminal, else lines)."""
    if not progress:
        proc.wait()
        return
    title = f"tpchgen-cli SF {sf_label(sf)}"
    with GenerationProgress(
        title, total=len(tpch_tables), unit="tables", done=f"generated TPC-H SF {sf_label(sf)}"
    ) as p:
        while proc.poll() is None:
            time.sleep(0.2)
            seen = [t for t in tpch_tables if any(tmp.glob(f"{t}*"))]
            p.update(completed=len(seen), info=f"{', '.join(seen[-3:])} {_dir_bytes(tmp) / 1e6:,.0f} MB".strip())
        p.update(completed=len(tpch_tables))


def load_tpch(
    con,
    sf=None,
    directory: str | os.PathLike | None = None,
    progress: bool | None = None,
    partition_keys: dict | None = None,
) -> Path:
    """Register the 8 TPC-H tables on a glint connection with
    ``con.read_parquet`` (generating the data first when needed; on a
    distributed connection, ``partition_keys`` (table -> column, e.g.
    PARTITION_KEYS) hash-partitions tables at load). Returns the data directory."""
    d = (
        Path(directory)
        if directory is not None
        else ensure_tpch_data(sf if sf is not None else 1, progress=bool(progress))
    )
    from glint.workloads.common import register_tables

    register_tables(con, d, tpch_tables, "TPC-H", progress, partition_keys)
    return d


if __name__ == "__main__":  # python -m glint.workloads.tpch --export-queries
    if sys.argv[1:] == ["--export-queries"]:
        for p in export_queries():
            print(p)
    else:
        print("usage: python -m glint.workloads.tpch --export-queries", file=sys.stderr)
        sys.exit(2)
