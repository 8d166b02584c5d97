"""Data generation reports its progress also when stderr is not a terminal
(a log file, a CI job, a remote run): a plain line every
GLINT_PROGRESS_INTERVAL seconds and one when it is done."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from glint.errors import GlintError
from glint.workloads.progress import GenerationProgress, progress_interval

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _glint(args, env, timeout=600):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **env)
    return subprocess.run(
        [sys.executable, "-m", "glint", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_glint_tpch_reports_generation_progress_without_a_terminal(tmp_path):
    from tests.io.test_loaders import _tpchgen_or_skip

    _tpchgen_or_skip()
    r = _glint(
        ["tpch", "--sf", "0.01", "--device", "cpu", "--queries", "6", "--no-check"],
        {"GLINT_DATA": str(tmp_path), "GLINT_PROGRESS_INTERVAL": "0.05"},
    )
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("tpchgen-cli SF 0.01:")]
    assert len(lines) >= 2, r.stderr  # the start, and a line every 0.05 s while it runs
    assert all(re.search(r"\d+/8 tables", ln) and re.search(r"\d+\.\d s\)$", ln) for ln in lines), lines
    assert re.search(r"generated TPC-H SF 0\.01 in \d+\.\d s", r.stderr), r.stderr
    assert "\x1b[" not in r.stderr  # no terminal control sequences in a log


def test_glint_bench_reports_generation_progress_without_a_terminal(tmp_path):
    r = _glint(
        ["bench", "ssb", "--sf", "0.01", "--device", "cpu", "--queries", "1.1", "--runs", "1", "--no-duckdb"]
        + ["--no-cold", "--out", str(tmp_path / "out")],
        {"GLINT_DATA": str(tmp_path), "GLINT_PROGRESS_INTERVAL": "0.01"},
    )
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("SSB SF 0.01:")]
    assert lines and all(re.search(r"\d+/\d+ parts", ln) for ln in lines), r.stderr
    assert re.search(r"generated SSB SF 0\.01 into .* in \d+\.\d s", r.stderr), r.stderr


def test_plain_lines_every_interval(capsys, monkeypatch):
    monkeypatch.setenv("GLINT_PROGRESS_INTERVAL", "0.02")
    with GenerationProgress("gen", total=3, tty=False) as p:
        for i in range(3):
            time.sleep(0.06)
            p.update(completed=i + 1, info=f"step {i}")
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("gen: 0/3") and len(err) >= 4, err
    assert any("2/3 step 1" in ln for ln in err) and err[-1].startswith("generated gen in "), err


def test_the_interval_setting_is_checked(monkeypatch):
    monkeypatch.setenv("GLINT_PROGRESS_INTERVAL", "soon")
    with pytest.raises(GlintError, match="GLINT_PROGRESS_INTERVAL"):
        progress_interval()
    monkeypatch.setenv("GLINT_PROGRESS_INTERVAL", "0")
    with pytest.raises(GlintError, match="GLINT_PROGRESS_INTERVAL"):
        progress_interval()
    monkeypatch.delenv("GLINT_PROGRESS_INTERVAL")
    assert progress_interval() > 0
