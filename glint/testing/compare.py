"""Comparing query results: glint against DuckDB or against official answers.

>>> import pyarrow as pa
>>> from decimal import Decimal
>>> a = pa.table({"x": [1, 2], "y": [0.1 + 0.2, None]})
>>> b = pa.table({"x": [2, 1], "y": [None, Decimal("0.3")]})
>>> compare_tables(a, b, ordered=False)
[]
>>> compare_tables(a, b, ordered=True)[0]
'2 of 2 rows differ'
>>> ordered_by_query("SELECT a FROM t ORDER BY a"), ordered_by_query("SELECT a FROM (SELECT a FROM t ORDER BY a)")
(True, False)
"""

from __future__ import annotations

import datetime as _dt
import math
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal

import pyarrow as pa

__all__ = ["compare_tables", "compare_query_result", "ordered_by_query", "order_by_columns", "query_limit"]

_NUM = (int, float, Decimal)


# ------------------------------------------------------------------ values
def _type_class(t: pa.DataType) -> str:
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_null(t):
        return "null"
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "number"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_date(t) or pa.types.is_timestamp(t):
        return "date/time"
    return str(t)


def _is_float_type(t: pa.DataType) -> bool:
    return pa.types.is_floating(t)


def values_equal(a, b, rel_tol: float = 1e-9, abs_tol: float = 1e-12) -> bool:
    """Cell equality: NULL == NULL; decimals and integers exact; a double
    against anything numeric within rel_tol (or abs_tol near zero); NaN == NaN.

    >>> values_equal(Decimal("1.10"), Decimal("1.1")), values_equal(Decimal("0.3"), 0.1 + 0.2)
    (True, True)
    >>> values_equal(Decimal("0.30"), Decimal("0.31")), values_equal(None, 0)
    (False, False)
    """
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b and isinstance(a, bool) == isinstance(b, bool)
    if isinstance(a, _NUM) and isinstance(b, _NUM):
        if isinstance(a, float) or isinstance(b, float):
            fa, fb = float(a), float(b)
            if math.isnan(fa) or math.isnan(fb):
                return math.isnan(fa) and math.isnan(fb)
            if math.isinf(fa) or math.isinf(fb):
                return fa == fb
            return math.isclose(fa, fb, rel_tol=rel_tol, abs_tol=abs_tol)
        return a == b
    if (
        isinstance(a, _dt.datetime) != isinstance(b, _dt.datetime)
        and isinstance(a, _dt.date)
        and isinstance(b, _dt.date)
    ):
        da, db = (
            a if isinstance(a, _dt.datetime) else _dt.datetime(a.year, a.month, a.day),
            b if isinstance(b, _dt.datetime) else _dt.datetime(b.year, b.month, b.day),
        )
        return da == db
    return a == b


def _fmt(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        s = repr(v)
        return s if len(s) <= 60 else s[:57] + "...'"
    if isinstance(v, (Decimal, int)):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, _dt.date):
        return v.isoformat()
    return repr(v)


def _fmt_row(row) -> str:
    s = "(" + ", ".join(_fmt(v) for v in row) + ")"
    return s if len(s) <= 240 else s[:237] + "...)"


def _sort_key_value(v, inexact: bool):
    if v is None:
        return (0,)
    if inexact:
        try:
            f = float(v)
        except (TypeError, ValueError):
            return (2, repr(v))
        return (1, 1, 0.0) if math.isnan(f) else (1, 0, f)
    if isinstance(v, (bool, int, Decimal, float, str, bytes, _dt.date, _dt.time, _dt.timedelta)):
        # (dates past year 9999 come as text: dates sort after text, so the two never meet)
        if isinstance(v, _dt.datetime):
            return (1, 2, v.replace(tzinfo=None))
        if isinstance(v, _dt.date):
            return (1, 2, _dt.datetime(v.year, v.month, v.day))
        if isinstance(v, float) and math.isnan(v):
            return (1, 1, 0)
        return (1, 0, v)
    return (2, repr(v))


def _fingerprint(row) -> tuple:
    out = []
    for v in row:
        if v is None or isinstance(v, bool):
            out.append(v)
        elif isinstance(v, _NUM):
            f = float(v)
            out.append("nan" if math.isnan(f) else f"{f:.9g}")
        elif isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
            out.append(v.isoformat())
        else:
            out.append(v if isinstance(v, str) else repr(v))
    return tuple(out)


def _rows(t: pa.Table) -> list[tuple]:
    from glint.engine.result import python_values  # dates past 9999 and infinities as DuckDB's client gives them

    cols = [python_values(c) for c in t.columns]
    return list(zip(*cols)) if cols else [() for _ in range(t.num_rows)]


# ------------------------------------------------------------------ comparison
class _Ctx:
    def __init__(self, names, rel_tol, abs_tol, max_diffs):
        self.names = names
        self.rel_tol, self.abs_tol = rel_tol, abs_tol
        self.max_diffs = max_diffs
        self.row_diffs: list[str] = []
        self.n_bad_rows = 0

    def row_equal(self, a, b) -> bool:
        return all(values_equal(x, y, self.rel_tol, self.abs_tol) for x, y in zip(a, b))

    def record(self, label: str, a, b) -> None:
        self.n_bad_rows += 1
        if len(self.row_diffs) >= self.max_diffs:
            return
        parts = [
            f"{self.names[i]}: actual {_fmt(x)}, expected {_fmt(y)}"
            for i, (x, y) in enumerate(zip(a, b))
            if not values_equal(x, y, self.rel_tol, self.abs_tol)
        ]
        self.row_diffs.append(f"{label}: " + "; ".join(parts) + f"  (expected row {_fmt_row(b)})")


def _canonical(rows: list[tuple], inexact: Sequence[bool]) -> list[tuple]:
    exact_idx = [i for i, x in enumerate(inexact) if not x]
    inexact_idx = [i for i, x in enumerate(inexact) if x]
    return sorted(
        rows,
        key=lambda r: (
            tuple(_sort_key_value(r[i], False) for i in exact_idx)
            + tuple(_sort_key_value(r[i], True) for i in inexact_idx)
        ),
    )


def _multiset_diff(actual: list[tuple], expected: list[tuple], limit: int) -> list[str]:
    fa, fe = Counter(map(_fingerprint, actual)), Counter(map(_fingerprint, expected))
    missing, extra = fe - fa, fa - fe
    out = []
    by_fp_e = {}
    for r in expected:
        by_fp_e.setdefault(_fingerprint(r), r)
    by_fp_a = {}
    for r in actual:
        by_fp_a.setdefault(_fingerprint(r), r)
    if missing:
        n = sum(missing.values())
        out.append(
            f"{n} expected row{'s' if n != 1 else ''} missing from actual, e.g. "
            + ", ".join(_fmt_row(by_fp_e[k]) for k in list(missing)[:limit])
        )
    if extra:
        n = sum(extra.values())
        out.append(
            f"{n} row{'s' if n != 1 else ''} in actual not expected, e.g. "
            + ", ".join(_fmt_row(by_fp_a[k]) for k in list(extra)[:limit])
        )
    return out


def compare_tables(
    actual: pa.Table,
    expected: pa.Table,
    ordered: bool,
    rel_tol: float = 1e-9,
    *,
    abs_tol: float = 1e-12,
    order_by: Sequence[int] | None = None,
    truncated: bool = False,
    check_names: bool = False,
    max_diffs: int = 5,
) -> list[str]:
    """Differences between two results, described readably; [] when equal.

    - Same number of columns and rows; columns matched by position (names
      compared only with ``check_names``). Columns whose values are of different
      kinds (number / string / date / boolean) differ.
    - Values: NULL == NULL; decimals and integers exactly; a double against
      anything numeric within ``rel_tol`` (``abs_tol`` near zero); strings and
      dates exactly.
    - ``ordered=False``: rows compared as multisets (both sides sorted
      canonically first). ``ordered=True``: row for row; with ``order_by`` (the
      output positions of the ORDER BY keys) rows that tie on those keys in
      ``expected`` may come in any order. ``truncated``: the result was cut by a
      LIMIT, so the last tie group may hold different rows (only its keys are
      checked).
    """
    if isinstance(actual, pa.RecordBatchReader):
        actual = actual.read_all()
    if isinstance(expected, pa.RecordBatchReader):
        expected = expected.read_all()
    diffs: list[str] = []
    if actual.num_columns != expected.num_columns:
        return [
            f"column count: actual has {actual.num_columns} columns {actual.schema.names}, "
            f"expected {expected.num_columns} {expected.schema.names}"
        ]
    names = [f"{e!r}" if e == a else f"{e!r}/{a!r}" for a, e in zip(actual.schema.names, expected.schema.names)]
    names = [f"column {i + 1} {n}" for i, n in enumerate(names)]
    if check_names and actual.schema.names != expected.schema.names:
        diffs.append(f"column names: actual {actual.schema.names}, expected {expected.schema.names}")
    for i, (fa, fe) in enumerate(zip(actual.schema, expected.schema)):
        ca, ce = _type_class(fa.type), _type_class(fe.type)
        if ca != ce and "null" not in (ca, ce):
            diffs.append(f"{names[i]}: actual type {fa.type} ({ca}), expected {fe.type} ({ce})")
    if diffs and not (check_names and len(diffs) == 1 and diffs[0].startswith("column names")):
        return diffs
    ra, re_ = _rows(actual), _rows(expected)
    if len(ra) != len(re_):
        diffs.append(f"row count: actual has {len(ra)} rows, expected {len(re_)}")
        diffs.extend(_multiset_diff(ra, re_, 3))
        return diffs
    inexact = [_is_float_type(fa.type) or _is_float_type(fe.type) for fa, fe in zip(actual.schema, expected.schema)]
    ctx = _Ctx(names, rel_tol, abs_tol, max_diffs)
    if not ordered:
        sa, se = _canonical(ra, inexact), _canonical(re_, inexact)
        for i, (a, e) in enumerate(zip(sa, se)):
            if not ctx.row_equal(a, e):
                ctx.record(f"row {i + 1} (in sorted order)", a, e)
        if ctx.n_bad_rows:
            diffs.append(f"{ctx.n_bad_rows} of {len(ra)} rows differ (compared as unordered sets)")
            md = _multiset_diff(ra, re_, 3) if ctx.n_bad_rows > max_diffs else []
            if md:  # many differences: which rows are missing / extra reads better
                diffs.extend(md)
            else:
                diffs.extend(ctx.row_diffs)
                _more(diffs, ctx)
        return diffs
    if order_by is None:
        for i, (a, e) in enumerate(zip(ra, re_)):
            if not ctx.row_equal(a, e):
                ctx.record(f"row {i + 1}", a, e)
    else:
        keys = list(order_by)
        # two engines may round a float key differently: where its values are about equal, the order of
        # the rows depends on the rounding, not on the keys after it, so a tie group ends with that key
        first_float = next((i for i, k in enumerate(keys) if inexact[k]), None)
        if first_float is not None:
            keys = keys[: first_float + 1]
        groups = _tie_groups(re_, keys, rel_tol, abs_tol)
        for gi, (lo, hi) in enumerate(groups):
            last_cut = truncated and gi == len(groups) - 1 and hi - lo > 1
            if hi - lo == 1:
                if not ctx.row_equal(ra[lo], re_[lo]):
                    ctx.record(f"row {lo + 1}", ra[lo], re_[lo])
                continue
            if last_cut:  # rows beyond the LIMIT may differ: check the keys only
                for i in range(lo, hi):
                    ka, ke = [ra[i][k] for k in keys], [re_[i][k] for k in keys]
                    if not all(values_equal(x, y, rel_tol, abs_tol) for x, y in zip(ka, ke)):
                        ctx.record(f"row {i + 1} (ORDER BY keys)", ra[i], re_[i])
                continue
            sa, se = _canonical(ra[lo:hi], inexact), _canonical(re_[lo:hi], inexact)
            for j, (a, e) in enumerate(zip(sa, se)):
                if not ctx.row_equal(a, e):
                    ctx.record(f"rows {lo + 1}-{hi} (tied on ORDER BY keys), row {j + 1} of them sorted", a, e)
    if ctx.n_bad_rows:
        diffs.append(f"{ctx.n_bad_rows} of {len(ra)} rows differ")
        diffs.extend(ctx.row_diffs)
        _more(diffs, ctx)
        if ctx.n_bad_rows > 1 and not _multiset_diff(ra, re_, 1):
            diffs.append("the same rows appear in both, in another order")
    return diffs


def _more(diffs: list[str], ctx: _Ctx) -> None:
    if ctx.n_bad_rows > len(ctx.row_diffs) and ctx.row_diffs:
        diffs.append(f"... and {ctx.n_bad_rows - len(ctx.row_diffs)} more differing rows")


def _tie_groups(rows: list[tuple], keys: list[int], rel_tol, abs_tol) -> list[tuple[int, int]]:
    if not keys:
        return [(0, len(rows))] if rows else []
    groups, lo = [], 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or not all(values_equal(rows[i][k], rows[lo][k], rel_tol, abs_tol) for k in keys):
            groups.append((lo, i))
            lo = i
    return groups


# ------------------------------------------------------------------ queries
def _parse(sql: str):
    try:
        import sqlglot

        from glint.sql.dialect import DIALECT

        stmts = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
    except Exception:  # noqa: BLE001 - any parser failure: fall back to scanning
        return None
    return stmts[-1] if stmts else None


def _outer(node):
    import sqlglot.expressions as exp

    while (
        isinstance(node, (exp.Subquery, exp.Paren))
        and node.args.get("order") is None
        and node.args.get("limit") is None
    ):
        node = node.this
    return node


def _scan_top_level(sql: str) -> list[str]:
    """Upper-cased words at parenthesis depth 0, outside strings and comments."""
    words, depth, i, n = [], 0, 0, len(sql)
    cur = []
    while i < n:
        c = sql[i]
        if c in "'\"":
            j = sql.find(c, i + 1)
            while j != -1 and j + 1 < n and sql[j + 1] == c:
                j = sql.find(c, j + 2)
            i = n if j == -1 else j + 1
            cur = []
            continue
        if sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j == -1 else j
            continue
        if sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = n if j == -1 else j + 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c.isalnum() or c == "_":
            cur.append(c)
        else:
            if cur and depth == 0:
                words.append("".join(cur).upper())
            cur = []
        i += 1
    if cur and depth == 0:
        words.append("".join(cur).upper())
    return words


def ordered_by_query(sql: str) -> bool:
    """True when the outermost query of ``sql`` (its last statement) has an
    ORDER BY, so its result's row order is defined.

    >>> ordered_by_query("WITH x AS (SELECT 1 a ORDER BY a) SELECT * FROM x")
    False
    >>> ordered_by_query("SELECT 1 a UNION ALL SELECT 2 ORDER BY a")
    True
    """
    node = _parse(sql)
    if node is not None:
        return _outer(node).args.get("order") is not None
    w = _scan_top_level(sql)
    return any(a == "ORDER" and b == "BY" for a, b in zip(w, w[1:]))


def query_limit(sql: str) -> int | None:
    """The constant LIMIT of the outermost query, or None.

    >>> query_limit("SELECT a FROM t ORDER BY a LIMIT 10"), query_limit("SELECT 1")
    (10, None)
    """
    node = _parse(sql)
    if node is None:
        return None
    lim = _outer(node).args.get("limit")
    if lim is None:
        return None
    e = lim.args.get("expression") or lim.this
    try:
        return int(e.name) if e is not None and e.is_int else None
    except (AttributeError, ValueError):
        return None


def order_by_columns(sql: str, column_names: Sequence[str]) -> list[int]:
    """Output positions (0-based) of the outermost ORDER BY keys, for the
    leading keys that are output columns (by name, alias, ordinal or the same
    expression as a select item); stops at the first key that is not.

    >>> order_by_columns("SELECT a, sum(b) AS s FROM t GROUP BY a ORDER BY s DESC, 1", ["a", "s"])
    [1, 0]
    >>> order_by_columns("SELECT a, b FROM t ORDER BY c, a", ["a", "b"])
    []
    """
    import sqlglot.expressions as exp

    node = _parse(sql)
    if node is None:
        return []
    node = _outer(node)
    order = node.args.get("order")
    if order is None:
        return []
    lower = [str(n).lower() for n in column_names]
    selects = []
    if isinstance(node, exp.Select) and len(node.expressions) == len(column_names):
        selects = [s.unalias() if isinstance(s, exp.Alias) else s for s in node.expressions]
    out = []
    for o in order.expressions:
        e = o.this if isinstance(o, exp.Ordered) else o
        pos = None
        if isinstance(e, exp.Literal) and e.is_int:
            k = int(e.name) - 1
            pos = k if 0 <= k < len(column_names) else None
        elif isinstance(e, exp.Column) and e.name.lower() in lower and not e.table:
            pos = lower.index(e.name.lower())
        if pos is None:
            for i, s in enumerate(selects):
                if i < len(column_names) and s == e:
                    pos = i
                    break
        if pos is None and isinstance(e, exp.Column) and e.name.lower() in lower:
            pos = lower.index(e.name.lower())
        if pos is None:
            break
        out.append(pos)
    return out


def compare_query_result(sql: str, actual: pa.Table, expected: pa.Table, rel_tol: float = 1e-9, **kwargs) -> list[str]:
    """compare_tables with the ordering taken from the query: unordered without
    an outer ORDER BY; else ordered, rows tied on the ORDER BY keys in any
    order, and the last tie group of a LIMIT-cut result checked on its keys only.
    """
    if not ordered_by_query(sql):
        return compare_tables(actual, expected, ordered=False, rel_tol=rel_tol, **kwargs)
    keys = order_by_columns(sql, expected.schema.names)
    limit = query_limit(sql)
    truncated = limit is not None and expected.num_rows >= limit
    return compare_tables(actual, expected, ordered=True, rel_tol=rel_tol, order_by=keys, truncated=truncated, **kwargs)
