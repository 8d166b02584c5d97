"""CSV files read as DuckDB's ``read_csv`` reads them (``FROM 'x.csv'``,
``read_csv(...)``, ``COPY t FROM 'x.csv'``).

DuckDB's defaults, where they differ from ``Connection.read_csv``'s:

- the header is detected: the first line is a header unless each of its
  fields reads as a value of the type the lines after it have (a file whose
  columns are all text has one); a file of one line has one unless all its
  fields are numbers, dates or booleans;
- only the empty string is NULL, quoted or not (``allow_quoted_nulls``), and
  ``nullstr`` replaces it; an all-NULL column is VARCHAR;
- columns without a header are ``column0``, ``column1``... (zero-padded to
  the width of the last index: ``column00`` with 11 columns or more), an empty
  header field gets that name too, and a repeated name gets ``_1``, ``_2``.

The delimiter is sniffed as ``load_csv`` does (one of , | tab ;). Type
detection is pyarrow's (BIGINT, DOUBLE, DATE, BOOLEAN, VARCHAR, as DuckDB's
sniffer for ordinary files; it does not look at every format DuckDB's does).

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

import io
import os
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from glint.errors import GlintError, GlintIOError
from glint.io.csv_files import open_text_sample, sniff_delimiter
from glint.io.file_lists import CSV_SUFFIXES, concat_file_tables, read_files, resolve_files
from glint.io.file_options import drop_lines, given_types, union_by_name_tables, with_filename


def _parse(text: bytes, delim: str, quote: str | None, as_text: bool = False) -> pa.Table:
    popts = pacsv.ParseOptions(delimiter=delim, quote_char=quote or False)
    ropts = pacsv.ReadOptions(autogenerate_column_names=True)
    copts = pacsv.ConvertOptions(strings_can_be_null=True, quoted_strings_can_be_null=True, null_values=[""])
    if as_text:
        t = pacsv.read_csv(io.BytesIO(text), read_options=ropts, parse_options=popts)
        copts = pacsv.ConvertOptions(
            column_types={n: pa.string() for n in t.column_names},
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,
            null_values=[""],
        )
    return pacsv.read_csv(io.BytesIO(text), read_options=ropts, parse_options=popts, convert_options=copts)


def _texty(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t)


def sniff_header(sample: str, delim: str, quote: str | None = '"') -> bool:
    """Whether the sample's first line is a header (see the module's rules).

    >>> sniff_header("a,b\\n1,2\\n", ","), sniff_header("1,2\\n3,4\\n", ","), sniff_header("a,b\\nc,d\\n", ",")
    (True, False, True)
    >>> sniff_header("1,2\\n", ","), sniff_header("x,2\\n", ",")
    (False, True)
    """
    lines = sample.splitlines(keepends=True)
    if len(lines) > 1 and not sample.endswith(("\n", "\r")):
        lines = lines[:-1]  # the sample may cut the last line short
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        return True
    try:
        first = _parse(lines[0].encode(), delim, quote, as_text=True)
        if len(lines) == 1:
            typed = _parse(lines[0].encode(), delim, quote)
            return any(_texty(f.type) for f in typed.schema)
        rest = _parse("".join(lines[1:]).encode(), delim, quote)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return True
    if rest.num_columns != first.num_columns or all(_texty(f.type) for f in rest.schema):
        return True
    for name, field in zip(first.column_names, rest.schema):
        if _texty(field.type):
            continue
        try:
            pc.cast(first.column(name), field.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return True
    return False


def column_names(header: list[str] | None, n: int) -> list[str]:
    """DuckDB's names: header fields (empty ones as column<i>, repeats with
    _1, _2...), or column<i> zero-padded to the width of n.

    >>> column_names(None, 3), column_names(None, 11)[:2], column_names(["x", "", "x"], 3)
    (['column0', 'column1', 'column2'], ['column00', 'column01'], ['x', 'column1', 'x_1'])
    """
    width = len(str(n - 1)) if n > 1 else 1
    default = [f"column{i:0{width}d}" for i in range(n)]
    if header is None:
        return default
    return unique_names([h if h else default[i] for i, h in enumerate(header)])


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


def read_csv_auto(
    path: str | Sequence[str],
    header: bool | None = None,
    delimiter: str | None = None,
    quote: str | None = '"',
    all_varchar: bool = False,
    nullstr: str | Sequence[str] = "",
    skip: int = 0,
    types=None,
    names: Sequence[str] | None = None,
    filename: bool = False,
    union_by_name: bool = False,
    columns=None,
) -> pa.Table:
    """The rows of a CSV file (a directory, glob or list of them) with
    DuckDB's defaults; ``header`` None detects it. DuckDB's options:
    ``skip`` lines before anything else; ``types``: (column name or
    position, SQL type) pairs; ``names``: the first columns' names;
    ``filename``: a last column naming each row's file; ``union_by_name``:
    each file read on its own and the columns matched by name
    (glint.io.file_options); ``columns``: (name, SQL type) of every column."""
    if columns:
        names = [n for n, _ in columns]
        types = [(i, t) for i, (_, t) in enumerate(columns)] + [(k, t) for k, t in (types or ())]
    if union_by_name:
        files = resolve_files(path, CSV_SUFFIXES, "CSV")
        tables = [
            read_csv_auto([f], header, delimiter, quote, all_varchar, nullstr, skip, types, names, columns=columns)
            for f in files
        ]
        out = union_by_name_tables(tables)
        if filename:
            per_row = [os.fspath(f) for f, t in zip(files, tables) for _ in range(t.num_rows)]
            out = out.append_column("filename", pa.array(per_row, pa.string()))
        return out
    files = resolve_files(path, CSV_SUFFIXES, "CSV")
    for name, v in (("delimiter", delimiter), ("quote", quote)):
        if v is not None and len(v) != 1:
            raise GlintError(f"the CSV {name} must be one character, got {v!r}")
    sample = drop_lines(open_text_sample(files[0]), skip)
    delim = delimiter or sniff_delimiter(sample)
    if header is None:
        header = sniff_header(sample, delim, quote)
    null_values = [nullstr] if isinstance(nullstr, str) else list(nullstr)

    def read_one(f, types=None) -> pa.Table:
        ropts = pacsv.ReadOptions(autogenerate_column_names=True, skip_rows=skip + (1 if header else 0))
        popts = pacsv.ParseOptions(delimiter=delim, quote_char=quote or False)
        copts = pacsv.ConvertOptions(
            column_types=types or {}, strings_can_be_null=True, quoted_strings_can_be_null=True, null_values=null_values
        )
        try:
            t = pacsv.read_csv(os.fspath(f), read_options=ropts, parse_options=popts, convert_options=copts)
        except FileNotFoundError:
            raise GlintIOError(f"No such file: {os.fspath(f)!r}") from None
        except (pa.ArrowException, OSError, ValueError, UnicodeDecodeError) as e:
            reason = str(e).strip() or type(e).__name__
            if "empty csv" in reason.lower():
                return pa.table({})
            raise GlintIOError(f"Cannot read CSV file {os.fspath(f)!r}: {reason}") from None
        return t

    def header_of(f) -> list[str]:
        text = drop_lines(open_text_sample(f), skip).splitlines()
        line = next((ln for ln in text if ln.strip()), "")
        try:
            t = _parse((line + "\n").encode(), delim, quote, as_text=True)
        except pa.ArrowInvalid as e:
            raise GlintIOError(f"Cannot read CSV file {os.fspath(f)!r}: {e}") from None
        return [v if v is not None else "" for v in (t.column(i)[0].as_py() for i in range(t.num_columns))]

    fields = header_of(files[0])
    if columns and len(columns) != len(fields):
        raise GlintIOError(
            f"Cannot read CSV file {os.fspath(files[0])!r}: the columns option gives {len(columns)} "
            f"column{'s' if len(columns) != 1 else ''}, the file has {len(fields)}"
        )
    header_names = fields if header else None
    final = column_names(header_names, len(fields))
    if names:
        final = unique_names(list(names)[: len(final)] + final[len(names) :])
    given = given_types(types, final)
    text = {f"f{i}": pa.string() for i in range(len(fields))} if all_varchar else {}
    first = read_one(files[0], {**text, **given})
    if header:
        if first.num_columns == 0:  # a header and no rows
            first = pa.table({f"f{i}": pa.array([], given.get(f"f{i}", pa.string())) for i in range(len(fields))})
    if first.num_columns == 0:
        raise GlintIOError(f"Cannot read CSV file {os.fspath(files[0])!r}: the file is empty")
    types = {
        n: (pa.string() if (all_varchar and n not in given) or pa.types.is_null(t) else t)
        for n, t in zip(first.column_names, first.schema.types)
    }
    first = first.cast(pa.schema([(n, types[n]) for n in first.column_names]))
    tables = [first]
    if len(files) > 1:
        tables.extend(read_files(files[1:], lambda f: read_one(f, types), None, f"{len(files)} CSV files"))
    if filename:
        tables = [with_filename(t, f) for t, f in zip(tables, files)]
    out = concat_file_tables(tables, files, "CSV")
    if out.num_columns != len(final) + filename:
        final = column_names(header_names, out.num_columns - filename)
    return out.rename_columns(final + (["filename"] if filename else []))
