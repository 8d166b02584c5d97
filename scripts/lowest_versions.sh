#!/usr/bin/env bash
# Runs glint's SQL tests with the lowest versions of its dependencies that pyproject.toml allows,
# to check the lower bounds ("sqlglot>=30", "pyarrow>=15", ...):
#
#   scripts/lowest_versions.sh [PACKAGE ...]
#
#   scripts/lowest_versions.sh                 # every dependency of [project] at its lowest version
#   scripts/lowest_versions.sh sqlglot         # only sqlglot at its lowest, the others as installed
#   scripts/lowest_versions.sh sqlglot==30.5.0 # a version of one's choosing (a candidate bound)
#
# The packages (with what they need, resolved against the pins) are installed with pip into one
# directory per set of pins under $LOWEST_DIR (default /tmp/glint-lowest), reused by later runs, and
# put first on PYTHONPATH, over the environment of $PYTHON (default .venv/bin/python, which has
# torch, duckdb and pytest): a separate environment that leaves the project's own untouched. It prints the versions that import, then runs
# the SQL tests: tests/sqllogic (every record) and TPC-H at SF 0.01 (tests/workloads/test_tpch.py,
# not the slow SF 0.1 ones). $PYTEST_ARGS adds pytest options (e.g. "-x", "-n 2 --dist loadfile").
# Exit status: the tests'. duckdb (the tests' oracle) is pinned to one version in the test extras.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
DIR=${LOWEST_DIR:-/tmp/glint-lowest}

# name==version for each package asked for (default: every [project] dependency), the lowest
# version its requirement allows unless one is given
mapfile -t pins < <("$PY" - "$@" <<'PYEOF'
import re, sys, tomllib

deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
lowest = {}
for d in deps:
    m = re.match(r"^([A-Za-z0-9_.-]+)\s*(.*)$", d.split(";")[0].strip())
    name, spec = m.group(1).lower(), m.group(2)
    low = re.search(r"(?:>=|==|~=)\s*([0-9][^,\s]*)", spec)
    if low:
        lowest[name] = low.group(1)
asked = sys.argv[1:] or list(lowest)
for a in asked:
    name, _, version = a.partition("==")
    name = name.lower()
    if not version:
        if name not in lowest:
            sys.exit(f"lowest_versions: {name} has no lower bound in pyproject.toml's dependencies")
        version = lowest[name]
    print(f"{name}=={version}")
PYEOF
) || exit 2

# the packages asked for, installed together with what they need (pip resolves those against
# the pins: pandas 2.0 gets a numpy it was built for) into one directory per set of pins
target="$DIR/$(IFS=_; echo "${pins[*]}" | tr '=' '-')"
if [ ! -f "$target/.installed" ]; then
    echo "lowest_versions: installing ${pins[*]} into $target" >&2
    rm -rf "$target"
    "$PY" -m pip install -q --no-compile --disable-pip-version-check --target "$target" "${pins[@]}" \
        || { echo "lowest_versions: cannot install ${pins[*]}" >&2; exit 2; }
    touch "$target/.installed"
fi
export PYTHONPATH="$target:.${PYTHONPATH:+:$PYTHONPATH}"

"$PY" - "${pins[@]}" <<'PYEOF' || exit 2
import importlib, sys

modules = {"pyarrow": "pyarrow", "numpy": "numpy", "pandas": "pandas", "rich": "rich", "sqlglot": "sqlglot"}
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    mod = importlib.import_module(modules.get(name, name))
    got = getattr(mod, "__version__", None)
    if got is None:
        from importlib.metadata import version as v

        got = v(name)
    where = getattr(mod, "__file__", "?")
    try:
        from packaging.version import Version

        same = Version(got) == Version(version)
    except ImportError:
        same = got == version
    if not same:
        sys.exit(f"lowest_versions: {name} is {got} ({where}), not {version}")
    print(f"lowest_versions: {name} {got}")
import glint

print(f"lowest_versions: glint {glint.__version__} from {glint.__file__}")
PYEOF

# shellcheck disable=SC2086
"$PY" -m pytest -q -p no:cacheprovider ${PYTEST_ARGS:-} tests/sqllogic tests/workloads/test_tpch.py -m "not slow"
