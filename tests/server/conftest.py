"""The server tests' fixtures: ``glint serve`` started as a subprocess (the
real command) on a free port with a token, and ADBC Flight SQL connections to
it (``connect``).

``served`` is one server per test process, over the TPC-H SF 0.01 tables, a
1M-row table ``big`` (x, y), and a directory tree for the file-access tests:
SQL may read and write under ``files/allowed`` only; ``files/outside`` holds a
file the clients must not reach (directly, by ``..`` or by a symbolic link).
It runs on the test run's ``--device`` (the CPU by default) and takes the
run's ``--serve-args`` (e.g. ``--serve-args="--ranks 4"`` serves from four
ranks); the servers single tests start for themselves run on the CPU.
"""

from __future__ import annotations

import os
import re
import select
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("google.protobuf")
dbapi = pytest.importorskip("adbc_driver_flightsql.dbapi")

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "s3cret-token"
BIG_ROWS = 1_000_000


@dataclass
class ServerProcess:
    proc: subprocess.Popen
    port: int
    log: Path

    @property
    def uri(self) -> str:
        return f"grpc://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def start_server(args: list[str], log: Path, env: dict | None = None, timeout: float = 90.0) -> ServerProcess:
    """``glint serve ARGS --port 0 --device cpu`` in a subprocess, once it
    listens (its log lines go to ``log``)."""
    cmd = [sys.executable, "-m", "glint", "serve", "--port", "0", "--device", "cpu", *args]
    environ = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    with open(log, "w") as err:  # (the server keeps its own descriptor of it)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, cwd=ROOT, env=environ)
    deadline = time.monotonic() + timeout
    line = ""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            line = proc.stdout.readline()
            m = re.search(r"listening on \S+://[^ ]*:(\d+)", line)
            if m:
                return ServerProcess(proc, int(m.group(1)), log)
        if proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"glint serve did not start: {line!r}\n{log.read_text(errors='replace')}")


def connect(server_or_uri, token: str | None = TOKEN, **db_kwargs):
    """An ADBC Flight SQL connection (DB-API) to a server, with the token."""
    uri = server_or_uri if isinstance(server_or_uri, str) else server_or_uri.uri
    if token is not None:
        db_kwargs["adbc.flight.sql.authorization_header"] = f"Bearer {token}"
    return dbapi.connect(uri, db_kwargs=db_kwargs, autocommit=True)


def query(con, sql: str, parameters=None) -> pa.Table:
    with con.cursor() as cur:
        cur.execute(sql, parameters)
        return cur.fetch_arrow_table()


@pytest.fixture(scope="session")
def served_files(tmp_path_factory, cached_tpch):
    """(the TPC-H SF 0.01 directory, the directory of the other files)."""
    files = tmp_path_factory.mktemp("served")
    x = np.arange(BIG_ROWS, dtype=np.int64)
    pq.write_table(pa.table({"x": x, "y": x * 3}), files / "big.parquet", row_group_size=1 << 17)
    allowed, outside = files / "allowed", files / "outside"
    allowed.mkdir()
    outside.mkdir()
    (allowed / "ok.csv").write_text("a,b\n1,x\n2,y\n")
    pq.write_table(pa.table({"a": [1, 2, 3]}), allowed / "ok.parquet")
    (outside / "secret.csv").write_text("secret\n42\n")
    pq.write_table(pa.table({"secret": [42]}), outside / "secret.parquet")
    os.symlink(outside / "secret.csv", allowed / "link.csv")
    os.symlink(outside / "secret.parquet", allowed / "link.parquet")
    os.symlink(outside, allowed / "linkdir")
    return cached_tpch(0.01), files


@pytest.fixture(scope="session")
def served(served_files, tmp_path_factory, pytestconfig):
    """The test process's ``glint serve`` (see the module's text)."""
    tpch_dir, files = served_files
    device = pytestconfig.getoption("--device")
    device = "auto" if device == "all" else device
    log = tmp_path_factory.mktemp("serve-log") / "serve.log"
    server = start_server(
        [
            "--parquet",
            str(tpch_dir),
            "--parquet",
            str(files / "big.parquet"),
            "--allow-dir",
            str(files / "allowed"),
            "--token",
            TOKEN,
            "--chunk-rows",
            "65536",
            "--max-client-queries",
            "8",
            "--device",
            device,
            *shlex.split(pytestconfig.getoption("--serve-args")),
        ],
        log,
        # freed memory goes back to the system at once, so that the server's resident size follows what
        # is live (test_streaming measures it)
        env={"ARROW_DEFAULT_MEMORY_POOL": "system", "MALLOC_MMAP_THRESHOLD_": "131072"},
    )
    yield server
    server.stop()
