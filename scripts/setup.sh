#!/usr/bin/env bash
# Set up the development environment, idempotently (a second run takes about a second):
#   - a virtual environment in ./.venv (created when missing);
#   - torch: kept when it imports (pre-install your CUDA build to use a GPU), else the CPU build
#     of torch==2.13.0 (from PyTorch's CPU index: PyPI's Linux wheel is the CUDA build, gigabytes);
#   - glint, editable, with the test extras (pytest, pytest-xdist, duckdb + its tpch extension,
#     tpchgen-cli, import-linter, ruff);
#   - glint's bytecode compiled (see the end).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# ./.venv always; when this machine's python3 already has a torch (a CUDA build,
# say), the venv sees it through --system-site-packages instead of replacing it.
if [ ! -x .venv/bin/python ]; then
    if python3 -c "import torch" >/dev/null 2>&1; then
        echo "setup: creating .venv (reusing the system torch)" >&2
        python3 -m venv --system-site-packages .venv
    else
        echo "setup: creating .venv" >&2
        python3 -m venv .venv
    fi
fi
PY="$PWD/.venv/bin/python"
PIP=("$PY" -m pip install --disable-pip-version-check --quiet)

if ! TORCH="$("$PY" -c "import torch; print(torch.__version__)" 2>/dev/null)"; then
    echo "setup: installing torch==2.13.0, CPU build (for a GPU, install your CUDA build of torch first)" >&2
    # a CPU wheel pip finds without an index (a local wheel directory in pip's configuration)
    # installs as it is; otherwise torch comes from PyTorch's CPU index
    if "$PY" -m pip download --disable-pip-version-check --quiet --no-deps --no-index \
            -d "$(mktemp -d)" "torch==2.13.0" >/dev/null 2>&1; then
        "${PIP[@]}" "torch==2.13.0"
    else
        "${PIP[@]}" --index-url "${GLINT_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}" "torch==2.13.0"
    fi
    TORCH="$("$PY" -c "import torch; print(torch.__version__)")"
fi

# Skip the install when this checkout is already installed with the current pyproject.toml.
stamp_ok() {
    "$PY" - "$PWD" <<'PYEOF'
import hashlib, os, sys
root = sys.argv[1]
want = hashlib.sha256(open(os.path.join(root, "pyproject.toml"), "rb").read()).hexdigest()
stamp = os.path.join(sys.prefix, ".glint-setup-" + hashlib.sha256(root.encode()).hexdigest()[:16])
try:
    ok = open(stamp).read().strip() == want
    import glint, pytest, xdist, importlinter, ruff, duckdb, duckdb_ext  # noqa: F401
    ok = ok and os.path.realpath(glint.__file__).startswith(os.path.realpath(os.path.join(root, "glint")))
except Exception:
    ok = False
sys.exit(0 if ok else 1)
PYEOF
}
write_stamp() {
    "$PY" - "$PWD" <<'PYEOF'
import hashlib, os, sys
root = sys.argv[1]
want = hashlib.sha256(open(os.path.join(root, "pyproject.toml"), "rb").read()).hexdigest()
stamp = os.path.join(sys.prefix, ".glint-setup-" + hashlib.sha256(root.encode()).hexdigest()[:16])
open(stamp, "w").write(want + "\n")
PYEOF
}

if ! stamp_ok; then
    echo "setup: installing glint (editable) with its test dependencies" >&2
    "${PIP[@]}" -e ".[test]"
    write_stamp
fi
# glint's bytecode, written once: where PYTHONDONTWRITEBYTECODE is set (some images set it),
# Python would compile all of glint's sources at every start (0.4 s of 1.8 s for
# `glint sql "SELECT 42"` on a 2-core VM); it still reads .pyc files that exist. Only missing or
# stale ones are written (0.1 s when nothing changed).
"$PY" -m compileall -q -j 0 glint >/dev/null
echo "setup: ready: torch $TORCH in $("$PY" -c 'import sys; print(sys.prefix)')" >&2
