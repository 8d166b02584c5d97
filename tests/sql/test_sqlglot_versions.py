"""The syntax trees of the sqlglot versions glint allows (pyproject.toml):
what older versions build differently, read as the newest's. The SQL tests
themselves run under the lowest versions with scripts/lowest_versions.sh."""

from __future__ import annotations

import duckdb
import pytest
import sqlglot
from sqlglot import exp

import glint
from glint.sql import frontend
from glint.sql.bind_agg import _Call


def test_a_quantile_of_distinct_values_with_q_inside_distinct():
    """sqlglot before 30.15 puts q inside DISTINCT: quantile_disc(DISTINCT x, 0.5)."""
    node = sqlglot.parse_one("SELECT quantile_disc(DISTINCT i, 0.5) FROM t", read="duckdb").expressions[0]
    older = exp.PercentileDisc(this=exp.Distinct(expressions=[exp.column("i"), exp.Literal.number("0.5")]))
    for n in (node, older):
        call = _Call(n)
        assert call.distinct and call.arg.sql() == "i" and call.q.sql() == "0.5", n.sql()


def test_order_by_positions_under_an_older_qualify(monkeypatch):
    """Before sqlglot 30.20, qualify rewrote ORDER BY 1, 2 into the output
    names, so two outputs named region both sorted by the first: glint keeps
    the positions through it."""
    real = frontend.qualify

    def older_qualify(ast, **kwargs):
        for sel in ast.find_all(exp.Select):
            order = sel.args.get("order")
            for o in order.expressions if order is not None else []:
                if isinstance(o.this, exp.Literal) and o.this.this.isdigit():
                    o.set("this", exp.column(sel.expressions[int(o.this.this) - 1].alias_or_name))
        return real(ast, **kwargs)

    monkeypatch.setattr(frontend, "qualify", older_qualify)
    setup = [
        "CREATE TABLE sales(region VARCHAR, amount INTEGER)",
        "INSERT INTO sales VALUES ('n', 10), ('n', 20), ('s', 5), ('s', NULL), ('e', 40), (NULL, 7)",
    ]
    sql = (
        "WITH tot AS (SELECT region, sum(amount) AS s FROM sales GROUP BY region) "
        "SELECT a.region, b.region, a.s + b.s FROM tot a JOIN tot b ON a.s < b.s ORDER BY 1, 2"
    )
    con, duck = glint.connect(device="cpu"), duckdb.connect()
    for s in setup:
        con.sql(s)
        duck.execute(s)
    assert con.sql(sql).fetchall() == duck.execute(sql).fetchall()


def test_a_sqlglot_error_while_binding_is_a_glint_parse_error(monkeypatch):
    """Older sqlglot releases fail on trees they parsed themselves (regenerating
    QUANTILE_DISC(DISTINCT (a // b), q)): the user gets glint's ParseError with
    sqlglot's first line, its terminal underline codes removed, not sqlglot's
    exception."""
    from sqlglot.errors import ParseError as SqlglotParseError

    from glint.errors import ParseError
    from glint.sql.binder import Binder

    def broken(self, ast):
        raise SqlglotParseError(
            "Required keyword: 'expression' missing for Div. Line 1, Col: 26.\n  (a /\x1b[4m/\x1b[0m b)"
        )

    monkeypatch.setattr(Binder, "bind_query", broken)
    con = glint.connect(device="cpu")
    with pytest.raises(ParseError) as e:
        con.sql("SELECT 1 AS x")
    con.close()
    text = str(e.value)
    assert text.startswith(f"the SQL parser (sqlglot {sqlglot.__version__}) failed on this query: Required keyword")
    assert "\x1b" not in text and "(a /" not in text
