"""Result column names as DuckDB gives them.

An aliased SELECT item is named after its alias as written; a column
reference after the column it resolves to (the binder does that); any other
item after its expression as DuckDB prints it (:mod:`glint.sql.expression_text`).
:func:`name_select_items` gives each unaliased computed item of every SELECT
an alias with that name before the query is qualified, so subqueries, CTEs,
views and set operations pass the names on, and makes the names of a derived
table unique as DuckDB does (a result keeps its repeated names).
"""

from __future__ import annotations

from sqlglot import exp

from glint.sql.expression_text import Unnamed, display_name
from glint.sql.names_parser import parse_as_written


def _strip(node):
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _computed(item) -> bool:
    """Whether a SELECT item is named after its expression (not an alias, a
    star or a column)."""
    return not isinstance(item, exp.Alias) and not isinstance(_strip(item), (exp.Star, exp.Column))


def name_select_items(statements: list, text: str, version: str | None) -> None:
    """Give every unaliased computed item of every SELECT in ``statements``
    (glint's parse of ``text``) an alias holding its DuckDB name, and record
    each alias's spelling (``meta["display"]``) before qualify lower-cases it."""
    selects = [list(s.find_all(exp.Select)) if s is not None else [] for s in statements]
    for s in statements:
        for table_alias in s.find_all(exp.TableAlias) if s is not None else ():
            for ident in table_alias.columns:
                ident.meta["display"] = ident.name
    for sels in selects:
        for sel in sels:
            for item in sel.expressions:
                if isinstance(item, exp.Alias):
                    ident = item.args.get("alias")
                    if isinstance(ident, exp.Identifier):
                        ident.meta["display"] = ident.this
                elif isinstance(item, exp.Paren) and isinstance(_strip(item), exp.Column):
                    item.replace(_strip(item))
    _name_computed(selects, text, version)
    for s in statements:
        if s is not None:
            deduplicate_derived(s)


def deduplicate_derived(statement) -> bool:
    """Make the names of every subquery's and CTE's items unique as DuckDB
    does (:func:`deduplicated`); whether any changed. (Run again after
    qualify, which expands a derived table's star into its columns.)"""
    top = {id(sel) for sel in _top_selects(statement)}
    changed = False
    for sel in list(statement.find_all(exp.Select)):
        if id(sel) not in top:
            changed |= _deduplicate(sel)
    return changed


def _name_computed(selects: list, text: str, version: str | None) -> None:
    # (a unary plus is gone from glint's parse: ``+x`` reads as the column x)
    if "+" not in text and not any(_computed(i) for sels in selects for sel in sels for i in sel.expressions):
        return
    shadows = _shadow_selects(text, version, selects)
    for si, sels in enumerate(selects):
        for qi, sel in enumerate(sels):
            shadow = shadows[si][qi] if shadows is not None else sel
            for item, written in zip(list(sel.expressions), shadow.expressions):
                if _computed(item) or (
                    isinstance(item, exp.Column) and not isinstance(item.this, exp.Star) and _computed(written)
                ):
                    _alias(item, _name_or_text(written, item))


def _top_selects(node):
    """The SELECTs whose items name a statement's result (they keep duplicate
    names, as DuckDB's results do)."""
    if isinstance(node, (exp.Create, exp.Insert)):
        node = node.expression
    if isinstance(node, exp.Subquery):
        yield from _top_selects(node.this)
    elif isinstance(node, exp.SetOperation):
        yield from _top_selects(node.this)
        yield from _top_selects(node.expression)
    elif isinstance(node, exp.Select):
        yield node


def deduplicated(names: list[str]) -> list[str]:
    """A derived table's column names as DuckDB makes them unique: a repeated
    name (in any case) gets ``_1``, ``_2``, ... until it is free.

    >>> deduplicated(["a", "A", "a", "a_1", "b"])
    ['a', 'A_1', 'a_2', 'a_1_1', 'b']
    """
    seen: set[str] = set()
    counts: dict[str, int] = {}
    out = []
    for name in names:
        candidate, k = name, counts.get(name.lower(), 0)
        while candidate.lower() in seen:
            k += 1
            candidate = f"{name}_{k}"
        counts[name.lower()] = k
        seen.add(candidate.lower())
        out.append(candidate)
    return out


def _deduplicate(sel) -> bool:
    """Rename the repeated names of a subquery's or CTE's items (when their
    names are all known: no star)."""
    items = list(sel.expressions)
    names = []
    for item in items:
        if isinstance(item, exp.Alias):
            names.append(item.args["alias"].meta.get("display") or item.alias)
        elif isinstance(item, exp.Column) and not isinstance(item.this, exp.Star):
            names.append(item.name)
        else:
            return False
    changed = False
    for item, name, unique in zip(items, names, deduplicated(names)):
        if unique == name:
            continue
        changed = True
        if isinstance(item, exp.Alias):
            ident = exp.to_identifier(unique, quoted=True)
            ident.meta["display"] = unique
            item.set("alias", ident)
        else:
            _alias(item, unique)
    return changed


def _shadow_selects(text: str, version: str | None, selects: list):
    """The SELECTs of the parse with calls as written, matched one to one with
    ``selects`` (None when the two parses differ in shape)."""
    try:
        shadow = parse_as_written(text, version)
    except Exception:  # noqa: BLE001 - a call the plain parse cannot read: glint's own parse names it
        return None
    if len(shadow) != len(selects):
        return None
    out = []
    for s, sels in zip(shadow, selects):
        ssels = list(s.find_all(exp.Select)) if s is not None else []
        if len(ssels) != len(sels) or any(len(a.expressions) != len(b.expressions) for a, b in zip(ssels, sels)):
            return None
        out.append(ssels)
    return out


def _name_or_text(written, item) -> str:
    try:
        return display_name(written)
    except Unnamed:
        return item.sql(dialect="duckdb")


def _alias(item, name: str) -> None:
    ident = exp.to_identifier(name, quoted=True)
    ident.meta["display"] = name
    alias = exp.Alias(alias=ident)
    item.replace(alias)
    alias.set("this", item)
