"""The glint commit a benchmark records: this checkout's own, never that of a
repository a copy of the source happens to sit in; the one recorded with a
copy (glint/_build_info, written by bench/device/env.sh); else "unknown"."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from glint.bench.machine import glint_commit

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(cwd, *args) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, env=env).stdout.strip()


def _copy_source(dest: Path) -> None:
    """The package and the device scripts, as a copy of the tree has them (no .git)."""
    shutil.copytree(ROOT / "glint", dest / "glint", ignore=shutil.ignore_patterns("__pycache__", "_build_info"))
    shutil.copytree(ROOT / "bench" / "device", dest / "bench" / "device", ignore=shutil.ignore_patterns("__pycache__"))


def _commit_seen_by(source: Path) -> str:
    code = "from glint.bench.machine import glint_commit; print(glint_commit())"
    # (the copy first; the rest of the path keeps the dependencies a device machine carries there)
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != ROOT]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(source), *rest]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=source, check=True)
    return r.stdout.strip()


def test_a_checkout_records_its_own_commit():
    from glint.bench.machine import _recorded_sha

    sha = _recorded_sha()
    if sha and subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{sha}^{{commit}}"]).returncode:
        pytest.skip("this tree was copied over an older checkout (test_a_tree_copied_over_... covers it)")
    head = _git(ROOT, "rev-parse", "--short=7", "HEAD")
    dirty = _git(ROOT, "status", "--porcelain", "--untracked-files=no")
    assert glint_commit() == head + ("-dirty" if dirty else "")


def test_a_copy_inside_another_repository_does_not_take_its_commit(tmp_path):
    outer = tmp_path / "other"
    outer.mkdir()
    _git(outer, "init", "-q")
    (outer / "x.txt").write_text("x")
    _git(outer, "add", "x.txt")
    _git(outer, "commit", "-q", "-m", "x")
    source = outer / "copies" / "glint-src"
    _copy_source(source)
    assert _commit_seen_by(source) == "unknown"
    # the commit recorded with the copy
    sha = "0123456789abcdef0123456789abcdef01234567"
    (source / "glint" / "_build_info").write_text(f"commit={sha}\ndirty=0\n")
    assert _commit_seen_by(source) == sha[:7]
    (source / "glint" / "_build_info").write_text(f"commit={sha}\ndirty=1\n")
    assert _commit_seen_by(source) == sha[:7] + "-dirty"


def test_the_device_scripts_record_the_sources_commit(tmp_path):
    """Sourcing bench/device/env.sh in a checkout writes its HEAD (and whether
    tracked files changed) into glint/_build_info, which travels with a copy."""
    repo = tmp_path / "repo"
    _copy_source(repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "glint", "bench")
    _git(repo, "commit", "-q", "-m", "source")
    head = _git(repo, "rev-parse", "HEAD")
    subprocess.run(["bash", "-c", "source bench/device/env.sh"], cwd=repo, check=True, capture_output=True)
    assert (repo / "glint" / "_build_info").read_text().splitlines()[:2] == [f"commit={head}", "dirty=0"]
    with open(repo / "glint" / "errors.py", "a") as f:
        f.write("\n# changed\n")
    subprocess.run(["bash", "-c", "source bench/device/env.sh"], cwd=repo, check=True, capture_output=True)
    assert (repo / "glint" / "_build_info").read_text().splitlines()[:2] == [f"commit={head}", "dirty=1"]
    # the copy (no .git) keeps what the source recorded
    copy = tmp_path / "copy"
    _copy_source(copy)
    shutil.copy(repo / "glint" / "_build_info", copy / "glint" / "_build_info")
    shutil.copy(repo / "glint" / "errors.py", copy / "glint" / "errors.py")
    subprocess.run(["bash", "-c", "source bench/device/env.sh"], cwd=copy, check=True, capture_output=True)
    assert _commit_seen_by(copy) == head[:7] + "-dirty"


def test_a_tree_copied_over_an_older_checkout_keeps_its_recorded_commit(tmp_path):
    """The GPU machine's copy of a working tree lies over an older checkout of
    the same repository: its git directory does not hold the commit recorded
    with the tree, and sourcing env.sh there must not replace that record
    with the older HEAD."""
    repo = tmp_path / "repo"
    _copy_source(repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "glint", "bench")
    _git(repo, "commit", "-q", "-m", "older")
    newer = "89abcdef0123456789abcdef0123456789abcdef"
    (repo / "glint" / "_build_info").write_text(f"commit={newer}\ndirty=0\n")
    with open(repo / "glint" / "errors.py", "a") as f:
        f.write("\n# the newer tree\n")
    subprocess.run(["bash", "-c", "source bench/device/env.sh"], cwd=repo, check=True, capture_output=True)
    assert (repo / "glint" / "_build_info").read_text().splitlines()[:2] == [f"commit={newer}", "dirty=0"]
    assert _commit_seen_by(repo) == newer[:7]


def test_a_duckdb_extension_that_is_not_installed_names_its_package():
    import duckdb

    from glint.errors import GlintError
    from glint.workloads.common import load_duckdb_extension

    with pytest.raises(GlintError, match=r"pip install duckdb-ext-nosuchext"):
        load_duckdb_extension(duckdb.connect(), "nosuchext")
