"""Files named in SQL over Flight SQL: clients read and write only under the
server's --allow-dir; a path outside, also by '..' or a symbolic link, is
refused with PERMISSION_DENIED and nothing is written."""

from __future__ import annotations

import adbc_driver_manager
import pytest

from tests.server.conftest import connect, query


@pytest.fixture(scope="module")
def client(served):
    con = connect(served)
    yield con
    con.close()


@pytest.fixture(scope="module")
def dirs(served_files):
    files = served_files[1]
    return files / "allowed", files / "outside"


def _refused(client, sql: str) -> str:
    with pytest.raises(adbc_driver_manager.Error) as e:
        query(client, sql)
    text = str(e.value)
    assert "UNAUTHORIZED" in text or "PERMISSION_DENIED" in text, text  # (ADBC's name for PERMISSION_DENIED)
    assert "Permission Error" in text and "outside the allowed directories" in text, text
    return text


def test_reads_inside_the_allowed_directory(client, dirs):
    allowed, _ = dirs
    assert query(client, f"SELECT sum(a) AS s FROM '{allowed}/ok.parquet'").column("s")[0].as_py() == 6
    rows = query(client, f"SELECT b FROM read_csv('{allowed}/ok.csv') ORDER BY a").column("b").to_pylist()
    assert rows == ["x", "y"]


@pytest.mark.parametrize(
    "path",
    [
        "{outside}/secret.csv",
        "{allowed}/../outside/secret.csv",
        "{allowed}/link.csv",
        "{allowed}/linkdir/secret.csv",
        "{allowed}/*/secret.csv",
        "/etc/passwd.csv",
    ],
    ids=["outside", "dot-dot", "symlink", "symlinked-dir", "glob-through-link", "absolute"],
)
def test_reads_outside_are_refused(client, dirs, path):
    allowed, outside = dirs
    p = path.format(allowed=allowed, outside=outside)
    for sql in (f"SELECT * FROM '{p}'", f"SELECT * FROM read_csv('{p}', header = true)"):
        assert "secret" not in _refused(client, sql).split("Permission Error")[0]
    parquet = p.replace("secret.csv", "secret.parquet").replace("link.csv", "link.parquet")
    _refused(client, f"SELECT * FROM read_parquet('{parquet}')")
    _refused(client, f"CREATE TABLE stolen AS SELECT * FROM '{p}'")
    with pytest.raises(adbc_driver_manager.Error, match='Table "stolen" does not exist'):
        query(client, "SELECT * FROM stolen")


def test_copy_from_outside_is_refused(client, dirs):
    allowed, outside = dirs
    query(client, "CREATE TABLE copied (secret INTEGER)")
    for p in (f"{outside}/secret.csv", f"{allowed}/../outside/secret.csv", f"{allowed}/link.csv"):
        _refused(client, f"COPY copied FROM '{p}'")
    assert query(client, "SELECT count(*) AS n FROM copied").to_pylist() == [{"n": 0}]


@pytest.mark.parametrize(
    "target",
    ["{outside}/out.csv", "{allowed}/../outside/dotdot.csv", "{allowed}/linkdir/vialink.parquet", "/tmp/glint-x.csv"],
    ids=["outside", "dot-dot", "symlinked-dir", "tmp"],
)
def test_copy_to_outside_is_refused_and_writes_nothing(client, dirs, target):
    allowed, outside = dirs
    before = sorted(p.name for p in outside.iterdir())
    p = target.format(allowed=allowed, outside=outside)
    _refused(client, f"COPY (SELECT 1 AS one) TO '{p}'")
    assert sorted(p.name for p in outside.iterdir()) == before
    assert not (outside / "out.csv").exists()


def test_copy_to_a_file_through_a_link_is_refused(client, dirs):
    allowed, outside = dirs
    before = (outside / "secret.csv").read_text()
    _refused(client, f"COPY (SELECT 1 AS one) TO '{allowed}/link.csv'")  # a link to a file outside
    assert (outside / "secret.csv").read_text() == before


def test_copy_inside_the_allowed_directory(client, dirs):
    allowed, _ = dirs
    query(client, f"COPY (SELECT 5 AS five) TO '{allowed}/written.csv'")
    assert (allowed / "written.csv").read_text() == "five\n5\n"
    assert query(client, f"SELECT * FROM '{allowed}/written.csv'").to_pylist() == [{"five": 5}]


def test_the_allowed_directories_cannot_be_changed_by_a_client(client):
    with pytest.raises(adbc_driver_manager.Error, match="cannot be changed on an open connection"):
        query(client, "SET allowed_directories = '/'")
    with pytest.raises(adbc_driver_manager.Error, match="cannot be changed on an open connection"):
        query(client, "SET enable_external_access = true")
