"""CSV type and header detection against DuckDB's (``DESCRIBE SELECT * FROM
read_csv('f.csv')``) and the values read: leading zeros, mixed integers and
decimals, empty fields, quoted fields, dates, timestamps and times, booleans,
integers past BIGINT, signs, exponents, the rows past the first block, and
the reads of ``glint sql --csv`` (Connection.read_csv)."""

from __future__ import annotations

import math

import duckdb
import pytest

import glint
from glint.columnar import types as T
from glint.errors import GlintIOError

# (DuckDB's types glint does not have: read as their text)
_AS_TEXT = {"TIME", "TIMESTAMP WITH TIME ZONE"}

ONE_COLUMN = {
    "zip codes": ["02139", "10001"],
    "zero": ["0", "1"],
    "minus zero": ["-0", "5"],
    "plus sign": ["+5", "6"],
    "double zero": ["00", "1"],
    "negative leading zero": ["-05", "1"],
    "decimal leading zero": ["01.5", "2.5"],
    "zero point": ["0.5", "1.5"],
    "double zero point": ["00.5", "1"],
    "dot five": [".5", "1"],
    "five dot": ["5.", "1"],
    "exponent": ["1e5", "2"],
    "negative exponent": ["1E-3", "2.5"],
    "exponent plus": ["1.5E+10", "1"],
    "leading zero exponent": ["01e5", "2"],
    "nan": ["nan", "1.5"],
    "nan later": ["1.5", "NaN"],
    "inf later": ["1.5", "-inf"],
    "past int64": ["99999999999999999999", "1"],
    "below int64": ["-9223372036854775809", "1"],
    "int64 max": ["9223372036854775807", "1"],
    "int64 min": ["-9223372036854775808", "1"],
    "uint64 max": ["18446744073709551615", "1"],
    "spaces": [" 5", "6 "],
    "trailing space then decimal": ["2 ", "1.5"],
    "decimal then trailing space": ["1.5", "2 "],
    "underscore": ["1_000", "2"],
    "hex": ["0x1F", "2"],
    "binary": ["0b101", "3"],
    "hex then decimal": ["0x10", "1.5"],
    "decimal comma": ["1,5", "2"],
    "true false": ["true", "false"],
    "T F": ["T", "F"],
    "True FALSE": ["True", "FALSE"],
    "yes no": ["yes", "no"],
    "one zero": ["1", "0"],
    "boolean then integer": ["true", "1"],
    "integer then boolean": ["1", "true"],
    "y n": ["y", "n"],
    "dates": ["2024-01-05", "2023-12-31"],
    "dates with slashes": ["2024/01/05", "2023/12/31"],
    "US dates": ["01/05/2024", "12/31/2023"],
    "European dates": ["31.12.2023", "05.01.2024"],
    "short dates": ["2024-1-5", "2023-12-31"],
    "date then text": ["2024-01-05", "abc"],
    "date then integer": ["2024-01-05", "5"],
    "date then empty": ["2024-01-05", ""],
    "invalid date": ["2023-02-29", "2024-01-01"],
    "BC date": ["0044-03-15 (BC)", "2024-01-01"],
    "timestamps": ["2024-01-05 10:00:00", "2023-12-31 23:59:59"],
    "ISO timestamps": ["2024-01-05T10:00:00", "2023-12-31T23:59:59"],
    "fractions": ["2024-01-05 10:00:00.123456", "2023-12-31 23:59:59.5"],
    "milliseconds": ["2024-01-05T10:00:00.123", "2024-01-05T10:00:00.124"],
    "minutes only": ["2024-01-05 10:00", "2024-01-06 11:30"],
    "UTC": ["2024-01-05 10:00:00 UTC", "2024-01-06 11:30:00"],
    "date then timestamp": ["2024-01-05", "2023-12-31 23:59:59"],
    "timestamp then date": ["2023-12-31 23:59:59", "2024-01-05"],
    "offsets": ["2024-01-05 10:00:00+02", "2023-12-31 23:59:59+00"],
    "Z": ["2024-01-05T10:00:00Z", "2023-12-31T23:59:59Z"],
    "US timestamps": ["01/05/2024 10:00:00", "12/31/2023 11:00:00"],
    "European timestamps": ["31-12-2023 10:00:00", "05-01-2024 11:00:00"],
    "AM PM": ["12-31-2023 10:00:00 PM", "01-05-2024 11:00:00 AM"],
    "times": ["10:00:00", "23:59:59"],
    "short times": ["10:00", "23:59"],
    "time fractions": ["10:00:00.5", "23:59:59"],
    "mixed int float": ["1", "2.5"],
    "negative": ["-1", "-2"],
    "negative decimal": ["-1.5", "-2"],
    "negative dot": ["-.5", "1"],
    "empty first": ["", "5"],
    "all empty": ["", ""],
    "quoted numbers": ['"5"', '"6"'],
    "quoted zip codes": ['"02139"', '"10001"'],
    "quoted empty": ['""', "7"],
    "NULL text": ["NULL", "5"],
    "many digits": ["1.123456789012345678901", "2"],
    "percent": ["5%", "1"],
    "dollar": ["$5", "1"],
    "zip plus four": ["02139-4307", "10001-0001"],
    "years": ["2024", "1999"],
    "huge exponent": ["1e400", "1"],
    "inner space": ["1 2", "3"],
}


def _describe(con, ref: str) -> list[tuple[str, str]]:
    schema = con.sql(f"SELECT * FROM {ref}").arrow().schema
    return [(f.name, str(T.from_arrow(f.type))) for f in schema]


def _norm(rows):
    return [tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in r) for r in rows]


def _same_as_duckdb(con, ref: str) -> None:
    """The columns (names and types) and the rows of glint's read equal
    DuckDB's; DuckDB's TIME and TIMESTAMP WITH TIME ZONE columns are text in
    glint, equal to DuckDB's text of them (all_varchar)."""
    d = duckdb.connect()
    try:
        d.execute(f"CREATE TEMP TABLE probe AS SELECT * FROM {ref}")
    except duckdb.ConversionException:  # a value the detected type does not take: an error in both
        with pytest.raises(GlintIOError, match="could not convert"):
            con.sql(f"SELECT * FROM {ref}").fetchall()
        return
    want = [(r[0], r[1]) for r in d.execute(f"DESCRIBE SELECT * FROM {ref}").fetchall()]
    text = [t in _AS_TEXT for _, t in want]
    want_types = [(n, "VARCHAR" if x else t) for (n, t), x in zip(want, text)]
    assert _describe(con, ref) == want_types, ref
    if any(text):  # (those columns as written: DuckDB's all_varchar read)
        as_text = ref[:-1] + ", all_varchar = true)" if ref.endswith(")") else f"read_csv({ref}, all_varchar = true)"
        typed = ", ".join(f'"{n}"' for (n, _), x in zip(want, text) if not x)
        raw = d.execute(f"SELECT * FROM {as_text}").fetchall()
        kept = d.execute(f"SELECT {typed} FROM {ref}").fetchall() if typed else [() for _ in raw]
        rows = []
        for a, b in zip(kept, raw):
            it = iter(a)
            rows.append(tuple(v if x else next(it) for v, x in zip(b, text)))
    else:
        rows = d.execute(f"SELECT * FROM {ref}").fetchall()
    assert _norm(con.sql(f"SELECT * FROM {ref}").fetchall()) == _norm(rows), ref


@pytest.mark.parametrize("case", list(ONE_COLUMN))
def test_one_column_types_equal_duckdbs(tmp_path, case):
    p = tmp_path / "f.csv"
    p.write_text("c\n" + "\n".join(ONE_COLUMN[case]) + "\n")
    _same_as_duckdb(glint.connect(device="cpu"), f"'{p}'")


def test_every_case_as_columns_of_one_file(tmp_path):
    """The cases side by side: the date formats are shared by a file's columns."""
    cases = [c for c in ONE_COLUMN if "," not in "".join(ONE_COLUMN[c])]
    p = tmp_path / "wide.csv"
    lines = [",".join(f"c{i}" for i in range(len(cases)))]
    for r in range(2):
        lines.append(",".join(ONE_COLUMN[c][r] for c in cases))
    p.write_text("\n".join(lines) + "\n")
    _same_as_duckdb(glint.connect(device="cpu"), f"'{p}'")


@pytest.mark.parametrize(
    "text",
    [
        "a,b\n1,2\n",  # a header over numbers
        "1,2\n3,4\n",  # numbers: no header
        "a,b\nc,d\n",  # all text: a header
        "1,2\n",  # one row of numbers: data
        "x,2\n",  # one row, text and a number: data
        "onlyone",  # one field, no line break
        "a,b\n1,x\n,\n3,y\n",  # an empty row is NULLs
        "a,b\n\n1,2\n\n3,4\n",  # empty lines are skipped
        "a\n1\n\n3\n",  # ... but are NULLs in one column
        "a\n1\n\n",
        "id,when\n1,2024-01-05\n2,\n",
        " a , b \n1,2\n",  # names trimmed
        "a,a,b,a\n1,2,3,4\n",  # repeated names
        ",x,\n1,2,3\n",  # empty names
        '"quoted, name",b\n"1",2\n',
        "2024-01-05,5\n2024-01-06,6\n",  # a date row is data
        "n\n" + "\n".join(str(i) for i in range(12)) + "\n",
    ],
)
def test_headers_and_shapes_equal_duckdbs(tmp_path, text):
    p = tmp_path / "f.csv"
    p.write_text(text)
    _same_as_duckdb(glint.connect(device="cpu"), f"'{p}'")


@pytest.mark.parametrize("delim", [",", "|", ";", "\t"])
def test_delimiters(tmp_path, delim):
    p = tmp_path / "f.csv"
    p.write_text(delim.join(["zip", "n", "d"]) + "\n" + delim.join(["02139", "1.5", "2024-01-05"]) + "\n")
    _same_as_duckdb(glint.connect(device="cpu"), f"'{p}'")


def _long(path, n: int, row) -> None:
    path.write_text("a,b\n" + "".join(row(i) for i in range(n)))


@pytest.mark.parametrize(
    "row",
    [
        lambda i: f"{i},{'x' if i == 3000 else i}\n",  # text in the second block
        lambda i: f"{i},{'2.5' if i == 5000 else i}\n",  # a decimal in a later block
        lambda i: f"{i},{'true' if i % 2 else 'false'}\n" if i != 4000 else f"{i},1\n",  # a boolean that is not
        lambda i: f"{i},2024-01-{i % 28 + 1:02d}\n" if i != 2500 else f"{i},2024-01-05 10:00:00\n",
        lambda i: f"{i},{'' if i < 2100 else i}\n",  # NULLs, then numbers
    ],
    ids=["text later", "decimal later", "boolean later", "timestamp later", "nulls first"],
)
def test_rows_past_the_first_block(tmp_path, row):
    p = tmp_path / "long.csv"
    _long(p, 6000, row)
    _same_as_duckdb(glint.connect(device="cpu"), f"'{p}'")


def test_a_value_past_the_sample_names_the_row_and_column(tmp_path):
    """Types come from the first 20,480 rows; a later value of another type
    is an error, as in DuckDB; sample_size = -1 looks at every row."""
    p = tmp_path / "late.csv"
    _long(p, 30000, lambda i: f"{i},{'abc' if i == 25000 else i}\n")
    con = glint.connect(device="cpu")
    with pytest.raises(duckdb.ConversionException):
        duckdb.connect().execute(f"SELECT * FROM '{p}'").fetchall()
    with pytest.raises(GlintIOError, match=r"late\.csv.*row 25002.*'abc'.*column 'b'.*BIGINT"):
        con.sql(f"SELECT * FROM '{p}'").fetchall()
    _same_as_duckdb(con, f"read_csv('{p}', sample_size = -1)")


def test_types_merge_over_files(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "1.csv").write_text("a,b,c\n1,x,true\n2,y,false\n")
    (d / "2.csv").write_text("a,b,c\n2.5,z,true\n")
    (d / "3.csv").write_text("a,b,c\n3,w,maybe\n")
    con = glint.connect(device="cpu")
    _same_as_duckdb(con, f"'{d}/*.csv'")
    _same_as_duckdb(con, f"read_csv(['{d}/1.csv', '{d}/2.csv'])")


def test_files_whose_columns_differ_are_refused(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "1.csv").write_text("a,b\n1,2\n")
    (d / "2.csv").write_text("a,c\n3,4\n")
    (d / "3.csv").write_text("a,b,c\n3,4,5\n")
    con = glint.connect(device="cpu")
    with pytest.raises(GlintIOError, match=r"2\.csv.*columns \['a', 'c'\].*\['a', 'b'\]"):
        con.sql(f"SELECT * FROM read_csv(['{d}/1.csv', '{d}/2.csv'])").fetchall()
    with pytest.raises(GlintIOError, match=r"3\.csv.*3 columns.*1\.csv.*2"):
        con.sql(f"SELECT * FROM read_csv(['{d}/1.csv', '{d}/3.csv'])").fetchall()


def test_repeated_names_in_any_case(tmp_path):
    from glint.io.csv_auto import read_csv_auto

    p = tmp_path / "f.csv"
    p.write_text("a,a,A,b\n1,2,3,4\n")
    want = [r[0] for r in duckdb.connect().execute(f"DESCRIBE SELECT * FROM '{p}'").fetchall()]
    assert read_csv_auto(str(p)).column_names == want


@pytest.mark.parametrize("options", ["header = false", "header = true", "all_varchar = true", "nullstr = 'NA'"])
def test_options(tmp_path, options):
    p = tmp_path / "f.csv"
    p.write_text("zip,n,when\n02139,1,2024-01-05\nNA,,2024-01-06\n")
    _same_as_duckdb(glint.connect(device="cpu"), f"read_csv('{p}', {options})")


def test_connection_read_csv_keeps_leading_zeros(tmp_path):
    """Connection.read_csv (``glint sql --csv``) detects types as read_csv does."""
    p = tmp_path / "zips.csv"
    p.write_text("zip,city,pop,since\n02139,Cambridge,118403,1846-03-17\n10001,New York,21102,1898-01-01\n")
    con = glint.connect(device="cpu")
    con.read_csv(str(p), "zips")
    want = duckdb.connect().execute(f"SELECT * FROM '{p}'").fetchall()
    assert con.sql("SELECT * FROM zips").fetchall() == want
    assert _describe(con, "zips") == [
        (r[0], r[1]) for r in duckdb.connect().execute(f"DESCRIBE SELECT * FROM '{p}'").fetchall()
    ]


@pytest.mark.parametrize(
    "late",
    ["2024-01-05 10:00:00+02", "2024-01-05T10:00:00Z", "2024-01-05 10:00:00 UTC", " 2024-01-05 10:00:00"],
)
def test_timestamps_past_the_sample_read_as_duckdb_reads_them(tmp_path, late):
    """A TIMESTAMP column's values after the rows its type came from: an
    offset or Z is read and left off (DuckDB does not apply it), as in its cast."""
    p = tmp_path / "t.csv"
    p.write_text("t\n" + "".join(f"{late if i == 2500 else '2024-01-05 10:00:00'}\n" for i in range(3000)))
    _same_as_duckdb(glint.connect(device="cpu"), f"read_csv('{p}', sample_size = 2048)")
