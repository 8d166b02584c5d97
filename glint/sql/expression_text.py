"""Expressions printed as DuckDB prints a parsed expression, which is how
DuckDB names an unaliased result column: function names in lower case
(``upper(s)``, ``count_star()``), operators and comparisons in parentheses
(``(x + 1)``, ``(a = b)``), casts spelled out (``CAST(x AS INTEGER)``),
identifiers quoted only where DuckDB must quote them (``"year"(d)``,
``"Mixed Case"``), and the rewrites DuckDB's parser makes (``s LIKE 'a%'`` is
``(s ~~ 'a%')``, ``NOT (x > 1)`` is ``(x <= 1)``, ``x IN (SELECT ...)`` is
``(x = ANY(SELECT ...))``).

The expressions printed are those of :mod:`glint.sql.names_parser`'s parse,
which keeps every call as written.

>>> from glint.sql.names_parser import parse_as_written
>>> def names(sql):
...     return [display_name(e) for e in parse_as_written(sql, None)[0].expressions]
>>> names("SELECT count(*), UPPER(s), x + 1 * 2, sum(a) FILTER (WHERE a > 0) FROM t")
['count_star()', 'upper(s)', '(x + (1 * 2))', 'sum(a) FILTER (WHERE (a > 0))']
>>> names("SELECT CAST(x AS INT), 42, 'abc', a <> b, NOT (x > 1), year(d), -(-1) FROM t")
['CAST(x AS INTEGER)', '42', "'abc'", '(a != b)', '(x <= 1)', '"year"(d)', '1']
>>> names("SELECT CASE WHEN x > 1 THEN 'a' END, s NOT LIKE 'a%', x IN (SELECT z FROM u) FROM t")
["CASE  WHEN ((x > 1)) THEN ('a') ELSE NULL END", "(s !~~ 'a%')", '(x = ANY(SELECT z FROM u))']
"""

from __future__ import annotations

import re

from sqlglot import exp

from glint.sql.keywords import KEYWORDS
from glint.sql.names_parser import Caret, UnaryPlus


class Unnamed(Exception):
    """An expression whose DuckDB name this module does not know how to print."""


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def quote(name: str) -> str:
    """An identifier as DuckDB prints it: in double quotes only when it is a
    keyword or holds anything but letters, digits and underscores.

    >>> quote("x"), quote("Mixed Case"), quote("year"), quote("S")
    ('x', '"Mixed Case"', '"year"', 'S')
    """
    if _PLAIN.fullmatch(name) and name.lower() not in KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


def _string(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _strip(node):
    while isinstance(node, exp.Paren):
        node = node.this
    return node


# ------------------------------------------------------------------ literals
def _number_text(text: str, negative: bool) -> str:
    """A numeric literal as DuckDB prints it: integers and decimals as written
    (leading zeros dropped), doubles by their shortest repr."""
    t = text.replace("_", "")
    if re.fullmatch(r"[0-9]+", t):
        value = int(t)
        return str(-value if negative else value)
    if "e" in t.lower():
        value = float(t)
        return repr(-value if negative and value else value)
    whole, _, frac = t.partition(".")
    if not frac:
        return _number_text(whole or "0", negative)
    whole = whole.lstrip("0") or ("0" if whole else "")
    zero = not any(c in "123456789" for c in whole + frac)
    return ("-" if negative and not zero else "") + whole + "." + frac


def _signed_number(node) -> tuple[str, bool] | None:
    """(text, negative) of a numeric literal under any number of unary minuses,
    which DuckDB's parser folds into the constant."""
    node = _strip(node)
    if isinstance(node, exp.Literal) and not node.is_string:
        return node.this, False
    if isinstance(node, exp.Neg):
        inner = _signed_number(node.this)
        if inner is not None:
            return inner[0], not inner[1]
    return None


# ------------------------------------------------------------------ types
_TYPE_NAMES = {
    "INT": "INTEGER",
    "BIGINT": "BIGINT",
    "SMALLINT": "SMALLINT",
    "TINYINT": "TINYINT",
    "INT128": "HUGEINT",
    "UINT128": "UHUGEINT",
    "UBIGINT": "UBIGINT",
    "UINT": "UINTEGER",
    "USMALLINT": "USMALLINT",
    "UTINYINT": "UTINYINT",
    "DOUBLE": "DOUBLE",
    "FLOAT": "FLOAT",
    "TEXT": "VARCHAR",
    "VARCHAR": "VARCHAR",
    "CHAR": "VARCHAR",
    "NCHAR": "VARCHAR",
    "NVARCHAR": "VARCHAR",
    "BPCHAR": "VARCHAR",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "TIMESTAMPNTZ": "TIMESTAMP",
    "DATETIME": "TIMESTAMP",
    "TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE",
    "TIMESTAMP_S": "TIMESTAMP_S",
    "TIMESTAMP_MS": "TIMESTAMP_MS",
    "TIMESTAMP_NS": "TIMESTAMP_NS",
    "TIME": "TIME",
    "BOOLEAN": "BOOLEAN",
    "BLOB": "BLOB",
    "VARBINARY": "BLOB",
    "BINARY": "BLOB",
    "UUID": "UUID",
    "INTERVAL": "INTERVAL",
}


def _type_name(dt: exp.DataType) -> str:
    kind = dt.this.name if hasattr(dt.this, "name") else str(dt.this)
    if kind == "ARRAY" and dt.expressions:
        return _type_name(dt.expressions[0]) + "[]"
    if kind == "DECIMAL":
        params = [int(p.this.this) if isinstance(p.this, exp.Literal) else None for p in dt.expressions]
        width, scale = (params + [None, None])[:2]
        if width is None:
            width, scale = 18, 3
        return f"DECIMAL({width},{scale or 0})"
    if kind not in _TYPE_NAMES:
        raise Unnamed(f"type {dt.sql(dialect='duckdb')}")
    return _TYPE_NAMES[kind]


# ------------------------------------------------------------------ operators
_BINARY = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.IntDiv: "//",
    exp.Mod: "%",
    exp.Pow: "**",
    Caret: "^",
    exp.DPipe: "||",
    exp.BitwiseAnd: "&",
    exp.BitwiseOr: "|",
    exp.BitwiseLeftShift: "<<",
    exp.BitwiseRightShift: ">>",
    exp.Glob: "~~~",
    exp.EQ: "=",
    exp.NEQ: "!=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.NullSafeEQ: "IS NOT DISTINCT FROM",
    exp.NullSafeNEQ: "IS DISTINCT FROM",
}
# NOT over a comparison is the opposite comparison in DuckDB's parse
_NEGATED = {exp.EQ: exp.NEQ, exp.NEQ: exp.EQ, exp.LT: exp.GTE, exp.GTE: exp.LT, exp.GT: exp.LTE, exp.LTE: exp.GT}
_LIKE = {(exp.Like, False): "~~", (exp.Like, True): "!~~", (exp.ILike, False): "~~*", (exp.ILike, True): "!~~*"}
_LIKE_ESCAPE = {
    (exp.Like, False): "like_escape",
    (exp.Like, True): "not_like_escape",
    (exp.ILike, False): "ilike_escape",
    (exp.ILike, True): "not_ilike_escape",
}
# INTERVAL n unit: DuckDB's to_<unit>s(...) and the integer type the amount is cast to (None: not truncated)
_INTERVAL_UNITS = {
    "YEAR": ("to_years", "INTEGER"),
    "MONTH": ("to_months", "INTEGER"),
    "DAY": ("to_days", "INTEGER"),
    "HOUR": ("to_hours", "BIGINT"),
    "MINUTE": ("to_minutes", "BIGINT"),
    "SECOND": ("to_seconds", None),
    "MILLISECOND": ("to_milliseconds", None),
    "MICROSECOND": ("to_microseconds", "BIGINT"),
    "WEEK": ("to_weeks", "INTEGER"),
    "QUARTER": ("to_quarters", "INTEGER"),
    "DECADE": ("to_decades", "INTEGER"),
    "CENTURY": ("to_centuries", "INTEGER"),
    "CENTURIES": ("to_centuries", "INTEGER"),
    "MILLENNIUM": ("to_millennia", "INTEGER"),
    "MILLENNIA": ("to_millennia", "INTEGER"),
}
# EXTRACT's parts that DuckDB's grammar knows as keywords (printed in lower case, singular)
_EXTRACT_PARTS = {
    "year",
    "month",
    "day",
    "hour",
    "minute",
    "second",
    "millisecond",
    "microsecond",
    "week",
    "quarter",
    "decade",
    "century",
    "millennium",
}


def _unit(word: str) -> str:
    w = word.upper()
    return w[:-1] if w.endswith("S") and w[:-1] in _INTERVAL_UNITS else w


# ------------------------------------------------------------------ the printer
def display_name(item) -> str:
    """The name DuckDB gives a SELECT item (a parse of
    :func:`~glint.sql.names_parser.parse_as_written`): its alias, a column's
    name, a scalar subquery's first column's name, else the expression."""
    if isinstance(item, exp.Alias):
        return item.alias
    node = _strip(item)
    if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
        return node.name
    if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select) and node.this.expressions:
        return display_name(node.this.expressions[0])
    return to_text(node)


def to_text(node) -> str:
    """An expression printed as DuckDB prints it (raises :class:`Unnamed`)."""
    node = _strip(node)
    handler = _HANDLERS.get(type(node))
    if handler is None:
        for cls, h in _HANDLERS.items():
            if isinstance(node, cls):
                handler = h
                break
    if handler is None:
        raise Unnamed(type(node).__name__)
    return handler(node)


def _binary(node) -> str:
    right = _strip(node.expression)
    if isinstance(right, exp.All) and type(node) in _NEGATED:
        # x > ALL(q) is NOT (x <= ANY(q))
        flipped = _NEGATED[type(node)](this=node.this, expression=exp.Any(this=right.this))
        return f"(NOT {to_text(flipped)})"
    return f"({to_text(node.this)} {_BINARY[type(node)]} {to_text(right)})"


def _connective(node) -> str:
    word = "AND" if isinstance(node, exp.And) else "OR"
    terms: list = []

    def flatten(n):
        n = _strip(n)
        if type(n) is type(node):
            flatten(n.this)
            flatten(n.expression)
        else:
            terms.append(n)

    flatten(node)
    return "(" + f" {word} ".join(to_text(t) for t in terms) + ")"


def _fold_not(node: exp.Not):
    """The node DuckDB's parser makes of a NOT: the opposite comparison, a NOT
    IN, or the NOT itself (marked)."""
    if node.meta.get("is_not") or node.meta.get("folded"):
        return node
    inner = _strip(node.this)
    if isinstance(inner, exp.Not):
        inner = _fold_not(inner)
    if type(inner) in _NEGATED and not isinstance(_strip(inner.expression), (exp.Any, exp.All)):
        return _NEGATED[type(inner)](this=inner.this, expression=inner.expression)
    out = exp.Not(this=inner)
    out.meta["folded"] = True
    if isinstance(inner, exp.In) and not inner.args.get("query") and not inner.args.get("unnest"):
        out.meta["not_in"] = True
    return out


def _not(node) -> str:
    if node.meta.get("is_not"):
        return _is(_strip(node.this), negate=True)
    folded = _fold_not(node)
    if not isinstance(folded, exp.Not):
        return to_text(folded)
    inner = folded.this
    if folded.meta.get("not_in"):
        return _in(inner, negate=True)
    return f"(NOT {to_text(inner)})"


def _is(node, negate: bool = False) -> str:
    if not isinstance(node, exp.Is):
        raise Unnamed("IS")
    rhs = _strip(node.expression)
    if isinstance(rhs, exp.Boolean):
        op = "IS DISTINCT FROM" if negate else "IS NOT DISTINCT FROM"
        return f"(CAST({to_text(node.this)} AS BOOLEAN) {op} {'true' if rhs.this else 'false'})"
    if isinstance(rhs, exp.Null):
        return f"({to_text(node.this)} IS {'NOT ' if negate else ''}NULL)"
    raise Unnamed("IS")


def _in(node, negate: bool = False) -> str:
    query = node.args.get("query")
    if query is not None:
        text = f"({to_text(node.this)} = ANY({_query(_strip(query))}))"
        return f"(NOT {text})" if negate else text
    if node.args.get("unnest") or node.args.get("field"):
        raise Unnamed("IN")
    values = ", ".join(to_text(e) for e in node.expressions)
    return f"({to_text(node.this)} {'NOT IN' if negate else 'IN'} ({values}))"


def _between(node) -> str:
    return f"({to_text(node.this)} BETWEEN {to_text(node.args['low'])} AND {to_text(node.args['high'])})"


def _like(node) -> str:
    return f"({to_text(node.this)} {_LIKE[type(node), bool(node.args.get('negate'))]} {to_text(node.expression)})"


def _escape(node) -> str:
    like = _strip(node.this)
    if type(like) not in (exp.Like, exp.ILike):
        raise Unnamed("ESCAPE")
    name = _LIKE_ESCAPE[type(like), bool(like.args.get("negate"))]
    args = ", ".join(to_text(a) for a in (like.this, like.expression, node.expression))
    return f"main.{name}({args})"


def _literal(node) -> str:
    if node.is_string:
        return _string(node.this)
    return _number_text(node.this, False)


def _neg(node) -> str:
    number = _signed_number(node)
    if number is not None:
        return _number_text(*number)
    return f"-({to_text(node.this)})"


def _cast(node) -> str:
    word = "TRY_CAST" if isinstance(node, exp.TryCast) else "CAST"
    return f"{word}({to_text(node.this)} AS {_type_name(node.args['to'])})"


def _case(node) -> str:
    subject = node.args.get("this")
    out = "CASE "
    for branch in node.args.get("ifs") or []:
        cond = to_text(branch.this)
        if subject is not None:
            cond = f"({to_text(subject)} = {cond})"
        out += f" WHEN ({cond}) THEN ({to_text(branch.args['true'])})"
    default = node.args.get("default")
    return out + f" ELSE {to_text(default) if default is not None else 'NULL'} END"


def _if(node) -> str:
    default = node.args.get("false")
    return (
        f"CASE  WHEN ({to_text(node.this)}) THEN ({to_text(node.args['true'])})"
        f" ELSE {to_text(default) if default is not None else 'NULL'} END"
    )


# calls that DuckDB's parser makes operator expressions of (printed in capitals)
_OPERATOR_CALLS = {"coalesce": "COALESCE", "ifnull": "COALESCE", "grouping": "GROUPING", "grouping_id": "GROUPING"}


def _call(name: str, args: list, in_window: bool = False) -> str:
    """``name(args)`` with DISTINCT and an aggregate's ORDER BY in place."""
    lower = name.lower()
    prefix, order = "", ""
    if args and isinstance(args[-1], exp.Order):
        o = args[-1]
        order = " ORDER BY " + ", ".join(_ordered(x) for x in o.expressions)
        args = args[:-1] + ([o.this] if o.this is not None else [])
    if args and isinstance(args[0], exp.Distinct):
        prefix = "DISTINCT "
        args = list(args[0].expressions) + list(args[1:])
    if lower == "count" and not prefix and (not args or (len(args) == 1 and isinstance(args[0], exp.Star))):
        return "count()" if in_window else "count_star()"
    shown = _OPERATOR_CALLS.get(lower) or quote(lower)
    return f"{shown}({prefix}{', '.join(_argument(a) for a in args)}{order})"


def _argument(node) -> str:
    if isinstance(node, (exp.PropertyEQ, exp.Kwarg)):
        return f"{node.this.name} := {to_text(node.expression)}"
    return to_text(node)


def _anonymous(node, in_window: bool = False) -> str:
    name = node.this.this if isinstance(node.this, exp.Identifier) else node.this
    if not isinstance(name, str):
        raise Unnamed("function")
    return _call(name, list(node.expressions), in_window)


def _within_group(node) -> str:
    """``percentile_cont(f) WITHIN GROUP (ORDER BY x)`` is DuckDB's
    ``quantile_cont(f ORDER BY x)``; another call keeps its WITHIN GROUP."""
    func, order = _strip(node.this), node.expression
    if not isinstance(func, exp.Anonymous) or not isinstance(order, exp.Order):
        raise Unnamed("WITHIN GROUP")
    keys = ", ".join(_ordered(o) for o in order.expressions)
    name = func.name.lower()
    if name in ("percentile_cont", "percentile_disc"):
        args = ", ".join(to_text(a) for a in func.expressions)
        return f"{name.replace('percentile', 'quantile')}({args} ORDER BY {keys})"
    return f"{_anonymous(func)} WITHIN GROUP ( ORDER BY {keys})"


def _ordered(node) -> str:
    text = to_text(node.this)
    desc = node.args.get("desc")
    if desc:
        text += " DESC"
    elif desc is False:
        text += " ASC"
    if node.meta.get("nulls"):
        text += f" NULLS {node.meta['nulls']}"
    return text


def _filter(node, in_window: bool = False) -> str:
    agg = _strip(node.this)
    cond = node.expression.this if isinstance(node.expression, exp.Where) else node.expression
    head = _anonymous(agg, in_window) if isinstance(agg, exp.Anonymous) else to_text(agg)
    return f"{head} FILTER (WHERE {to_text(cond)})"


def _frame_bound(value, side) -> str:
    if isinstance(value, str):
        word = value.upper()
    else:
        word = to_text(value)
    if word == "CURRENT ROW":
        return word
    return f"{word} {(side or '').upper()}".strip()


def _frame(spec) -> str:
    kind = (spec.args.get("kind") or "").upper()
    start = _frame_bound(spec.args.get("start"), spec.args.get("start_side"))
    end = spec.args.get("end")
    end_text = "CURRENT ROW" if end is None else _frame_bound(end, spec.args.get("end_side"))
    if kind == "RANGE" and start == "UNBOUNDED PRECEDING" and end_text == "CURRENT ROW":
        return ""  # the default frame is not printed
    if spec.args.get("exclude"):
        raise Unnamed("EXCLUDE")
    return f"{kind} BETWEEN {start} AND {end_text}"


def _named_window(node):
    """The WINDOW clause's definition that ``OVER name`` or ``OVER (name ...)``
    refers to (DuckDB prints the definition in its place)."""
    sel = node.parent
    while sel is not None and not isinstance(sel, exp.Select):
        sel = sel.parent
    for w in (sel.args.get("windows") or []) if sel is not None else []:
        if w.name.lower() == node.alias.lower():
            return w
    raise Unnamed("named window")


def _window(node) -> str:
    if not node.args.get("over"):
        raise Unnamed("window")
    base = _named_window(node) if node.alias else None
    func = _strip(node.this)
    if isinstance(func, exp.Anonymous):
        head = _anonymous(func, in_window=True)
    elif isinstance(func, exp.Filter):
        head = _filter(func, in_window=True)
    else:
        head = to_text(func)
    parts = []

    def arg(key):
        value = node.args.get(key)
        return base.args.get(key) if not value and base is not None else value

    if arg("partition_by"):
        parts.append("PARTITION BY " + ", ".join(to_text(p) for p in arg("partition_by")))
    order = arg("order")
    if order is not None:
        parts.append("ORDER BY " + ", ".join(_ordered(o) for o in order.expressions))
    spec = arg("spec")
    if spec is not None and _frame(spec):
        parts.append(_frame(spec))
    return f"{head} OVER ({' '.join(parts)})"


def _extract(node) -> str:
    written = node.meta.get("part") or node.this.name
    part = written.lower().strip("'")
    if part.endswith("s") and part[:-1] in _EXTRACT_PARTS:
        part = part[:-1]
    elif part in ("centuries", "millennia"):
        part = {"centuries": "century", "millennia": "millennium"}[part]
    elif part not in _EXTRACT_PARTS:
        part = written.strip("'")
    return f"main.date_part({_string(part)}, {to_text(node.expression)})"


def _trim(node) -> str:
    position = (node.args.get("position") or "BOTH").upper()
    name = {"BOTH": '"trim"', "LEADING": "ltrim", "TRAILING": "rtrim"}[position]
    args = [node.this] + ([node.expression] if node.expression is not None else [])
    return f"main.{name}({', '.join(to_text(a) for a in args)})"


def _substring(node) -> str:
    args = [node.this, node.args.get("start"), node.args.get("length")]
    return f'main."substring"({", ".join(to_text(a) for a in args if a is not None)})'


def _position(node) -> str:
    if node.args.get("position") is not None:
        raise Unnamed("POSITION")
    return f'main."position"({to_text(node.this)}, {to_text(node.args["substr"])})'


def _interval(node) -> str:
    tokens = node.meta.get("tokens")
    if not tokens or len(tokens) < 2:
        raise Unnamed("INTERVAL")
    kinds = [t[0].name for t in tokens]
    if len(tokens) == 2 and kinds[1] == "STRING":
        return f"CAST({_string(tokens[1][1])} AS INTERVAL)"
    unit = node.args.get("unit")
    if unit is None or _unit(tokens[-1][1]) not in _INTERVAL_UNITS:
        raise Unnamed("INTERVAL")
    func, int_type = _INTERVAL_UNITS[_unit(tokens[-1][1])]
    if len(tokens) == 3 and kinds[1] == "NUMBER":
        amount = _number_text(tokens[1][1], False)
    elif len(tokens) == 3 and kinds[1] == "STRING":
        amount = _string(tokens[1][1])
    else:
        amount = to_text(node.this)
    value = f"CAST({amount} AS DOUBLE)"
    return f"{func}({value})" if int_type is None else f"{func}(CAST(trunc({value}) AS {int_type}))"


def _column(node) -> str:
    if isinstance(node.this, exp.Star):
        return ".".join(quote(p.name) for p in node.parts[:-1]) + ".*"
    return ".".join(quote(p.name) for p in node.parts)


def _written(node) -> str:
    written = node.meta.get("written")
    if not written:
        raise Unnamed(type(node).__name__)
    return written


def _query(node) -> str:
    """A subquery as DuckDB prints it (the common shapes; others raise)."""
    node = _strip(node)
    if isinstance(node, exp.Subquery):
        return _query(node.this)
    if isinstance(node, exp.SetOperation):
        word = {exp.Union: "UNION", exp.Intersect: "INTERSECT", exp.Except: "EXCEPT"}[type(node)]
        if not node.args.get("distinct"):
            word += " ALL"
        return f"({_query(node.this)}) {word} ({_query(node.expression)})"
    if not isinstance(node, exp.Select):
        raise Unnamed("subquery")
    key = "with_" if node.args.get("with_") is not None else "with"
    with_ = node.args.get(key)
    if with_ is not None:
        if with_.args.get("recursive"):
            raise Unnamed("WITH RECURSIVE")
        ctes = ", ".join(f"{quote(c.alias)} AS ({_query(c.this)})" for c in with_.expressions)
        body = node.copy()
        body.set(key, None)
        return f"WITH {ctes}" + _query(body)  # (DuckDB prints no space before the SELECT)
    items = []
    for e in node.expressions:
        if isinstance(e, exp.Alias):
            items.append(f"{to_text(e.this)} AS {quote(e.alias)}")
        elif isinstance(e, exp.Star):
            items.append("*")
        else:
            items.append(to_text(e))
    out = "SELECT " + ("DISTINCT " if node.args.get("distinct") else "") + ", ".join(items)
    from_ = node.args.get("from_") or node.args.get("from")
    if from_ is not None:
        out += " FROM " + _source(from_.this)
        for j in node.args.get("joins") or []:
            out += _join(j)
    if node.args.get("where") is not None:
        out += f" WHERE {to_text(node.args['where'].this)}"
    group = node.args.get("group")
    if group is not None:
        out += " GROUP BY " + ", ".join(to_text(g) for g in group.expressions)
    if node.args.get("having") is not None:
        out += f" HAVING {to_text(node.args['having'].this)}"
    order = node.args.get("order")
    if order is not None:
        out += " ORDER BY " + ", ".join(_ordered(o) for o in order.expressions)
    limit = node.args.get("limit")
    if limit is not None:
        out += f" LIMIT {to_text(limit.expression)}"
    offset = node.args.get("offset")
    if offset is not None:
        out += f" OFFSET {to_text(offset.expression)}"
    return out


def _source(node) -> str:
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
        name = ".".join(quote(p.name) for p in node.parts)
    elif isinstance(node, exp.Subquery):
        name = f"({_query(node.this)})"
    else:
        raise Unnamed("FROM item")
    alias = node.args.get("alias")
    if alias is not None and alias.columns:
        raise Unnamed("FROM item with column aliases")
    return name + (f" AS {quote(node.alias)}" if node.alias else "")


def _join(j) -> str:
    side, kind = (j.side or "").upper(), (j.kind or "").upper()
    on, using = j.args.get("on"), j.args.get("using")
    table = _source(j.this)
    if not side and not kind and on is None and not using:
        return f" , {table}"
    if kind == "CROSS":
        return f" CROSS JOIN {table}"
    word = f"{side or kind or 'INNER'} JOIN"
    if using:
        return f" {word} {table} USING ({', '.join(quote(u.name) for u in using)})"
    if on is None:
        raise Unnamed("JOIN")
    return f" {word} {table} ON ({to_text(on)})"


_HANDLERS = {
    exp.Column: _column,
    exp.Star: lambda n: "*",
    exp.Literal: _literal,
    exp.Null: lambda n: "NULL",
    exp.Boolean: lambda n: f"CAST('{'t' if n.this else 'f'}' AS BOOLEAN)",
    exp.Neg: _neg,
    exp.BitwiseNot: lambda n: f"~({to_text(n.this)})",
    UnaryPlus: lambda n: f"+({to_text(n.this)})",
    exp.BitwiseXor: lambda n: f"xor({to_text(n.this)}, {to_text(n.expression)})",
    **{cls: _binary for cls in _BINARY},
    exp.And: _connective,
    exp.Or: _connective,
    exp.Not: _not,
    exp.Is: _is,
    exp.In: _in,
    exp.Between: _between,
    exp.Like: _like,
    exp.ILike: _like,
    exp.Escape: _escape,
    exp.SimilarTo: lambda n: f"regexp_full_match({to_text(n.this)}, {to_text(n.expression)})",
    exp.RegexpFullMatch: lambda n: f"regexp_full_match({to_text(n.this)}, {to_text(n.expression)})",
    exp.Cast: _cast,
    exp.TryCast: _cast,
    exp.Case: _case,
    exp.If: _if,
    exp.Anonymous: _anonymous,
    exp.Filter: _filter,
    exp.WithinGroup: _within_group,
    exp.Window: _window,
    exp.Extract: _extract,
    exp.Trim: _trim,
    exp.Substring: _substring,
    exp.StrPosition: _position,
    exp.Interval: _interval,
    exp.Tuple: lambda n: f'main."row"({", ".join(to_text(e) for e in n.expressions)})',
    exp.Array: lambda n: f"main.list_value({', '.join(to_text(e) for e in n.expressions)})",
    exp.Struct: lambda n: f"main.struct_pack({', '.join(_argument(e) for e in n.expressions)})",
    exp.Exists: lambda n: f"EXISTS({_query(n.this)})",
    exp.Subquery: lambda n: f"({_query(n.this)})",
    exp.Any: lambda n: f"ANY({_query(n.this)})",
    exp.CurrentDate: _written,
    exp.CurrentTimestamp: _written,
    exp.CurrentTime: _written,
    exp.Localtimestamp: _written,
    exp.Localtime: _written,
}
# a subclass (Caret of Pow) is looked up before its base
_HANDLERS = {Caret: _binary, **_HANDLERS}
