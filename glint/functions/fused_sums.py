"""COUNT, SUM and AVG of a chunk's few groups, their inputs computed in the
same generated kernel that sums them.

glint.exec.few_groups sums every input of a chunk's aggregates in one pass
(glint.kernels.group_reduce), but an input that is an expression was first
evaluated into a column of its own: TPC-H Q1's ``sum(l_extendedprice * (1 -
l_discount))`` and ``sum(l_extendedprice * (1 - l_discount) * (1 + l_tax))``
each cost a generated kernel (glint.functions.fused_values) that read the
three columns and wrote an int64 column of every row, which the sums then
read back: about 100 bytes a row where the inputs are 34. Here the
expressions are lowered (the lowering of glint.functions.fused_values) into
one kernel that reads each column once, computes every input in registers
and adds it to per-program accumulators per group, as the group-sums kernel
does (exact 32-bit limbs where a block's values are large, one reduction
where they are small).

Overflow is handled as in glint.functions.fused_values: the kernel never
decides one, it raises a flag where any row that counts (one the WHERE keeps) might overflow; the
flag is read at once (the chunk is then summed the old way, whose evaluator
raises DuckDB's error or widens), or queued to the end of a run that queues
its checks (glint.functions.deferred), which re-runs the query with this
kernel's source turned off.

What it takes: at most ``group_reduce.MAX_GROUPS`` groups; COUNT(*),
COUNT, SUM and AVG without DISTINCT or FILTER; inputs that lower (integers,
DECIMALs of at most 18 digits and their + - * with the binder's casts, or a
DOUBLE column), at least one of them an arithmetic expression (without one
the group-sums kernel reads the columns as they are). Anything else returns
None, and the chunk takes the path it took before. The two paths are each
other's reference: the tests compare them under TRITON_INTERPRET=1 and on
CUDA, and through SQL with DuckDB.
"""

from __future__ import annotations

import logging
import threading

import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column
from glint.functions.deferred import UNFUSED, queue_fallback
from glint.functions.fused_predicate import CannotLower, LoweringCache, load_kernel, lowered_args
from glint.functions.fused_values import ValueLowering, arithmetic
from glint.kernels import group_reduce as R
from glint.kernels.backend import blocks, on_device
from glint.plan.expr import ColRef

_FUSED = ("count_star", "count", "sum", "avg")


class Inputs:
    """The distinct input expressions of an aggregation's COUNT / SUM / AVG,
    kept per aggregation (its lowered kernel is cached by this object)."""

    __slots__ = ("exprs", "aggs")

    def __init__(self, aggs):
        self.aggs = aggs
        exprs = []
        for _, a in aggs:
            if a.fn in _FUSED and a.fn != "count_star" and a.args[0] not in exprs:
                exprs.append(a.args[0])
        self.exprs = tuple(exprs)

    def fields(self):
        return [f for e in self.exprs for f in e.fields()]


_INPUTS: dict[int, Inputs] = {}  # by id of the aggregation's list of aggregates (kept alive by it)
_INPUTS_LOCK = threading.Lock()
# the most distinct inputs one kernel sums (three accumulators per group each, in registers);
# more take the group-sums kernel, eight columns a launch
MAX_INPUTS = 8


def inputs_of(aggs) -> Inputs:
    got = _INPUTS.get(id(aggs))
    if got is None or got.aggs is not aggs:
        with _INPUTS_LOCK:
            if len(_INPUTS) >= 256:
                _INPUTS.pop(next(iter(_INPUTS)), None)
            got = _INPUTS[id(aggs)] = Inputs(aggs)
    return got


def takes(aggs) -> bool:
    """Whether the aggregates are all of the kinds this kernel sums, and one
    of their inputs is worth computing in it (an arithmetic expression)."""
    if not aggs or any(a.fn not in _FUSED or a.distinct or a.filter is not None for _, a in aggs):
        return False
    return any(arithmetic(a.args[0]) for _, a in aggs if a.fn != "count_star")


def _lower(inputs: Inputs, batch: Batch):
    """((source, recipe, params, per input whether DOUBLE, whether it may
    overflow), lowering), or None where an input does not lower."""
    low = ValueLowering(batch)
    lowered = []
    try:
        for e in inputs.exprs:
            if e.type.kind == "DOUBLE":
                if not isinstance(e, ColRef):
                    raise CannotLower
                v, k, _ = low.column(e)
                lowered.append((v, k, True))
            else:
                v, k = low.value(e)
                lowered.append((v, k, False))
    except CannotLower:
        return None
    source = _source(low, lowered)
    floating = tuple(f for _, _, f in lowered)
    return (source, tuple(low.recipe), tuple(low.params), floating, low.over is not None), low


def _source(low: ValueLowering, lowered: list) -> str:
    """The kernel: the group-sums kernel's loop (glint.kernels.group_reduce)
    with the inputs' lowered lines inside it; the last slot of the partial
    sums counts each group's rows."""
    k = len(lowered)
    names = [f"A{i}" for i in range(len(low.tensors))] + [f"P{i}" for i in range(len(low.params))]
    consts = ["G: tl.constexpr", "HAS_GID: tl.constexpr", "HAS_ROWS: tl.constexpr", "BLOCK: tl.constexpr"]
    args = ", ".join(names + ["GID", "ROWS", "OUT", "FLAG", "n", *consts, "TILES: tl.constexpr", "SMALL: tl.constexpr"])
    head = ["pid = tl.program_id(0)", "groups = tl.arange(0, G)", "start = pid.to(tl.int64) * (BLOCK * TILES)"]
    head += ["rows_acc = tl.zeros([G], tl.int64)", "bad = tl.zeros([BLOCK], tl.int32)"]
    head += [f"lo{i}, hi{i}, n{i} = _zeros(G, {f})" for i, (_, _, f) in enumerate(lowered)]
    loop = [
        "offs = start + t * BLOCK + tl.arange(0, BLOCK)",
        "m = offs < n",
        "if HAS_GID:",
        "    gid = tl.load(GID + offs, mask=m, other=G)",
        "else:",
        "    gid = tl.where(m, 0, G)",
        "if HAS_ROWS:",
        "    gid = tl.where(tl.load(ROWS + offs, mask=m, other=0) != 0, gid, G)",
        "rows_hit = gid[:, None] == groups[None, :]",
        "rows_n = tl.sum(rows_hit.to(tl.int32), axis=0).to(tl.int64)",
        "rows_acc += rows_n",
        *low.lines,
    ]
    wide = []
    for i, (v, known, f) in enumerate(lowered):
        ok = f"m & {known}" if known is not None else "m"
        loop.append(f"ok{i} = {ok}")
        loop.append(f"x{i} = tl.where(ok{i}, {v}, {'0.0' if f else '0'})")
        if not f:
            wide.append(f"(x{i} > SMALL) | (x{i} < -SMALL)")
    loop.append(f"big = tl.max(({' | '.join(wide) if wide else 'offs < 0'}).to(tl.int32), axis=0)")
    for i, (_, known, f) in enumerate(lowered):
        masked = known is not None
        loop.append(
            f"lo{i}, hi{i}, n{i} = _accumulate(x{i}, ok{i}, rows_hit, rows_n, big, lo{i}, hi{i}, n{i}, {f}, {masked})"
        )
    if low.over is not None:
        # (rows the WHERE rejects are in group G: their values cannot overflow a sum)
        loop.append(f"bad |= (({low.over}) & (gid < G)).to(tl.int32)")
    tail = [f"_store(OUT, pid, {i}, lo{i}, hi{i}, n{i}, {k + 1}, G, {f})" for i, (_, _, f) in enumerate(lowered)]
    tail.append(f"_store(OUT, pid, {k}, rows_acc, rows_acc, rows_acc, {k + 1}, G, False)")
    if low.over is not None:
        tail += ["if tl.max(bad, axis=0) > 0:", "    tl.atomic_max(FLAG, 1)"]
    body = [*head, "for t in range(TILES):", *("    " + x for x in loop), *tail]
    text = "\n".join("    " + line for line in body)
    imports = "from glint.kernels.group_reduce import _accumulate, _store, _zeros\n"
    return f"import triton\nimport triton.language as tl\n{imports}\n\n@triton.jit\ndef sums({args}):\n{text}\n"


_LOWERED = LoweringCache()
_BROKEN: list[str] = []  # why the kernels stopped: a Triton that cannot compile them


def fused_sums(aggs, batch: Batch, n_groups: int, gid: torch.Tensor | None, rows: torch.Tensor | None, counts: bool):
    """The partial states of ``aggs`` (all taken: :func:`takes`) over
    ``batch``, as glint.exec.few_groups.fused_states gives them (by the
    aggregate's position; under -1 the count of the rows that count per
    group, with ``rows`` or ``counts``); None where the inputs do not lower,
    where a row might overflow, or where Triton failed once."""
    n = batch.num_rows
    if n == 0 or _BROKEN or not 1 <= n_groups <= R.MAX_GROUPS or n >= R._MAX_ROWS:
        return None
    inputs = inputs_of(aggs)
    if len(inputs.exprs) > MAX_INPUTS:
        return None
    got = lowered_args(_LOWERED, inputs, batch, _lower)
    if got is None:
        return None
    (source, _, params, floating, over), tensors = got
    if source in UNFUSED:
        return None
    partial, flag = _launch(source, tensors, params, len(floating), n, n_groups, gid, rows, batch.device)
    if partial is None:
        return None
    if over and not queue_fallback(flag, source) and bool(flag.item()):
        return None
    return _states(aggs, inputs, partial, floating, n_groups, rows is not None or counts)


def _launch(source, tensors, params, k, n, n_groups, gid, rows, dev):
    g_pad = max(1, 1 << (n_groups - 1).bit_length())
    block = max(64, 4096 // g_pad)
    tiles = max(1, -(-n // (block * R._PROGRAMS)))
    programs = blocks(n, block * tiles)
    partial = torch.empty((programs, k + 1, g_pad, 3), dtype=torch.int64, device=dev)
    flag = torch.zeros(1, dtype=torch.int32, device=dev)
    some = tensors[0] if tensors else partial
    try:
        kernel = load_kernel(source, "sums")
        with on_device(partial):
            kernel[(programs,)](
                *tensors,
                *params,
                gid if gid is not None else some,
                rows if rows is not None else some,
                partial,
                flag,
                n,
                G=g_pad,
                HAS_GID=gid is not None,
                HAS_ROWS=rows is not None,
                BLOCK=block,
                TILES=tiles,
                SMALL=(1 << 63) // block - 1,
            )
    except torch.cuda.OutOfMemoryError:
        raise
    except Exception as e:  # noqa: BLE001 - a compiler's failure: the chunk is summed the old way
        _BROKEN.append(f"{type(e).__name__}: {e}")
        logging.getLogger("glint").warning("fused aggregate kernels are off for this process: %s", _BROKEN[0][:500])
        return None, None
    return partial, flag


def _states(aggs, inputs: Inputs, partial: torch.Tensor, floating, n_groups: int, row_counts: bool) -> dict:
    k = len(floating)
    raw, counts = R.finish_partials(partial, floating, n_groups)
    sums = [Column(T.DOUBLE if f else T.HUGEINT, s) for f, s in zip(floating, raw)]
    rows_count = Column(T.BIGINT, counts[k])
    out = {}
    for i, (_, agg) in enumerate(aggs):
        if agg.fn == "count_star":
            out[i] = [rows_count]
            continue
        j = inputs.exprs.index(agg.args[0])
        count = Column(T.BIGINT, counts[j])
        out[i] = [count] if agg.fn == "count" else [sums[j], count]
    if row_counts:
        out[-1] = [rows_count]
    return out
