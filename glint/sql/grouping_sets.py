"""GROUP BY with ROLLUP, CUBE and GROUPING SETS, as the list of grouping sets
it stands for (DuckDB's rules):

- a plain expression is one set of one expression; ``(a, b)`` one set of two;
- ``ROLLUP (a, b)`` is (a, b), (a), (); ``CUBE (a, b)`` every subset;
  a parenthesised list inside them is one unit;
- ``GROUPING SETS (...)`` lists sets (ROLLUP and CUBE inside it add theirs);
- the items of a GROUP BY are crossed: ``GROUP BY a, ROLLUP (b)`` is
  (a, b), (a). Sets are not de-duplicated: a set listed twice gives its rows
  twice.

Integer literals inside ROLLUP / CUBE / GROUPING SETS are select-list
positions (sqlglot resolves those of a plain GROUP BY).

>>> import sqlglot
>>> sel = sqlglot.parse_one("SELECT a, b FROM t GROUP BY a, ROLLUP (b, (c, 1))", read="duckdb")
>>> exprs, sets = grouping_sets(sel.args["group"], sel.expressions)
>>> [e.sql() for e in exprs], sets
(['a', 'b', 'c'], [(0, 1, 2), (0, 1), (0,)])
"""

from __future__ import annotations

from sqlglot import exp

from glint.errors import BinderError, NotSupported

MAX_SETS = 4096  # CUBE of 12 expressions


def has_grouping_sets(group: exp.Group | None) -> bool:
    if group is None:
        return False
    return any(isinstance(e, (exp.Rollup, exp.Cube, exp.GroupingSets)) for e in group.expressions) or any(
        group.args.get(k) for k in ("rollup", "cube", "grouping_sets")
    )


def group_items(group: exp.Group) -> list[exp.Expression]:
    """The items of a GROUP BY. sqlglot 30.19 and later keep ROLLUP, CUBE and
    GROUPING SETS among the plain expressions, in order; earlier versions
    hold them apart (``rollup``, ``cube``, ``grouping_sets``), after the
    plain ones: the sets are the same (their product does not depend on the
    order). MySQL's ``GROUP BY a WITH ROLLUP`` is a ROLLUP without
    expressions in both, and is refused."""
    items = list(group.expressions)
    for key in ("rollup", "cube", "grouping_sets"):
        for e in group.args.get(key) or []:
            if isinstance(e, (exp.Rollup, exp.Cube)) and not e.expressions:
                raise NotSupported("GROUP BY ... WITH ROLLUP / WITH CUBE (write ROLLUP (...) / CUBE (...))")
            items.append(e)
    return items


def grouping_sets(group: exp.Group, select_items) -> tuple[list[exp.Expression], list[tuple[int, ...]]]:
    """(the distinct group expressions, each grouping set as the positions of
    its expressions among them, in order)."""
    per_item = [_sets_of(e, select_items, top=True) for e in group_items(group)]
    count = 1
    for sets in per_item:
        count *= len(sets)
    if count > MAX_SETS:
        raise NotSupported(f"more than {MAX_SETS} grouping sets ({count})")
    crossed: list[list[exp.Expression]] = [[]]
    for sets in per_item:
        crossed = [a + b for a in crossed for b in sets]
    exprs: list[exp.Expression] = []
    index: dict[str, int] = {}
    out = []
    for s in crossed:
        members = set()
        for e in s:
            key = e.sql(dialect="duckdb")
            if key not in index:
                index[key] = len(exprs)
                exprs.append(e)
            members.add(index[key])
        out.append(tuple(sorted(members)))
    return exprs, out


def _sets_of(e: exp.Expression, select_items, top: bool = False) -> list[list[exp.Expression]]:
    if isinstance(e, exp.Rollup):
        units = [_unit(x, select_items) for x in e.expressions]
        return [[x for u in units[:k] for x in u] for k in range(len(units), -1, -1)]
    if isinstance(e, exp.Cube):
        units = [_unit(x, select_items) for x in e.expressions]
        if len(units) > 12:
            raise NotSupported(f"CUBE of {len(units)} expressions (more than {MAX_SETS} grouping sets)")
        return [
            [x for j, u in enumerate(units) if m >> (len(units) - 1 - j) & 1 for x in u]
            for m in range((1 << len(units)) - 1, -1, -1)
        ]
    if isinstance(e, exp.GroupingSets):
        out = []
        for x in e.expressions:
            if isinstance(x, (exp.Rollup, exp.Cube, exp.GroupingSets)):
                out += _sets_of(x, select_items)
            else:
                out.append(_unit(x, select_items))
        return out
    return [[e] if top and not isinstance(e, exp.Tuple) else _unit(e, select_items)]


def _unit(e: exp.Expression, select_items) -> list[exp.Expression]:
    """The expressions of one element: a parenthesised list is several."""
    if isinstance(e, exp.Tuple):
        # an element of a set in parentheses is the expression itself: ((x + 7), NULL) groups
        # by x + 7 (fuzz seed 623 q1927: it was a key of its own, so GROUPING(x + 7) saw it absent)
        return [_ordinal(_unparen(x), select_items) for x in e.expressions]
    if isinstance(e, exp.Paren):
        return _unit(e.this, select_items)
    return [_ordinal(e, select_items)]


def _unparen(e: exp.Expression) -> exp.Expression:
    while isinstance(e, exp.Paren):
        e = e.this
    return e


def _ordinal(e: exp.Expression, select_items) -> exp.Expression:
    if isinstance(e, exp.Literal) and not e.is_string and e.this.isdigit():
        i = int(e.this)
        if not 1 <= i <= len(select_items):
            raise BinderError(f"GROUP BY term out of range - should be between 1 and {len(select_items)}")
        item = select_items[i - 1]
        return item.this if isinstance(item, exp.Alias) else item
    return e
