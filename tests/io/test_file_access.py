"""A connection without external access (enable_external_access off) reads
and writes files only under its allowed_directories, by their real paths."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import glint
from glint.errors import PermissionDenied
from glint.io.file_access import FileAccess


@pytest.fixture
def tree(tmp_path):
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir()
    outside.mkdir()
    pq.write_table(pa.table({"a": [1, 2]}), inside / "t.parquet")
    pq.write_table(pa.table({"a": [99]}), outside / "s.parquet")
    (outside / "s.csv").write_text("a\n99\n")
    os.symlink(outside / "s.parquet", inside / "link.parquet")
    os.symlink(outside, inside / "dirlink")
    return inside, outside


@pytest.fixture
def con(tree):
    c = glint.connect(device="cpu", enable_external_access=False, allowed_directories=[str(tree[0])])
    yield c
    c.close()


def test_files_inside_are_read_and_written(con, tree):
    inside, _ = tree
    assert con.sql(f"SELECT sum(a) FROM '{inside}/t.parquet'").fetchall()[0][0] == 3
    con.sql(f"COPY (SELECT 7 AS seven) TO '{inside}/sub.csv'")
    assert con.sql(f"SELECT * FROM read_csv('{inside}/sub.csv')").fetchall() == [(7,)]
    con.sql("CREATE TABLE c (a INTEGER)")
    con.sql(f"COPY c FROM '{inside}/t.parquet'")
    assert con.sql("SELECT count(*) FROM c").fetchall() == [(2,)]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM '{out}/s.parquet'",
        "SELECT * FROM '{inn}/../out/s.parquet'",
        "SELECT * FROM '{inn}/link.parquet'",
        "SELECT * FROM read_parquet('{inn}/dirlink/s.parquet')",
        "SELECT * FROM read_parquet(['{inn}/t.parquet', '{out}/s.parquet'])",
        "SELECT * FROM read_parquet('{inn}/*/s.parquet')",
        "SELECT * FROM read_csv('{out}/s.csv')",
        "CREATE TABLE x AS SELECT * FROM '{out}/s.csv'",
        "COPY (SELECT 1) TO '{out}/w.csv'",
        "COPY (SELECT 1) TO '{inn}/../out/w.csv'",
        "COPY (SELECT 1) TO '{inn}/dirlink/w.parquet'",
        "COPY (SELECT 1) TO '{inn}/link.parquet'",
    ],
)
def test_files_outside_are_refused(con, tree, sql):
    inside, outside = tree
    before = {p.name: p.stat().st_mtime_ns for p in outside.iterdir()}
    with pytest.raises(PermissionDenied, match="outside the allowed directories"):
        con.sql(sql.format(inn=inside, out=outside))
    assert {p.name: p.stat().st_mtime_ns for p in outside.iterdir()} == before
    assert not con.has_table("x")


def test_external_access_is_on_by_default_and_fixed(tmp_path, tree):
    _, outside = tree
    c = glint.connect(device="cpu")
    assert c.sql(f"SELECT a FROM '{outside}/s.parquet'").fetchall() == [(99,)]
    with pytest.raises(glint.errors.GlintError, match="cannot be changed on an open connection"):
        c.sql("SET enable_external_access = false")


def test_no_directories_allow_no_file(tree):
    access = FileAccess([])
    with pytest.raises(PermissionDenied, match="file access is disabled"):
        access.check_read(str(tree[0] / "t.parquet"))
