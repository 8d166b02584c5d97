"""Test-suite wiring shared by every directory: the command-line options, the
``device`` fixture, and the TPC-H/SSB data of the data cache generated once per
run even when pytest-xdist runs the tests in several processes.

The tests are grouped by the glint layer they test (tests/exec tests glint.exec,
...); tests/sqllogic holds the sqllogictest records and their runner, a pytest
plugin of its own (tests/sqllogic/conftest.py). Test modules import shared
helpers by their package path (``from tests.io.test_parquet_pages import ...``):
the repository root is on ``sys.path`` (pyproject.toml: ``pythonpath``)."""

import argparse
import contextlib
import os
from pathlib import Path

import pytest

# the runner's own modules are not test modules (their doctests run in test_sqllogic_runner.py)
collect_ignore = ["sqllogic/runner.py", "sqllogic/generate.py"]


def pytest_addoption(parser):
    group = parser.getgroup("glint")
    group.addoption(
        "--device",
        default="cpu",
        help="device for glint connections: cpu (default), cuda, cuda:N, or all "
        "(cpu, plus cuda when torch.cuda.is_available())",
    )
    group.addoption(
        "--serve-args",
        default="",
        help='more options for the glint serve of tests/server, e.g. "--ranks 4"',
    )
    group.addoption(
        "--sqllogic-engine", default="glint", choices=["glint", "duckdb"], help=argparse.SUPPRESS
    )  # duckdb: check tests/sqllogic against DuckDB itself


def pytest_configure(config):
    # CI machines show 2 cores but deliver about one core of throughput: with two
    # intra-op threads every parallel torch op waits ~6 ms for the second thread
    # (measured: a 100k-element multiply takes 6.5 ms with 2 threads, 0.012 ms with 1).
    import torch

    if torch.get_num_threads() <= 2:
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


@contextlib.contextmanager
def _run_lock(tmp_path_factory, name: str):
    """An exclusive lock shared by the processes of one pytest run: under
    pytest-xdist every worker's base temporary directory lies in one common
    directory, where the lock file is kept."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    try:
        import fcntl
    except ImportError:  # no fcntl (Windows): the generators' atomic renames still keep the cache whole
        yield
        return
    with open(base / f"{name}.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def cached_tpch(tmp_path_factory):
    """``cached_tpch(sf)``: the directory of TPC-H Parquet files of scale factor
    ``sf`` in the data cache (glint.workloads.tpch.data_dir), generated first when
    missing, by one process of the run while the others wait."""
    from glint.workloads import tpch

    def get(sf) -> Path:
        with _run_lock(tmp_path_factory, f"tpch-sf{tpch.sf_label(sf)}"):
            return tpch.ensure_tpch_data(sf, progress=False)

    return get


@pytest.fixture(scope="session")
def cached_tpcds(tmp_path_factory):
    """``cached_tpcds(sf)``: the directory of TPC-DS Parquet files of scale
    factor ``sf`` in the data cache (glint.workloads.tpcds.data_dir), generated
    first when missing (DuckDB's dsdgen), by one process of the run."""
    from glint.workloads import tpcds, tpch

    def get(sf) -> Path:
        with _run_lock(tmp_path_factory, f"tpcds-sf{tpch.sf_label(sf)}"):
            try:
                return tpcds.ensure_tpcds_data(sf, progress=False)
            except Exception:
                if not _duckdb_extension_loads("tpcds"):
                    pytest.skip("needs DuckDB's tpcds extension (pip install duckdb-ext-tpcds) to make the data")
                raise

    return get


def _duckdb_extension_loads(name: str) -> bool:
    import duckdb

    from glint.workloads.common import load_duckdb_extension

    con = duckdb.connect()
    try:
        load_duckdb_extension(con, name)
        return True
    except Exception:  # noqa: BLE001 - not installed, or not loadable here
        return False
    finally:
        con.close()


@pytest.fixture(scope="session")
def cached_ssb(tmp_path_factory):
    """``cached_ssb(sf)``: the directory of SSB Parquet files of scale factor
    ``sf`` in the data cache (glint.workloads.ssb.data_dir), generated first when
    missing, by one process of the run while the others wait."""
    from glint.workloads import ssb

    def get(sf) -> Path:
        with _run_lock(tmp_path_factory, f"ssb-sf{ssb.sf_label(sf)}"):
            return ssb.ensure_ssb_data(sf, progress=False, workers=2)

    return get
