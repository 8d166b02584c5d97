"""CASE, COALESCE, NULLIF, IF, GREATEST and LEAST, evaluating each branch only for the rows
that need it when evaluating it for every row fails (an overflow in a branch
another row takes), as SQL defines them; and :func:`choose`, the rows of
one column or another.

>>> import torch
>>> a, b = Column(T.INTEGER, torch.tensor([1, 2])), Column(T.INTEGER, torch.tensor([7, 8]))
>>> choose(torch.tensor([True, False]), a, b, T.INTEGER).data.tolist()
[1, 8]
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column, concat_columns
from glint.errors import ExecutionError, NotSupported, TypeMismatch
from glint.functions.operators import compare_columns
from glint.functions.registry import EXPRESSIONS, SCALAR, Function
from glint.functions.strings import core as strings
from glint.functions.validity import predicate_mask
from glint.kernels import wide as W
from glint.plan import typing as ty
from glint.plan.expr import Call, Case, Literal


def same_layout(values: list[Column], dtype: T.DataType) -> list[Column]:
    """Branches of one result: strings on one dictionary, all wide if one is."""
    if dtype.is_string:
        return strings.share_dictionary(values)
    if any(v.is_wide for v in values):
        return [v if v.is_wide else v.with_data(W.to_wide(v.data)) for v in values]
    return values


def choose(take: torch.Tensor, a: Column, b: Column, dtype: T.DataType) -> Column:
    """Rows of ``a`` where ``take`` is set, of ``b`` elsewhere, as one column of ``dtype``."""
    a, b = same_layout([a, b], dtype)
    data = torch.where(take if a.data.dim() == 1 else take[:, None], a.data, b.data)
    valid = torch.where(take, a.validity(), b.validity())
    return Column(dtype, data, None if bool(valid.all()) else valid, b.dictionary)


def evaluate_case(e: Case, batch, evaluate) -> Column:
    """CASE WHEN ... END over a batch (``evaluate``: the expression evaluator)."""
    try:
        values = [evaluate(v, batch) for _, v in e.whens] + [evaluate(e.default, batch)]
    except ExecutionError:
        # an error (overflow, bad cast) may come from rows a branch does not take: SQL
        # evaluates each branch only for its own rows, so do that, the slow way
        return _case_by_rows(e, batch, evaluate)
    values = same_layout(values, e.type)
    out = values[-1]
    # without a NULL among the branches' values the result has none (no wait to find out);
    # otherwise its mask goes on as it is, even where it holds no NULL
    nullable = any(v.valid is not None for v in values)
    data, valid = out.data, (out.validity() if nullable else None)
    for (cond, _), val in reversed(list(zip(e.whens, values[:-1]))):
        c = evaluate(cond, batch)
        take = c.data if c.valid is None else c.data & c.valid
        data = torch.where(take, val.data, data) if data.dim() == 1 else torch.where(take[:, None], val.data, data)
        if nullable:
            valid = torch.where(take, val.validity(), valid)
    return Column(e.type, data, valid, values[-1].dictionary)


def _case_by_rows(e: Case, batch, evaluate) -> Column:
    n = batch.num_rows
    remaining = torch.ones(n, dtype=torch.bool, device=batch.device)
    pieces = []  # (row positions, values for them)
    for cond, val in e.whens:
        c = evaluate(cond, batch)
        take = predicate_mask(c) & remaining
        remaining &= ~take
        idx = take.nonzero().squeeze(1)
        pieces.append((idx, evaluate(val, batch.take(idx))))
    idx = remaining.nonzero().squeeze(1)
    pieces.append((idx, evaluate(e.default, batch.take(idx))))
    return _in_row_order(pieces, n, e.type, batch.device)


def _in_row_order(pieces, n: int, dtype: T.DataType, device) -> Column:
    """One column of n rows from (row positions, values for them) pieces that
    cover every row once."""
    cols = same_layout([p[1] for p in pieces], dtype)
    whole = concat_columns(cols)
    order = torch.empty(n, dtype=torch.int64, device=device)
    order[torch.cat([p[0] for p in pieces])] = torch.arange(n, device=device)
    return whole.take(order)


def _coalesce_by_rows(e: Call, batch, evaluate) -> Column:
    """COALESCE evaluating each argument only for the rows all earlier ones left
    NULL, as SQL defines it (CASE WHEN a IS NOT NULL THEN a ELSE ... END): an
    overflow in COALESCE(x, CAST(y AS INTEGER)) on a row where x is set is not one."""
    n = batch.num_rows
    remaining = torch.ones(n, dtype=torch.bool, device=batch.device)
    pieces = []
    last = len(e.args) - 1
    for i, a in enumerate(e.args):
        idx = remaining.nonzero().squeeze(1)
        v = evaluate(a, batch.take(idx))
        if i < last:
            has = v.validity().nonzero().squeeze(1)
            pieces.append((idx[has], v.take(has)))
            remaining[idx[has]] = False
        else:
            pieces.append((idx, v))
    return _in_row_order(pieces, n, e.type, batch.device)


def _coalesce(e: Call, batch, evaluate) -> Column:
    try:
        values = same_layout([evaluate(a, batch) for a in e.args], e.type)
    except ExecutionError:
        # as CASE: an error may come from rows an argument is not needed for
        return _coalesce_by_rows(e, batch, evaluate)
    out = values[-1]
    data, valid = out.data, out.validity()
    for v in reversed(values[:-1]):
        vv = v.validity()
        data = torch.where(vv if data.dim() == 1 else vv[:, None], v.data, data)
        valid = vv | valid
    return Column(e.type, data, valid, values[-1].dictionary)


def _extreme(op: str):
    """greatest (op "gt") / least ("lt"): the largest or smallest argument
    that is not NULL, in DuckDB's order (NaN above every number); of equal
    values, the first."""

    def run(e: Call, cols: list[Column]) -> Column:
        out = cols[0]
        for c in cols[1:]:
            better = compare_columns(op, c, out).data
            take = c.validity() & (~out.validity() | better)
            out = choose(take, c, out, e.type)
        return out

    return run


# ---------------------------------------------------------------- definitions
def _bind_coalesce(args, site):
    args = list(args)
    t = ty.common_of(args, "COALESCE arguments")
    return Call("coalesce", tuple(ty.cast(a, t) for a in args), t)


def _bind_extreme(name: str):
    def bind(args, site):
        args = list(args)
        if not args:
            raise TypeMismatch(f"{name}() takes at least one argument")
        t = ty.common_of(args, f"{name.upper()} arguments")
        if t.kind == "NULL":
            return Literal(None, T.NULLTYPE)
        if t.kind == "INTERVAL":
            raise NotSupported(f"{name}() of INTERVALs")
        args = [ty.cast(a, t) for a in args if not (isinstance(a, Literal) and a.value is None)]
        if len(args) == 1:
            return args[0]
        return Call(name, tuple(args), t)

    return bind


def _bind_nullif(args, site):
    a, b = args[0], args[1]
    return Case(((ty.compare("eq", a, b), Literal(None, a.type)),), a, a.type)


def _bind_if(args, site):
    cond = ty.require_boolean(args[0], "IF condition")
    a = args[1]
    b = args[2] if len(args) > 2 and args[2] is not None else Literal(None, T.NULLTYPE)
    t = ty.common_of([a, b], "IF results")
    return Case(((cond, ty.cast(a, t)),), ty.cast(b, t), t)


FUNCTIONS = [
    Function(
        "coalesce",
        SCALAR,
        "conditional",
        "coalesce(ANY, ...) -> ANY",
        "The first argument that is not NULL.",
        aliases=("ifnull", "nvl"),
        bind=_bind_coalesce,
        evaluate=_coalesce,
        takes=EXPRESSIONS,
    ),
    Function(
        "nullif",
        SCALAR,
        "conditional",
        "nullif(a, b) -> ANY",
        "NULL when a equals b, else a.",
        bind=_bind_nullif,
        rewrites_to=("eq",),
    ),
    Function(
        "greatest",
        SCALAR,
        "conditional",
        "greatest(ANY, ...) -> ANY",
        "The largest argument that is not NULL (NULL when all are).",
        bind=_bind_extreme("greatest"),
        evaluate=_extreme("gt"),
    ),
    Function(
        "least",
        SCALAR,
        "conditional",
        "least(ANY, ...) -> ANY",
        "The smallest argument that is not NULL (NULL when all are).",
        bind=_bind_extreme("least"),
        evaluate=_extreme("lt"),
    ),
    Function(
        "if",
        SCALAR,
        "conditional",
        "if(BOOLEAN, a [, b]) -> ANY",
        "a when the condition is TRUE, else b (NULL without b).",
        aliases=("iif",),
        bind=_bind_if,
        rewrites_to=(),
    ),
]
