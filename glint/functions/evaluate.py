"""Evaluation of typed expressions over a batch, with SQL NULL semantics.

The tree walk: a column reference is the batch's column, a constant a
column of one value, CASE is evaluated branch by branch
(:func:`glint.functions.conditional.evaluate_case`), and a call runs its
function's evaluator, found by name in one table built from the registry
(:data:`glint.functions.builtins.BUILTINS`): one dictionary lookup per
expression node. Every evaluator works on whole columns with torch ops, on
whatever device the batch lives.

>>> import torch
>>> from glint.columnar import types as T
>>> from glint.plan.expr import Call, ColRef, Field, Literal
>>> a = Field(1, "a", T.INTEGER)
>>> b = Batch({1: Column(T.INTEGER, torch.tensor([1, 2, 3], dtype=torch.int32))}, 3)
>>> evaluate(Call("gt", (ColRef(a), Literal(1, T.INTEGER)), T.BOOLEAN), b).data.tolist()
[False, True, True]
>>> constant_value(Call("add", (Literal(1, T.INTEGER), Literal(2, T.INTEGER)), T.INTEGER))
3
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

import torch

from glint.columnar import types as T
from glint.columnar.column import LIMB, Batch, Column, Dictionary, literal_value
from glint.errors import ExecutionError, NotSupported
from glint.functions.builtins import BUILTINS
from glint.functions.conditional import evaluate_case
from glint.functions.registry import COLUMNS, CONSTANTS, Function
from glint.plan.expr import Call, Case, ColRef, Expr, Literal
from glint.plan.rules.fold_constants import ConstantEvaluator

# what runs an arithmetic tree on a GPU as one generated kernel, or None (node by node):
# glint.functions.fused_values.fused_if_worth, set by the executor around each operator's
# step while the fused_expressions setting is on
FUSED_ARITHMETIC: ContextVar[Callable[[Call, Batch], Column | None] | None] = ContextVar(
    "glint_fused_arithmetic", default=None
)
_ARITHMETIC = frozenset(("add", "sub", "mul"))


def evaluate(e: Expr, batch: Batch) -> Column:
    if isinstance(e, ColRef):
        return batch[e.field.id]
    if isinstance(e, Literal):
        return constant(e.value, e.type, batch.num_rows, batch.device)
    if isinstance(e, Case):
        return evaluate_case(e, batch, evaluate)
    if isinstance(e, Call):
        if e.fn in _ARITHMETIC and batch.device.type == "cuda":
            kernel = FUSED_ARITHMETIC.get()
            got = kernel(e, batch) if kernel is not None else None
            if got is not None:
                return got
        run = _CALLS.get(e.fn)
        if run is None:
            raise NotSupported(f"function {e.fn}")
        return run(e, batch)
    raise NotSupported(f"expression {e!r}")


def constant(value, dtype: T.DataType, n: int, device) -> Column:
    """A column of n rows of one value (a Literal's representation)."""
    if value is None:
        return Column.nulls(dtype, n, device)
    if dtype.is_string:
        return Column(
            dtype, torch.zeros(n, dtype=torch.int32, device=device), None, Dictionary.from_pylist([value], device)
        )
    if dtype.kind == "INTERVAL":
        raise NotSupported("INTERVAL values outside date arithmetic")
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        if not (dtype.is_decimal or dtype.kind == "HUGEINT"):
            raise ExecutionError(f"Out of Range Error: {value} does not fit {dtype}")
        limbs = torch.tensor([[value >> 32, value & (LIMB - 1)]], dtype=torch.int64, device=device)
        return Column(dtype, limbs.expand(n, 2).contiguous())
    return Column(dtype, torch.full((n,), value, dtype=dtype.torch_dtype, device=device))


def constant_value(e: Expr):
    """The value of an expression without column references (a Literal's
    representation), computed by :func:`evaluate` on a one-row batch on the CPU."""
    return literal_value(evaluate(e, Batch({}, 1, torch.device("cpu"))), 0)


# the constant folder's evaluator: folding uses the evaluator that runs the query, so
# that it can never disagree with execution, and the registry's strict functions
CONSTANT_EVALUATOR = ConstantEvaluator(constant_value, BUILTINS.strict_names())


# ------------------------------------------------------------------ the dispatch table
def _runner(f: Function):
    """``run(call, batch)`` for a function's calls: its evaluator, its
    arguments evaluated as it takes them (CUDA batches to its CUDA evaluator
    when it has one)."""
    if f.cuda is None:
        return _run_with(f.evaluate, f.takes)
    cpu, cuda = _run_with(f.evaluate, f.takes), _run_with(f.cuda, f.takes)
    return lambda e, batch: (cuda if batch.device.type == "cuda" else cpu)(e, batch)


def _run_with(fn, takes: str):
    if takes == COLUMNS:
        return lambda e, batch: fn(e, [evaluate(a, batch) for a in e.args])
    if takes == CONSTANTS:
        return lambda e, batch: fn(
            e, [evaluate(a, batch) if i == 0 or not _is_value(a) else a.value for i, a in enumerate(e.args)]
        )
    return lambda e, batch: fn(e, batch, evaluate)


def _is_value(a: Expr) -> bool:
    return isinstance(a, Literal) and a.value is not None


_CALLS = {name: _runner(f) for name, f in BUILTINS.call_functions().items()}
