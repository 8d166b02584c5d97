"""CSV files read into one Arrow table (:func:`load_csv`): the delimiter
sniffed, types inferred from the first file or given, headerless files'
columns named as DuckDB names them.

>>> sniff_delimiter("a|b|c\\n1|2|3\\n")
'|'
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

from glint.errors import GlintError, GlintIOError
from glint.io.csv_sniff import SAMPLE_ROWS, sniff
from glint.io.csv_values import ARROW_TYPES, convert
from glint.io.file_lists import (
    CSV_SUFFIXES,
    concat_file_tables,
    read_files,
    resolve_files,
    short_path,
)

_DELIMITERS = (",", "|", "\t", ";")  # sniffing order; an earlier one wins a tie


def open_text_sample(f: Path, nbytes: int = 1 << 16) -> str:
    try:
        with pa.input_stream(os.fspath(f), compression="detect") as s:
            raw = s.read(nbytes)
    except (pa.ArrowException, OSError) as e:
        raise GlintIOError(f"Cannot read CSV file {short_path(f)!r}: {e}") from None
    return raw.decode("utf-8", errors="replace")


def sniff_delimiter(sample: str) -> str:
    """The delimiter (one of , | tab ;) that splits the sample's lines into the
    same number (> 1) of fields most often; ',' when none does.

    >>> sniff_delimiter("a;b\\n1;2\\n"), sniff_delimiter("a\\tb\\tc,d\\n1\\t2\\t3,4\\n"), sniff_delimiter("x\\n1\\n")
    (';', '\\t', ',')
    """
    lines = sample.splitlines()
    if len(lines) > 1 and not sample.endswith(("\n", "\r")):
        lines = lines[:-1]  # the last line may be cut off by the sample size
    lines = [ln for ln in lines[:50] if ln.strip()]
    if not lines:
        return ","
    best, best_score = ",", (0, 0)
    for d in _DELIMITERS:
        try:
            counts = [len(row) for row in csv.reader(lines, delimiter=d)]
        except csv.Error:
            continue
        if not counts:
            continue
        mode = max(set(counts), key=counts.count)
        if mode <= 1:
            continue
        consistent = counts.count(mode)
        score = (consistent, mode)
        if score > best_score:
            best, best_score = d, score
    return best


def _column(t: pa.Table, i: int) -> pa.Array:
    c = t.column(i)
    return c.combine_chunks() if c.num_chunks != 1 else c.chunk(0)


def _typed(t: pa.Table, kinds: dict, formats: dict, f, header: bool) -> pa.Table:
    """The table with its columns ``kinds`` (index -> kind of
    glint.io.csv_values) converted from text."""
    for i, kind in kinds.items():
        if i >= t.num_columns:
            break
        parts, at = [], 0
        for chunk in t.column(i).chunks:
            got, bad = convert(kind, chunk, formats.get(kind))
            if got is None:
                raise GlintIOError(
                    f"CSV file {short_path(f)!r}, row {at + bad + 1 + header}: could not convert "
                    f"{chunk[bad].as_py()!r} in column {t.schema.names[i]!r} to {kind} (the type was detected "
                    "from the first file's first rows; give the column's type in types=)"
                )
            parts.append(got)
            at += len(chunk)
        col = pa.chunked_array(parts, ARROW_TYPES[kind])
        t = t.set_column(i, t.schema.field(i).with_type(col.type), col)
    return t


def _csv_types(types) -> dict[str, pa.DataType] | None:
    if types is None:
        return None
    if not isinstance(types, dict):
        raise GlintError(f"types must be a dict of column name to type, got {type(types).__name__}")
    out = {}
    for name, t in types.items():
        out[name] = t if isinstance(t, pa.DataType) else sql_type_to_arrow(str(t))
    return out


def sql_type_to_arrow(text: str) -> pa.DataType:
    from glint.columnar import types as T

    s = text.strip()
    params: list[int] = []
    if "(" in s and s.endswith(")"):
        s, inner = s[: s.index("(")].strip(), s[s.index("(") + 1 : -1]
        try:
            params = [int(x) for x in inner.split(",") if x.strip()]
        except ValueError:
            raise GlintError(f"invalid type {text!r}") from None
    return T.to_arrow(T.from_sql_name(s, params))


def load_csv(
    path: str | os.PathLike,
    header: bool = True,
    delimiter: str | None = None,
    columns: Sequence[str] | None = None,
    types: dict | None = None,
    *,
    progress: bool | None = None,
) -> pa.Table:
    """Read a CSV file (or all ``*.csv``/``*.tsv``/``*.tbl``/``*.txt`` files below
    a directory, or a glob's matches; ``.gz`` etc. are decompressed) into one
    Arrow table.

    - ``header``: the first line names the columns; otherwise they are named
      ``column0``, ``column1``... (DuckDB's convention).
    - ``delimiter``: sniffed from the first file when None (one of , | tab ;).
    - ``columns``: keep only these columns; ``types``: column name -> Arrow
      type or SQL type name ("DECIMAL(15,2)", "DATE"...) overriding inference.
    - Empty unquoted fields are NULL. A trailing delimiter on every line (the
      dbgen ``.tbl`` layout) does not make an extra column.
    - The other columns' types are detected from the first file as DuckDB's
      read_csv detects them (glint.io.csv_sniff: ``02139`` stays VARCHAR,
      ``1`` then ``2.5`` is DOUBLE, dates DATE); the other files of a
      directory or glob get the same types and must have the same columns.
    """
    files = resolve_files(path, CSV_SUFFIXES, "CSV")
    if delimiter is not None and len(delimiter) != 1:
        raise GlintError(f"delimiter must be one character, got {delimiter!r}")
    sample = open_text_sample(files[0])
    delim = delimiter or sniff_delimiter(sample)
    sample_lines = [ln for ln in sample.splitlines()[: -1 if not sample.endswith("\n") else None] if ln.strip()]
    trailing = bool(sample_lines) and all(ln.rstrip("\r").endswith(delim) for ln in sample_lines[:50])
    col_types = _csv_types(types)

    def read_one(f: Path, given: dict) -> pa.Table:
        """The file's columns: those of ``given`` (name -> Arrow type) in
        that type, the others as text."""
        head = open_text_sample(f)
        if header:
            first = next(csv.reader([head.splitlines()[0] if head else ""], delimiter=delim), [])
            names = list(first)
        else:
            names = [f"f{i}" for i in range(head.count(delim) + 1)]
        column_types = {n: given.get(n, pa.string()) for n in names}
        ropts = pacsv.ReadOptions(use_threads=True, autogenerate_column_names=not header)
        popts = pacsv.ParseOptions(delimiter=delim)
        copts = pacsv.ConvertOptions(
            column_types=column_types, strings_can_be_null=True, quoted_strings_can_be_null=False
        )
        try:
            return pacsv.read_csv(os.fspath(f), read_options=ropts, parse_options=popts, convert_options=copts)
        except FileNotFoundError:
            raise GlintIOError(f"No such file: {short_path(f)!r}") from None
        except PermissionError:
            raise GlintIOError(f"Cannot read CSV file {short_path(f)!r}: permission denied") from None
        except (pa.ArrowException, OSError, ValueError, UnicodeDecodeError) as e:
            reason = str(e).strip() or type(e).__name__
            if "empty csv" in reason.lower():
                reason = "the file is empty"
            raise GlintIOError(f"Cannot read CSV file {short_path(f)!r}: {reason}") from None

    def fix(t: pa.Table) -> pa.Table:
        if not header:
            t = t.rename_columns([f"column{i}" for i in range(t.num_columns)])
        if trailing and t.num_columns > 1:
            last = t.column(t.num_columns - 1)
            if last.null_count == len(last) and (not header or t.schema.names[-1] in ("", f"f{t.num_columns - 1}")):
                t = t.remove_column(t.num_columns - 1)
        return t

    if col_types and not header:  # pyarrow names headerless columns f0, f1...
        col_types = {
            (f"f{k[6:]}" if k.startswith("column") and k[6:].isdigit() else k): v for k, v in col_types.items()
        }
    given = col_types or {}
    first = fix(read_one(files[0], given))
    if header and len(set(first.schema.names)) != len(first.schema.names):
        dup = [n for n in first.schema.names if first.schema.names.count(n) > 1][0]
        raise GlintIOError(f"CSV file {short_path(files[0])!r} has the column {dup!r} twice")
    # the columns read as text get DuckDB's detected types (from the first
    # file, for every file: inference on a file whose column happens to be
    # all empty would give another type)
    raw = "f{}" if not header else "{}"
    text = [
        i
        for i, f in enumerate(first.schema)
        if raw.format(i if not header else f.name) not in given and pa.types.is_string(f.type)
    ]
    sample = first.slice(0, SAMPLE_ROWS)
    found = sniff([_column(sample, i) for i in text], header=False) if text else None
    kinds = {i: k for i, k in zip(text, found.types)} if found else {}
    formats = found.formats if found else {}
    first = _typed(first, kinds, formats, files[0], header)
    tables = [first]
    if len(files) > 1:
        fixed = {(f"f{i}" if not header else f.name): f.type for i, f in enumerate(first.schema) if i not in kinds}
        tables.extend(
            read_files(
                files[1:],
                lambda f: _typed(fix(read_one(f, fixed)), kinds, formats, f, header),
                progress,
                f"{len(files)} CSV files",
            )
        )
    t = concat_file_tables(tables, files, "CSV")
    if columns is not None:
        missing = [c for c in columns if c not in t.schema.names]
        if missing:
            raise GlintIOError(
                f"CSV file {short_path(files[0])!r} has no column {missing[0]!r} (columns: {', '.join(t.schema.names)})"
            )
        t = t.select(list(columns))
    return t
