"""Kernels compiled for an H100/H200 (sm_90) on the CPU, without a GPU.

The interpreter runs a kernel's logic on the CPU, but it does not type-check
what compiled Triton does (both branches of an `if` assigning one type, loop
bounds), nor size its shared memory. A kernel can pass every interpreted test
and still fail on the first GPU call. Compiling for sm_90 here catches the
type errors, and the compiled kernel's shared memory is checked against the
hardware's limit.

How much shared memory a kernel takes depends on the Triton version. On
Triton 3.6, the partition ranking kernel asked for 256 KiB where an SM has
227 KiB. Triton 3.9's compiler lowers the same prefix sum in 512 bytes, so
this check passes there either way. The GPU's own test run is what catches
that case."""

from __future__ import annotations

import pytest

triton = pytest.importorskip("triton")
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

SM90 = GPUTarget("cuda", 90, 32)
SHARED_LIMIT = 232_448  # bytes of shared memory a kernel may use on an H100/H200 SM


def compiled(fn, signature: dict, constexprs: dict):
    for name in constexprs:
        signature[name] = "constexpr"
    k = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=constexprs), target=SM90)
    assert "ptx" in k.asm
    return k


@pytest.mark.parametrize("parts", [2, 8, 33, 64])
def test_partition_kernels_fit_the_shared_memory(parts):
    from glint.kernels import partition as P

    bins = P._padded_parts(parts)
    block = P._block_rows(bins)
    sig = {"dest_ptr": "*i64", "hist_ptr": "*i32", "n": "i64"}
    compiled(P._histogram_kernel, sig, {"PARTS": parts, "BINS": bins, "BLOCK": block})
    sig = {"dest_ptr": "*i64", "base_ptr": "*i64", "order_ptr": "*i64", "n": "i64", "nb": "i64"}
    k = compiled(P._place_kernel, sig, {"PARTS": parts, "BINS": bins, "BLOCK": block})
    assert k.metadata.shared <= SHARED_LIMIT


def _sums_signature(floating, masked, gid="*i64", rows=False):
    sig = {"gid_ptr": gid, "rows_ptr": "*i1", "n": "i64"} if rows else {"gid_ptr": gid, "n": "i64"}
    for i in range(len(floating)):
        v = "*fp64" if floating[i] else "*i64"
        sig[f"v{i}"] = v
        sig[f"m{i}"] = "*i1" if masked[i] else v
    sig["out_ptr"] = "*i64"
    return sig


@pytest.mark.parametrize(
    "k, groups, floating, masked, has_gid, has_rows",
    [
        (5, 8, (0,) * 8, (0,) * 8, True, True),  # TPC-H Q1's shape: a WHERE, six of eight groups
        (8, 32, (0, 1, 0, 0, 1, 0, 0, 0), (0, 0, 1, 0, 0, 0, 0, 1), True, True),
        (4, 1, (0, 1, 0, 1, 0, 0, 0, 0), (1, 0, 1, 0, 0, 0, 0, 0), False, False),
        (1, 32, (0,) * 8, (1, 0, 0, 0, 0, 0, 0, 0), True, False),
        (3, 8, (1, 0, 0, 0, 0, 0, 0, 0), (0, 1, 1, 0, 0, 0, 0, 0), True, False),
    ],
)
def test_few_group_sums_kernel(k, groups, floating, masked, has_gid, has_rows):
    from glint.kernels import group_reduce as R

    block = max(64, 4096 // groups)
    consts = {"G": groups, "K": k, "HAS_GID": has_gid, "HAS_ROWS": has_rows, "BLOCK": block, "TILES": 4}
    consts["SMALL"] = (1 << 63) // block - 1
    for i in range(R.FEW_COLUMNS_PER_LAUNCH):
        consts[f"F{i}"], consts[f"M{i}"] = bool(floating[i]), bool(masked[i])
    sig = _sums_signature(floating, masked, rows=True)
    if not has_rows:
        sig["rows_ptr"] = "*i64"
    out = compiled(R._group_sums_kernel, sig, consts)
    assert out.metadata.shared <= SHARED_LIMIT


@pytest.mark.parametrize("length", [1, 3, 7, 8])
def test_substring_search_kernels(length):
    from glint.kernels.strings import search as S

    common = {"data": "*u8", "offsets": "*i64", "m": "i64", "lit": "*u8"}
    counting = dict(common, counts="*i32", base="*i32", found="*i64")
    compiled(S._flat_matches_kernel, counting, {"L": length, "WRITE": False, "BLOCK": S._FLAT_BLOCK})
    listing = dict(common, counts="*i32", base="*i64", found="*i64")
    compiled(S._flat_matches_kernel, listing, {"L": length, "WRITE": True, "BLOCK": S._FLAT_BLOCK})
    one_pass = {
        "data": "*u8",
        "offsets": "*i64",
        "block_entry": "*i64",
        "m": "i64",
        "from_pos": "*i64",
        "lit": "*u8",
        "out": "*i64",
    }
    compiled(S._find_flat_kernel, one_pass, {"L": length, "BLOCK": S._FLAT_BLOCK})
    scattered = {
        "data": "*u8",
        "starts": "*i64",
        "lengths": "*i64",
        "from_pos": "*i64",
        "lit": "*u8",
        "L": "i64",
        "out": "*i64",
        "m": "i64",
    }
    compiled(S._find_kernel, scattered, {"BE": 16, "BB": 64})
    per_string = {
        "data": "*u8",
        "starts": "*i64",
        "lengths": "*i64",
        "from_pos": "*i64",
        "words": "*i64",
        "out": "*i64",
        "m": "i64",
    }
    compiled(S._find_seq_kernel, per_string, {"K": min(length, 3), "BE": S._ROW_BLOCK})


@pytest.mark.parametrize(
    "floating, masked, rows", [((0, 0, 0, 0), (0, 0, 0, 0), True), ((1, 0, 1, 0), (0, 1, 1, 0), False)]
)
def test_many_group_sums_kernel(floating, masked, rows):
    from glint.kernels import group_reduce as R

    consts = {"K": 4, "ROWS": rows, "BLOCK": 1024}
    for i in range(4):
        consts[f"F{i}"], consts[f"M{i}"] = bool(floating[i]), bool(masked[i])
    sig = _sums_signature(floating, masked)
    sig.update(fout_ptr="*fp64", rows_ptr="*i64")
    compiled(R._group_sums_atomic_kernel, sig, consts)


@pytest.mark.parametrize("groups", [1, 4, 32])
def test_first_rows_kernel(groups):
    from glint.kernels import group_reduce as R

    sig = {"gid_ptr": "*i64", "n": "i64", "out_ptr": "*i64"}
    compiled(R._first_rows_kernel, sig, {"G": groups, "BLOCK": max(64, 4096 // groups), "TILES": 4})


@pytest.mark.parametrize("days", ["*i32", "*i64"])
def test_calendar_kernel(days):
    from glint.kernels import calendar as C

    for field in range(len(C.FIELDS)):
        compiled(
            C._civil_kernel, {"days_ptr": days, "out_ptr": "*i64", "n": "i64"}, {"FIELD": field, "BLOCK": C._BLOCK}
        )


@pytest.mark.parametrize("raw", ["*i32", "*i64"])
@pytest.mark.parametrize("hashed, counted", [(True, True), (True, False), (False, True)])
def test_join_probe_kernel(raw, hashed, counted):
    from glint.kernels import join as J

    sig = {"raw_ptr": raw, "valid_ptr": "*i1", "n": "i64", "lo": "i64", "hi": "i64", "dlo": "i64", "span": "i64"}
    sig.update({"table_ptr": "*i64", "ids_ptr": "*i32", "shift": "i64", "mask": "i64"})
    sig.update({"starts_ptr": "*i64", "counts_ptr": "*i64", "start_out": "*i64", "count_out": "*i64"})
    consts = {"HAS_VALID": True, "HASHED": hashed, "COUNTED": counted, "BLOCK": J._PROBE_BLOCK}
    compiled(J._match_offsets_kernel, sig, consts)


def test_no_kernel_argument_is_named_like_a_launcher_local():
    """Triton 3.6 binds a launch's arguments in generated code whose locals
    include ``params``, ``specialization`` and ``options``: a kernel argument
    of one of those names is overwritten there, and the launch fails on the GPU
    with "failed to specialize argument of type: dict" (interpreted and
    compiled-ahead tests pass)."""
    import importlib
    import pkgutil

    import glint.kernels

    reserved = {"params", "specialization", "options", "backend", "kernel"}
    found = []
    for info in pkgutil.walk_packages(glint.kernels.__path__, "glint.kernels."):
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if isinstance(obj, triton.runtime.jit.JITFunction):
                found.append(name)
                bad = reserved & set(obj.arg_names)
                assert not bad, f"{info.name}.{name} has arguments named {sorted(bad)}"
    assert "_find_seq_kernel" in found
