"""Binding of string functions and operators: LIKE / ILIKE (constant or
per-row patterns), regular expressions, and the VARCHAR functions, with
DuckDB's argument types, result types and binder errors.

Registered on :func:`glint.sql.bind_expr._bind` (one function per sqlglot
node type) and, for names sqlglot does not know, in
:data:`glint.sql.bind_expr.ANONYMOUS`.

>>> import sqlglot
>>> from glint.sql.bind_expr import ExprContext, bind
>>> bind(sqlglot.parse_one("regexp_replace('abc', 'b', 'x', 'g')", read=DIALECT), ExprContext(None, None))
regexp_replace('abc', 'b', 'x', 'g')
>>> bind(sqlglot.parse_one("'abc' ~ 'a.c'", read=DIALECT), ExprContext(None, None))
regexp_matches('abc', 'a.c', '', True)
"""
from __future__ import annotations

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, ExecutionError, NotSupported, TypeMismatch
from glint.functions.strings.like import escape_byte
from glint.functions.strings.regex_syntax import Regex, parse_options
from glint.plan.expr import Call, Expr, Literal
from glint.plan import typing as ty
from glint.sql.bind_expr import ANONYMOUS, _bind, bind
from glint.sql.dialect import DIALECT  # noqa: F401  (the doctests parse with it)



def string_arg(e: Expr, fn: str) -> Expr:
    """e as a VARCHAR argument of fn: an untyped NULL becomes a VARCHAR NULL;
    other types are refused (DuckDB does not cast them to VARCHAR implicitly)."""
    if e.type.kind == "NULL":
        return Literal(None, T.VARCHAR)
    if not e.type.is_string:
        raise TypeMismatch(f"Type mismatch: {fn} needs VARCHAR, got {ty.show(e)} of type {e.type}")
    return e


def int_arg(e: Expr, fn: str, to: T.DataType) -> Expr:
    """e as an integer argument of type ``to`` (INTEGER or BIGINT): narrower
    integers widen, string literals are cast; anything else is refused."""
    if e.type.kind == "NULL":
        return Literal(None, to)
    if isinstance(e, Literal) and e.type.is_string:
        return ty.cast(e, to)
    if not e.type.is_integer or (to.kind == "INTEGER" and e.type.kind != "INTEGER") or e.type.kind == "HUGEINT":
        raise TypeMismatch(f"Type mismatch: {fn} needs {to} for {ty.show(e)}, got {e.type}")
    return ty.cast(e, to)


def _is_null(e: Expr) -> bool:
    return isinstance(e, Literal) and e.value is None


def _strict(fn: str, args: tuple, out: T.DataType, params: tuple = ()) -> Expr:
    """Call(fn, args), or a NULL of type out when an argument is a NULL literal."""
    if any(_is_null(a) for a in args):
        return Literal(None, out)
    return Call(fn, args, out, params)


# ------------------------------------------------------------------- LIKE
def _like(node, ctx, ci: bool, escape=None):
    negate = bool(node.args.get("negate"))
    v = string_arg(bind(node.this, ctx), "LIKE")
    pat = string_arg(bind(node.expression, ctx), "LIKE")
    escape_byte(escape)
    if _is_null(v) or _is_null(pat):
        return Literal(None, T.BOOLEAN)
    if isinstance(pat, Literal):
        out = Call("like", (v,), T.BOOLEAN, (pat.value, escape, ci))
    else:
        out = Call("like_rows", (v, pat), T.BOOLEAN, (escape, ci))
    return Call("not", (out,), T.BOOLEAN) if negate else out


@_bind.register
def _(node: exp.Like, ctx):
    return _like(node, ctx, False)


@_bind.register
def _(node: exp.ILike, ctx):
    return _like(node, ctx, True)


@_bind.register
def _(node: exp.Escape, ctx):
    esc = node.expression
    inner = node.this
    if isinstance(inner, exp.SimilarTo):
        raise NotSupported("SIMILAR TO ... ESCAPE (DuckDB does not implement it either)")
    if not isinstance(inner, (exp.Like, exp.ILike)):
        raise NotSupported(f"ESCAPE on {type(inner).__name__}")
    if isinstance(esc, exp.Null):
        return Literal(None, T.BOOLEAN)
    if not (isinstance(esc, exp.Literal) and esc.is_string):
        raise NotSupported("ESCAPE with a non-constant escape character")
    return _like(inner, ctx, isinstance(inner, exp.ILike), esc.this)


def _like_function(ci: bool, negate: bool):
    """like_escape(s, p, e) and its ilike / not_ variants."""
    name = ("not_" if negate else "") + ("ilike" if ci else "like") + "_escape"

    def bind_it(node, ctx):
        args = node.expressions
        if len(args) != 3:
            raise BinderError(f"{name} takes 3 arguments, got {len(args)}")
        esc = bind(args[2], ctx)
        if _is_null(esc):
            return Literal(None, T.BOOLEAN)
        if not (isinstance(esc, Literal) and isinstance(esc.value, str)):
            raise NotSupported(f"{name} with a non-constant escape character")
        like = exp.ILike if ci else exp.Like
        return _like(like(this=args[0], expression=args[1], negate=negate), ctx, ci, esc.value)
    return bind_it


for _ci in (False, True):
    for _neg in (False, True):
        ANONYMOUS[("not_" if _neg else "") + ("ilike" if _ci else "like") + "_escape"] = _like_function(_ci, _neg)


# ------------------------------------------------------ regular expressions
def _options(node, ctx, key: str, allow_global: bool) -> str:
    """The constant option string (validated as DuckDB validates it)."""
    arg = node.args.get(key)
    if arg is None:
        return ""
    o = bind(arg, ctx)
    if not isinstance(o, Literal):
        raise ExecutionError("Invalid Input Error: Regex options field must be a constant")
    if o.value is not None and not isinstance(o.value, str):
        raise TypeMismatch(f"Type mismatch: regex options must be VARCHAR, got {o.type}")
    parse_options(o.value, allow_global)
    return o.value


def _pattern(node, ctx, fn: str, options: str) -> Expr:
    """The pattern argument; a constant one is validated now (DuckDB
    rejects a bad constant pattern even when no row reaches it)."""
    p = string_arg(bind(node.expression, ctx), fn)
    if isinstance(p, Literal) and p.value is not None:
        Regex(p.value, parse_options(options, True))
    return p


def _regexp_match(node, ctx, full: bool, options_key: str) -> Expr:
    fn = "regexp_full_match" if full else "regexp_matches"
    options = _options(node, ctx, options_key, False)
    s = string_arg(bind(node.this, ctx), fn)
    return _strict("regexp_matches", (s, _pattern(node, ctx, fn, options)), T.BOOLEAN, (options, full))


@_bind.register
def _(node: exp.RegexpLike, ctx):
    return _regexp_match(node, ctx, False, "flag")


@_bind.register
def _(node: exp.RegexpFullMatch, ctx):
    return _regexp_match(node, ctx, True, "options")


@_bind.register
def _(node: exp.SimilarTo, ctx):
    return _regexp_match(node, ctx, True, "options")


@_bind.register
def _(node: exp.RegexpILike, ctx):
    raise BinderError("Scalar Function with name ~* does not exist! (use regexp_matches(s, p, 'i'))")


def _regexp_call(node, ctx, fn: str, options_key: str, allow_global: bool) -> tuple[str, Expr, Expr]:
    """(options, string, pattern) of regexp_replace / regexp_extract."""
    for key in ("position", "occurrence"):
        if node.args.get(key) is not None:
            raise NotSupported(f"{fn} with a {key} argument")
    options = _options(node, ctx, options_key, allow_global)
    return options, string_arg(bind(node.this, ctx), fn), _pattern(node, ctx, fn, options)


@_bind.register
def _(node: exp.RegexpReplace, ctx):
    options, s, p = _regexp_call(node, ctx, "regexp_replace", "modifiers", True)
    r = string_arg(bind(node.args["replacement"], ctx), "regexp_replace")
    return _strict("regexp_replace", (s, p, r), T.VARCHAR, (options,))


@_bind.register
def _(node: exp.RegexpExtract, ctx):
    options, s, p = _regexp_call(node, ctx, "regexp_extract", "parameters", False)
    g = node.args.get("group")
    group = 0
    if g is not None:
        if isinstance(g, exp.Array):
            raise NotSupported("regexp_extract with a list of group names (its result is a STRUCT)")
        gv = bind(g, ctx)
        if not isinstance(gv, Literal):
            raise ExecutionError("Invalid Input Error: Group specification field must be a constant!")
        if gv.value is not None and gv.type.kind != "INTEGER":
            raise TypeMismatch(f"Type mismatch: regexp_extract group must be INTEGER, got {gv.type}")
        group = gv.value
        if group is not None and not 0 <= group <= 9:
            raise ExecutionError("Invalid Input Error: Group index must be between 0 and 9!")
    return _strict("regexp_extract", (s, p), T.VARCHAR, (group, options))


# --------------------------------------------------------- search functions
def _two_strings(fn: str, out: T.DataType):
    def bind_it(node, ctx):
        a = string_arg(bind(node.this, ctx), fn)
        b = string_arg(bind(node.expression, ctx), fn)
        return _strict(fn, (a, b), out)
    return bind_it


_bind.register(exp.StartsWith)(_two_strings("starts_with", T.BOOLEAN))
_bind.register(exp.EndsWith)(_two_strings("ends_with", T.BOOLEAN))
_bind.register(exp.Contains)(_two_strings("contains", T.BOOLEAN))


def _anonymous_two_strings(fn: str, out: T.DataType):
    def bind_it(node, ctx):
        if len(node.expressions) != 2:
            raise BinderError(f"{node.name}() takes 2 arguments, got {len(node.expressions)}")
        a, b = (string_arg(bind(e, ctx), fn) for e in node.expressions)
        return _strict(fn, (a, b), out)
    return bind_it


ANONYMOUS["prefix"] = _anonymous_two_strings("starts_with", T.BOOLEAN)
ANONYMOUS["suffix"] = _anonymous_two_strings("ends_with", T.BOOLEAN)


@_bind.register
def _(node: exp.StrPosition, ctx):
    for key in ("position", "occurrence"):
        if node.args.get(key) is not None:
            raise NotSupported(f"strpos with a {key} argument")
    s = string_arg(bind(node.this, ctx), "strpos")
    sub = string_arg(bind(node.args["substr"], ctx), "strpos")
    return _strict("strpos", (s, sub), T.BIGINT)


@_bind.register
def _(node: exp.Replace, ctx):
    args = tuple(string_arg(bind(node.args[k], ctx), "replace") for k in ("this", "expression", "replacement"))
    return _strict("replace", args, T.VARCHAR)


@_bind.register
def _(node: exp.SplitPart, ctx):
    s = string_arg(bind(node.this, ctx), "split_part")
    d = string_arg(bind(node.args["delimiter"], ctx), "split_part")
    i = int_arg(bind(node.args["part_index"], ctx), "split_part", T.BIGINT)
    return _strict("split_part", (s, d, i), T.VARCHAR)


# ---------------------------------------------------------- building strings
@_bind.register
def _(node: exp.Pad, ctx):
    fn = "lpad" if node.args.get("is_left") else "rpad"
    if node.args.get("fill_pattern") is None:
        raise BinderError(f"{fn} takes 3 arguments (string, length, fill)")
    s = string_arg(bind(node.this, ctx), fn)
    n = int_arg(bind(node.expression, ctx), fn, T.INTEGER)
    fill = string_arg(bind(node.args["fill_pattern"], ctx), fn)
    return _strict(fn, (s, n, fill), T.VARCHAR)


def _string_and_count(fn: str, key: str):
    def bind_it(node, ctx):
        s = string_arg(bind(node.this, ctx), fn)
        n = int_arg(bind(node.args[key], ctx), fn, T.BIGINT)
        return _strict(fn, (s, n), T.VARCHAR)
    return bind_it


_bind.register(exp.Left)(_string_and_count("left", "expression"))
_bind.register(exp.Right)(_string_and_count("right", "expression"))
_bind.register(exp.Repeat)(_string_and_count("repeat", "times"))


@_bind.register
def _(node: exp.ConcatWs, ctx):
    args = [bind(e, ctx) for e in node.expressions]
    if len(args) < 2:
        raise BinderError("concat_ws takes a separator and at least one value")
    sep = string_arg(args[0], "concat_ws")
    if _is_null(sep):
        return Literal(None, T.VARCHAR)
    values = tuple(Literal(None, T.VARCHAR) if _is_null(a) else a for a in args[1:])
    return Call("concat_ws", (sep, *values), T.VARCHAR)


@_bind.register
def _(node: exp.Chr, ctx):
    if node.args.get("charset") or len(node.expressions) != 1:
        raise NotSupported("chr with a character set or several arguments")
    n = int_arg(bind(node.expressions[0], ctx), "chr", T.INTEGER)
    return _strict("chr", (n,), T.VARCHAR)


# ------------------------------------------------------------- one string in
def _string_fn(fn, out_type=T.VARCHAR):
    def bind_it(node, ctx):
        return _strict(fn, (string_arg(bind(node.this, ctx), fn.upper()),), out_type)
    return bind_it


def _anonymous_string_fn(fn, out_type):
    def bind_it(node, ctx):
        if len(node.expressions) != 1:
            raise BinderError(f"{node.name}() takes 1 argument, got {len(node.expressions)}")
        return _strict(fn, (string_arg(bind(node.expressions[0], ctx), node.name),), out_type)
    return bind_it


_bind.register(exp.Upper)(_string_fn("upper"))
_bind.register(exp.Lower)(_string_fn("lower"))
_bind.register(exp.Length)(_string_fn("length", T.BIGINT))
_bind.register(exp.BitLength)(_string_fn("bit_length", T.BIGINT))
_bind.register(exp.Reverse)(_string_fn("reverse"))
_bind.register(exp.Ascii)(_string_fn("ascii", T.INTEGER))
_bind.register(exp.Unicode)(_string_fn("unicode", T.INTEGER))
_bind.register(exp.MD5)(_string_fn("md5"))
ANONYMOUS["strlen"] = _anonymous_string_fn("strlen", T.BIGINT)
ANONYMOUS["ord"] = _anonymous_string_fn("unicode", T.INTEGER)


def _octet_length(node, ctx):
    raise TypeMismatch("octet_length takes BLOB or BIT, not VARCHAR (use strlen for the bytes of a string)")


ANONYMOUS["octet_length"] = _octet_length


@_bind.register
def _(node: exp.Initcap, ctx):
    raise BinderError("Scalar Function with name initcap does not exist! (DuckDB has no initcap)")


@_bind.register
def _(node: exp.Trim, ctx):
    if node.args.get("collation") is not None:
        raise NotSupported("TRIM with a collation")
    pos = (node.args.get("position") or "BOTH").upper()
    fn = {"BOTH": "trim", "LEADING": "ltrim", "TRAILING": "rtrim"}[pos]
    s = string_arg(bind(node.this, ctx), fn.upper())
    chars = node.args.get("expression")
    if chars is None:
        return _strict(fn, (s,), T.VARCHAR)
    return _strict(fn + "_chars", (s, string_arg(bind(chars, ctx), fn.upper())), T.VARCHAR)


# -------------------------------------------------------- substring, concat
@_bind.register
def _(node: exp.Substring, ctx):
    v = string_arg(bind(node.this, ctx), "SUBSTRING")
    start, length = node.args.get("start"), node.args.get("length")
    s = bind(start, ctx) if start is not None else Literal(1, T.BIGINT)
    n = bind(length, ctx) if length is not None else None
    for e, what in ((s, "start"), (n, "length")):
        if e is not None and not (e.type.is_integer or e.type.kind == "NULL"):
            raise TypeMismatch(f"Type mismatch: SUBSTRING {what} must be an integer, got {ty.show(e)} of type {e.type}")
    if isinstance(s, Literal) and (n is None or isinstance(n, Literal)) and s.value is not None \
            and (n is None or n.value is not None):
        return Call("substring", (v,), T.VARCHAR, (s.value, None if n is None else n.value))
    args = (v, ty.cast(s, T.BIGINT)) + (() if n is None else (ty.cast(n, T.BIGINT),))
    return Call("substring", args, T.VARCHAR)


@_bind.register
def _(node: exp.DPipe, ctx):
    return Call("concat", (bind(node.this, ctx), bind(node.expression, ctx)), T.VARCHAR, (False,))


@_bind.register
def _(node: exp.Concat, ctx):
    args = tuple(bind(e, ctx) for e in node.expressions)
    return Call("concat", args, T.VARCHAR, (bool(node.args.get("coalesce")),))
