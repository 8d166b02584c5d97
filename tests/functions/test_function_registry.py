"""The function registry (glint.functions): lookups, the completeness of its
definitions, the agreement of its strict flags with evaluation, the mapping
of sqlglot's nodes to its functions, and the generated reference."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
import sqlglot
import torch
from sqlglot import exp

import glint
from glint.columnar import types as T
from glint.columnar.column import Batch, Column
from glint.errors import NotSupported
from glint.functions.builtins import BUILTINS
from glint.functions.evaluate import _CALLS, CONSTANT_EVALUATOR, evaluate
from glint.functions.reference import reference_markdown, supported_names
from glint.functions.registry import AGGREGATE, OPERATOR, SCALAR, TABLE, WINDOW, Function, Registry
from glint.plan.expr import Call, ColRef, Field, Literal
from glint.sql.bind_agg import aggregate_function
from glint.sql.dialect import DIALECT
from glint.sql.function_calls import SCALAR_NODES, WINDOW_NODES

_ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ lookups
def test_lookup_by_name_and_alias_ignores_case():
    upper = BUILTINS.lookup("upper")
    assert BUILTINS.lookup("UCASE") is upper and BUILTINS.lookup("Upper") is upper
    assert BUILTINS.lookup("instr").name == "strpos" and BUILTINS.lookup("substr").name == "substring"
    assert BUILTINS.lookup("variance", AGGREGATE).name == "var_samp"
    assert BUILTINS.lookup("group_concat", AGGREGATE).name == "string_agg"
    assert BUILTINS.lookup("parquet_scan", TABLE).name == "read_parquet"
    assert BUILTINS.lookup("row_number", WINDOW).name == "row_number"
    assert BUILTINS.lookup("nosuch") is None and BUILTINS.lookup("variance") is None


def test_internal_functions_and_operators_are_not_called_by_name():
    for name in ("like_rows", "trim_chars", "extract", "epoch_unit", "log_base", "add", "eq", "in_list", "cast"):
        assert BUILTINS.lookup(name) is None
    assert BUILTINS.get("like_rows").internal and BUILTINS.get("add", OPERATOR).kind == OPERATOR
    assert "like_rows" not in supported_names() and "add" not in supported_names()


def test_definitions_are_checked_when_the_registry_is_built():
    def bind(args, site):
        return args[0]

    with pytest.raises(ValueError, match="defined twice"):
        Registry(
            [
                Function("f", SCALAR, "x", "f()", "F.", bind=bind, rewrites_to=()),
                Function("f", SCALAR, "x", "f()", "F.", bind=bind, rewrites_to=()),
            ]
        )
    with pytest.raises(ValueError, match="either an evaluator or"):
        Registry([Function("f", SCALAR, "x", "f()", "F.", bind=bind)])
    with pytest.raises(ValueError, match="no evaluator"):
        Registry([Function("f", SCALAR, "x", "f()", "F.", bind=bind, rewrites_to=("g",))])
    with pytest.raises(ValueError, match="belongs to"):
        Registry(
            [
                Function("f", SCALAR, "x", "f()", "F.", bind=bind, rewrites_to=()),
                Function("g", SCALAR, "x", "g()", "G.", aliases=("f",), bind=bind, rewrites_to=()),
            ]
        )


# ------------------------------------------------------------------ completeness
def test_every_function_has_a_bind_rule_an_evaluator_and_documentation():
    calls = BUILTINS.call_functions()
    for f in BUILTINS.functions():
        assert f.signature and f.doc and f.doc.endswith((".", ")")), f.name
        if not f.internal:
            assert f.bind is not None, f.name
        if f.kind in (SCALAR, OPERATOR):
            if f.rewrites_to is None:
                assert f.evaluate is not None and f.name in calls, f.name
            else:
                assert f.evaluate is None and all(t in calls for t in f.rewrites_to), f.name
        if f.kind == WINDOW:
            assert f.evaluate is not None, f.name
    aggregates = BUILTINS.aggregate_evaluators()
    for f in BUILTINS.functions(AGGREGATE):
        assert f.evaluate is not None or all(t in aggregates for t in f.rewrites_to), f.name
    windows = BUILTINS.window_evaluators()
    assert {"row_number", "lag", "count_star", "sum", "min"} <= set(windows)


def test_evaluation_dispatches_through_the_registry():
    assert set(_CALLS) == set(BUILTINS.call_functions())
    assert CONSTANT_EVALUATOR.strict == BUILTINS.strict_names()


# ------------------------------------------------------------------ strictness
_N = 3


def _column(t: T.DataType, null: bool) -> Column:
    valid = torch.zeros(_N, dtype=torch.bool) if null else None
    if t.is_string:
        return Column.from_arrow(pa.array([None] * _N if null else ["ab", "c", ""], pa.string()))
    values = {
        "BOOLEAN": [True, False, True],
        "INTEGER": [1, 2, 3],
        "BIGINT": [1, 2, 3],
        "DOUBLE": [1.5, -2.0, 0.0],
        "DATE": [0, 100, 20000],
        "TIMESTAMP": [0, 10**12, -(10**12)],
        "DECIMAL": [15, -25, 4],
    }[t.kind]
    return Column(t, torch.tensor(values, dtype=t.torch_dtype), valid)


# (function, argument types, result type, params): calls of strict functions
_STRICT_SAMPLES = [
    ("add", (T.INTEGER, T.INTEGER), T.INTEGER, ()),
    ("sub", (T.BIGINT, T.BIGINT), T.BIGINT, ()),
    ("mul", (T.DOUBLE, T.DOUBLE), T.DOUBLE, ()),
    ("div", (T.DOUBLE, T.DOUBLE), T.DOUBLE, ()),
    ("mod", (T.INTEGER, T.INTEGER), T.INTEGER, ()),
    ("neg", (T.INTEGER,), T.INTEGER, ()),
    ("abs", (T.DOUBLE,), T.DOUBLE, ()),
    ("round", (T.DOUBLE,), T.DOUBLE, (1,)),
    ("round", (T.DECIMAL(4, 1),), T.DECIMAL(4, 0), (0,)),
    ("floor", (T.DOUBLE,), T.DOUBLE, ()),
    ("eq", (T.INTEGER, T.INTEGER), T.BOOLEAN, ()),
    ("lt", (T.VARCHAR, T.VARCHAR), T.BOOLEAN, ()),
    ("not", (T.BOOLEAN,), T.BOOLEAN, ()),
    ("cast", (T.INTEGER,), T.DOUBLE, ()),
    ("cast", (T.INTEGER,), T.VARCHAR, ()),
    ("like", (T.VARCHAR,), T.BOOLEAN, ("a%", None, False)),
    ("like_rows", (T.VARCHAR, T.VARCHAR), T.BOOLEAN, (None, True)),
    ("upper", (T.VARCHAR,), T.VARCHAR, ()),
    ("length", (T.VARCHAR,), T.BIGINT, ()),
    ("substring", (T.VARCHAR,), T.VARCHAR, (1, 2)),
    ("trim_chars", (T.VARCHAR, T.VARCHAR), T.VARCHAR, ()),
    ("regexp_matches", (T.VARCHAR, T.VARCHAR), T.BOOLEAN, ("", False)),
    ("regexp_replace", (T.VARCHAR, T.VARCHAR, T.VARCHAR), T.VARCHAR, ("",)),
    ("starts_with", (T.VARCHAR, T.VARCHAR), T.BOOLEAN, ()),
    ("split_part", (T.VARCHAR, T.VARCHAR, T.BIGINT), T.VARCHAR, ()),
    ("lpad", (T.VARCHAR, T.INTEGER, T.VARCHAR), T.VARCHAR, ()),
    ("repeat", (T.VARCHAR, T.BIGINT), T.VARCHAR, ()),
    ("md5", (T.VARCHAR,), T.VARCHAR, ()),
    ("chr", (T.INTEGER,), T.VARCHAR, ()),
    ("extract", (T.DATE,), T.BIGINT, ("year",)),
    ("extract", (T.TIMESTAMP,), T.DOUBLE, ("epoch",)),
    ("date_add_days", (T.DATE, T.INTEGER), T.DATE, (1,)),
    ("date_diff_days", (T.DATE, T.DATE), T.BIGINT, ()),
    ("add_interval", (T.DATE,), T.TIMESTAMP, (1, 2, 0)),
]


@pytest.mark.parametrize(
    "fn, types, out, params", _STRICT_SAMPLES, ids=[f"{s[0]}-{i}" for i, s in enumerate(_STRICT_SAMPLES)]
)
def test_strict_functions_give_null_for_a_null_argument(fn, types, out, params):
    assert fn in BUILTINS.strict_names()
    fields = [Field(i + 1, f"a{i}", t) for i, t in enumerate(types)]
    call = Call(fn, tuple(ColRef(f) for f in fields), out, params)
    for null in range(len(types)):
        batch = Batch({f.id: _column(f.type, i == null) for i, f in enumerate(fields)}, _N)
        got = evaluate(call, batch)
        assert got.valid is not None and not bool(got.valid.any()), (fn, null)


def test_functions_that_see_past_nulls_are_not_strict():
    strict = BUILTINS.strict_names()
    for fn in (
        "and",
        "or",
        "is_null",
        "is_distinct",
        "is_not_distinct",
        "in_list",
        "coalesce",
        "concat",
        "concat_ws",
        "grouping",
    ):
        assert fn not in strict, fn
    x = Field(1, "x", T.INTEGER)
    batch = Batch({1: _column(T.INTEGER, True)}, _N)
    is_null = evaluate(Call("is_null", (ColRef(x),), T.BOOLEAN), batch)
    assert is_null.valid is None and bool(is_null.data.all())
    coalesce = evaluate(Call("coalesce", (ColRef(x), Literal(7, T.INTEGER)), T.INTEGER), batch)
    assert coalesce.to_arrow().to_pylist() == [7, 7, 7]


# ------------------------------------------------------------------ sqlglot's nodes
def _parse(sql: str):
    try:
        return sqlglot.parse_one(sql, read=DIALECT)
    except sqlglot.errors.ParseError:
        return None


def _call_node(name: str):
    """``name(...)`` as sqlglot parses it, with the first argument list it accepts."""
    for args in ("x", "x, y", "x, y, z", "x, y, z, u, v, w", ""):
        tree = _parse(f"SELECT {name}({args})")
        if tree is not None:
            return tree.expressions[0]
    raise AssertionError(f"sqlglot does not parse {name}()")


@pytest.mark.parametrize("kind", [SCALAR, AGGREGATE, WINDOW])
def test_every_name_reaches_its_function(kind):
    """Each name and alias of the registry is what the binder finds for
    ``name(...)``: the function sqlglot's node type stands for, or (for a
    call sqlglot leaves anonymous) the registry's function of that name."""
    for f in BUILTINS.functions(kind):
        for name in f.names:
            node = _call_node(name)
            if kind == AGGREGATE:  # by node type, or by name for an anonymous call
                assert aggregate_function(node) == f.name, name
            elif isinstance(node, exp.Anonymous):
                assert kind == SCALAR and BUILTINS.lookup(node.name) is f, name
            elif kind == SCALAR:
                assert SCALAR_NODES[type(node)].function(node) == f.name, name
            else:
                assert WINDOW_NODES[type(node)][0] == f.name, name


def test_aggregates_with_a_window_form_are_window_calls():
    """A window node of the aggregate's own, or an aggregate call the window binder takes as it is."""
    for f in BUILTINS.functions(AGGREGATE):
        if f.window_bind is not None and not f.internal:
            node = _call_node(f.name)
            entry = WINDOW_NODES.get(type(node))
            assert (entry[0] if entry else aggregate_function(node)) == f.name, f.name


def test_table_function_names_read_files(tmp_path):
    con = glint.connect(device="cpu")
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,x\n2,y\n")
    for f in BUILTINS.functions(TABLE):
        if f.name == "read_csv":
            for name in f.names:
                assert con.sql(f"SELECT sum(a) AS s FROM {name}('{path}')").fetchall() == [(3,)], name


# ------------------------------------------------------------------ errors
@pytest.fixture(scope="module")
def con():
    return glint.connect(device="cpu")


@pytest.mark.parametrize(
    "sql, message",
    [
        ("SELECT nosuch(1)", "function nosuch()"),
        ("SELECT NoSuch(1, 2)", "function NoSuch()"),
        ("SELECT like_rows('a', 'b')", "function like_rows()"),
        ("SELECT mean(1)", "function mean()"),
    ],
)
def test_unknown_function_error(con, sql, message):
    with pytest.raises(NotSupported) as e:
        con.sql(sql)
    assert str(e.value) == f"Not supported: {message}"


@pytest.mark.parametrize(
    "sql, message",
    [
        ("SELECT upper(1)", "Type mismatch: UPPER needs VARCHAR, got 1 of type INTEGER"),
        ("SELECT ord(1)", "Type mismatch: ord needs VARCHAR, got 1 of type INTEGER"),
        ("SELECT prefix('a')", "prefix() takes 2 arguments, got 1"),
        ("SELECT year(1)", "Type mismatch: date_part needs a DATE or TIMESTAMP, got 1 of type INTEGER"),
        ("SELECT initcap('a')", "Scalar Function with name initcap does not exist! (DuckDB has no initcap)"),
        ("SELECT octet_length('a')", "octet_length takes BLOB or BIT, not VARCHAR"),
    ],
)
def test_bind_rule_errors(con, sql, message):
    with pytest.raises(glint.GlintError) as e:
        con.sql(sql)
    assert message in str(e.value)


# ------------------------------------------------------------------ the reference
def test_reference_document_is_generated():
    assert (_ROOT / "docs" / "functions.md").read_text() == reference_markdown()


def test_reference_lists_every_function():
    text = reference_markdown()
    for f in BUILTINS.functions():
        assert f"| `{f.name}` |" in text, f.name
    names = supported_names()
    assert names == sorted(names) and {"upper", "ucase", "sum", "row_number", "read_parquet"} <= set(names)
    assert supported_names(WINDOW) == sorted(f.name for f in BUILTINS.functions(WINDOW))


def test_reference_command():
    out = subprocess.run(
        [sys.executable, "-m", "glint.functions.reference"], capture_output=True, text=True, cwd=_ROOT, check=True
    ).stdout
    assert out == reference_markdown()
    names = subprocess.run(
        [sys.executable, "-m", "glint.functions.reference", "--names"],
        capture_output=True,
        text=True,
        cwd=_ROOT,
        check=True,
    ).stdout
    assert names.split() == supported_names()
