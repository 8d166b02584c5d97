"""GROUP BY an id and strings that the id determines (TPC-H Q10's c_custkey
and customer columns): the strings are checked against each group's first
row instead of hashed (glint.exec.aggregate._determined), and the groups are
DuckDB's whether the check holds or not: strings that vary within an id,
NULLs, equal strings under different codes (a dictionary with repeats)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from glint.exec import aggregate as A
from glint.testing.compare import compare_query_result
from tests.registered import duck_fixture, glint_with, spy_on

N = 20_000
IDS = 700


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(9)
    ids = rng.integers(0, IDS, N)
    name = np.array([f"name-{i:05d}" for i in range(IDS)])
    city = np.array([f"city-{i % 37}" for i in range(IDS)])
    names = pa.DictionaryArray.from_arrays(  # NULL for some ids, always for those
        pa.array(ids.astype(np.int32), mask=(ids % 50) == 3), pa.array(name)
    )
    cities = pa.DictionaryArray.from_arrays(pa.array(ids.astype(np.int32)), pa.array(city))
    varying = pa.array(np.array(["x", "y", "z"])[rng.integers(0, 3, N)])  # not determined by the id
    # the same strings under two dictionaries: its rows hold repeated entries once concatenated
    dict_a = pa.DictionaryArray.from_arrays(pa.array((ids % 5).astype(np.int32)), pa.array(["p", "q", "r", "s", "t"]))
    return {
        "f": pa.table(
            {
                "id": ids,
                "name": names,
                "city": cities,
                "plain": pa.array(city[ids]),  # one dictionary entry a row: codes never repeat
                "v": varying,
                "d": dict_a,
                "x": rng.integers(0, 100, N),
            }
        ),
        "g": pa.table({"id": ids[:500], "city": pa.array(city[ids[:500]]), "x": rng.integers(0, 100, 500)}),
    }


@pytest.fixture
def con(device, tables, monkeypatch):
    outcomes = spy_on(monkeypatch, A, "_determined")
    c = glint_with(tables, device)
    c.outcomes = outcomes
    yield c
    c.close()


duck = duck_fixture()


CASES = {
    # (query, whether some chunk's strings are found determined by the other keys)
    "determined": ("SELECT id, name, city, count(*) AS n, sum(x) AS s FROM f GROUP BY id, name, city", True),
    "dictionary": ("SELECT id, d, count(*) AS n FROM f GROUP BY id, d", True),
    # the strings' codes differ where the strings do not: compared byte for byte on a GPU only
    "plain": ("SELECT id, plain, count(*) AS n FROM f GROUP BY id, plain", "cuda"),
    "not_determined": ("SELECT id, v, count(*) AS n, sum(x) AS s FROM f GROUP BY id, v", False),
    "few_ids": ("SELECT id % 3 AS k, city, count(*) AS n FROM f GROUP BY id % 3, city", False),
    "union": (
        "SELECT id, city, count(*) AS n, sum(x) AS s FROM (SELECT id, city, x FROM f UNION ALL "
        "SELECT id, city, x FROM g) GROUP BY id, city",
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_groups_by_determined_strings(con, duck, device, name):
    sql, determined = CASES[name]
    got = con.sql(sql).arrow()
    assert compare_query_result(sql, got, duck.execute(sql).arrow()) == []
    assert con.outcomes, "the check never ran"
    if determined == "cuda":
        determined = device == "cuda"
    if determined is not None:
        assert any(con.outcomes) == determined, con.outcomes
