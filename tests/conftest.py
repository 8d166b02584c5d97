"""Test-suite wiring: registers the sqllogictest plugin (tests/sqllogic/) that
collects tests/sql/**/*.test, and its command-line options."""
import argparse
import sys
from pathlib import Path

import pytest

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


def pytest_configure(config):
    # CI machines show 2 cores but deliver about one core of throughput: with two
    # intra-op threads every parallel torch op waits ~6 ms for the second thread
    # (measured: a 100k-element multiply takes 6.5 ms with 2 threads, 0.012 ms with 1).
    import torch
    if (torch.get_num_threads() <= 2):
        torch.set_num_threads(1)


@pytest.fixture(scope="module")
def device(request):
    """The device of a test module's glint connections: cpu by default; with
    --device cuda (or all, when a GPU is present) CUDA."""
    opt = request.config.getoption("--device")
    if opt == "all":
        import torch
        return "cuda" if torch.cuda.is_available() else "cpu"
    return opt
