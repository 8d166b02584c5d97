"""A connection's settings (glint.runtime.settings): argument > environment
> default, checked values, SET / RESET / current_setting / glint_settings()
as DuckDB has them, and the reference in docs/settings.md."""

import pathlib

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import glint
from glint.errors import GlintError
from glint.runtime.settings import Settings, all_settings, reference_markdown, setting

ROOT = pathlib.Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ building
def test_argument_beats_environment_beats_default(monkeypatch):
    monkeypatch.setenv("GLINT_CHUNK_ROWS", "5000")
    monkeypatch.setenv("GLINT_SCAN_PRIORITY", "1")
    monkeypatch.setenv("GLINT_READ_AHEAD", "off")
    monkeypatch.setenv("GLINT_UPLOAD_AHEAD", "")  # empty: not set
    con = glint.connect(device="cpu", chunk_rows=3000)
    s = con.settings
    assert (s.chunk_rows, con.chunk_rows) == (3000, 3000)  # argument
    assert s.scan_priority == 1 and s.read_ahead is False  # environment
    assert s.upload_ahead == 2 and s.run_gap == 256 << 10  # defaults
    assert glint.connect(device="cpu").chunk_rows == 5000
    assert glint.connect(device="cpu", chunk_rows=None).chunk_rows == 5000  # None: not given
    monkeypatch.delenv("GLINT_CHUNK_ROWS")
    assert glint.connect(device="cpu", memory_limit="1GB").chunk_rows == 1 << 18  # from the limit


def test_build_without_the_process_environment():
    s = Settings.build(
        {"memory_limit": "2GB", "raw_strings": "0"}, environ={"GLINT_MEMORY_LIMIT": "1GB", "GLINT_TRITON": "false"}
    )
    assert (s.memory_limit, s.raw_strings, s.triton_strings) == (2 << 30, False, False)
    assert Settings() == Settings.build(environ={})
    assert Settings.memory_limit is None and Settings.read_gap == 1 << 20  # the defaults, on the class


@pytest.mark.parametrize(
    "where,name,value,message",
    [
        ("env", "GLINT_SCAN_PRIORITY", "3", "GLINT_SCAN_PRIORITY must be between 0 and 2, got 3"),
        ("env", "GLINT_READ_GAP", "1MB", "GLINT_READ_GAP must be a whole number, got '1MB'"),
        ("env", "GLINT_RAW_INDEX_BLOCK", "0", "GLINT_RAW_INDEX_BLOCK must be at least 1, got 0"),
        ("env", "GLINT_CHUNK_ROWS", "lots", "GLINT_CHUNK_ROWS must be a positive integer, got 'lots'"),
        ("env", "GLINT_MEMORY_LIMIT", "plenty", "GLINT_MEMORY_LIMIT: invalid memory size 'plenty'"),
        (
            "env",
            "GLINT_READ_AHEAD",
            "maybe",
            ("GLINT_READ_AHEAD must be a boolean (true or false, on or off, 1 or 0), got 'maybe'"),
        ),
        (
            "env",
            "GLINT_PARQUET_DECODE",
            "gpu",
            ("GLINT_PARQUET_DECODE must be one of 'auto', 'raw', 'device' or 'host', got 'gpu'"),
        ),
        ("arg", "chunk_rows", 0, "chunk_rows must be a positive integer, got 0"),
        ("arg", "chunk_rows", 2.5, "chunk_rows must be a positive integer, got 2.5"),
        ("arg", "scan_priority", -1, "scan_priority must be between 0 and 2, got -1"),
        ("arg", "memory_limit", "plenty", "memory_limit: invalid memory size 'plenty'"),
        ("arg", "memory_limit", 0, "memory_limit: a memory size must be positive, got 0"),
        ("arg", "footer_threads", True, "footer_threads must be a whole number, got True"),
        ("arg", "memry_limit", 1, 'unrecognized configuration parameter "memry_limit" (did you mean "memory_limit"'),
    ],
)
def test_bad_values_are_named(monkeypatch, where, name, value, message):
    if where == "env":
        monkeypatch.setenv(name, value)
        with pytest.raises(GlintError) as e:
            glint.connect(device="cpu")
    else:
        with pytest.raises(GlintError) as e:
            glint.connect(device="cpu", **{name: value})
    assert str(e.value).startswith(message), str(e.value)


def test_zero_turns_the_host_cache_off():
    assert glint.connect(device="cpu", host_cache_limit=0).memory.host is None
    assert glint.connect(device="cpu", host_cache_limit="0").memory.host is None
    con = glint.connect(device="cpu", host_cache_limit="64MB")
    assert con.memory.host.limit == 64 << 20 and con.memory.host.always


def test_every_setting_is_described():
    names = [s.name for s in all_settings()]
    assert len(names) == len(set(names)) and all(n == n.lower() for n in names)
    for s in all_settings():
        assert s.env.startswith("GLINT_") and s.description and s.scope in ("connection", "fixed", "process")
        assert s.default is not None or s.auto, s.name
    assert len({s.env for s in all_settings()}) == len(names)
    assert setting("Read_Ahead").name == "read_ahead" and setting("read_gap").input_type == "BIGINT"


def test_the_reference_is_up_to_date():
    """docs/settings.md is reference_markdown()'s text (regenerate it with
    python -c "from glint.runtime.settings import reference_markdown as r; open('docs/settings.md', 'w').write(r())")."""
    assert (ROOT / "docs" / "settings.md").read_text() == reference_markdown()


# ------------------------------------------------------------------ SQL
def test_set_reset_and_current_setting():
    con = glint.connect(device="cpu", scan_priority=1)
    assert con.sql("SELECT current_setting('scan_priority') AS p").fetchall() == [(1,)]
    con.sql("SET scan_priority = 0")
    con.sql("set Scan_Priority TO 2")  # (names in any case; TO)
    assert con.settings.scan_priority == 2
    con.sql("SET read_ahead = off; SET narrow_uploads = false; SET parquet_decode = 'RAW'")
    got = con.sql(
        "SELECT current_setting('READ_AHEAD'), current_setting('narrow_uploads'), current_setting('parquet_decode')"
    ).fetchall()
    assert got == [(False, False, "raw")]
    con.sql("SET result_limit = '16MB'")
    assert con.sql("SELECT current_setting('result_limit') AS r").fetchall() == [("16.0 MiB",)]
    con.sql("RESET scan_priority")
    assert con.settings.scan_priority == 1  # the value it was opened with
    con.sql("RESET ALL")
    assert con.settings == Settings.build({"scan_priority": 1})
    assert con.sql("SELECT current_setting('trace') IS NULL").fetchall() == [(True,)]


def test_set_refuses_what_it_cannot_change():
    con = glint.connect(device="cpu")
    with pytest.raises(
        GlintError,
        match=r"spill_dir cannot be changed on an open connection: it is fixed when the "
        r"connection is created \(pass spill_dir=\.\.\. to glint\.connect\(\), or "
        r"set GLINT_SPILL_DIR\)",
    ):
        con.sql("SET spill_dir = '/tmp'")
    with pytest.raises(
        GlintError,
        match=r"decode_threads cannot be changed on an open connection: it is fixed "
        r"for the process",
    ):
        con.sql("SET decode_threads = 4")
    with pytest.raises(
        GlintError,
        match=r'unrecognized configuration parameter "chunk_row" \(did you mean '
        r'"chunk_rows"',
    ):
        con.sql("SET chunk_row = 10")
    with pytest.raises(GlintError, match="scan_priority must be between 0 and 2, got 7"):
        con.sql("SET scan_priority = 7")
    with pytest.raises(GlintError, match="chunk_rows needs a value"):
        con.sql("SET chunk_rows = NULL")
    with pytest.raises(GlintError, match='unrecognized configuration parameter "nope"'):
        con.sql("SELECT current_setting('nope')")
    with pytest.raises(GlintError, match='unrecognized configuration parameter "nope"'):
        con.sql("RESET nope")
    assert con.settings == Settings.build()  # nothing changed


def test_glint_settings_lists_every_setting():
    con = glint.connect(device="cpu", chunk_rows=4096, memory_limit="1GB")
    t = con.sql("SELECT * FROM glint_settings()").arrow()
    assert t.column_names == ["name", "value", "description", "input_type", "scope"]
    rows = {r["name"]: r for r in t.to_pylist()}
    assert list(rows) == [s.name for s in all_settings()]
    assert rows["chunk_rows"]["value"] == "4096" and rows["chunk_rows"]["input_type"] == "BIGINT"
    assert rows["memory_limit"]["value"] == "1.0 GiB" and rows["memory_limit"]["scope"] == "connection"
    assert rows["read_ahead"]["value"] == "true" and rows["read_ahead"]["input_type"] == "BOOLEAN"
    assert rows["spill_dir"]["value"] is None and rows["spill_dir"]["scope"] == "fixed"
    assert rows["pinned_buffers"]["scope"] == "process"
    got = con.sql(
        "SELECT s.name, s.value FROM glint_settings() AS s WHERE s.name LIKE 'raw_%' ORDER BY s.name"
    ).fetchall()
    assert got == [("raw_index_block", "64"), ("raw_strings", "true"), ("raw_together", "true")]
    con.sql("SET raw_strings = 0")
    assert con.sql("SELECT value FROM glint_settings() WHERE name = 'raw_strings'").fetchall() == [("false",)]


def test_a_view_reads_the_setting_when_it_runs():
    con = glint.connect(device="cpu", chunk_rows=1000)
    con.sql("CREATE VIEW v AS SELECT current_setting('chunk_rows') AS c")
    assert con.sql("SELECT * FROM v").fetchall() == [(1000,)]
    con.sql("SET chunk_rows = 2000")
    assert con.sql("SELECT * FROM v").fetchall() == [(2000,)]


# ------------------------------------------------------------------ taking effect
def _table(tmp_path, rows=20_000):
    path = str(tmp_path / "t.parquet")
    pq.write_table(
        pa.table({"k": pa.array([i % 7 for i in range(rows)], pa.int64()), "v": pa.array(range(rows), pa.int64())}),
        path,
        row_group_size=2000,
    )
    return path


def test_set_chunk_rows_takes_effect_on_the_next_query(tmp_path):
    path = _table(tmp_path)
    sql = "SELECT k, sum(v) AS s, count(*) AS n FROM t GROUP BY k ORDER BY k"
    want = duckdb.sql(sql.replace("FROM t", f"FROM '{path}'")).fetchall()
    con = glint.connect(device="cpu", chunk_rows=10_000)
    con.read_parquet(path, "t")
    r = con.sql(sql)
    assert r.fetchall() == want and r.io.chunks == 2
    con.sql("SET chunk_rows = 4000")
    r = con.sql(sql)
    assert r.fetchall() == want and r.io.chunks == 5
    assert con.sql("SELECT current_setting('chunk_rows')").fetchall() == [(4000,)]
    con.sql("RESET chunk_rows")
    r = con.sql(sql)
    assert r.fetchall() == want and r.io.chunks == 2


def test_set_memory_limit_takes_effect_on_the_next_query(tmp_path):
    """A lower limit evicts cached chunks past it at once, and the next
    query keeps within it (and, with chunks taken from the new limit,
    smaller chunks); RESET gives the connection's own limit back."""
    path = _table(tmp_path, 200_000)
    sql = "SELECT k, sum(v) AS s FROM t GROUP BY k ORDER BY k"
    want = duckdb.sql(sql.replace("FROM t", f"FROM '{path}'")).fetchall()
    con = glint.connect(device="cpu", memory_limit="1GB")
    con.read_parquet(path, "t")
    assert con.sql(sql).fetchall() == want
    assert con.cached_bytes() > 1 << 20
    rows_before = con.chunk_rows
    con.sql("SET memory_limit = '4MB'")
    assert con.memory.limit == 4 << 20 and con.cached_bytes() <= 4 << 20
    assert con.chunk_rows < rows_before  # chunk_rows follows the limit it was not set
    r = con.sql(sql)
    assert r.fetchall() == want and con.cached_bytes() <= 4 << 20 and r.io.chunks > 1
    assert con.sql("SELECT current_setting('memory_limit')").fetchall() == [("4.0 MiB",)]
    con.sql("RESET memory_limit")
    assert con.memory.limit == 1 << 30 and con.chunk_rows == rows_before


def test_the_switch_interval_is_set_once_per_process(monkeypatch):
    """gil_switch_interval: the first CUDA connection of a process sets the
    interpreter's switch interval (later ones leave it); auto leaves a
    process that chose its own interval alone."""
    import sys

    from glint.runtime import settings as S

    before = sys.getswitchinterval()
    try:
        monkeypatch.setattr(S, "_switch_set", False)
        sys.setswitchinterval(S.PYTHON_SWITCH_INTERVAL_S)
        S.apply_switch_interval(Settings.build({"gil_switch_interval": 300}))
        assert sys.getswitchinterval() == pytest.approx(0.0003)
        S.apply_switch_interval(Settings.build({"gil_switch_interval": 900}))  # the second: ignored
        assert sys.getswitchinterval() == pytest.approx(0.0003)
        monkeypatch.setattr(S, "_switch_set", False)
        sys.setswitchinterval(0.002)  # the process's own choice
        S.apply_switch_interval(Settings.build({}))
        assert sys.getswitchinterval() == pytest.approx(0.002)
        with pytest.raises(GlintError, match="gil_switch_interval must be at least 0"):
            Settings.build({"gil_switch_interval": -1})
    finally:
        sys.setswitchinterval(before)
