"""A plan copied with new column ids (the outer query read a second time by a
decorrelated subquery) and the plans decorrelation builds."""

import itertools

import pyarrow as pa
import pytest

import glint
from glint.plan import logical as L
from glint.plan.expr import Field
from glint.plan.fresh import fresh_copy
from glint.sql import frontend


@pytest.fixture(scope="module")
def con():
    c = glint.connect(device="cpu")
    c.register("t", pa.table({"a": [1, 2, 3], "b": ["x", "y", None]}))
    c.register("u", pa.table({"a": [1, 1, 2], "c": [10, 20, 30]}))
    return c


def _defined(plan) -> list[int]:
    """Ids of the columns each node of ``plan`` defines (a pass-through Project's too)."""
    out = []

    def walk(n):
        if isinstance(n, (L.Scan, L.Values, L.SetOp)):
            out.extend(f.id for f in n.schema)
        elif isinstance(n, L.Project):
            out.extend(f.id for f, _ in n.exprs)
        elif isinstance(n, L.Aggregate):
            out.extend(f.id for f, _ in n.groups + n.aggs)
        elif isinstance(n, L.Window):
            out.extend(f.id for f, _ in n.funcs)
        elif isinstance(n, L.Series):
            out.append(n.field.id)
        for c in n.children:
            walk(c)

    walk(plan)
    return out


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a, count(*) AS n FROM t GROUP BY a ORDER BY a",
        "SELECT t.a, u.c, rank() OVER (PARTITION BY t.a ORDER BY u.c) FROM t JOIN u ON t.a = u.a",
        "SELECT a FROM t UNION SELECT a FROM u",
        "SELECT * FROM range(3) r, (VALUES (1), (2)) v(x)",
    ],
)
def test_copy_has_only_new_ids_and_the_same_shape(con, sql):
    plan = frontend.bind_query(frontend.parse(sql)[0], con).plan
    ids = itertools.count(10_000)
    copy, mapping = fresh_copy(plan, lambda name, t: Field(next(ids), name, t))
    old, new = set(_defined(plan)), set(_defined(copy))
    assert old and not (old & new)
    assert {f.id for f in copy.schema} <= new
    assert [f.name for f in copy.schema] == [f.name for f in plan.schema]
    assert [mapping[f.id] for f in plan.schema] == list(copy.schema)

    # every column a node reads is defined below it
    def check(n):
        below = set(_defined(n)) | {f.id for c in n.children for f in c.schema}
        assert n.fields_read() <= below, n.label()
        for c in n.children:
            check(c)

    check(copy)


def test_copy_runs_like_the_original(con):
    sql = "SELECT t.a, sum(u.c) AS s FROM t JOIN u ON t.a = u.a GROUP BY t.a ORDER BY t.a"
    assert con.sql(sql).fetchall() == [(1, 30), (2, 30)]
    plan = frontend.bind_query(frontend.parse(sql)[0], con).plan
    ids = itertools.count(20_000)
    copy, _ = fresh_copy(plan, lambda name, t: Field(next(ids), name, t))
    assert copy.explain().count("\n") == plan.explain().count("\n")


def test_correlated_or_condition_is_a_dependent_join(con):
    """A correlated aggregate whose condition is an OR is computed over the
    distinct outer values: the outer table is read twice."""
    plan = con.sql("SELECT a, (SELECT count(*) FROM u WHERE u.a = t.a OR u.c > 25) FROM t").explain()
    logical_plan = plan.split("Physical plan:")[0]
    assert logical_plan.count("Scan t") == 2
    assert con.sql(
        "SELECT a, (SELECT count(*) FROM u WHERE u.a = t.a OR u.c > 25) AS n FROM t ORDER BY a"
    ).fetchall() == [
        (1, 3),
        (2, 1),
        (3, 1),
    ]


def test_shared_conjunct_of_an_or_stays_an_equality(con):
    """(x = t.a AND p) OR (x = t.a AND q) correlates by the equality alone: no second read of t."""
    sql = "SELECT a, (SELECT count(*) FROM u WHERE (u.a = t.a AND u.c > 15) OR (u.a = t.a AND u.c < 5)) FROM t"
    assert con.sql(sql).explain().split("Physical plan:")[0].count("Scan t") == 1
