"""Ctrl-C in the glint command, sent to a real process: ``glint sql`` stops
the query and exits with 130 and a short message (no traceback); ``glint
shell`` stops the query and goes on with the next statement. On a terminal
a query that runs for more than two seconds shows a progress line."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[2]
LONG = "SELECT max(a.x + b.x) FROM a, a AS b"
# 4 * 10**8 rows made in pieces of 1,024 rows: about a minute on one CPU core, and long on a GPU too
SMALL_PIECES = ["--chunk-rows", "1024"]


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"x": np.arange(20_000, dtype=np.int64)}), path)
    return path


def _env():
    path = [str(ROOT), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(path))
    env.pop("GLINT_DEBUG", None)
    return env


def _read_until(fd: int, text: str, seconds: float) -> str:
    got = b""
    deadline = time.monotonic() + seconds
    while text.encode() not in got and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            got += chunk
    return got.decode(errors="replace")


def test_sql_ctrl_c_exits_130_with_a_short_message(table):
    """stderr is a terminal: the progress line shows that the query runs, then Ctrl-C."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "glint", "sql", *SMALL_PIECES, "--parquet", str(table), LONG],
        stdout=subprocess.PIPE,
        stderr=slave,
        env=_env(),
        cwd=ROOT,
    )
    os.close(slave)
    try:
        shown = _read_until(master, "rows scanned", 120)
        assert "rows scanned" in shown, shown
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
        rest = _read_until(master, "Interrupted", 5)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 130
    err = shown + rest
    assert "Interrupted" in err and "Traceback" not in err
    assert proc.stdout.read() == b""


def test_shell_ctrl_c_returns_to_the_prompt(table):
    proc = subprocess.Popen(
        [sys.executable, "-m", "glint", "shell", *SMALL_PIECES, "--parquet", str(table)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
        cwd=ROOT,
    )
    try:
        proc.stdin.write(b"SELECT 1 AS ready;\n")
        proc.stdin.flush()
        assert "ready" in _read_until(proc.stdout.fileno(), "ready", 120)
        proc.stdin.write((LONG + ";\n").encode())
        proc.stdin.flush()
        time.sleep(1.5)
        assert proc.poll() is None  # (the long query runs)
        proc.send_signal(signal.SIGINT)
        proc.stdin.write(b"SELECT 42 AS answer;\n")
        proc.stdin.close()
        proc.wait(60)
        out, err = proc.stdout.read(), proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert b"Interrupted" in err and b"Traceback" not in err
    assert b"42" in out
