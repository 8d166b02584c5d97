"""Optimizer rules, checked on printed plans (stable text) and on results."""

import pyarrow as pa
import pytest

import glint


@pytest.fixture(scope="module")
def con():
    c = glint.connect(device="cpu")
    c.register(
        "big",
        pa.table(
            {
                "k": list(range(1000)),
                "v": [i % 7 for i in range(1000)],
                "w": [float(i) for i in range(1000)],
                "s": [f"s{i % 13}" for i in range(1000)],
            }
        ),
    )
    c.register("dim", pa.table({"k": list(range(0, 1000, 10)), "name": [f"n{i}" for i in range(100)]}))
    c.register("tiny", pa.table({"name": ["n1", "n2"], "flag": [True, False]}))
    return c


def logical(con, sql):
    return con.sql(sql).explain().split("Physical plan:")[0]


def test_scan_reads_only_used_columns(con):
    plan = logical(con, "SELECT v FROM big WHERE w > 10")
    assert "Scan big [v#" in plan and "s#" not in plan and "k#" not in plan


def test_predicates_pushed_below_joins(con):
    plan = logical(con, "SELECT big.v FROM big, dim WHERE big.k = dim.k AND dim.name = 'n3' AND big.v > 2")
    lines = [l.strip() for l in plan.splitlines()]
    join = next(i for i, l in enumerate(lines) if l.startswith("Join INNER ON"))
    assert all(i > join for i, l in enumerate(lines) if l.startswith("Filter"))
    assert "Join INNER ON" in plan and "CROSS" not in plan


def test_constant_folding(con):
    plan = logical(con, "SELECT v + (1 + 2) * 3 FROM big WHERE 1 = 1")
    assert "(v#" in plan and "+ 9)" in plan and "Filter" not in plan


def test_or_factoring_exposes_join_key(con):
    sql = "SELECT count(*) FROM big, dim WHERE (big.k = dim.k AND big.v = 1) OR (big.k = dim.k AND big.v = 2)"
    phys = con.sql(sql).explain().split("Physical plan:")[1]
    assert "EquiJoin INNER" in phys and "NestedLoop" not in phys
    assert con.sql(sql).fetchall() == [(sum(1 for k in range(0, 1000, 10) if k % 7 in (1, 2)),)]


def test_join_order_puts_selective_input_early(con):
    sql = "SELECT count(*) FROM big, dim, tiny WHERE big.k = dim.k AND dim.name = tiny.name AND tiny.flag"
    phys = con.sql(sql).explain().split("Physical plan:")[1]
    # the deepest join involves the filtered tiny table, not big x dim
    deepest = [l for l in phys.splitlines() if "EquiJoin" in l][-1]
    assert "name" in deepest
    assert con.sql(sql).fetchall() == [(1,)]


def test_semi_join_sinks_to_its_input(con):
    sql = "SELECT count(*) FROM big, dim WHERE big.k = dim.k AND big.v IN (SELECT 3)"
    plan = logical(con, sql)
    lines = [l.strip() for l in plan.splitlines()]
    semi = next(i for i, l in enumerate(lines) if l.startswith("Join SEMI"))
    inner = next(i for i, l in enumerate(lines) if l.startswith("Join INNER"))
    assert semi > inner


def test_rules_can_be_switched_off():
    c = glint.connect(device="cpu", optimizer={"prune_columns": False})
    c.register("t", pa.table({"a": [1, 2], "b": [3, 4]}))
    assert "b#" in c.sql("SELECT a FROM t").explain().split("Physical plan:")[0]
    assert c.sql("SELECT a FROM t ORDER BY a").fetchall() == [(1,), (2,)]
    with pytest.raises(glint.GlintError, match="unknown optimizer rule"):
        glint.connect(device="cpu", optimizer={"nope": False})


def test_explain_statement_and_analyze(con):
    text = con.sql("EXPLAIN SELECT count(*) FROM big").fetchall()[0][0]
    assert "Logical plan" in text and "Physical plan" in text and "rows)" in text
    text = con.sql("EXPLAIN ANALYZE SELECT count(*) FROM big").fetchall()[0][0]
    assert "actual" in text
