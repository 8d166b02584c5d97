"""Which sqlglot node is which registry function, and how the node's
arguments become the function's positional arguments and constant options.

sqlglot parses most functions into a node type of its own (``upper(s)`` is
``exp.Upper``, ``instr(s, t)`` is ``exp.StrPosition``) and leaves the rest
anonymous (``exp.Anonymous``, found in the registry by name). The binder
(glint.sql.bind_expr) binds a call's arguments as the function's bind rule
reads them and calls the rule (glint.functions.registry).

>>> import sqlglot
>>> node = sqlglot.parse_one("SELECT instr(s, 'a')", read="duckdb").expressions[0]
>>> call = SCALAR_NODES[type(node)]
>>> call.function(node), [a.sql() for a in call.arguments(node)]
('strpos', ['s', "'a'"])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, GlintError, NotSupported, TypeMismatch
from glint.functions.dates.timestamps import PARTS
from glint.functions.registry import OPERATOR, SCALAR
from glint.plan.expr import Expr, Literal

# binds one argument node in a way of its own: (node, expression context, bind) -> expression
ArgumentBinder = Callable[[exp.Expression, object, Callable], Expr]


@dataclass(frozen=True, slots=True)
class NodeCall:
    """How a node type becomes a call of a registry function.

    ``name``: the function (or a function of the node choosing it);
    ``args``: the node's argument keys in positional order (``*key``: every
    expression of a list; an absent key is an absent argument);
    ``options``: the constant options the syntax gives; ``refuse``: an error
    for a form glint does not run, raised before anything is bound;
    ``binders``: arguments (by position) bound in a way of their own."""

    name: str | Callable[[exp.Expression], str]
    args: tuple[str, ...]
    kind: str = SCALAR
    options: Callable[[exp.Expression], dict] | None = None
    refuse: Callable[[exp.Expression], GlintError | None] | None = None
    binders: Mapping[int, ArgumentBinder] = field(default_factory=dict)

    def function(self, node: exp.Expression) -> str:
        return self.name if isinstance(self.name, str) else self.name(node)

    def arguments(self, node: exp.Expression) -> list:
        return argument_nodes(node, self.args)


def argument_nodes(node: exp.Expression, keys: tuple[str, ...]) -> list:
    """A node's arguments ``keys`` in positional order (``*key``: every
    expression of a list; None for an absent one; none after the last present)."""
    out = []
    for key in keys:
        if key.startswith("*"):
            out.extend(node.args.get(key[1:]) or [])
        else:
            out.append(node.args.get(key))
    while out and out[-1] is None:
        out.pop()
    return out


# ------------------------------------------------------------------ arguments bound in their own way
def part_argument(fn: str, refuse_list: bool = False) -> ArgumentBinder:
    """A date part: sqlglot reads date_trunc(x, ts) / date_diff(x, ...) with a
    column x as the unit named X, so a name that is no part but is a column is
    refused; other parts are bound (the function wants a constant string)."""

    def bind_part(node, ctx, bind):
        if refuse_list and isinstance(node, exp.Array):
            raise NotSupported(f"{fn} with a list of parts (a STRUCT result)")
        if not isinstance(node, exp.Var):
            return bind(node, ctx)
        name = node.name
        if name.lower() not in PARTS:
            try:
                ctx.scope.resolve(None, name)
            except BinderError:
                return Literal(name.lower(), T.VARCHAR)
            raise NotSupported(f"{fn} with a part that is not a constant string")
        return Literal(name, T.VARCHAR)

    return bind_part


def _interval_text(node, ctx, bind) -> Expr:
    """A string constant where an INTERVAL is expected ('1 day'): that INTERVAL."""
    if isinstance(node, exp.Literal) and node.is_string:
        node = exp.cast(node.copy(), exp.DataType.build("INTERVAL"))
    return bind(node, ctx)


def _column_not_unit(node, ctx, bind) -> Expr:
    """sqlglot reads time_bucket's third argument, a column name, as a unit (a Var)."""
    if isinstance(node, exp.Var):
        node = exp.Column(this=exp.to_identifier(node.name.lower()))  # sqlglot upper-cases a unit
    return bind(node, ctx)


def _extract_part(node, ctx, bind) -> Expr:
    """EXTRACT(part FROM x): the part as written."""
    return Literal(node.name, T.VARCHAR)


def _no_list(message: str) -> ArgumentBinder:
    def bind_it(node, ctx, bind):
        if isinstance(node, exp.Array):
            raise NotSupported(message)
        return bind(node, ctx)

    return bind_it


# arguments of calls by name bound in their own way: function -> position -> binder
ANONYMOUS_BINDERS: dict[str, dict[int, ArgumentBinder]] = {
    "date_part": {0: part_argument("date_part", refuse_list=True)},
    "date_sub": {0: part_argument("date_sub")},
}


# ------------------------------------------------------------------ refusals
def _unsupported_keys(fn: str, *keys: str):
    def refuse(node):
        for key in keys:
            if node.args.get(key) is not None:
                return NotSupported(f"{fn} with a {key} argument")
        return None

    return refuse


def _refuse_if(test: Callable[[exp.Expression], bool], error: type[GlintError], message: str):
    return lambda node: error(message) if test(node) else None


def _no_subquery_sides(node):
    for side in (node.this, node.expression):
        if isinstance(side, (exp.All, exp.Any)):
            return NotSupported(f"{type(side).__name__.upper()} subquery comparison")
    return None


_TRIM = {"BOTH": "trim", "LEADING": "ltrim", "TRAILING": "rtrim"}
_BINARY = ("this", "expression")
_UNARY = ("this",)


def _operators() -> dict:
    out = {}
    for cls, op in (
        (exp.Add, "add"),
        (exp.Sub, "sub"),
        (exp.Mul, "mul"),
        (exp.Div, "div"),
        (exp.IntDiv, "intdiv"),
        (exp.Mod, "mod"),
        (exp.And, "and"),
        (exp.Or, "or"),
    ):
        out[cls] = NodeCall(op, _BINARY, OPERATOR)
    for cls, op in ((exp.EQ, "eq"), (exp.NEQ, "ne"), (exp.LT, "lt"), (exp.LTE, "le"), (exp.GT, "gt"), (exp.GTE, "ge")):
        out[cls] = NodeCall(op, _BINARY, OPERATOR, refuse=_no_subquery_sides)
    out[exp.NullSafeEQ] = NodeCall("is_not_distinct", _BINARY, OPERATOR)
    out[exp.NullSafeNEQ] = NodeCall("is_distinct", _BINARY, OPERATOR)
    out[exp.Between] = NodeCall("between", ("this", "low", "high"), OPERATOR)
    out[exp.DPipe] = NodeCall("concat", _BINARY, options=lambda node: {"null_is_empty": False})
    for cls, ci in ((exp.Like, False), (exp.ILike, True)):
        out[cls] = NodeCall(
            "like",
            _BINARY,
            OPERATOR,
            options=lambda node, ci=ci: {"case_insensitive": ci, "negate": bool(node.args.get("negate"))},
        )
    return out


def _strings() -> dict:
    out = {
        exp.RegexpLike: NodeCall("regexp_matches", ("this", "expression", "flag")),
        exp.RegexpFullMatch: NodeCall("regexp_full_match", ("this", "expression", "options")),
        exp.SimilarTo: NodeCall("regexp_full_match", ("this", "expression", "options")),
        exp.RegexpReplace: NodeCall(
            "regexp_replace",
            ("this", "expression", "replacement", "modifiers"),
            refuse=_unsupported_keys("regexp_replace", "position", "occurrence"),
        ),
        exp.RegexpExtract: NodeCall(
            "regexp_extract",
            ("this", "expression", "group", "parameters"),
            refuse=_unsupported_keys("regexp_extract", "position", "occurrence"),
            binders={2: _no_list("regexp_extract with a list of group names (its result is a STRUCT)")},
        ),
        exp.StartsWith: NodeCall("starts_with", _BINARY),
        exp.EndsWith: NodeCall("ends_with", _BINARY),
        exp.Contains: NodeCall("contains", _BINARY),
        exp.StrPosition: NodeCall(
            "strpos", ("this", "substr"), refuse=_unsupported_keys("strpos", "position", "occurrence")
        ),
        exp.Replace: NodeCall("replace", ("this", "expression", "replacement")),
        exp.SplitPart: NodeCall("split_part", ("this", "delimiter", "part_index")),
        exp.Pad: NodeCall(
            lambda node: "lpad" if node.args.get("is_left") else "rpad", ("this", "expression", "fill_pattern")
        ),
        exp.Left: NodeCall("left", _BINARY),
        exp.Right: NodeCall("right", _BINARY),
        exp.Repeat: NodeCall("repeat", ("this", "times")),
        exp.ConcatWs: NodeCall("concat_ws", ("*expressions",)),
        exp.Chr: NodeCall(
            "chr",
            ("*expressions",),
            refuse=_refuse_if(
                lambda node: bool(node.args.get("charset")) or len(node.expressions) != 1,
                NotSupported,
                "chr with a character set or several arguments",
            ),
        ),
        exp.Trim: NodeCall(
            lambda node: _TRIM[(node.args.get("position") or "BOTH").upper()],
            ("this", "expression"),
            refuse=_refuse_if(
                lambda node: node.args.get("collation") is not None, NotSupported, "TRIM with a collation"
            ),
        ),
        exp.Substring: NodeCall("substring", ("this", "start", "length")),
        exp.Concat: NodeCall(
            "concat", ("*expressions",), options=lambda node: {"null_is_empty": bool(node.args.get("coalesce"))}
        ),
    }
    for cls, fn in (
        (exp.Upper, "upper"),
        (exp.Lower, "lower"),
        (exp.Length, "length"),
        (exp.BitLength, "bit_length"),
        (exp.Reverse, "reverse"),
        (exp.Ascii, "ascii"),
        (exp.Unicode, "unicode"),
        (exp.MD5, "md5"),
    ):
        out[cls] = NodeCall(fn, _UNARY)
    return out


def _unix_scale(node) -> str | None:
    scale = node.args.get("scale")
    return scale.name if scale is not None else None


def _dates() -> dict:
    out = {
        exp.Extract: NodeCall("date_part", _BINARY, binders={0: _extract_part}),
        # epoch_ms(x) (scale 3), make_timestamp(micros) (scale 6), to_timestamp(x) (no scale)
        exp.UnixToTime: NodeCall(
            lambda node: "epoch_ms" if _unix_scale(node) == "3" else "make_timestamp",
            _UNARY,
            options=lambda node: {"unix_scale": _unix_scale(node), "time_zone": node.args.get("zone") is not None},
        ),
        exp.TimestampFromParts: NodeCall(
            "make_timestamp",
            ("year", "month", "day", "hour", "min", "sec"),
            refuse=_refuse_if(
                lambda node: (
                    any(node.args.get(k) is None for k in ("year", "month", "day", "hour", "min", "sec"))
                    or node.args.get("zone") is not None
                    or node.args.get("milli") is not None
                ),
                NotSupported,
                "make_timestamp with other than six parts",
            ),
        ),
        exp.DateFromParts: NodeCall(
            "make_date",
            ("year", "month", "day"),
            refuse=_refuse_if(
                lambda node: any(node.args.get(k) is None for k in ("year", "month", "day")),
                NotSupported,
                "make_date with other than three parts (year, month, day)",
            ),
        ),
        # sqlglot reads date_trunc as DateTrunc when it sees a DATE argument, TimestampTrunc otherwise
        exp.TimestampTrunc: NodeCall("date_trunc", ("unit", "this"), binders={0: part_argument("date_trunc")}),
        exp.DateTrunc: NodeCall("date_trunc", ("unit", "this"), binders={0: part_argument("date_trunc")}),
        exp.DateDiff: NodeCall(
            "date_diff",
            ("unit", "expression", "this"),
            binders={0: part_argument("date_diff")},
            refuse=_refuse_if(
                lambda node: node.args.get("unit") is None, BinderError, "date_diff needs a part, a start and an end"
            ),
        ),
        exp.DateAdd: NodeCall("date_add", _BINARY),
        exp.TimeToStr: NodeCall("strftime", ("this", "format")),
        exp.StrToTime: NodeCall(
            "strptime",
            ("this", "format"),
            refuse=_refuse_if(
                lambda node: isinstance(node.args.get("format"), exp.Array),
                NotSupported,
                "strptime with a list of formats",
            ),
        ),
        exp.DateBin: NodeCall(
            "time_bucket", ("this", "expression", "unit"), binders={0: _interval_text, 2: _column_not_unit}
        ),
        exp.Monthname: NodeCall("monthname", _UNARY),
        exp.Dayname: NodeCall("dayname", _UNARY),
        exp.LastDay: NodeCall(
            "last_day",
            _UNARY,
            refuse=_refuse_if(lambda node: node.args.get("unit") is not None, NotSupported, "last_day with a unit"),
        ),
    }
    for cls, fn in (
        (exp.Year, "year"),
        (exp.Month, "month"),
        (exp.Day, "day"),
        (exp.Quarter, "quarter"),
        (exp.DayOfWeek, "dayofweek"),
        (exp.DayOfMonth, "dayofmonth"),
        (exp.DayOfYear, "dayofyear"),
        (exp.WeekOfYear, "weekofyear"),
        (exp.Week, "week"),
        (exp.DayOfWeekIso, "isodow"),
        (exp.Hour, "hour"),
        (exp.Minute, "minute"),
        (exp.Second, "second"),
        (exp.TimeToUnix, "epoch"),
    ):
        out[cls] = NodeCall(fn, _UNARY)
    return out


def _log_function(node) -> str:
    """sqlglot reads log10(x) and log2(x) as log(10, x) and log(2, x)."""
    base = node.this
    if node.args.get("expression") is not None and isinstance(base, exp.Literal) and not base.is_string:
        return {"10": "log10", "2": "log2"}.get(base.this, "log")
    return "log"


def _math() -> dict:
    out = {
        exp.Abs: NodeCall("abs", _UNARY),
        exp.Round: NodeCall("round", ("this", "decimals")),
        exp.Trunc: NodeCall("trunc", ("this", "decimals")),
        exp.Floor: NodeCall("floor", ("this", "decimals")),
        exp.Ceil: NodeCall("ceil", ("this", "decimals")),
        exp.Log: NodeCall(_log_function, _BINARY),
        exp.Pow: NodeCall("pow", _BINARY),
        exp.Atan2: NodeCall("atan2", _BINARY),
        exp.Atan: NodeCall("atan", _BINARY),
        exp.Pi: NodeCall("pi", ()),
    }
    for cls, fn in (
        (exp.Sign, "sign"),
        (exp.Sqrt, "sqrt"),
        (exp.Cbrt, "cbrt"),
        (exp.Exp, "exp"),
        (exp.Ln, "ln"),
        (exp.Degrees, "degrees"),
        (exp.Radians, "radians"),
        (exp.Sin, "sin"),
        (exp.Cos, "cos"),
        (exp.Tan, "tan"),
        (exp.Cot, "cot"),
        (exp.Asin, "asin"),
        (exp.Acos, "acos"),
        (exp.Sinh, "sinh"),
        (exp.Cosh, "cosh"),
        (exp.Tanh, "tanh"),
        (exp.Asinh, "asinh"),
        (exp.Acosh, "acosh"),
        (exp.Atanh, "atanh"),
        (exp.Factorial, "factorial"),
        (exp.IsNan, "isnan"),
        (exp.IsInf, "isinf"),
    ):
        out[cls] = NodeCall(fn, _UNARY)
    return out


def _others() -> dict:
    return {
        exp.Coalesce: NodeCall("coalesce", ("this", "*expressions")),
        exp.Greatest: NodeCall("greatest", ("this", "*expressions")),
        exp.Least: NodeCall("least", ("this", "*expressions")),
        exp.Nullif: NodeCall("nullif", _BINARY),
        exp.If: NodeCall("if", ("this", "true", "false")),
        exp.Typeof: NodeCall("typeof", _UNARY),
    }


# node type -> the scalar function or operator it calls
SCALAR_NODES: dict[type, NodeCall] = {**_operators(), **_strings(), **_dates(), **_math(), **_others()}

# functions glint refuses, by node type and (calls by name) by name: (error, message)
REFUSED_NODES: dict[type, tuple[type[GlintError], str]] = {
    exp.RegexpILike: (BinderError, "Scalar Function with name ~* does not exist! (use regexp_matches(s, p, 'i'))"),
    exp.Initcap: (BinderError, "Scalar Function with name initcap does not exist! (DuckDB has no initcap)"),
}
REFUSED_NAMES: dict[str, tuple[type[GlintError], str]] = {
    "octet_length": (
        TypeMismatch,
        ("octet_length takes BLOB or BIT, not VARCHAR (use strlen for the bytes of a string)"),
    ),
    "age": (NotSupported, "age (its result is an INTERVAL)"),
    "make_timestamp_ms": (NotSupported, "make_timestamp_ms"),
    "make_timestamp_ns": (NotSupported, "make_timestamp_ns (TIMESTAMP_NS)"),
    "make_timestamptz": (NotSupported, "make_timestamptz (TIMESTAMP WITH TIME ZONE)"),
}

# node type -> the aggregate function it calls
AGGREGATE_NODES: dict[type, str] = {
    exp.Count: "count",
    exp.Sum: "sum",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
    exp.Variance: "var_samp",
    exp.VariancePop: "var_pop",
    exp.Stddev: "stddev_samp",
    exp.StddevSamp: "stddev_samp",
    exp.StddevPop: "stddev_pop",
    exp.LogicalAnd: "bool_and",
    exp.LogicalOr: "bool_or",
    exp.GroupConcat: "string_agg",
    exp.Median: "median",
    exp.PercentileCont: "quantile_cont",
    exp.PercentileDisc: "quantile_disc",
    exp.Quantile: "quantile_disc",
    exp.ArgMax: "arg_max",
    exp.ArgMin: "arg_min",
    exp.First: "first",
    exp.Last: "last",
    exp.AnyValue: "any_value",
    exp.Mode: "mode",
    exp.Corr: "corr",
    exp.CovarPop: "covar_pop",
    exp.CovarSamp: "covar_samp",
    exp.RegrSlope: "regr_slope",
    exp.RegrIntercept: "regr_intercept",
    exp.RegrR2: "regr_r2",
    exp.RegrCount: "regr_count",
    exp.RegrAvgx: "regr_avgx",
    exp.RegrAvgy: "regr_avgy",
    exp.RegrSxx: "regr_sxx",
    exp.RegrSyy: "regr_syy",
    exp.RegrSxy: "regr_sxy",
    exp.Skewness: "skewness",
    exp.Kurtosis: "kurtosis",
    exp.BitwiseAndAgg: "bit_and",
    exp.BitwiseOrAgg: "bit_or",
    exp.BitwiseXorAgg: "bit_xor",
    exp.CountIf: "count_if",
    exp.ApproxDistinct: "approx_count_distinct",
    exp.ApproxQuantile: "approx_quantile",
}
# aggregate node types of several arguments -> their argument keys in positional order (the
# first holds DISTINCT and an ORDER BY inside the call); the others take "this" alone
AGGREGATE_ARGUMENTS: dict[type, tuple[str, ...]] = {
    **{
        cls: ("this", "expression")
        for cls in (
            exp.Corr,
            exp.CovarPop,
            exp.CovarSamp,
            exp.RegrSlope,
            exp.RegrIntercept,
            exp.RegrR2,
            exp.RegrCount,
            exp.RegrAvgx,
            exp.RegrAvgy,
            exp.RegrSxx,
            exp.RegrSyy,
            exp.RegrSxy,
        )
    },
    exp.ArgMax: ("this", "expression", "count"),
    exp.ArgMin: ("this", "expression", "count"),
    exp.First: ("this", "expression"),
    exp.Last: ("this", "expression"),
    exp.ApproxDistinct: ("this", "accuracy"),
    exp.ApproxQuantile: ("this", "quantile", "accuracy", "weight"),
}

# node type -> (the window function, or aggregate with a window form, it calls; its argument keys)
WINDOW_NODES: dict[type, tuple[str, tuple[str, ...]]] = {
    exp.RowNumber: ("row_number", ("*expressions",)),
    exp.Rank: ("rank", ("*expressions",)),
    exp.DenseRank: ("dense_rank", ("*expressions",)),
    exp.PercentRank: ("percent_rank", ("*expressions",)),
    exp.CumeDist: ("cume_dist", ("*expressions",)),
    exp.Ntile: ("ntile", _UNARY),
    exp.Lag: ("lag", ("this", "offset", "default")),
    exp.Lead: ("lead", ("this", "offset", "default")),
    exp.NthValue: ("nth_value", ("this", "offset")),
    exp.FirstValue: ("first_value", _UNARY),
    exp.LastValue: ("last_value", _UNARY),
    exp.Count: ("count", _UNARY),
    exp.Sum: ("sum", _UNARY),
    exp.Avg: ("avg", _UNARY),
    exp.Min: ("min", _UNARY),
    exp.Max: ("max", _UNARY),
}
