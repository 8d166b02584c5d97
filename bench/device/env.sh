# Sourced by the scripts in bench/device: makes this checkout's glint runnable on a
# GPU machine, with or without a virtual environment.
#
#   - wheels carried in .whl/ (sqlglot, duckdb, duckdb-ext-tpch, tpchgen-cli, rich, py-spy...)
#     are installed once into $GLINT_SITE (default /tmp/site), without network access;
#   - this checkout goes first on PYTHONPATH, so `python3 -m glint` runs its code;
#   - torch, triton, pyarrow, sqlglot and duckdb must import: what is missing is named;
#   - GLINT_DATA (where generated data sets live) defaults to /tmp/glint-data;
#   - NVLink multicast stays off for NCCL (multi-GPU hosts).
# Sets GLINT_ROOT (the checkout) and PY (the interpreter: $PYTHON, else .venv/bin/python, else python3).

GLINT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# In a git checkout of glint (its top level: not a copy lying in another
# repository), record the source's commit in glint/_build_info, which a copy
# of the tree takes along: benchmarks run from the copy report that commit
# (glint.bench.machine.glint_commit), not "unknown" or another repository's.
glint_stamp() {
    local top head dirty=0
    top=$(git -C "$GLINT_ROOT" rev-parse --show-toplevel 2>/dev/null) || return 0
    [ "$(cd "$top" && pwd -P)" = "$(cd "$GLINT_ROOT" && pwd -P)" ] || return 0
    git -C "$GLINT_ROOT" ls-files --error-unmatch glint/__init__.py >/dev/null 2>&1 || return 0
    head=$(git -C "$GLINT_ROOT" rev-parse HEAD 2>/dev/null) || return 0
    # a recorded commit this git directory does not hold came with a tree copied over an older
    # checkout (the GPU machine's copy of a working tree): that record is the tree's, keep it
    local recorded
    recorded=$(sed -n 's/^commit=//p' "$GLINT_ROOT/glint/_build_info" 2>/dev/null)
    if [ -n "$recorded" ] && ! git -C "$GLINT_ROOT" cat-file -e "$recorded^{commit}" 2>/dev/null; then
        return 0
    fi
    [ -z "$(git -C "$GLINT_ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] || dirty=1
    printf 'commit=%s\ndirty=%s\nrecorded=%s\n' "$head" "$dirty" "$(date -u +%FT%TZ)" \
        > "$GLINT_ROOT/glint/_build_info" 2>/dev/null || true
}
glint_stamp
# A machine image that forbids bytecode files (PYTHONDONTWRITEBYTECODE, no .pyc shipped) makes
# every process compile torch's and glint's sources again: about 6 s of each start on an H200
# host. Keep the bytecode in a cache of its own instead.
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
    unset PYTHONDONTWRITEBYTECODE
    export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-/tmp/glint-pycache}
fi
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export GLINT_DATA=${GLINT_DATA:-/tmp/glint-data}

if [ -n "${PYTHON:-}" ]; then
    PY=$PYTHON
elif [ -x "$GLINT_ROOT/.venv/bin/python" ]; then
    PY=$GLINT_ROOT/.venv/bin/python
else
    PY=python3
fi

if compgen -G "$GLINT_ROOT/.whl/*.whl" >/dev/null; then
    GLINT_SITE=${GLINT_SITE:-/tmp/site}
    if [ ! -d "$GLINT_SITE" ]; then
        echo "env: installing $(ls "$GLINT_ROOT"/.whl/*.whl | wc -l) carried wheels into $GLINT_SITE" >&2
        # DuckDB's extension wheels share the duckdb_ext namespace package: each gets a
        # directory of its own (one --target would let the last one replace the others)
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target "$GLINT_SITE" $(ls "$GLINT_ROOT"/.whl/*.whl | grep -v /duckdb_ext_) || return 1
    fi
    # (an extension carried by a later call on the same machine is installed then)
    for w in "$GLINT_ROOT"/.whl/duckdb_ext_*.whl; do
        [ -e "$w" ] || continue
        d="$GLINT_SITE-ext/$(basename "$w" | cut -d- -f1)"
        [ -d "$d" ] && continue
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target "$d" "$w" || return 1
    done
    ext=$(ls -d "$GLINT_SITE"-ext/* 2>/dev/null | tr '\n' ':')
    export PYTHONPATH="$GLINT_ROOT:$GLINT_SITE:$ext${PYTHONPATH:+$PYTHONPATH}" PATH="$GLINT_SITE/bin:$PATH"
else
    export PYTHONPATH="$GLINT_ROOT${PYTHONPATH:+:$PYTHONPATH}"
fi

# glint COMMAND ...: this checkout's glint command
glint() { "$PY" -m glint "$@"; }

# versions (one line), or the modules that do not import (and a non-zero status)
glint_env_check() {
    "$PY" - <<'PYEOF'
import importlib, sys
need = ["torch", "pyarrow", "sqlglot", "duckdb", "glint"]
want = ["triton"]
missing = []
versions = [f"python {sys.version.split()[0]}"]
for name in need + want:
    try:
        m = importlib.import_module(name)
        versions.append(f"{name} {getattr(m, '__version__', '?')}")
    except Exception as e:          # noqa: BLE001
        if name in need:
            missing.append(f"{name} ({type(e).__name__}: {e})")
        else:
            versions.append(f"{name} missing")
if missing:
    print("env: cannot import " + "; ".join(missing) + " (carry their wheels in .whl/, or run scripts/setup.sh)",
          file=sys.stderr)
    sys.exit(1)
import torch
gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
print(", ".join(versions) + f"; {gpu}")
PYEOF
}
