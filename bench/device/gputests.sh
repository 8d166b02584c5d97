#!/usr/bin/env bash
# The test suite on a GPU machine: pytest --device cuda over the given paths (default: the
# layers whose code has GPU paths), with a time limit per test, in several processes where
# pytest-xdist is there, and the failures named in one short file first.
#
#   bench/device/gputests.sh OUT_DIR [pytest paths and flags...]
#
# Writes OUT_DIR/0-failures.txt (the failing and erroring tests, one a line, from the JUnit
# report: it holds what finished even when the run is stopped at a time limit), OUT_DIR/junit.xml
# and OUT_DIR/pytest.log. Wheels carried in .wt/ (pytest, pytest-timeout, pytest-xdist and
# their dependencies) are installed into /tmp/site-test first, offline. A GPU machine hands back
# few files: these three are all this writes.
set -uo pipefail
out=${1:?usage: gputests.sh OUT_DIR [pytest args...]}
shift
mkdir -p "$out"
source "$(dirname "${BASH_SOURCE[0]}")/env.sh" || exit 1
if compgen -G "$GLINT_ROOT/.wt/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --target /tmp/site-test "$GLINT_ROOT"/.wt/*.whl >/dev/null 2>&1
    export PYTHONPATH=/tmp/site-test:$PYTHONPATH
fi
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(tests/exec tests/functions tests/kernels tests/io tests/sqllogic)
extra=()
# (a file's tests in one process: an sqllogic file's records build on the ones before them)
"$PY" -c "import xdist" 2>/dev/null && extra+=(-n "${GLINT_TEST_WORKERS:-8}" --dist loadfile)
"$PY" -c "import pytest_timeout" 2>/dev/null && extra+=(--timeout "${GLINT_TEST_TIMEOUT:-300}")
cd "$GLINT_ROOT" || exit 1
"$PY" -m pytest -p no:cacheprovider --device cuda -q --tb=short -rfE "${extra[@]}" \
    --junitxml "$out/junit.xml" "${args[@]}" > "$out/pytest.log" 2>&1
rc=$?
"$PY" - "$out/junit.xml" > "$out/0-failures.txt" <<'PYEOF'
import sys
import xml.etree.ElementTree as ET

try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError) as e:
    print(f"no JUnit report ({e}); the end of pytest.log:")
    print("".join(open(sys.argv[1].rsplit("/", 1)[0] + "/pytest.log", errors="replace").readlines()[-15:]))
    raise SystemExit
total = bad = 0
for case in root.iter("testcase"):
    total += 1
    for kind in ("failure", "error"):
        el = case.find(kind)
        if el is not None:
            bad += 1
            msg = (el.get("message") or "").splitlines()[0][:200] if el.get("message") else ""
            print(f"{kind.upper()} {case.get('classname')}::{case.get('name')}  {msg}")
print(f"{bad} failed or errored of {total} finished")
PYEOF
tail -n 1 "$out/0-failures.txt"
exit $rc
