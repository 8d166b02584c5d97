"""The string functions and operators of the registry: their binding and
type rules (DuckDB's argument types, result types and binder errors) and
their evaluators.

A constant argument after the first reaches most evaluators as a Python
value (:data:`~glint.functions.registry.CONSTANTS`), so that work on it (a
pattern, a delimiter) is done once, against each dictionary entry.

>>> from glint.functions.registry import CallSite
>>> s = Literal("abc", T.VARCHAR)
>>> _bind_regexp_replace([s, Literal("b", T.VARCHAR), Literal("x", T.VARCHAR), Literal("g", T.VARCHAR)],
...                      CallSite("REGEXP_REPLACE"))
regexp_replace('abc', 'b', 'x', 'g')
>>> _bind_like([s, Literal("a%", T.VARCHAR)], CallSite("LIKE", {"negate": True}))
not(like('abc', 'a%', None, False))
"""

from __future__ import annotations

from glint.columnar import types as T
from glint.errors import BinderError, ExecutionError, NotSupported, TypeMismatch
from glint.functions.registry import CONSTANTS, OPERATOR, SCALAR, CallSite, Function
from glint.functions.strings import core as S
from glint.functions.strings import regex as R
from glint.functions.strings import text_build as B
from glint.functions.strings import text_search as Q
from glint.functions.strings.like import escape_byte, like, like_rows
from glint.functions.strings.regex_syntax import Regex, parse_options
from glint.plan import typing as ty
from glint.plan.expr import Call, Expr, Literal


# ------------------------------------------------------------------ argument rules
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


def is_null(e: Expr) -> bool:
    return isinstance(e, Literal) and e.value is None


def strict_call(fn: str, args: tuple, out: T.DataType, params: tuple = ()) -> Expr:
    """Call(fn, args), or a NULL of type out when an argument is a NULL literal."""
    if any(is_null(a) for a in args):
        return Literal(None, out)
    return Call(fn, args, out, params)


def _required(args, i: int, message: str) -> Expr:
    """Argument i, which the function cannot do without (read when the rule gets to it)."""
    if i >= len(args) or args[i] is None:
        raise BinderError(message)
    return args[i]


def _arity(args, site: CallSite, n: int) -> None:
    if len(args) != n:
        raise BinderError(f"{site.name}() takes {n} argument{'s' if n != 1 else ''}, got {len(args)}")


# ------------------------------------------------------------------ LIKE
def _bind_like(args, site: CallSite) -> Expr:
    """s [NOT] [I]LIKE p [ESCAPE e]: options ``case_insensitive``, ``negate``, ``escape``."""
    ci, escape = site.option("case_insensitive", False), site.option("escape")
    v = string_arg(args[0], "LIKE")
    pat = string_arg(args[1], "LIKE")
    escape_byte(escape)
    if is_null(v) or is_null(pat):
        return Literal(None, T.BOOLEAN)
    if isinstance(pat, Literal):
        out = Call("like", (v,), T.BOOLEAN, (pat.value, escape, ci))
    else:
        out = Call("like_rows", (v, pat), T.BOOLEAN, (escape, ci))
    return Call("not", (out,), T.BOOLEAN) if site.option("negate") else out


def _bind_like_escape(ci: bool, negate: bool):
    """like_escape(s, p, e) and its ilike / not_ variants."""
    name = ("not_" if negate else "") + ("ilike" if ci else "like") + "_escape"

    def bind(args, site):
        if len(args) != 3:
            raise BinderError(f"{name} takes 3 arguments, got {len(args)}")
        esc = args[2]
        if is_null(esc):
            return Literal(None, T.BOOLEAN)
        if not (isinstance(esc, Literal) and isinstance(esc.value, str)):
            raise NotSupported(f"{name} with a non-constant escape character")
        options = {"case_insensitive": ci, "negate": negate, "escape": esc.value}
        return _bind_like(args, CallSite("LIKE", options, site.fold))

    return name, bind


def _like(e: Call, cols):
    pattern, escape, ci = e.params
    return like(cols[0], pattern, escape, ci)


def _like_rows(e: Call, cols):
    escape, ci = e.params
    return like_rows(cols[0], cols[1], escape, ci)


# ------------------------------------------------------------------ regular expressions
def _options(args, i: int, allow_global: bool) -> str:
    """The constant option string, argument i (validated as DuckDB validates it)."""
    o = args[i] if len(args) > i else None
    if o is None:
        return ""
    if not isinstance(o, Literal):
        raise ExecutionError("Invalid Input Error: Regex options field must be a constant")
    if o.value is not None and not isinstance(o.value, str):
        raise TypeMismatch(f"Type mismatch: regex options must be VARCHAR, got {o.type}")
    parse_options(o.value, allow_global)
    return o.value


def _pattern(e: Expr, fn: str, options: str) -> Expr:
    """The pattern argument; a constant one is validated now (DuckDB rejects
    a bad constant pattern even when no row reaches it)."""
    p = string_arg(e, fn)
    if isinstance(p, Literal) and p.value is not None:
        Regex(p.value, parse_options(options, True))
    return p


def _bind_regexp_match(full: bool):
    fn = "regexp_full_match" if full else "regexp_matches"

    def bind(args, site):
        options = _options(args, 2, False)
        s = string_arg(args[0], fn)
        return strict_call("regexp_matches", (s, _pattern(args[1], fn, options)), T.BOOLEAN, (options, full))

    return bind


def _bind_regexp_replace(args, site):
    options = _options(args, 3, True)
    s = string_arg(args[0], "regexp_replace")
    p = _pattern(args[1], "regexp_replace", options)
    r = string_arg(
        _required(args, 2, "regexp_replace takes 3 or 4 arguments (string, pattern, replacement[, options])"),
        "regexp_replace",
    )
    return strict_call("regexp_replace", (s, p, r), T.VARCHAR, (options,))


def _bind_regexp_extract(args, site):
    options = _options(args, 3, False)
    s = string_arg(args[0], "regexp_extract")
    p = _pattern(args[1], "regexp_extract", options)
    group = 0
    gv = args[2] if len(args) > 2 else None
    if gv is not None:
        if not isinstance(gv, Literal):
            raise ExecutionError("Invalid Input Error: Group specification field must be a constant!")
        if gv.value is not None and gv.type.kind != "INTEGER":
            raise TypeMismatch(f"Type mismatch: regexp_extract group must be INTEGER, got {gv.type}")
        group = gv.value
        if group is not None and not 0 <= group <= 9:
            raise ExecutionError("Invalid Input Error: Group index must be between 0 and 9!")
    return strict_call("regexp_extract", (s, p), T.VARCHAR, (group, options))


def _regexp_matches(e: Call, args):
    options, full = e.params
    return R.regexp_matches(args[0], args[1], R.parse_options(options), full)


def _regexp_replace(e: Call, args):
    (options,) = e.params
    return R.regexp_replace(args[0], args[1], args[2], R.parse_options(options, allow_global=True))


def _regexp_extract(e: Call, args):
    group, options = e.params
    return R.regexp_extract(args[0], args[1], group, R.parse_options(options))


# ------------------------------------------------------------------ search functions
def _bind_two_strings(fn: str, out: T.DataType):
    def bind(args, site):
        _arity(args, site, 2)
        a = string_arg(args[0], fn)
        b = string_arg(args[1], fn)
        return strict_call(fn, (a, b), out)

    return bind


def _bind_replace(args, site):
    message = "replace takes 3 arguments (string, from, to)"
    return strict_call(
        "replace", tuple(string_arg(_required(args, i, message), "replace") for i in range(3)), T.VARCHAR
    )


def _bind_split_part(args, site):
    message = "split_part takes 3 arguments (string, delimiter, index)"
    s = string_arg(args[0], "split_part")
    d = string_arg(_required(args, 1, message), "split_part")
    i = int_arg(_required(args, 2, message), "split_part", T.BIGINT)
    return strict_call("split_part", (s, d, i), T.VARCHAR)


# ------------------------------------------------------------------ building strings
def _bind_pad(fn: str):
    def bind(args, site):
        if len(args) < 3:
            raise BinderError(f"{fn} takes 3 arguments (string, length, fill)")
        s = string_arg(args[0], fn)
        n = int_arg(args[1], fn, T.INTEGER)
        fill = string_arg(args[2], fn)
        return strict_call(fn, (s, n, fill), T.VARCHAR)

    return bind


def _bind_string_and_count(fn: str):
    def bind(args, site):
        s = string_arg(args[0], fn)
        n = int_arg(args[1], fn, T.BIGINT)
        return strict_call(fn, (s, n), T.VARCHAR)

    return bind


def _bind_concat_ws(args, site):
    args = list(args)
    if len(args) < 2:
        raise BinderError("concat_ws takes a separator and at least one value")
    sep = string_arg(args[0], "concat_ws")
    if is_null(sep):
        return Literal(None, T.VARCHAR)
    values = tuple(Literal(None, T.VARCHAR) if is_null(a) else a for a in args[1:])
    return Call("concat_ws", (sep, *values), T.VARCHAR)


def _bind_chr(args, site):
    n = int_arg(args[0], "chr", T.INTEGER)
    return strict_call("chr", (n,), T.VARCHAR)


def _bind_one_string(fn: str, out: T.DataType = T.VARCHAR):
    """A function of one string; errors name it as the statement does."""

    def bind(args, site):
        _arity(args, site, 1)
        return strict_call(fn, (string_arg(args[0], site.name),), out)

    return bind


def _bind_trim(fn: str):
    """trim(s [, characters]) and its ltrim / rtrim forms (TRIM(LEADING ...))."""

    def bind(args, site):
        s = string_arg(args[0], fn.upper())
        chars = args[1] if len(args) > 1 else None
        if chars is None:
            return strict_call(fn, (s,), T.VARCHAR)
        return strict_call(fn + "_chars", (s, string_arg(chars, fn.upper())), T.VARCHAR)

    return bind


# ------------------------------------------------------------------ substring, concat
def _bind_substring(args, site):
    v = string_arg(args[0], "SUBSTRING")
    start = args[1] if len(args) > 1 else None
    n = args[2] if len(args) > 2 else None
    s = start if start is not None else Literal(1, T.BIGINT)
    for e, what in ((s, "start"), (n, "length")):
        if e is not None and not (e.type.is_integer or e.type.kind == "NULL"):
            raise TypeMismatch(f"Type mismatch: SUBSTRING {what} must be an integer, got {ty.show(e)} of type {e.type}")
    if (
        isinstance(s, Literal)
        and (n is None or isinstance(n, Literal))
        and s.value is not None
        and (n is None or n.value is not None)
    ):
        return Call("substring", (v,), T.VARCHAR, (s.value, None if n is None else n.value))
    args = (v, ty.cast(s, T.BIGINT)) + (() if n is None else (ty.cast(n, T.BIGINT),))
    return Call("substring", args, T.VARCHAR)


def _substring(e: Call, cols):
    if e.params:
        return S.substring(cols[0], *e.params)
    a, start, *length = cols
    return S.substring(a, start, length[0] if length else None)


def _bind_concat(args, site):
    """concat(...) (NULL as the empty string) or a || b (NULL in, NULL out):
    option ``null_is_empty``."""
    return Call("concat", tuple(args), T.VARCHAR, (bool(site.option("null_is_empty")),))


# ------------------------------------------------------------------ evaluators
def _unary(fn):
    return lambda e, cols: fn(cols[0])


def _with_args(fn):
    """fn(column, argument, ...) for a Call with the string first."""
    return lambda e, args: fn(*args)


def _pad(left: bool):
    return lambda e, args: B.pad(args[0], args[1], args[2], left)


def _trim_chars(side: str):
    return lambda e, args: Q.trim_chars(args[0], args[1], side)


# ------------------------------------------------------------------ the functions
def _scalar(name, signature, doc, bind, evaluate, takes="columns", aliases=(), strict=True):
    return Function(
        name,
        SCALAR,
        "strings",
        signature,
        doc,
        aliases=aliases,
        bind=bind,
        evaluate=evaluate,
        takes=takes,
        strict=strict,
    )


def _internal(name, signature, doc, evaluate, takes="columns", strict=True):
    return Function(
        name, SCALAR, "strings", signature, doc, evaluate=evaluate, takes=takes, strict=strict, internal=True
    )


_LIKE_ESCAPES = [(ci, negate, *_bind_like_escape(ci, negate)) for ci in (False, True) for negate in (False, True)]

FUNCTIONS = [
    Function(
        "like",
        OPERATOR,
        "strings",
        "s [NOT] LIKE p [ESCAPE e], s [NOT] ILIKE p [ESCAPE e]",
        "Whether s matches the pattern (% any characters, _ one); ILIKE ignores case.",
        bind=_bind_like,
        evaluate=_like,
        strict=True,
    ),
    _internal(
        "like_rows",
        "like_rows(VARCHAR, VARCHAR pattern per row) -> BOOLEAN",
        "LIKE with a pattern that is not a constant.",
        _like_rows,
    ),
    *(
        Function(
            name,
            SCALAR,
            "strings",
            f"{name}(VARCHAR, VARCHAR pattern, VARCHAR escape) -> BOOLEAN",
            f"s {'NOT ' if negate else ''}{'ILIKE' if ci else 'LIKE'} p ESCAPE e.",
            bind=bind,
            rewrites_to=("like", "like_rows", "not"),
        )
        for ci, negate, name, bind in _LIKE_ESCAPES
    ),
    Function(
        "concat",
        SCALAR,
        "strings",
        "concat(ANY, ...) -> VARCHAR; a || b",
        "The arguments as text, joined; concat skips NULLs, || gives NULL for a NULL.",
        bind=_bind_concat,
        evaluate=lambda e, cols: S.concat(cols, null_is_empty=e.params[0]),
    ),
    _scalar(
        "concat_ws",
        "concat_ws(VARCHAR separator, ANY, ...) -> VARCHAR",
        "The values that are not NULL as text, joined by the separator.",
        _bind_concat_ws,
        lambda e, cols: B.concat_ws(cols[0], cols[1:]),
        strict=False,
    ),
    _scalar(
        "substring",
        "substring(VARCHAR, BIGINT start [, BIGINT length]) -> VARCHAR",
        "The characters from start (1 is the first; negative counts from the end), length of them.",
        _bind_substring,
        _substring,
        aliases=("substr",),
    ),
    _scalar(
        "upper",
        "upper(VARCHAR) -> VARCHAR",
        "Upper case.",
        _bind_one_string("upper"),
        _unary(S.upper),
        aliases=("ucase",),
    ),
    _scalar(
        "lower",
        "lower(VARCHAR) -> VARCHAR",
        "Lower case.",
        _bind_one_string("lower"),
        _unary(S.lower),
        aliases=("lcase",),
    ),
    _scalar(
        "length",
        "length(VARCHAR) -> BIGINT",
        "Number of characters (Unicode code points).",
        _bind_one_string("length", T.BIGINT),
        _unary(S.length),
        aliases=("len", "char_length", "character_length"),
    ),
    _scalar(
        "strlen",
        "strlen(VARCHAR) -> BIGINT",
        "Number of bytes.",
        _bind_one_string("strlen", T.BIGINT),
        _unary(B.byte_length),
    ),
    _scalar(
        "bit_length",
        "bit_length(VARCHAR) -> BIGINT",
        "Number of bits.",
        _bind_one_string("bit_length", T.BIGINT),
        lambda e, cols: B.byte_length(cols[0], bits=True),
    ),
    _scalar(
        "reverse",
        "reverse(VARCHAR) -> VARCHAR",
        "The characters in reverse order.",
        _bind_one_string("reverse"),
        _unary(B.reverse),
    ),
    _scalar(
        "ascii",
        "ascii(VARCHAR) -> INTEGER",
        "The code point of the first character.",
        _bind_one_string("ascii", T.INTEGER),
        _unary(B.ascii),
    ),
    _scalar(
        "unicode",
        "unicode(VARCHAR) -> INTEGER",
        "The code point of the first character (-1 for '').",
        _bind_one_string("unicode", T.INTEGER),
        _unary(B.unicode),
        aliases=("ord",),
    ),
    _scalar(
        "md5", "md5(VARCHAR) -> VARCHAR", "The MD5 digest, in hexadecimal.", _bind_one_string("md5"), _unary(B.md5)
    ),
    _scalar("chr", "chr(INTEGER) -> VARCHAR", "The character of a code point.", _bind_chr, _unary(B.chr_)),
    _scalar(
        "trim",
        "trim(VARCHAR [, VARCHAR characters]) -> VARCHAR; TRIM([BOTH] [chars FROM] s)",
        "Without the spaces (or the given characters) at both ends.",
        _bind_trim("trim"),
        _unary(S.trim),
    ),
    _scalar(
        "ltrim",
        "ltrim(VARCHAR [, VARCHAR characters]) -> VARCHAR; TRIM(LEADING [chars FROM] s)",
        "Without the spaces (or the given characters) at the start.",
        _bind_trim("ltrim"),
        _unary(S.ltrim),
    ),
    _scalar(
        "rtrim",
        "rtrim(VARCHAR [, VARCHAR characters]) -> VARCHAR; TRIM(TRAILING [chars FROM] s)",
        "Without the spaces (or the given characters) at the end.",
        _bind_trim("rtrim"),
        _unary(S.rtrim),
    ),
    _internal(
        "trim_chars",
        "trim_chars(VARCHAR, VARCHAR characters) -> VARCHAR",
        "trim(s, characters).",
        _trim_chars("both"),
        CONSTANTS,
    ),
    _internal(
        "ltrim_chars",
        "ltrim_chars(VARCHAR, VARCHAR characters) -> VARCHAR",
        "ltrim(s, characters).",
        _trim_chars("left"),
        CONSTANTS,
    ),
    _internal(
        "rtrim_chars",
        "rtrim_chars(VARCHAR, VARCHAR characters) -> VARCHAR",
        "rtrim(s, characters).",
        _trim_chars("right"),
        CONSTANTS,
    ),
    _scalar(
        "regexp_matches",
        "regexp_matches(VARCHAR, VARCHAR pattern [, VARCHAR options]) -> BOOLEAN",
        "Whether the pattern (RE2) matches part of the string.",
        _bind_regexp_match(False),
        _regexp_matches,
        CONSTANTS,
    ),
    Function(
        "regexp_full_match",
        SCALAR,
        "strings",
        "regexp_full_match(VARCHAR, VARCHAR pattern [, VARCHAR options]) -> BOOLEAN; s ~ p; s SIMILAR TO p",
        "Whether the pattern (RE2) matches the whole string.",
        bind=_bind_regexp_match(True),
        rewrites_to=("regexp_matches",),
    ),
    _scalar(
        "regexp_replace",
        "regexp_replace(VARCHAR, VARCHAR pattern, VARCHAR replacement [, VARCHAR options]) -> VARCHAR",
        "The first match (every match with option 'g') replaced; \\1 refers to a group.",
        _bind_regexp_replace,
        _regexp_replace,
        CONSTANTS,
    ),
    _scalar(
        "regexp_extract",
        "regexp_extract(VARCHAR, VARCHAR pattern [, INTEGER group [, VARCHAR options]]) -> VARCHAR",
        "The first match's group (0: the whole match), '' when there is none.",
        _bind_regexp_extract,
        _regexp_extract,
        CONSTANTS,
    ),
    _scalar(
        "starts_with",
        "starts_with(VARCHAR, VARCHAR) -> BOOLEAN",
        "Whether the string starts with the other.",
        _bind_two_strings("starts_with", T.BOOLEAN),
        _with_args(Q.starts_with),
        CONSTANTS,
        aliases=("prefix",),
    ),
    _scalar(
        "ends_with",
        "ends_with(VARCHAR, VARCHAR) -> BOOLEAN",
        "Whether the string ends with the other.",
        _bind_two_strings("ends_with", T.BOOLEAN),
        _with_args(Q.ends_with),
        CONSTANTS,
        aliases=("suffix",),
    ),
    _scalar(
        "contains",
        "contains(VARCHAR, VARCHAR) -> BOOLEAN",
        "Whether the other string occurs in it.",
        _bind_two_strings("contains", T.BOOLEAN),
        _with_args(Q.contains),
        CONSTANTS,
    ),
    _scalar(
        "strpos",
        "strpos(VARCHAR, VARCHAR) -> BIGINT",
        "Position of the first occurrence of the other string (1 is the first character; 0: none).",
        _bind_two_strings("strpos", T.BIGINT),
        _with_args(Q.strpos),
        CONSTANTS,
        aliases=("instr", "position"),
    ),
    _scalar(
        "replace",
        "replace(VARCHAR, VARCHAR from, VARCHAR to) -> VARCHAR",
        "Every occurrence replaced.",
        _bind_replace,
        _with_args(Q.replace),
        CONSTANTS,
    ),
    _scalar(
        "split_part",
        "split_part(VARCHAR, VARCHAR delimiter, BIGINT index) -> VARCHAR",
        "The index-th piece (1 is the first; negative counts from the end), '' when there is none.",
        _bind_split_part,
        _with_args(Q.split_part),
        CONSTANTS,
    ),
    _scalar(
        "lpad",
        "lpad(VARCHAR, INTEGER length, VARCHAR fill) -> VARCHAR",
        "Padded on the left with the fill to length characters (cut to length when longer).",
        _bind_pad("lpad"),
        _pad(True),
        CONSTANTS,
    ),
    _scalar(
        "rpad",
        "rpad(VARCHAR, INTEGER length, VARCHAR fill) -> VARCHAR",
        "Padded on the right with the fill to length characters (cut to length when longer).",
        _bind_pad("rpad"),
        _pad(False),
        CONSTANTS,
    ),
    _scalar(
        "left",
        "left(VARCHAR, BIGINT n) -> VARCHAR",
        "The first n characters (all but the last -n).",
        _bind_string_and_count("left"),
        _with_args(B.left),
        CONSTANTS,
    ),
    _scalar(
        "right",
        "right(VARCHAR, BIGINT n) -> VARCHAR",
        "The last n characters (all but the first -n).",
        _bind_string_and_count("right"),
        _with_args(B.right),
        CONSTANTS,
    ),
    _scalar(
        "repeat",
        "repeat(VARCHAR, BIGINT n) -> VARCHAR",
        "The string n times.",
        _bind_string_and_count("repeat"),
        _with_args(B.repeat),
        CONSTANTS,
    ),
]
