"""CSV files read as DuckDB's ``read_csv`` reads them (``FROM 'x.csv'``,
``read_csv(...)``, ``COPY t FROM 'x.csv'``).

Every field is read as text first; the column types and the header are
then detected as DuckDB 1.4 detects them (glint.io.csv_sniff: BOOLEAN,
BIGINT, DOUBLE, DATE, TIMESTAMP or VARCHAR from the first 20,480 rows, so
that ``02139`` stays VARCHAR and ``1`` then ``2.5`` is DOUBLE), and each
column is converted as DuckDB's reader converts it (glint.io.csv_values).
A value past the sample that is not of its column's type is an error naming
the file, the row and the column, as in DuckDB (``sample_size = -1`` looks
at every row). TIME and TIMESTAMP WITH TIME ZONE columns, which glint does
not have, are read as VARCHAR.

DuckDB's other defaults, where they differ from ``Connection.read_csv``'s:

- only the empty string is NULL, quoted or not (``allow_quoted_nulls``), and
  ``nullstr`` replaces it;
- columns without a header are ``column0``, ``column1``... (zero-padded to
  the width of the last index: ``column00`` with 11 columns or more), an empty
  header field gets that name too, and a repeated name gets ``_1``, ``_2``;
- a file of 0 bytes is one VARCHAR column ``column0`` without rows, and a
  header alone gives its columns, VARCHAR, without rows; in a one-column
  file an empty line is a NULL, in a wider one it is skipped;
- of several files (a glob, a list), the types come from the first ones
  (up to 10, until 20,480 rows) that have rows, merged (BIGINT and DOUBLE
  make DOUBLE; other mixes VARCHAR), and their columns must match.

The delimiter is sniffed as ``load_csv`` does (one of , | tab ;).

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, "t.csv"), "w") as f:
...     _ = f.write('a,a,\\n1,"",x\\n2,NULL,\\n')
>>> t = read_csv_auto(os.path.join(d, "t.csv"))
>>> t.column_names, t.to_pydict()
(['a', 'a_1', 'column2'], {'a': [1, 2], 'a_1': [None, 'NULL'], 'column2': ['x', None]})
>>> read_csv_auto(os.path.join(d, "t.csv"), header=False, all_varchar=True).column("column0").to_pylist()
['a', '1', '2']
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.csv as pacsv

from glint.errors import GlintError, GlintIOError
from glint.io.csv_files import open_text_sample, sniff_delimiter
from glint.io.csv_sniff import SAMPLE_ROWS, Sniffed, merge_types, sniff
from glint.io.csv_values import ARROW_TYPES, convert
from glint.io.file_lists import CSV_SUFFIXES, read_files, resolve_files, short_path

FILES_TO_SNIFF = 10  # DuckDB's files_to_sniff
_ZS = " \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"


def column_names(header: list | None, n: int) -> list[str]:
    """DuckDB's names: header fields (spaces around them trimmed; empty
    ones as column<i>; repeats with _1, _2...), or column<i> zero-padded to
    the width of n.

    >>> column_names(None, 3), column_names(None, 11)[:2], column_names(["x", "", " x ", None], 4)
    (['column0', 'column1', 'column2'], ['column00', 'column01'], ['x', 'column1', 'x_1', 'column3'])
    """
    width = len(str(n - 1)) if n > 1 else 1
    default = [f"column{i:0{width}d}" for i in range(n)]
    if header is None:
        return default
    fields = [(h or "").strip(_ZS) for h in header]
    return unique_names([h if h else default[i] for i, h in enumerate(fields)])


def unique_names(names: list[str]) -> list[str]:
    """Repeated names (in any case) made unique as DuckDB does: a, a_1, a_2.

    >>> unique_names(["a", "A", "b", "a"])
    ['a', 'A_1', 'b', 'a_2']
    """
    out, seen = [], set()
    for n in names:
        name, k = n, 0
        while name.lower() in seen:
            k += 1
            name = f"{n}_{k}"
        seen.add(name.lower())
        out.append(name)
    return out


def read_text(f, delim: str, quote: str | None, nullstr: str) -> pa.Table | None:
    """Every field of a CSV file as text (NULL: ``nullstr``), its first row
    included, or None for a file of 0 bytes. An empty line is a NULL in a
    file of one column and skipped in wider ones."""
    sample = open_text_sample(f)
    if not sample:
        return None
    # (an upper bound of the first row's fields: pyarrow takes the types of the columns it finds)
    wide = sample.count(delim) + 1
    text = {f"f{i}": pa.string() for i in range(wide)}

    def read(skip_empty: bool, source=None) -> pa.Table:
        return pacsv.read_csv(
            source if source is not None else os.fspath(f),
            read_options=pacsv.ReadOptions(autogenerate_column_names=True),
            parse_options=pacsv.ParseOptions(delimiter=delim, quote_char=quote or False, ignore_empty_lines=skip_empty),
            convert_options=pacsv.ConvertOptions(
                column_types=text, strings_can_be_null=True, quoted_strings_can_be_null=True, null_values=[nullstr]
            ),
        )

    try:
        t = read(delim in sample)
        if t.num_columns == 1 and delim in sample:
            t = read(False)
    except FileNotFoundError:
        raise GlintIOError(f"No such file: {os.fspath(f)!r}") from None
    except (pa.ArrowException, OSError, ValueError, UnicodeDecodeError) as e:
        reason = str(e).strip() or type(e).__name__
        if "empty csv" not in reason.lower():
            raise GlintIOError(f"Cannot read CSV file {os.fspath(f)!r}: {reason}") from None
        # one line without a line break: pyarrow sees no row (the sample is all of it)
        t = read(False, io.BytesIO((sample + "\n").encode()))
    return t


def _delimiter(sample: str, quote: str | None) -> str:
    """The sniffed delimiter, where it gives every line of the sample the
    same number of fields; else (ragged lines) one that does not occur in
    it: DuckDB then reads each line as one VARCHAR field.

    >>> _delimiter("a,b\\n1,2\\n", '"'), _delimiter("a,b\\n1,2\\n3\\n", '"')
    (',', '|')
    """
    delim = sniff_delimiter(sample)
    lines = sample.splitlines()
    if len(lines) > 1 and not sample.endswith(("\n", "\r")):
        lines = lines[:-1]  # the sample may cut the last line short
    lines = [ln for ln in lines if ln.strip()]
    try:
        counts = {len(row) for row in csv.reader(lines, delimiter=delim, quotechar=quote or '"')}
    except csv.Error:
        return delim
    if len(counts) <= 1 or delim not in sample:
        return delim
    return next((d for d in ("|", ";", "\t", ",", "\x1f") if d not in sample), delim)


def _columns(t: pa.Table) -> list[pa.Array]:
    return [c.combine_chunks() if c.num_chunks != 1 else c.chunk(0) for c in t.columns]


def read_csv_auto(
    path: str | Sequence[str],
    header: bool | None = None,
    delimiter: str | None = None,
    quote: str | None = '"',
    all_varchar: bool = False,
    nullstr: str = "",
    sample_size: int = SAMPLE_ROWS,
) -> pa.Table:
    """The rows of a CSV file (a directory, glob or list of them) with
    DuckDB's defaults; ``header`` None detects it; ``sample_size``: the
    rows the type detection looks at (-1: all)."""
    files = resolve_files(path, CSV_SUFFIXES, "CSV")
    for name, v in (("delimiter", delimiter), ("quote", quote)):
        if v is not None and len(v) != 1:
            raise GlintError(f"the CSV {name} must be one character, got {v!r}")
    if not isinstance(sample_size, int) or sample_size == 0 or sample_size < -1:
        raise GlintError(f"the CSV sample_size must be a positive number of rows or -1 (all), got {sample_size!r}")
    delim = delimiter or _delimiter(next((s for s in map(open_text_sample, files) if s.strip()), ""), quote)
    texts = read_files(files, lambda f: read_text(f, delim, quote, nullstr), None, f"{len(files)} CSV files")
    sniffed: list[Sniffed | None] = []
    seen = 0
    for i, t in enumerate(texts):
        if i and (seen >= SAMPLE_ROWS or i >= FILES_TO_SNIFF):
            break
        if t is None:
            sniffed.append(None)
            continue
        s = sniff(_columns(t if sample_size < 0 else t.slice(0, sample_size)), header, sample_size)
        seen += s.rows + s.header
        sniffed.append(s)
    names, types, formats, first_header, main = _schema(files, sniffed)
    if all_varchar:
        types = ["VARCHAR"] * len(types)
    out = []
    for i, t in enumerate(texts):
        if t is None:
            continue
        s = sniffed[i] if i < len(sniffed) else None
        has_header = s.header if s is not None else first_header
        if t.num_columns != len(names):
            raise GlintIOError(
                f"CSV file {short_path(files[i])!r} has {t.num_columns} columns, "
                f"but {short_path(files[main])!r} has {len(names)}"
            )
        if has_header and i != main:
            got = column_names([t.column(k)[0].as_py() for k in range(t.num_columns)], t.num_columns)
            if got != names:
                raise GlintIOError(
                    f"CSV file {short_path(files[i])!r} has columns {got}, but {short_path(files[main])!r} has {names}"
                )
        rows = t.slice(1) if has_header else t
        out.append(_convert(rows, names, types, formats, files[i], has_header))
    if not out:
        return pa.table({n: pa.array([], ARROW_TYPES[k]) for n, k in zip(names, types)})
    return pa.concat_tables(out)


def _schema(files, sniffed: list[Sniffed | None]):
    """(names, types, formats, the header of the files not sniffed, the file
    the names come from) of files sniffed in order (None: a file of 0 bytes)."""
    best, main = None, 0
    for i, s in enumerate(sniffed):
        if s is None:
            continue
        if best is None or best.rows == 0:
            best, main = s, i
            types = list(s.types)
        elif s.rows:
            if len(s.types) != len(types):
                raise GlintIOError(
                    f"CSV file {short_path(files[i])!r} has {len(s.types)} columns, "
                    f"but {short_path(files[main])!r} has {len(types)}"
                )
            types = merge_types(types, s.types)
    if best is None:  # every file is empty: DuckDB's one VARCHAR column
        return ["column0"], ["VARCHAR"], {}, False, 0
    names = column_names(best.first_row if best.header else None, len(types))
    if all(s is None or s.rows == 0 for s in sniffed):
        types = ["VARCHAR"] * len(types)  # a header alone, or nothing: text
    return names, types, best.formats, best.header, main


def _convert(t: pa.Table, names, types, formats, f, header: bool) -> pa.Table:
    cols = []
    for name, kind, col in zip(names, types, t.columns):
        parts, at = [], 0
        for chunk in col.chunks:  # (Arrow's blocks, each converted as it is)
            got, bad = convert(kind, chunk, formats.get(kind))
            if got is None:
                raise GlintIOError(
                    f"CSV file {short_path(f)!r}, row {at + bad + 1 + header}: could not convert "
                    f"{chunk[bad].as_py()!r} in column {name!r} to {kind} (the type was detected from the "
                    f"first {SAMPLE_ROWS} rows; read_csv(..., sample_size = -1) looks at every row, "
                    "all_varchar = true reads text)"
                )
            parts.append(got)
            at += len(chunk)
        cols.append(pa.chunked_array(parts, ARROW_TYPES[kind]))
    return pa.Table.from_arrays(cols, names=names) if cols else pa.table({})
