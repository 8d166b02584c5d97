"""Shrink a failing query (and its data) while it still fails, and write a reproducer.

The query is reduced on its sqlglot AST, greedily: each candidate removes or
simplifies one thing (a clause: WHERE, HAVING, GROUP BY, ORDER BY, LIMIT,
OFFSET, DISTINCT, a CTE; a select item, a join, an ORDER BY / GROUP BY key, an
IN-list item; one side of AND/OR, of a set operation; NOT; an expression
replaced by one of its operands or by a literal; a join turned into a plain or
cross join) and is kept when the query still fails *the same way*
(:func:`same_failure`) and the tree got smaller. Then the rows of the tables
the query reads are trimmed (delta debugging) and unreferenced columns dropped.

:func:`reduce_sql` works with any predicate, so it can be tested without
engines::

    >>> sql = "SELECT a.x AS c0, a.y + 1 AS c1 FROM t AS a WHERE a.x > 1 AND a.y < 3 ORDER BY 1"
    >>> reduce_sql(sql, lambda s: "a.y < 3" in s)
    'SELECT NULL AS c1 FROM t AS a WHERE a.y < 3'

:func:`write_reproducer` writes, into ``seed<S>-q<I>-<status>`` under the
output directory (by default :func:`default_out_dir`, under the system's
temporary directory), ``original.sql``, ``reduced.sql``, ``outcome.txt``
(both engines' results or errors, for the original and the reduced query)
and ``repro.test``: sqllogictest records that make a section of
tests/sqllogic/fuzz/regressions.test as they are (a ``# ==== ...`` header,
CREATE OR REPLACE TABLE + INSERT for the tables the query touches, then the
query with DuckDB's answer, or ``statement error`` where DuckDB raises), so
that ``cat <dir>/repro.test >> tests/sqllogic/fuzz/regressions.test`` keeps the
failure as a regression test; :func:`append_regression` does the same under
a title of one's own.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import sqlglot
from sqlglot import exp

from glint.engine.result import python_values
from glint.sql.dialect import DIALECT as _DIALECT
from glint.testing.compare import ordered_by_query
from glint.testing.fuzz.data import FuzzData, make_data, sql_type
from glint.testing.fuzz.engines import Engines
from glint.testing.fuzz.generator import generate_query

# ------------------------------------------------------------------ AST candidates
_CLAUSES = ("with", "where", "having", "qualify", "order", "limit", "offset", "distinct", "group")


def _parse(sql: str):
    return sqlglot.parse_one(sql, read=_DIALECT)


def _size(tree) -> int:
    return sum(1 for _ in tree.walk())


def _nodes(tree) -> list:
    return list(tree.walk())


def _replace(tree, idx: int, make: Callable) -> object | None:
    """A copy of ``tree`` with node ``idx`` (walk order) changed by ``make(node)``,
    which mutates it in place, or returns a replacement node; None: not applicable."""
    t = tree.copy()
    node = _nodes(t)[idx]
    try:
        res = make(node)
    except Exception:  # noqa: BLE001 - a transformation that does not apply
        return None
    if res is False:
        return None
    if res is None or res is node:
        return t
    if node is t:
        return res
    node.replace(res)
    return t


def _child_exprs(node) -> list:
    out = []
    for k, v in node.args.items():
        if k in ("to", "kind", "unit", "side", "alias", "escape"):
            continue
        vs = v if isinstance(v, list) else [v]
        for c in vs:
            if isinstance(c, exp.Expression) and not isinstance(c, (exp.DataType, exp.Identifier, exp.Var)):
                out.append(c)
    return out


def candidates(tree) -> Iterator[object]:
    """Smaller variants of ``tree``, the most promising first."""
    nodes = _nodes(tree)
    yield from _clause_candidates(tree, nodes)
    yield from _structure_candidates(tree, nodes)
    yield from _connective_candidates(tree, nodes)
    yield from _operand_candidates(tree, nodes)
    yield from _literal_candidates(tree, nodes)


def _clause_candidates(tree, nodes) -> Iterator[object]:
    """Whole clauses, set-operation sides, joins and select items left out."""
    for i, n in enumerate(nodes):
        if isinstance(n, (exp.Select, exp.Union, exp.Intersect, exp.Except)):
            for clause in _CLAUSES:
                if n.args.get(clause):
                    yield _replace(tree, i, lambda x, c=clause: x.set(c, None))
        if isinstance(n, (exp.Union, exp.Intersect, exp.Except)):
            for side in ("this", "expression"):

                def take(x, side=side):
                    part = x.args[side].copy()
                    if x.args.get("with") and not part.args.get("with"):
                        part.set("with", x.args["with"].copy())
                    return part

                yield _replace(tree, i, take)
        if isinstance(n, exp.Select):
            if n.args.get("joins"):

                def promote(x):  # FROM a JOIN b ... -> FROM b ...
                    j = x.args["joins"].pop(0)
                    x.set("from_", exp.From(this=j.this.copy()))

                yield _replace(tree, i, promote)
            for j in range(len(n.args.get("joins") or [])):
                yield _replace(tree, i, lambda x, j=j: x.args["joins"].pop(j) and None)
            if len(n.expressions) > 1:
                for j in range(len(n.expressions)):
                    yield _replace(tree, i, lambda x, j=j: x.expressions.pop(j) and None)


def _structure_candidates(tree, nodes) -> Iterator[object]:
    """Derived tables flattened, CTEs, keys, IN items and join conditions left out."""
    for i, n in enumerate(nodes):
        # a derived table reading one table: that table under the derived table's alias
        if (
            isinstance(n, exp.Subquery)
            and isinstance(n.parent, (exp.From, exp.Join))
            and isinstance(n.this, exp.Select)
            and not n.this.args.get("joins")
            and isinstance(getattr(n.this.args.get("from_"), "this", None), exp.Table)
        ):

            def flatten(x):
                t = x.this.args["from_"].this.copy()
                t.set("alias", x.args.get("alias").copy() if x.args.get("alias") else None)
                return t

            yield _replace(tree, i, flatten)
        if isinstance(n, exp.With):
            for j in range(len(n.expressions)):
                if len(n.expressions) > 1:
                    yield _replace(tree, i, lambda x, j=j: x.expressions.pop(j) and None)
        if isinstance(n, (exp.Order, exp.Group)) and len(n.expressions) > 1:
            for j in range(len(n.expressions)):
                yield _replace(tree, i, lambda x, j=j: x.expressions.pop(j) and None)
        if isinstance(n, exp.In) and len(n.expressions) > 1:
            for j in range(len(n.expressions)):
                yield _replace(tree, i, lambda x, j=j: x.expressions.pop(j) and None)
        if isinstance(n, exp.Join):
            if n.args.get("side") or n.args.get("kind"):
                yield _replace(tree, i, lambda x: (x.set("side", None), x.set("kind", None)) and None)
            if n.args.get("on") is not None:
                yield _replace(
                    tree, i, lambda x: (x.set("on", None), x.set("kind", "CROSS"), x.set("side", None)) and None
                )
            if n.args.get("using"):
                yield _replace(tree, i, lambda x: x.set("using", None))


def _connective_candidates(tree, nodes) -> Iterator[object]:
    """AND / OR replaced by one side, NOT by its operand."""
    for i, n in enumerate(nodes):
        if isinstance(n, exp.Connector):
            yield _replace(tree, i, lambda x: x.left.copy())
            yield _replace(tree, i, lambda x: x.right.copy())
        elif isinstance(n, exp.Not):
            yield _replace(tree, i, lambda x: x.this.copy())


_NOT_REPLACED = (
    exp.Select,
    exp.Union,
    exp.Intersect,
    exp.Except,
    exp.From,
    exp.Join,
    exp.Table,
    exp.TableAlias,
    exp.Identifier,
    exp.With,
    exp.CTE,
    exp.Order,
    exp.Group,
    exp.Where,
    exp.Having,
    exp.Limit,
    exp.Offset,
    exp.DataType,
    exp.Literal,
    exp.Null,
    exp.Boolean,
    exp.Star,
    exp.Var,
    exp.Ordered,
    exp.Distinct,
    exp.Interval,
)


def _operand_candidates(tree, nodes) -> Iterator[object]:
    """An expression replaced by one of its operands, or by a literal."""
    for i, n in enumerate(nodes):
        if isinstance(n, _NOT_REPLACED) or n.parent is None:
            continue
        if isinstance(n, exp.Subquery) and isinstance(n.parent, (exp.From, exp.Join)):
            continue
        if isinstance(n, exp.Alias):
            continue
        for c in _child_exprs(n):
            if isinstance(c, (exp.Alias, exp.TableAlias)):
                continue
            yield _replace(tree, i, lambda x, c=c: _nodes(x)[_nodes(n).index(c)].copy())
        for lit in ("NULL", "0", "1", "''", "TRUE"):
            yield _replace(tree, i, lambda x, lit=lit: _parse(f"SELECT {lit}").expressions[0].copy())


def _literal_candidates(tree, nodes) -> Iterator[object]:
    """Literals made plainer."""
    for i, n in enumerate(nodes):
        if isinstance(n, exp.Literal) and n.is_string and len(n.this) > 1:
            yield _replace(tree, i, lambda x: exp.Literal.string(x.this[:1]))
        elif isinstance(n, exp.Literal) and not n.is_string and n.this not in ("0", "1"):
            yield _replace(tree, i, lambda x: exp.Literal.number(0))
            yield _replace(tree, i, lambda x: exp.Literal.number(1))


def deterministic(tree) -> bool:
    """False when a LIMIT/OFFSET is not under an ORDER BY of (at least) as many
    keys as the query has output columns: its rows would depend on the engine."""
    for node in tree.walk():
        if isinstance(node, (exp.Select, exp.Union, exp.Intersect, exp.Except)) and (
            node.args.get("limit") or node.args.get("offset")
        ):
            order = node.args.get("order")
            first = node
            while isinstance(first, (exp.Union, exp.Intersect, exp.Except)):
                first = first.this
            n_out = len(first.expressions) if isinstance(first, exp.Select) else 1
            if order is None or len(order.expressions) < n_out:
                return False
    return True


def reduce_sql(sql: str, still_fails: Callable[[str], bool], seconds: float = 60.0, max_tries: int = 5000) -> str:
    """Greedy reduction of ``sql`` while ``still_fails(candidate_sql)``.
    Returns the smallest failing SQL found (``sql`` itself when even its
    sqlglot rendering does not fail)."""
    try:
        tree = _parse(sql)
    except Exception:  # noqa: BLE001
        return sql
    cur_sql = tree.sql(dialect=_DIALECT)
    if cur_sql != sql and not still_fails(cur_sql):
        return sql
    deadline = time.monotonic() + seconds
    tries = 0
    seen = {cur_sql}
    improved = True
    while improved and time.monotonic() < deadline and tries < max_tries:
        improved = False
        size = _size(tree)
        for cand in candidates(tree):
            if cand is None:
                continue
            if time.monotonic() > deadline or tries >= max_tries:
                break
            try:
                csql = cand.sql(dialect=_DIALECT)
            except Exception:  # noqa: BLE001
                continue
            if csql in seen:
                continue
            seen.add(csql)
            if _size(cand) >= size and len(csql) >= len(cur_sql):
                continue
            if not deterministic(cand):
                continue
            tries += 1
            if still_fails(csql):
                tree, cur_sql = cand, csql
                improved = True
                break
    return cur_sql


# ------------------------------------------------------------------ failure identity
def _key(msg: str | None) -> str:
    s = re.sub(r"\(.*?\)", "", msg or "")
    s = re.sub(r"['\"].*?['\"]", "", s)
    s = re.sub(r"\d+", "N", s)
    return s[:60]


def same_failure(orig, o) -> bool:
    """Whether outcome ``o`` fails the way ``orig`` does."""
    if o.status != orig.status:
        return False
    if orig.status in ("crash", "error_mismatch"):
        return o.glint_error_type == orig.glint_error_type and _key(o.glint_error) == _key(orig.glint_error)
    if orig.status == "mismatch":
        if (orig.duck_error is None) != (o.duck_error is None):
            return False
        if orig.duck_error is not None:
            return _key(orig.duck_error) == _key(o.duck_error)
        return True
    return False


# ------------------------------------------------------------------ data
def referenced_tables(sql: str, data: FuzzData) -> list[str]:
    try:
        tree = _parse(sql)
    except Exception:  # noqa: BLE001
        return [t for t in data.tables if re.search(rf"\b{re.escape(t)}\b", sql)]
    names = {t.name.lower() for t in tree.find_all(exp.Table)}
    return [t for t in data.tables if t in names]


def referenced_columns(sql: str) -> set[str] | None:
    """Column names the query mentions; None when it has a * (all needed)."""
    tree = _parse(sql)
    if any(True for _ in tree.find_all(exp.Star)):
        return None
    cols = {c.name.lower() for c in tree.find_all(exp.Column)}
    for j in tree.find_all(exp.Join):
        for u in j.args.get("using") or []:
            cols.add(u.name.lower())
    return cols


def trim_rows(
    tables: dict[str, pa.Table], names: list[str], still_fails: Callable[[dict], bool], seconds: float = 60.0
) -> dict[str, pa.Table]:
    """Delta-debug the rows of ``names`` while ``still_fails(tables)``."""
    deadline = time.monotonic() + seconds
    cur = dict(tables)
    for name in names:
        rows = list(range(cur[name].num_rows))
        base = tables[name]
        chunk = max(1, len(rows) // 2)
        while chunk >= 1 and rows and time.monotonic() < deadline:
            i = 0
            while i < len(rows) and time.monotonic() < deadline:
                cand_rows = rows[:i] + rows[i + chunk :]
                cand = dict(cur)
                cand[name] = base.take(pa.array(cand_rows, type=pa.int64()))
                if still_fails(cand):
                    rows, cur = cand_rows, cand
                else:
                    i += chunk
            if chunk == 1:
                break
            chunk = max(1, chunk // 2)
    return cur


# ------------------------------------------------------------------ sqllogictest text
def sql_literal(v, sqltype: str) -> str:
    if v is None:
        return "NULL"
    if sqltype == "BOOLEAN":
        return "TRUE" if v else "FALSE"
    if sqltype in ("INTEGER", "BIGINT"):
        return str(int(v))
    if sqltype.startswith("DECIMAL"):
        return format(Decimal(v), "f")
    if sqltype == "DOUBLE":
        f = float(v)
        if math.isnan(f) or math.isinf(f):
            return f"CAST('{f}' AS DOUBLE)"
        return f"CAST('{f!r}' AS DOUBLE)"
    if sqltype == "DATE":
        if isinstance(v, _dt.date):
            return f"DATE '{v.year:04d}-{v.month:02d}-{v.day:02d}'"
        return f"DATE '{v}'"
    if sqltype == "TIMESTAMP":
        if isinstance(v, _dt.datetime):
            return f"TIMESTAMP '{v.year:04d}-{v.month:02d}-{v.day:02d} {v.time().isoformat()}'"
        return f"TIMESTAMP '{v}'"  # a year Python cannot hold, as DuckDB's text
    s = str(v)
    return "'" + s.replace("'", "''") + "'"


def table_statements(name: str, t: pa.Table) -> list[str]:
    """CREATE OR REPLACE TABLE + INSERT statements (sqllogictest records) for ``t``."""
    types = [sql_type(f.type) for f in t.schema]
    cols = ", ".join(f"{f.name} {ty}" for f, ty in zip(t.schema, types))
    out = [f"statement ok\nCREATE OR REPLACE TABLE {name}({cols})"]
    if t.num_rows:
        rows = list(zip(*[python_values(c) for c in t.columns])) if t.num_columns else []
        values = ", ".join("(" + ", ".join(sql_literal(v, ty) for v, ty in zip(r, types)) + ")" for r in rows)
        out.append(f"statement ok\nINSERT INTO {name} VALUES {values}")
    return out


def _ordered(sql: str) -> bool:
    return ordered_by_query(sql)


def sqllogic_text(tables: dict[str, pa.Table], sql: str, expect_error: bool, header: list[str]) -> str:
    parts = ["\n".join("# " + h for h in header)]
    for name, t in tables.items():
        parts.extend(table_statements(name, t))
    if expect_error:
        parts.append(f"statement error\n{sql}")
    else:
        parts.append(f"query {'nosort' if _ordered(sql) else 'rowsort'}\n{sql}".replace("query nosort", "query"))
    return "\n\n".join(parts) + "\n"


def _sqllogic_generate():
    """tests/sqllogic/generate.py of this checkout, when there is one."""
    root = Path(__file__).resolve().parents[3] / "tests"
    if not (root / "sqllogic" / "generate.py").exists():
        return None
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        from sqllogic import generate  # noqa: PLC0415
    except Exception:  # noqa: BLE001
        return None
    return generate


def fill_expected(text: str) -> str:
    """Fill in the query results of a .test text from DuckDB (via tests/sqllogic/generate.py)."""
    gen = _sqllogic_generate()
    if gen is None:
        return text + "# fill in the expected results: python tests/sqllogic/generate.py <this file>\n"
    new, problems = gen.generate_text(text)
    errs = [p for p in problems if ": warning: " not in p]
    if errs:
        new += "".join(f"# generate: {p.splitlines()[0]}\n" for p in errs)
    return new


# ------------------------------------------------------------------ reproducer
def _describe(o) -> str:
    lines = [f"status: {o.status}"]
    lines += [f"  {d}" for d in o.details[:12]]
    if o.duck_error:
        lines.append(f"DuckDB error: {o.duck_error}")
    elif o.duck_table is not None:
        lines.append(f"DuckDB result ({o.duck_table.num_rows} rows, {o.duck_table.schema.types}):")
        lines.append(_preview(o.duck_table))
    if o.glint_error:
        lines.append(f"glint error: {o.glint_error}")
    elif o.glint_table is not None:
        lines.append(f"glint result ({o.glint_table.num_rows} rows, {o.glint_table.schema.types}):")
        lines.append(_preview(o.glint_table))
    return "\n".join(lines)


def _preview(t: pa.Table, n: int = 20) -> str:
    try:
        rows = list(zip(*[c.to_pylist() for c in t.slice(0, n).columns])) if t.num_columns else []
    except Exception:  # noqa: BLE001 - e.g. dates past year 9999
        return "  " + str(t.slice(0, n))[:2000]
    s = "\n".join("  " + repr(r) for r in rows)
    if t.num_rows > n:
        s += f"\n  ... {t.num_rows - n} more rows"
    return s or "  (no rows)"


def reduce_failure(engines, data: FuzzData, orig, seconds: float = 60.0):
    """(reduced sql, reduced tables, outcome of the reduced query)."""

    def fails_sql(sql: str) -> bool:
        return same_failure(orig, engines.run(sql))

    slow = orig.status == "crash" and orig.glint_error_type in ("Timeout",)
    sql = orig.sql
    if not slow:
        sql = reduce_sql(orig.sql, fails_sql, seconds=seconds * 0.6)
    names = referenced_tables(sql, data)
    tables = {n: data.tables[n] for n in names}

    def fails_tables(cand: dict) -> bool:
        engines.set_tables(cand)
        return fails_sql(sql)

    if not slow and names:
        tables = trim_rows(tables, names, fails_tables, seconds=seconds * 0.3)
        engines.set_tables(tables)
        cols = referenced_columns(sql)
        if cols is not None:
            slim = {
                n: t.select([c for c in t.column_names if c.lower() in cols] or t.column_names[:1])
                for n, t in tables.items()
            }
            if any(slim[n].num_columns < tables[n].num_columns for n in tables) and fails_tables(slim):
                tables = slim
        engines.set_tables(tables)
        # the data is smaller now: one more quick pass over the SQL
        sql2 = reduce_sql(sql, fails_sql, seconds=seconds * 0.1)
        if sql2 != sql and set(referenced_tables(sql2, data)) <= set(tables):
            sql = sql2
    engines.set_tables(tables)
    final = engines.run(sql)
    if not same_failure(orig, final):  # flaky: fall back to the original
        engines.set_tables(data.tables)
        sql, tables = orig.sql, {n: data.tables[n] for n in referenced_tables(orig.sql, data)}
        final = engines.run(sql)
    engines.set_tables(data.tables)
    return sql, tables, final


def write_reproducer(
    engines, data: FuzzData, orig, out: Path, seed: int, index: int, reduce: bool = True, seconds: float = 60.0
) -> Path:
    """Reduce (optionally) and write the reproducer directory; returns it."""
    d = Path(out) / f"seed{seed}-q{index:05d}-{orig.status}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "original.sql").write_text(orig.sql + "\n", encoding="utf-8")
    if reduce:
        sql, tables, final = reduce_failure(engines, data, orig, seconds)
    else:
        sql, tables, final = orig.sql, {n: data.tables[n] for n in referenced_tables(orig.sql, data)}, orig
    (d / "reduced.sql").write_text(sql + "\n", encoding="utf-8")
    (d / "outcome.txt").write_text(
        f"seed {seed}, query {index}\n\n== original ==\n{orig.sql}\n{_describe(orig)}\n\n"
        f"== reduced ==\n{sql}\n{_describe(final)}\n",
        encoding="utf-8",
    )
    header = [
        f"==== fuzz reproducer: seed {seed}, query {index}: {orig.status}",
        (final.details[0] if final.details else final.status).splitlines()[0][:300],
    ]
    if final.glint_error:
        header.append(f"glint: {final.glint_error.splitlines()[0][:300]}")
    if final.duck_error:
        header.append(f"DuckDB: {final.duck_error.splitlines()[0][:300]}")
    text = sqllogic_text(tables, sql, expect_error=final.duck_error is not None, header=header)
    try:
        text = fill_expected(text)
    except Exception as e:  # noqa: BLE001
        text += f"# could not fill in the expected results: {type(e).__name__}: {e}\n"
    (d / "repro.test").write_text(text, encoding="utf-8")
    return d


def default_out_dir() -> Path:
    """Where reproducers go unless told otherwise: glint-fuzz under the
    system's temporary directory (``tempfile.gettempdir()``)."""
    return Path(tempfile.gettempdir()) / "glint-fuzz"


def append_regression(repro: Path | str, regression_file: Path | str, title: str) -> None:
    """Append the records of ``repro``/repro.test (or a .test file) to
    ``regression_file`` as a section headed ``# ==== title`` (in place of
    the reproducer's own header line)."""
    p = Path(repro)
    if p.is_dir():
        p = p / "repro.test"
    body = p.read_text(encoding="utf-8").rstrip() + "\n"
    if body.startswith("# ===="):
        body = body.split("\n", 1)[1]
    target = Path(regression_file)
    old = target.read_text(encoding="utf-8") if target.exists() else ""
    sep = "\n" if old and not old.endswith("\n\n") else ""
    target.write_text(old + sep + f"# ==== {title}\n" + body, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """``python -m glint.testing.fuzz.reduce --seed S --index I [--out DIR]``:
    regenerate query I of the run with seed S (same data), run it, and reduce it
    into a reproducer when it fails. ``--sql`` reduces a given query instead."""
    ap = argparse.ArgumentParser(prog="python -m glint.testing.fuzz.reduce", description=main.__doc__)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--index", type=int, help="the query number within the run")
    ap.add_argument("--sql", help="a query to reduce instead (on the data of --seed)")
    ap.add_argument("--rows", type=int, default=150)
    ap.add_argument("--tpch", action="store_true")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--out", help=f"directory for the reproducer (default {default_out_dir()})")
    args = ap.parse_args(argv)
    data = make_data(args.seed, rows=args.rows, tpch=args.tpch)
    sql = args.sql or generate_query(data, args.seed, args.index).sql
    engines = Engines(data, args.device)
    try:
        o = engines.run(sql)
        print(f"{o.status}: {o.summary()[:300]}")
        if o.status not in ("mismatch", "crash", "error_mismatch"):
            return 0
        d = write_reproducer(
            engines,
            data,
            o,
            Path(args.out) if args.out else default_out_dir(),
            seed=args.seed,
            index=args.index if args.index is not None else 99999,
            seconds=args.seconds,
        )
        print(f"reproducer: {d}")
        print((d / "reduced.sql").read_text())
    finally:
        engines.close()
    return 1


if __name__ == "__main__":
    sys.exit(main())
