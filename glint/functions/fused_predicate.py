"""A filter's predicate as one generated Triton kernel.

Evaluated node by node (glint.functions.evaluate), a predicate costs one or
more torch operations per node and chunk: TPC-H Q6's five comparisons and four
ANDs launch about twenty kernels a chunk, each reading and writing whole
columns. Here the predicate tree is lowered to the source of one Triton
kernel that reads each column once and writes the row mask (TRUE rows) once.

What compiles (anything else returns None, and the filter evaluates node by
node as before):

- AND, OR, NOT with SQL's three-valued logic, IS NULL, BOOLEAN columns and
  constants;
- comparisons (=, <>, <, <=, >, >=) and IN lists of constants between
  integers, DECIMALs of at most 18 digits, DATEs and TIMESTAMPs: a column
  against a column of the same scale, or against a constant, the constant
  taken to the column's scale exactly as glint.functions.operators does
  (floor and ceiling of a finer constant, so no column is scaled up);
- comparisons of DOUBLEs with DuckDB's order (NaN equals NaN, above every
  number);
- any predicate of one VARCHAR column and constants (=, <, IN, LIKE, ...):
  evaluated once per dictionary entry by the ordinary evaluator, and looked
  up by each row's code in the kernel (a dictionary-code test).

Constants are the kernel's scalar arguments (a DOUBLE by its bits): nothing
is copied to the device (a copy from pageable host memory would wait for the
GPU), and the source depends on the tree's shape and types only, so one
compiled kernel serves every constant. Sources are cached per process, and
written to a directory so that Triton can read them (it compiles from a
function's source, and caches the result on disk).

The node-by-node evaluator is the reference: the CPU runs it, and the tests
check the kernel against it under TRITON_INTERPRET=1 and on CUDA.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import struct
import tempfile
import threading
from pathlib import Path

import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column
from glint.errors import GlintError
from glint.functions.evaluate import evaluate
from glint.kernels.backend import blocks, on_device
from glint.kernels.strings.columns import remember, remembered
from glint.plan.expr import Call, ColRef, Literal

_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_FLIP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
_STRING_TESTS = frozenset(
    {"eq", "ne", "lt", "le", "gt", "ge", "in_list", "like", "ilike", "starts_with", "ends_with", "contains"}
)
_INT_KINDS = frozenset({"INTEGER", "BIGINT", "DATE", "TIMESTAMP", "DECIMAL"})
_INT64 = (-(2**63), 2**63 - 1)
BLOCK = 1024
# warps a generated kernel is launched with: 4 rows a thread. With Triton's default of 4 warps
# (8 rows a thread) TPC-H Q6's predicate over 2**28 rows took 5.56 ms on an H200, with 8 warps
# 1.34 ms (BLOCK 512 with 4 warps: 1.38 ms; reading its 20 bytes a row is 2.5 ms by copies)
WARPS = 8


class CannotLower(Exception):
    """A node the kernel does not compile (the filter evaluates node by node)."""


class Lowering:
    """The kernel's source lines and its arguments, built by a walk of the tree."""

    def __init__(self, batch: Batch):
        self.batch = batch
        self.tensors: list[torch.Tensor] = []  # the kernel's pointer arguments, in order
        # where each pointer argument comes from in a batch (see :func:`resolve`): a later
        # chunk of the same columns takes its arguments from these, without a new walk
        self.recipe: list[tuple] = []
        self.params: list[int] = []  # the constants, as int64 values (a DOUBLE's bits)
        self.lines: list[str] = []
        self.columns: dict[int, tuple[str, str | None]] = {}  # field id -> (value, known) names
        self.n = 0

    def tmp(self, expr: str) -> str:
        name = f"t{self.n}"
        self.n += 1
        self.lines.append(f"{name} = {expr}")
        return name

    def pointer(self, t: torch.Tensor, recipe: tuple) -> str:
        self.tensors.append(t)
        self.recipe.append(recipe)
        return f"A{len(self.tensors) - 1}"

    def int_param(self, v: int) -> str:
        if not _INT64[0] <= v <= _INT64[1]:
            raise CannotLower
        return self._param(int(v), "")

    def float_param(self, v: float) -> str:
        bits = struct.unpack("<q", struct.pack("<d", float(v)))[0]
        return self._param(bits, ".to(tl.float64, bitcast=True)")

    def _param(self, v: int, convert: str) -> str:
        """A constant as a scalar argument of the kernel (a DOUBLE by its bits):
        no copy to the device, and a kernel per shape, not per value. Made a
        block, so that the logic never mixes scalars with blocks."""
        self.params.append(v)
        return self.tmp(f"(tl.zeros([BLOCK], dtype=tl.int64) + P{len(self.params) - 1}){convert}")

    # ---------------------------------------------------------------- leaves
    def column(self, e) -> tuple[str, str | None, Column]:
        """A column's values (int64 or float64) and its known flags (None: no NULLs)."""
        c = self.batch[e.field.id]
        if c.is_wide or c.dtype.is_string:
            raise CannotLower
        got = self.columns.get(e.field.id)
        if got is None:
            data = c.data.view(torch.int8) if c.data.dtype == torch.bool else c.data
            v = self.tmp(f"tl.load({self.pointer(data, ('data', e.field.id))} + offs, mask=m, other=0)")
            if c.data.dtype == torch.bool:
                v = self.tmp(f"{v} != 0")
            elif c.data.is_floating_point():
                v = self.tmp(f"{v}.to(tl.float64)")
            else:
                v = self.tmp(f"{v}.to(tl.int64)")
            k = None
            if c.valid is not None:
                valid = self.pointer(c.valid.view(torch.int8), ("valid", e.field.id))
                k = self.tmp(f"tl.load({valid} + offs, mask=m, other=0) != 0")
            got = self.columns[e.field.id] = (v, k)
        return got[0], got[1], c

    # ---------------------------------------------------------------- booleans
    def boolean(self, e) -> tuple[str, str | None]:
        """(value, known) of a BOOLEAN node: the row is TRUE where both hold;
        known None means never NULL."""
        if isinstance(e, Literal):
            if e.value is None:
                return self.tmp("offs < 0"), self.tmp("offs < 0")
            return self.tmp("offs >= 0" if e.value else "offs < 0"), None
        if isinstance(e, ColRef):
            if e.type.kind != "BOOLEAN":
                raise CannotLower
            v, k, _ = self.column(e)
            return v, k
        if not isinstance(e, Call) or e.type.kind != "BOOLEAN":
            raise CannotLower
        fn, args = e.fn, e.args
        if self._is_string_test(e):
            return self.string_test(e)
        if e.params:
            raise CannotLower
        if fn in ("and", "or") and len(args) == 2:
            (av, ak), (bv, bk) = self.boolean(args[0]), self.boolean(args[1])
            v = self.tmp(f"{av} & {bv}" if fn == "and" else f"{av} | {bv}")
            # AND is known where both sides are, or where either is a known FALSE;
            # OR where both are, or where either is a known TRUE
            na, nb = (f"~{av}", f"~{bv}") if fn == "and" else (av, bv)
            if ak is None and bk is None:
                return v, None
            if ak is None:
                return v, self.tmp(f"{bk} | {na}")
            if bk is None:
                return v, self.tmp(f"{ak} | {nb}")
            return v, self.tmp(f"({ak} & {bk}) | ({ak} & {na}) | ({bk} & {nb})")
        if fn == "not" and len(args) == 1:
            v, k = self.boolean(args[0])
            return self.tmp(f"~{v}"), k
        if fn == "is_null" and len(args) == 1:
            a = args[0]
            if isinstance(a, ColRef) and not a.type.is_string:
                _, k, _ = self.column(a)
                return (self.tmp(f"~{k}") if k is not None else self.tmp("offs < 0")), None
            raise CannotLower
        if fn in _CMP and len(args) == 2:
            return self.compare(fn, args[0], args[1])
        if fn == "in_list" and len(args) >= 2:
            return self.in_list(args[0], args[1:])
        raise CannotLower

    # ---------------------------------------------------------------- comparisons
    def compare(self, op: str, a, b) -> tuple[str, str | None]:
        if isinstance(a, Literal) and isinstance(b, ColRef):
            return self.compare(_FLIP[op], b, a)
        if not isinstance(a, ColRef) or not isinstance(b, (ColRef, Literal)):
            raise CannotLower
        if isinstance(b, Literal) and b.value is None:
            raise CannotLower  # (folded away before execution: NULL)
        ka, kb = _kind(a.type), _kind(b.type)
        x, xk, _ = self.column(a)
        if ka == "float" or kb == "float":
            if ka != kb:
                raise CannotLower  # (the binder casts mixed comparisons: a CAST node is not compiled)
            if isinstance(b, ColRef):
                y, yk, _ = self.column(b)
            else:
                y, yk = self.float_param(float(b.value)), None
            return self.tmp(_float_cmp(op, x, y)), both_known(self, xk, yk)
        if ka != "int" or kb != "int":
            raise CannotLower
        sx, sy = _scale(a.type), _scale(b.type)
        if isinstance(b, ColRef):
            if sx != sy or _date_mix(a.type, b.type):
                raise CannotLower
            y, yk, _ = self.column(b)
            return self.tmp(f"{x} {_CMP[op]} {y}"), both_known(self, xk, yk)
        if _date_mix(a.type, b.type):
            raise CannotLower
        return self._compare_constant(op, x, sx, int(b.value), sy), xk

    def _compare_constant(self, op: str, x: str, sx: int, y: int, sy: int) -> str:
        """x * 10**-sx  op  y * 10**-sy for a constant y, as
        glint.functions.operators.compare_scaled: exact, no column scaled up."""
        if sy <= sx:
            return self.tmp(f"{x} {_CMP[op]} {self.int_param(y * 10 ** (sx - sy))}")
        k = 10 ** (sy - sx)
        fl, ce = y // k, -((-y) // k)
        if op == "lt":
            return self.tmp(f"{x} < {self.int_param(ce)}")
        if op == "le":
            return self.tmp(f"{x} <= {self.int_param(fl)}")
        if op == "gt":
            return self.tmp(f"{x} > {self.int_param(fl)}")
        if op == "ge":
            return self.tmp(f"{x} >= {self.int_param(ce)}")
        if fl != ce:  # the constant has digits the column cannot hold
            return self.tmp("offs < 0" if op == "eq" else "offs >= 0")
        return self.tmp(f"{x} {_CMP[op]} {self.int_param(fl)}")

    def in_list(self, a, items) -> tuple[str, str | None]:
        if not all(isinstance(i, Literal) and i.value is not None for i in items):
            raise CannotLower
        hits = [self.compare("eq", a, i)[0] for i in items]
        v = hits[0]
        for h in hits[1:]:
            v = self.tmp(f"{v} | {h}")
        _, k, _ = self.column(a)
        return v, k

    # ---------------------------------------------------------------- strings
    def _is_string_test(self, e) -> bool:
        if e.fn not in _STRING_TESTS:
            return False
        cols = [a for a in e.args if isinstance(a, ColRef)]
        rest = [a for a in e.args if not isinstance(a, ColRef)]
        return (
            len(cols) == 1
            and cols[0].type.is_string
            and all(isinstance(a, Literal) and a.value is not None for a in rest)
        )

    def string_test(self, e) -> tuple[str, str | None]:
        """A test of one VARCHAR column against constants: evaluated on the
        column's dictionary entries (the reference evaluator), then looked up
        by code: 1 TRUE, 0 FALSE, -1 NULL."""
        (ref,) = [a for a in e.args if isinstance(a, ColRef)]
        fid = ref.field.id
        c = self.batch[fid]
        lut = string_lut(e, fid, c)
        codes = self.pointer(c.data, ("data", fid))
        k = None
        mask = "m"
        if c.valid is not None:
            valid = self.pointer(c.valid.view(torch.int8), ("valid", fid))
            k = self.tmp(f"tl.load({valid} + offs, mask=m, other=0) != 0")
            mask = self.tmp(f"m & {k}")
        code = self.tmp(f"tl.load({codes} + offs, mask={mask}, other=0).to(tl.int64)")
        hit = self.tmp(f"tl.load({self.pointer(lut, ('lut', fid, e))} + {code}, mask={mask}, other=0)")
        v = self.tmp(f"{hit} == 1")
        known = self.tmp(f"{hit} >= 0")
        if k is not None:
            known = self.tmp(f"{known} & {k}")
        return v, known


_LUT_MEMO = "predicate lut"  # (a key of Dictionary.memo: a string test's results per entry)


def string_lut(e, fid: int, c: Column) -> torch.Tensor:
    """A test of one VARCHAR column (field ``fid``, the column ``c``) against
    constants over every entry of the column's dictionary: int8, 1 TRUE, 0
    FALSE, -1 NULL; remembered on the dictionary (a join's build side keeps
    one dictionary for all the chunks whose residual tests it: TPC-H Q19)."""
    d = c.dictionary
    key = (_LUT_MEMO, e)
    got = remembered(d, key)
    if got is not None:
        return got
    entries = Column(c.dtype, torch.arange(len(d), dtype=torch.int32, device=c.device), None, d)
    try:
        r = evaluate(e, Batch({fid: entries}, len(d), c.device))
    except GlintError:
        raise CannotLower from None  # (the node-by-node path raises it for the rows, if at all)
    lut = r.data.to(torch.int8)
    if r.valid is not None:
        lut = torch.where(r.valid, lut, torch.full_like(lut, -1))
    remember(d, key, lut)
    return lut


def resolve(recipe: tuple, batch: Batch) -> torch.Tensor:
    """A pointer argument of a kernel lowered before, found in ``batch``."""
    what, fid = recipe[0], recipe[1]
    c = batch[fid]
    if what == "data":
        return c.data.view(torch.int8) if c.data.dtype == torch.bool else c.data
    if what == "valid":
        return c.valid.view(torch.int8)
    return string_lut(recipe[2], fid, c)


def _column_shape(c: Column | None) -> tuple | None:
    """What a lowering depends on in a column, other than its values."""
    if c is None:
        return None
    return (c.dtype, c.data.dtype, c.data.dim(), c.valid is None, c.dictionary is None)


class LoweringCache:
    """Lowered kernels by expression and the shape of its columns (types,
    which have NULLs): each chunk of a filter or projection asks again with
    the same expression object, and a hit skips the walk of the tree, the
    source's text and its hash. Bounded; an expression is kept alive by its
    entries, so that a recycled ``id`` cannot be mistaken for it."""

    def __init__(self, size: int = 512):
        self.size = size
        self._fields: dict[int, tuple] = {}  # id(expr) -> (expr, its field ids)
        self._entries: dict[tuple, tuple] = {}  # (id(expr), shapes) -> (expr, entry)
        self._lock = threading.Lock()

    def key(self, e, batch: Batch) -> tuple:
        got = self._fields.get(id(e))
        if got is None or got[0] is not e:
            got = (e, tuple(sorted({f.id for f in e.fields()})))
            with self._lock:
                if len(self._fields) >= self.size:
                    self._fields.pop(next(iter(self._fields)))
                self._fields[id(e)] = got
        cols = batch.columns
        return (id(e), tuple(_column_shape(cols.get(f)) for f in got[1]))

    def get(self, e, key: tuple):
        got = self._entries.get(key)
        return got[1] if got is not None and got[0] is e else None

    def put(self, e, key: tuple, entry) -> None:
        with self._lock:
            if len(self._entries) >= self.size:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = (e, entry)


def both_known(low: Lowering, a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return a or b
    return low.tmp(f"{a} & {b}")


def _float_cmp(op: str, x: str, y: str) -> str:
    """DuckDB's order of DOUBLEs: NaN equals NaN and is above every number."""
    nx, ny = f"({x} != {x})", f"({y} != {y})"
    if op in ("gt", "ge"):
        return _float_cmp({"gt": "lt", "ge": "le"}[op], y, x)
    eq = f"(({nx} & {ny}) | ({x} == {y}))"
    if op == "eq":
        return eq
    if op == "ne":
        return f"~{eq}"
    lt = f"(~{nx} & ({ny} | ({x} < {y})))"
    return lt if op == "lt" else f"({lt} | {eq})"


def _kind(t: T.DataType) -> str:
    if t.kind == "DOUBLE":
        return "float"
    if t.kind in _INT_KINDS and not (t.is_decimal and t.precision > 18):
        return "int"
    return "other"


def _scale(t: T.DataType) -> int:
    return t.scale if t.is_decimal else 0


def _date_mix(a: T.DataType, b: T.DataType) -> bool:
    """DATE against TIMESTAMP, or either against a number: different units."""
    temporal = {"DATE", "TIMESTAMP"}
    return (a.kind in temporal or b.kind in temporal) and a.kind != b.kind


# -------------------------------------------------------------------- kernels
_KERNELS: dict[str, object] = {}  # by the digest of the source
_BY_SOURCE: dict[str, object] = {}  # by the source itself
_LOCK = threading.Lock()


def _source(low: Lowering, value: str, known: str | None) -> str:
    names = [f"A{i}" for i in range(len(low.tensors))] + [f"P{i}" for i in range(len(low.params))]
    args = ", ".join(names + ["OUT", "n", "BLOCK: tl.constexpr"])
    body = ["pid = tl.program_id(0)", "offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)", "m = offs < n"]
    body += low.lines
    true = f"{value} & {known}" if known else value
    body.append(f"tl.store(OUT + offs, ({true}).to(tl.int8), mask=m)")
    text = "\n".join("    " + line for line in body)
    return f"import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef predicate({args}):\n{text}\n"


def load_kernel(source: str, name: str = "predicate"):
    """The jitted function ``name`` of a generated source, cached by its text."""
    k = _BY_SOURCE.get(source)  # (a string keeps its hash: no digest of the text again)
    if k is not None:
        return k
    key = hashlib.sha1(source.encode()).hexdigest()[:16]
    k = _KERNELS.get(key)
    if k is not None:
        _BY_SOURCE[source] = k
        return k
    with _LOCK:
        k = _KERNELS.get(key)
        if k is None:
            d = Path(tempfile.gettempdir()) / f"glint-kernels-{os.getuid() if hasattr(os, 'getuid') else 0}"
            d.mkdir(parents=True, exist_ok=True)
            path = d / f"{name}_{key}.py"
            if not path.exists():
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(source)
                os.replace(tmp, path)
            spec = importlib.util.spec_from_file_location(f"glint_{name}_{key}", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            k = _KERNELS[key] = getattr(mod, name)
        _BY_SOURCE[source] = k
    return k


def lower(predicate, batch: Batch) -> tuple[str, Lowering] | None:
    """The kernel source of ``predicate`` over ``batch``'s columns and its
    arguments, or None where a node does not compile."""
    low = Lowering(batch)
    try:
        value, known = low.boolean(predicate)
    except CannotLower:
        return None
    return _source(low, value, known), low


_BROKEN: list[str] = []  # why the kernels stopped: a Triton that cannot compile them


_LOWERED = LoweringCache()


def lowered_args(cache: LoweringCache, e, batch: Batch, lower_fn):
    """(entry, the kernel's pointer arguments) for ``e`` over ``batch``:
    ``lower_fn(e, batch)`` gives (entry, lowering) or None, and an entry
    (``entry[0]`` the source, ``entry[1]`` the recipe of its pointers) is
    kept for later batches of the same shape. None where ``e`` does not
    compile."""
    key = cache.key(e, batch)
    entry = cache.get(e, key)
    if entry is not None:
        try:
            return entry, [resolve(r, batch) for r in entry[1]]
        except CannotLower:
            return None  # (a dictionary's test failed on some entry: the evaluator decides)
    got = lower_fn(e, batch)
    if got is None:
        return None
    entry, low = got
    cache.put(e, key, entry)
    return entry, low.tensors


def _lower_predicate(predicate, batch: Batch):
    lowered = lower(predicate, batch)
    if lowered is None:
        return None
    source, low = lowered
    return (source, tuple(low.recipe), tuple(low.params)), low


def fused_mask(predicate, batch: Batch) -> torch.Tensor | None:
    """The rows of ``batch`` where ``predicate`` is TRUE, by one generated
    kernel; None where the predicate does not compile (or where Triton failed
    to build or launch such a kernel once in this process: logged, and the
    node-by-node evaluator runs from then on). A predicate lowered for a chunk
    before is not walked again (:class:`LoweringCache`)."""
    n = batch.num_rows
    if n == 0 or _BROKEN:
        return None
    got = lowered_args(_LOWERED, predicate, batch, _lower_predicate)
    if got is None:
        return None
    (source, _, params), tensors = got
    out = torch.empty(n, dtype=torch.int8, device=batch.device)
    if not launch_generated(source, "predicate", (*tensors, *params, out, n), _BROKEN, "fused filter"):
        return None
    return out.view(torch.bool)


def launch_generated(source: str, name: str, args: tuple, broken: list, what: str) -> bool:
    """Launch the generated kernel ``name`` of ``source`` over ``args`` (its
    last one the row count, its first tensor on the device to run on); False,
    with the reason logged and kept in ``broken`` (which turns the path off for
    the process), where Triton fails to build or launch it. Out of memory is
    raised: the query's memory handling deals with it."""
    n = args[-1]
    device_of = next(a for a in args if isinstance(a, torch.Tensor))
    try:
        kernel = load_kernel(source, name)
        with on_device(device_of):
            kernel[(blocks(n, BLOCK),)](*args, BLOCK=BLOCK, num_warps=WARPS)
    except torch.cuda.OutOfMemoryError:
        raise
    except Exception as e:  # noqa: BLE001 - a compiler's failure: the evaluator answers instead
        broken.append(f"{type(e).__name__}: {e}")
        logging.getLogger("glint").warning("%s kernels are off for this process: %s", what, broken[0][:500])
        return False
    return True
