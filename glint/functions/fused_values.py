"""An arithmetic expression as one generated Triton kernel.

Evaluated node by node (glint.functions.evaluate), ``l_extendedprice * (1 -
l_discount) * (1 + l_tax)`` costs about thirty torch operations a chunk: each
operator's result, its overflow test (a floating estimate of a product, a
sign test of a sum) and a host sync to read the test. Here the tree is
lowered to one kernel that reads each column once, writes the value (and its
NULL mask) once, and raises a flag where any row might overflow. A raised
flag sends the chunk back to the node-by-node evaluator, which raises
DuckDB's error or widens to 128 bits exactly as before; the kernel itself
never decides an overflow. The flag is read once per expression and chunk,
or, in a run that queues its checks (glint.functions.deferred), once at the
end of the run: a raised one then re-runs the query with the expression
evaluated node by node.

What compiles (anything else evaluates node by node):

- ``+``, ``-`` and ``*`` whose operands and result are INTEGER, BIGINT or
  DECIMAL of at most 18 digits held in 64 bits;
- the casts the binder puts under them that keep every value: an INTEGER
  widened, a DECIMAL brought to a finer scale with its integer digits kept;
- column references of those types, with or without NULLs, and non-NULL
  constants (the kernel's scalar arguments: one compiled kernel serves every
  value, as in glint.functions.fused_predicate, whose lowering this extends).

The flag is set exactly where the evaluator would look further: a sum whose
sign disagrees with both operands' or that leaves 18 digits (DECIMAL(18, s)),
a product whose floating estimate is near the limit, an INTEGER result
outside 32 bits. The node-by-node evaluator is the reference: the CPU runs
it, and the tests check the kernel against it under TRITON_INTERPRET=1 and on
CUDA.
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column
from glint.functions.deferred import UNFUSED, queue_fallback
from glint.functions.fused_predicate import (
    CannotLower,
    Lowering,
    LoweringCache,
    both_known,
    launch_generated,
    lowered_args,
)
from glint.kernels.backend import triton_enabled
from glint.plan.expr import Call, ColRef, Expr, Literal

_OPS = {"add": "+", "sub": "-", "mul": "*"}
_DEC18_MAX = 10**18 - 1
_I32 = (-(2**31), 2**31 - 1)


def _supported_type(t: T.DataType) -> bool:
    return t.kind in ("INTEGER", "BIGINT") or (t.is_decimal and t.precision <= 18)


class ValueLowering(Lowering):
    """The predicate lowering, with arithmetic nodes: each yields its value
    (an int64 block), its known flags (None: never NULL); the overflow
    suspicions are or-ed into ``self.over``."""

    def __init__(self, batch: Batch):
        super().__init__(batch)
        self.over: str | None = None

    def suspect(self, cond: str, known: str | None) -> None:
        if known is not None:
            cond = self.tmp(f"({cond}) & {known}")
        self.over = self.tmp(cond if self.over is None else f"{self.over} | ({cond})")

    def value(self, e) -> tuple[str, str | None]:
        if not _supported_type(e.type):
            raise CannotLower
        if isinstance(e, ColRef):
            v, k, _ = self.column(e)
            return v, k
        if isinstance(e, Literal):
            if e.value is None or isinstance(e.value, bool) or not isinstance(e.value, int):
                raise CannotLower
            return self.int_param(e.value), None
        if isinstance(e, Call) and e.fn == "cast" and len(e.args) == 1 and not e.params:
            return self.widening_cast(e.args[0], e.type)
        if not isinstance(e, Call) or e.fn not in _OPS or len(e.args) != 2 or e.params:
            raise CannotLower
        (x, xk), (y, yk) = self.value(e.args[0]), self.value(e.args[1])
        known = both_known(self, xk, yk)
        out = self.tmp(f"{x} {_OPS[e.fn]} {y}")
        t = e.type
        if t.kind == "INTEGER":
            self.suspect(f"({out} < {_I32[0]}) | ({out} > {_I32[1]})", known)
            return out, known
        if e.fn == "mul":
            near = 0.99e18 if t.precision == 18 else 2.0**62
            est = self.tmp(f"{x}.to(tl.float64) * {y}.to(tl.float64)")
            self.suspect(f"tl.abs({est}) >= {near!r}", known)
            return out, known
        flip = y if e.fn == "add" else self.tmp(f"~{y}")
        cond = f"((({x} ^ {out}) & ({flip} ^ {out})) < 0)"  # (| binds tighter than <)
        if t.is_decimal and t.precision == 18:
            cond += f" | ({out} > {_DEC18_MAX}) | ({out} < {-_DEC18_MAX})"
        self.suspect(cond, known)
        return out, known

    def widening_cast(self, a, to: T.DataType) -> tuple[str, str | None]:
        """A cast that keeps every value: to a type with at least as many
        digits on both sides of the point (INTEGER to BIGINT or DECIMAL(10, 0),
        a DECIMAL to a finer scale: the binder's rescaling of a sum's operand)."""
        t = a.type
        if not _supported_type(t) or not _supported_type(to) or to.kind == "INTEGER":
            raise CannotLower
        if to.kind == "BIGINT":
            if t.kind != "INTEGER":
                raise CannotLower
            return self.value(a)
        src = T.as_decimal(t)
        if to.scale < src.scale or to.precision - to.scale < src.precision - src.scale:
            raise CannotLower
        v, k = self.value(a)
        if to.scale == src.scale:
            return v, k
        return self.tmp(f"{v} * {10 ** (to.scale - src.scale)}"), k


def _source(low: ValueLowering, value: str, known: str | None, out_type: str) -> str:
    names = [f"A{i}" for i in range(len(low.tensors))] + [f"P{i}" for i in range(len(low.params))]
    args = ", ".join(names + ["OUT", "KNOWN", "FLAG", "n", "BLOCK: tl.constexpr"])
    body = ["pid = tl.program_id(0)", "offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)", "m = offs < n"]
    body += low.lines
    body.append(f"tl.store(OUT + offs, {value}.to({out_type}), mask=m)")
    if known is not None:
        body.append(f"tl.store(KNOWN + offs, {known}.to(tl.int8), mask=m)")
    if low.over is not None:
        body.append(f"if tl.max(({low.over} & m).to(tl.int32), axis=0) > 0:")
        body.append("    tl.atomic_max(FLAG, 1)")
    text = "\n".join("    " + line for line in body)
    return f"import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef values({args}):\n{text}\n"


def arithmetic(e: Expr) -> bool:
    """Whether ``e`` takes a kernel: an arithmetic node over another one. A
    single operator stays node by node, although its overflow test makes it
    several torch operations (TPC-H Q6's ``l_extendedprice * l_discount`` is
    its three biggest kernels in docs/performance.md's profile): not yet
    measured as a kernel."""
    return (
        isinstance(e, Call)
        and e.fn in _OPS
        and any(isinstance(a, Call) and a.fn in _OPS for a in e.args)
        and _supported_type(e.type)
    )


def lower(e: Expr, batch: Batch):
    """(source, lowering, value, known) of ``e`` over ``batch``'s columns, or None."""
    low = ValueLowering(batch)
    try:
        value, known = low.value(e)
    except CannotLower:
        return None
    out_type = "tl.int32" if e.type.kind == "INTEGER" else "tl.int64"
    return _source(low, value, known, out_type), low, known


_BROKEN: list[str] = []  # why the kernels stopped: a Triton that cannot compile them


def fused_value(e: Expr, batch: Batch) -> Column | None:
    """``e`` over ``batch`` by one generated kernel; None where it does not
    compile, where a row might overflow (the evaluator then decides), or where
    Triton failed to build or launch such a kernel once in this process."""
    n = batch.num_rows
    if n == 0 or _BROKEN:
        return None
    got = lowered_args(_LOWERED, e, batch, _lower_value)
    if got is None:
        return None
    (source, _, params, has_known, over), tensors = got
    if source in UNFUSED:
        return None
    dev = batch.device
    out = torch.empty(n, dtype=e.type.torch_dtype, device=dev)
    valid = torch.empty(n, dtype=torch.int8, device=dev) if has_known else out
    flag = torch.zeros(1, dtype=torch.int32, device=dev)
    args = (*tensors, *params, out, valid, flag, n)
    if not launch_generated(source, "values", args, _BROKEN, "fused expression"):
        return None
    if over and not queue_fallback(flag, source) and bool(flag.item()):
        return None
    return Column(e.type, out, valid.view(torch.bool) if has_known else None)


_LOWERED = LoweringCache()


def _lower_value(e: Expr, batch: Batch):
    lowered = lower(e, batch)
    if lowered is None:
        return None
    source, low, known = lowered
    return (source, tuple(low.recipe), tuple(low.params), known is not None, low.over is not None), low


def fused_if_worth(e: Expr, batch: Batch) -> Column | None:
    """:func:`fused_value` where ``e`` is worth a kernel (see :func:`arithmetic`)
    and Triton runs; None sends it to the node-by-node evaluator. Called by
    glint.functions.evaluate.evaluate on a GPU while the fused_expressions
    setting is on."""
    if not (arithmetic(e) and triton_enabled()):
        return None
    return fused_value(e, batch)
