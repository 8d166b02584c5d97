"""The glint command, run in-process: error paths print `Error: ...` with exit
code 1 and never a traceback; internal errors exit with 2."""

from __future__ import annotations

import io
import sys
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from glint.__main__ import main
from glint.cli import sql as cli_sql
from glint.cli.common import parse_query_list
from glint.cli.shell import split_statements
from glint.errors import GlintError


@pytest.fixture
def data_dir(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    pq.write_table(
        pa.table(
            {
                "id": pa.array([1, 2, 3], pa.int64()),
                "price": pa.array([Decimal("1.50"), Decimal("2.25"), None], pa.decimal128(15, 2)),
                "name": ["a", "b", "c"],
            }
        ),
        d / "items.parquet",
    )
    (d / "events").mkdir()
    pq.write_table(pa.table({"item": pa.array([1, 1, 2], pa.int64())}), d / "events" / "part-0.parquet")
    return d


def _no_traceback(captured) -> None:
    assert "Traceback" not in captured.out and "Traceback" not in captured.err


# ------------------------------------------------------------------ glint sql: errors
def test_sql_missing_parquet_dir(tmp_path, capsys):
    missing = tmp_path / "does-not-exist"
    assert main(["sql", "SELECT 1", "--parquet", str(missing)]) == 1
    c = capsys.readouterr()
    assert c.err.startswith("Error: ") and str(missing) in c.err
    _no_traceback(c)


def test_sql_missing_csv_file(tmp_path, capsys):
    missing = tmp_path / "nope.csv"
    assert main(["sql", "SELECT 1", "--csv", str(missing)]) == 1
    c = capsys.readouterr()
    assert "Error: " in c.err and str(missing) in c.err
    _no_traceback(c)


def test_sql_bad_parquet_file(tmp_path, capsys):
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    assert main(["sql", "SELECT * FROM bad", "--parquet", str(bad)]) == 1
    c = capsys.readouterr()
    assert "Error: " in c.err and str(bad) in c.err
    _no_traceback(c)


def test_sql_no_query(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("   "))
    assert main(["sql"]) == 1
    assert "Error: no SQL" in capsys.readouterr().err


def test_internal_error_exit_code_2(capsys, monkeypatch):
    def boom(device, args=None):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(cli_sql, "connect_from_args", boom)
    monkeypatch.delenv("GLINT_DEBUG", raising=False)
    assert main(["sql", "SELECT 1"]) == 2
    c = capsys.readouterr()
    assert "internal error: RuntimeError: kaboom" in c.err and "report" in c.err
    _no_traceback(c)


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and "glint" in capsys.readouterr().out


# ------------------------------------------------------------------ glint sql: with the engine
def test_sql_syntax_error(capsys):
    assert main(["sql", "SELEC 1"]) == 1
    c = capsys.readouterr()
    assert c.err.startswith("Error: ")
    _no_traceback(c)


def test_sql_unknown_table(data_dir, capsys):
    assert main(["sql", "SELECT * FROM itemz", "--parquet", str(data_dir)]) == 1
    c = capsys.readouterr()
    assert c.err.startswith("Error: ") and "itemz" in c.err
    _no_traceback(c)


def test_sql_unknown_column(data_dir, capsys):
    assert main(["sql", "SELECT nope FROM items", "--parquet", str(data_dir)]) == 1
    c = capsys.readouterr()
    assert "Error: " in c.err and "nope" in c.err
    _no_traceback(c)


def test_sql_prints_result(data_dir, capsys):
    q = "SELECT name, price, (SELECT count(*) FROM events WHERE item = id) AS n FROM items ORDER BY id"
    assert main(["sql", q, "--parquet", str(data_dir), "--device", "cpu"]) == 0
    c = capsys.readouterr()
    for text in ("name", "price", "1.50", "2.25", "NULL", "3 rows"):
        assert text in c.out
    _no_traceback(c)


def test_sql_csv_table(tmp_path, capsys):
    p = tmp_path / "sales-2024.csv"
    p.write_text("region|amount\nEU|10\nUS|5\nEU|1\n")
    assert (
        main(
            [
                "sql",
                "SELECT region, sum(amount) AS total FROM sales_2024 GROUP BY region ORDER BY region",
                "--csv",
                str(p),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "EU" in out and "11" in out and "2 rows" in out


# ------------------------------------------------------------------ glint shell
def test_shell_errors_do_not_stop_it(data_dir, capsys, monkeypatch):
    script = (
        "\n".join(
            [
                ".tables",
                "SELEC 1;",
                "SELECT name",
                "  FROM items WHERE id = 2;",
                ".schema items",
                ".bogus",
                "SELECT * FROM missing_table;",
                "SELECT 40 + 2 AS answer;",
                ".quit",
                "SELECT 'not reached';",
            ]
        )
        + "\n"
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    rc = main(["shell", "--parquet", str(data_dir)])
    c = capsys.readouterr()
    assert rc == 1  # piped input with errors
    assert "items" in c.out and "events" in c.out
    assert "b" in c.out and "42" in c.out and "DECIMAL(15,2)" in c.out
    assert sum(line.startswith("Error: ") for line in c.err.splitlines()) == 3
    assert "not reached" not in c.out
    _no_traceback(c)


def test_split_statements():
    assert split_statements("select 1;") == (["select 1"], "")
    assert split_statements("select 'a;b' -- c;d\n, 2; select") == (["select 'a;b' -- c;d\n, 2"], " select")
    assert split_statements("select /* ; */ 1") == ([], "select /* ; */ 1")
    assert split_statements("select 'it''s;'; x") == (["select 'it''s;'"], " x")


# ------------------------------------------------------------------ glint tpch
def test_parse_query_list():
    assert parse_query_list("1,5,9") == [1, 5, 9]
    assert parse_query_list("q1-3, 2") == [1, 2, 3]
    with pytest.raises(GlintError):
        parse_query_list("0")
    with pytest.raises(GlintError):
        parse_query_list("a,b")


def test_tpch_bad_query_list(capsys):
    assert main(["tpch", "--queries", "23"]) == 1
    c = capsys.readouterr()
    assert "Error: " in c.err and "23" in c.err
    _no_traceback(c)


def test_tpch_without_tpchgen(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GLINT_DATA", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "nobin" / "python"))
    assert main(["tpch", "--sf", "0.01", "--queries", "1"]) == 1
    c = capsys.readouterr()
    assert "Error: " in c.err and "tpchgen-cli" in c.err
    _no_traceback(c)


def test_tpch_sf001_checks_against_duckdb_and_answers(tmp_path, capsys, monkeypatch):
    pytest.importorskip("duckdb")
    monkeypatch.setenv("GLINT_DATA", str(tmp_path))
    rc = main(["tpch", "--sf", "0.01", "--queries", "1,3,6", "--device", "cpu"])
    c = capsys.readouterr()
    assert "Q01" in c.out and "Q06" in c.out
    assert rc == 0, c.out
    assert "3/3 ok" in c.out
    _no_traceback(c)


def test_memory_options(tmp_path, capsys):
    """--gpu-memory-limit / --chunk-rows / --spill-dir reach the connection:
    a GROUP BY over 5 000 rows in 64-row chunks under 64 KB spills to the
    directory given and still gives the right answer."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"k": list(range(5000)), "v": [i % 13 for i in range(5000)]}), tmp_path / "t.parquet")
    spill = tmp_path / "spill"
    spill.mkdir()
    assert (
        main(
            [
                "sql",
                "SELECT count(*) AS n, sum(s) AS s FROM (SELECT k, sum(v) AS s FROM t GROUP BY k)",
                "--parquet",
                f"t={tmp_path / 't.parquet'}",
                "--device",
                "cpu",
                "--gpu-memory-limit",
                "64KB",
                "--chunk-rows",
                "64",
                "--spill-dir",
                str(spill),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "5000" in out and str(sum(i % 13 for i in range(5000))) in out
    assert main(["sql", "SELECT 1", "--gpu-memory-limit", "lots"]) == 1
    assert "invalid memory size 'lots'" in capsys.readouterr().err


# ------------------------------------------------------------------ options that take values
def test_sql_csv_takes_one_file_per_flag_and_the_query_after_it(tmp_path, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("zip,n\n02139,1\n10001,2\n")
    b.write_text("zip,city\n02139,Cambridge\n")
    query = "SELECT a.zip, n, city FROM a JOIN b USING (zip) ORDER BY 1"
    assert main(["sql", "--csv", str(a), "--csv", f"b={b}", query]) == 0
    out = capsys.readouterr().out
    assert "02139" in out and "Cambridge" in out and "1 row" in out
    assert main(["sql", "--csv", str(a), "SELECT count(*) AS n FROM a"]) == 0
    assert "2" in capsys.readouterr().out


def _options(parser):
    """(command, option) of every option of every command and subcommand."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                for _, opt in _options(sub):
                    yield name, opt
        elif action.option_strings:
            yield None, action


def test_every_option_takes_at_most_one_value():
    """An option taking several values would swallow the query after it
    (``glint sql --csv f.csv "SELECT ..."``): repeatable options append."""
    from glint.__main__ import build_parser

    wide = [(cmd, o.option_strings[0]) for cmd, o in _options(build_parser()) if o.nargs not in (None, 0, "?")]
    assert wide == []


# ------------------------------------------------------------------ the process's exit
def _glint(args, cwd, timeout=300):
    import os
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "glint", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def test_empty_csv_and_failed_queries_exit_cleanly(tmp_path, device):
    """The glint command on an empty CSV file answers as DuckDB does, and a
    query that fails prints its error and exits with 1, every time: no
    thread of the reader left running aborts the process at exit."""
    import duckdb

    (tmp_path / "empty.csv").write_bytes(b"")
    (tmp_path / "t.csv").write_text("a,b\nx,1\ny,2\n")
    want = duckdb.connect().execute(f"SELECT count(*) FROM '{tmp_path / 'empty.csv'}'").fetchall()[0][0]
    for _ in range(3):
        r = _glint(["sql", "--device", device, "SELECT count(*) AS n FROM 'empty.csv'"], tmp_path)
        assert r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr)
        assert f"│ {want} │" in r.stdout or f" {want} " in r.stdout
        r = _glint(["sql", "--device", device, "SELECT CAST(a AS INTEGER) FROM 't.csv'"], tmp_path)
        assert r.returncode == 1, (r.returncode, r.stderr)
        assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
