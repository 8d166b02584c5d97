"""``JOIN ... USING`` after a comma: ``FROM a, b JOIN c USING (k)``.

A JOIN binds tighter than a comma, so that USING joins ``b`` and ``c`` on
their ``k``, and an unqualified ``k`` in the query is that joined column, even
when ``a`` has a ``k`` too. sqlglot's qualifier looks for the USING column
in every table before the join, so such a join is rewritten here, before
qualification, into the ON condition it stands for:

- ``USING (k)`` becomes ``ON L.k = c.k``, where ``L`` is the one table of the
  comma group before the join that has ``k`` (or the column an earlier USING
  of the group made);
- an unqualified ``k`` in the SELECT becomes the joined column: the left
  side's for an inner or LEFT join, the right side's for a RIGHT join,
  ``COALESCE`` of both for a FULL join;
- ``SELECT *`` lists the group's USING columns once, first, then the
  group's other columns, as DuckDB does.

>>> import sqlglot
>>> q = sqlglot.parse_one("SELECT * FROM a, b JOIN c USING (k) WHERE k > 1", read="duckdb")
>>> cols = {"a": ["k", "x"], "b": ["k", "y"], "c": ["k", "z"]}
>>> rewrite_using_after_comma(q, lambda node: cols[node.alias_or_name]).sql(dialect="duckdb")
'SELECT a.*, b.k AS k, b.y, c.z FROM a, b JOIN c ON b.k = c.k WHERE b.k > 1'
"""

from __future__ import annotations

from sqlglot import exp

from glint.errors import BinderError, NotSupported


def needs_rewrite(sel: exp.Select) -> bool:
    """A USING join after a comma, or after a SEMI / ANTI join, in this SELECT's FROM."""
    comma = semi = False
    for j in sel.args.get("joins") or []:
        side, kind = (j.side or "").upper(), (j.kind or "").upper()
        if j.args.get("using") and (comma or semi):
            return True
        comma |= not side and not kind and not j.args.get("on") and not j.args.get("using")
        semi |= kind in ("SEMI", "ANTI")
    return False


def rewrite_using_after_comma(ast: exp.Expression, columns_of) -> exp.Expression:
    """The query with every SELECT that :func:`needs_rewrite` rewritten;
    ``columns_of(from item)`` lists a FROM item's column names (None: unknown)."""
    for sel in list(ast.find_all(exp.Select)):
        if needs_rewrite(sel):
            _rewrite(sel, columns_of)
    return ast


def _groups(sel: exp.Select) -> list[list]:
    """The FROM's items split at its commas: [[item, join, join...], ...]."""
    from_ = sel.args.get("from") or sel.args.get("from_")
    groups = [[from_.this]]
    for j in sel.args.get("joins") or []:
        side, kind = (j.side or "").upper(), (j.kind or "").upper()
        if not side and not kind and not j.args.get("on") and not j.args.get("using"):
            groups.append([j])
        else:
            groups[-1].append(j)
    return groups


def _item(x) -> exp.Expression:
    return x.this if isinstance(x, exp.Join) else x


def _rewrite(sel: exp.Select, columns_of) -> None:
    merged: dict[str, exp.Expression] = {}  # a USING column (lower case) -> the joined column
    star_parts: list[exp.Expression] = []
    for group in _groups(sel):
        cols = {}
        for x in group:
            c = columns_of(_item(x))
            if c is None:
                raise NotSupported("JOIN ... USING after a comma join, over a FROM item whose columns are not known")
            cols[_item(x).alias_or_name] = list(c)
        group_merged: dict[str, exp.Expression] = {}
        using_order: list[str] = []
        visible: list[str] = [_item(group[0]).alias_or_name]
        for j in group[1:]:
            right = _item(j).alias_or_name
            using = j.args.get("using")
            if not using:
                if (j.kind or "").upper() not in ("SEMI", "ANTI"):
                    visible.append(right)
                continue
            conds = []
            side = (j.side or "").upper()
            for ident in using:
                k = ident.name
                left = group_merged.get(k.lower())
                if left is None:
                    owners = [t for t in visible if any(c.lower() == k.lower() for c in cols[t])]
                    if not owners:
                        raise BinderError(f'Column "{k}" does not exist on left side of join!')
                    if len(owners) > 1:
                        raise BinderError(f'Column name "{k}" is ambiguous: it exists in {" and ".join(owners)}')
                    left = _col(owners[0], k)
                if not any(c.lower() == k.lower() for c in cols[right]):
                    raise BinderError(f'Column "{k}" does not exist on right side of join!')
                conds.append(exp.EQ(this=left.copy(), expression=_col(right, k)))
                if side == "FULL":
                    joined = exp.Coalesce(this=left.copy(), expressions=[_col(right, k)])
                else:
                    joined = _col(right, k) if side == "RIGHT" else left.copy()
                if k.lower() not in group_merged:
                    using_order.append(k)
                group_merged[k.lower()] = joined
            j.set("using", None)
            j.set("on", exp.and_(*conds) if len(conds) > 1 else conds[0])
            if (j.kind or "").upper() not in ("SEMI", "ANTI"):
                visible.append(right)
        merged.update(group_merged)
        if group_merged:
            star_parts += [exp.alias_(group_merged[k.lower()].copy(), k) for k in using_order]
            for t in visible:
                star_parts += [_col(t, c) for c in cols[t] if c.lower() not in group_merged]
        else:
            star_parts += [exp.Column(this=exp.Star(), table=exp.to_identifier(t)) for t in visible]
    _replace_references(sel, merged)
    if any(isinstance(e, exp.Star) for e in sel.expressions):
        items = []
        for e in sel.expressions:
            if isinstance(e, exp.Star):
                if e.args.get("except") or e.args.get("replace") or e.args.get("rename"):
                    raise NotSupported("SELECT * EXCLUDE / REPLACE with JOIN ... USING after a comma join")
                items += [p.copy() for p in star_parts]
            else:
                items.append(e)
        sel.set("expressions", items)


def _replace_references(sel: exp.Select, merged: dict[str, exp.Expression]) -> None:
    """Unqualified USING columns of this SELECT (not of its subqueries) -> the joined column."""
    aliases = {e.alias.lower() for e in sel.expressions if isinstance(e, exp.Alias)}

    def fix(node):
        if not isinstance(node, exp.Column) or node.table or node.name.lower() not in merged:
            return node
        if node.find_ancestor(exp.Select) is not sel:
            return node
        if node.find_ancestor(exp.Order) is not None and node.name.lower() in aliases:
            return node
        return merged[node.name.lower()].copy()

    for key in ("expressions", "where", "group", "having", "qualify", "order", "joins"):
        value = sel.args.get(key)
        if value is None:
            continue
        if isinstance(value, list):
            sel.set(key, [v.transform(fix, copy=False) for v in value])
        else:
            sel.set(key, value.transform(fix, copy=False))


def _col(table: str, name: str) -> exp.Column:
    return exp.Column(this=exp.to_identifier(name), table=exp.to_identifier(table))
