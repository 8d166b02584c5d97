"""The files a path names (a file, a directory read recursively, a glob, a
list of them), the tables a directory holds, and reading several files into
one Arrow table (side by side, with a progress bar on a terminal).

Every failure a user can cause (a missing path, a directory with no
matching files) raises :class:`~glint.errors.GlintIOError` naming the path
and the reason.

>>> has_suffix("data/x.csv.gz", CSV_SUFFIXES), table_stem("lineitem.parquet")
(True, 'lineitem')
"""

from __future__ import annotations

import glob as _glob
import os
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa

from glint.errors import GlintError, GlintIOError

PARQUET_SUFFIXES = (".parquet", ".parq")
CSV_SUFFIXES = (".csv", ".tsv", ".tbl", ".txt", ".dat")
_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".zst", ".lz4")
_GLOB_CHARS = "*?["


# ------------------------------------------------------------------ file lists
def has_suffix(name: str, suffixes: Sequence[str]) -> bool:
    low = name.lower()
    for comp in _COMPRESSION_SUFFIXES:
        if low.endswith(comp):
            low = low[: -len(comp)]
            break
    return low.endswith(tuple(suffixes))


def _hidden(name: str) -> bool:
    # Spark/Hadoop markers (_SUCCESS, _metadata) and dot files (.crc, editors' temp files)
    return name.startswith((".", "_"))


def _files_under(directory: Path, suffixes: Sequence[str]) -> list[Path]:
    out = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not _hidden(d))
        out.extend(Path(root) / f for f in files if not _hidden(f) and has_suffix(f, suffixes))
    return sorted(out)


def resolve_files(path: str | os.PathLike, suffixes: Sequence[str], kind: str = "Parquet") -> list[Path]:
    """The files `path` names: itself when a file, every file with one of
    `suffixes` below it (recursively, sorted) when a directory, the sorted
    matches when a glob (``**`` recurses); for a list, each one's files in
    turn (as DuckDB's read_parquet([...]), a file listed twice twice). Raises GlintIOError when nothing matches.
    """
    if isinstance(path, (list, tuple)):
        if not path:
            raise GlintIOError("an empty list of files")
        return [f for p in path for f in resolve_files(p, suffixes, kind)]  # a file listed twice is read twice
    if not isinstance(path, (str, os.PathLike)):
        raise GlintError(f"expected a path (str), got {type(path).__name__}: {path!r}")
    text = os.path.expanduser(os.fspath(path))
    if any(c in text for c in _GLOB_CHARS) and not os.path.exists(text):
        matches = sorted(_glob.glob(text, recursive=True))
        if not matches:
            raise GlintIOError(f"No files match {text!r}")
        files: list[Path] = []
        for m in matches:
            p = Path(m)
            if p.is_dir():
                files.extend(_files_under(p, suffixes))
            elif p.is_file():
                files.append(p)
        if not files:
            raise GlintIOError(f"No {kind} files match {text!r}")
        return sorted(dict.fromkeys(files))
    p = Path(text)
    if p.is_dir():
        files = _files_under(p, suffixes)
        if not files:
            raise GlintIOError(f"No {kind} files ({', '.join('*' + s for s in suffixes)}) in directory {text!r}")
        return files
    if p.is_file():
        return [p]
    if p.exists():
        raise GlintIOError(f"Not a regular file or directory: {text!r}")
    raise GlintIOError(f"No such file or directory: {text!r}")


# ------------------------------------------------------------------ progress
def _want_progress(progress: bool | None, n_files: int) -> bool:
    if progress is None:
        return n_files > 1 and sys.stderr is not None and sys.stderr.isatty()
    return bool(progress)


@contextmanager
def _progress_bar(enabled: bool, total: int, description: str) -> Iterator:
    """Yields advance(n=1); a rich bar on stderr when enabled, else a no-op."""
    if not enabled:
        yield lambda n=1: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)


def short_path(path: Path | str) -> str:
    return os.fspath(path)


def concat_file_tables(tables: list[pa.Table], files: list[Path], kind: str) -> pa.Table:
    if len(tables) == 1:
        return tables[0]
    first = tables[0].schema
    out = [tables[0]]
    for t, f in zip(tables[1:], files[1:]):
        if not t.schema.equals(first, check_metadata=False):
            if [fld.name for fld in t.schema] == [fld.name for fld in first]:
                try:  # e.g. int32 vs int64, string vs string_view: cast to the first file's types
                    t = t.cast(first)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                    raise GlintIOError(
                        f"{kind} file {short_path(f)!r} has a schema that does not match {short_path(files[0])!r}: {e}"
                    ) from None
            else:
                raise GlintIOError(
                    f"{kind} file {short_path(f)!r} has columns {t.schema.names} but {short_path(files[0])!r} "
                    f"has {first.names}"
                )
        else:
            t = t.replace_schema_metadata(first.metadata)
        out.append(t)
    return pa.concat_tables(out)


def read_files(files: list[Path], read_one, progress: bool | None, what: str) -> list[pa.Table]:
    show = _want_progress(progress, len(files))
    with _progress_bar(show, len(files), f"reading {what}") as advance:
        if len(files) == 1:
            t = read_one(files[0])
            advance()
            return [t]
        workers = min(8, len(files), os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as ex:
            futures = [ex.submit(read_one, f) for f in files]
            out = []
            for fut in futures:
                out.append(fut.result())
                advance()
            return out


# ------------------------------------------------------------------ directories of tables
def table_stem(name: str) -> str:
    low = name.lower()
    for comp in _COMPRESSION_SUFFIXES:
        if low.endswith(comp):
            name, low = name[: -len(comp)], low[: -len(comp)]
            break
    for s in PARQUET_SUFFIXES + CSV_SUFFIXES:
        if low.endswith(s):
            return name[: -len(s)]
    return name


def tables_in_directory(directory: str | os.PathLike) -> dict[str, str]:
    """Tables in a directory, name -> path: each ``*.parquet`` file (named after
    its stem) and each subdirectory holding Parquet files (named after the
    subdirectory, e.g. tpchgen-cli's ``--parts`` layout ``lineitem/lineitem.1.parquet``).

    Raises GlintIOError when the directory is missing or holds no tables, or
    when a file and a subdirectory claim the same name.
    """
    text = os.path.expanduser(os.fspath(directory))
    d = Path(text)
    if not d.exists():
        raise GlintIOError(f"No such directory: {text!r}")
    if not d.is_dir():
        raise GlintIOError(f"Not a directory: {text!r}")
    found: dict[str, str] = {}
    try:
        entries = sorted(d.iterdir())
    except OSError as e:
        raise GlintIOError(f"Cannot list directory {text!r}: {e.strerror or e}") from None
    for entry in entries:
        if _hidden(entry.name):
            continue
        if entry.is_file() and has_suffix(entry.name, PARQUET_SUFFIXES):
            name = table_stem(entry.name)
        elif entry.is_dir() and _files_under(entry, PARQUET_SUFFIXES):
            name = entry.name
        else:
            continue
        if name in found:
            raise GlintIOError(f"Two sources for table {name!r} in {text!r}: {found[name]!r} and {str(entry)!r}")
        found[name] = str(entry)
    if not found:
        raise GlintIOError(f"No Parquet files or directories of Parquet files in {text!r}")
    return found
