"""Test-suite wiring: registers the sqllogictest plugin (tests/sqllogic/) that
collects tests/sql/**/*.test, and its command-line options."""
import argparse
import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)          # makes tests/sqllogic importable as "sqllogic"

pytest_plugins = ["sqllogic.conftest"]
collect_ignore = ["sqllogic"]           # the plugin's own modules are not test modules


def pytest_addoption(parser):
    group = parser.getgroup("glint")
    group.addoption("--device", default="cpu",
                    help="device for glint connections: cpu (default), cuda, cuda:N, or all "
                         "(cpu, plus cuda when torch.cuda.is_available())")
    group.addoption("--sqllogic-engine", default="glint", choices=["glint", "duckdb"],
                    help=argparse.SUPPRESS)   # duckdb: check tests/sql against DuckDB itself
