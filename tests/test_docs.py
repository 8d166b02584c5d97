"""scripts/gen_docs.py: the generated blocks of README.md and docs/*.md are up
to date, and the script finds, rewrites and checks blocks in a small tree."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "gen_docs.py"


def _load_gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_docs"] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


gen_docs = _load_gen_docs()


def test_generated_blocks_are_up_to_date():
    """python scripts/gen_docs.py --check passes on this checkout (run the
    script without --check to rewrite stale blocks)."""
    r = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def _tree(tmp_path: Path, readme: str) -> Path:
    (tmp_path / "tests" / "sqllogic" / "area").mkdir(parents=True)
    (tmp_path / "tests" / "exec").mkdir()
    (tmp_path / "tests" / "exec" / "test_a.py").write_text(
        "import pytest\n\n@pytest.mark.parametrize('x', [1, 2])\ndef test_one(x):\n    pass\n\n"
        "def helper():\n    pass\n\nclass TestGroup:\n    def test_two(self):\n        pass\n\n"
        "    def not_a_test(self):\n        pass\n"
    )
    (tmp_path / "tests" / "exec" / "helpers.py").write_text("def test_not_collected():\n    pass\n")
    (tmp_path / "tests" / "test_top.py").write_text("def test_top():\n    pass\n")
    (tmp_path / "tests" / "sqllogic" / "area" / "a.test").write_text(
        "statement ok\nCREATE TABLE t(a INTEGER)\n\nquery I\nSELECT 1\n----\n1\n\nhalt\n\nquery I\nSELECT 2\n"
    )
    (tmp_path / "README.md").write_text(readme)
    return tmp_path


def test_tests_table_counts_functions_and_records(tmp_path):
    root = _tree(tmp_path, "")
    assert gen_docs.tests_table(root) == (
        "| Directory | Test modules | Test functions | sqllogictest files | Records |\n"
        "|---|--:|--:|--:|--:|\n"
        "| `tests/` | 1 | 1 |  |  |\n"
        "| `tests/exec/` | 1 | 2 |  |  |\n"
        "| `tests/sqllogic/` | 0 | 0 | 1 | 2 |\n"
        "| **total** | 2 | 3 | 1 | 2 |\n"
    )


def test_check_names_the_stale_block_and_a_rewrite_fixes_it(tmp_path, capsys):
    readme = (
        "# Title\n\n<!-- generated:tests:begin -->\nold table\n<!-- generated:tests:end -->\n\n"
        "<!-- generated:functions:begin -->\n<!-- generated:functions:end -->\ntail\n"
    )
    root = _tree(tmp_path, readme)
    assert gen_docs.main(["--check", "--root", str(root)]) == 1
    assert "stale: README.md: generated block 'tests'" in capsys.readouterr().out
    assert (root / "README.md").read_text() == readme  # --check writes nothing
    assert gen_docs.main(["--root", str(root)]) == 0
    text = (root / "README.md").read_text()
    assert "old table" not in text and "| **total** | 2 | 3 | 1 | 2 |\n<!-- generated:tests:end -->" in text
    assert text.startswith("# Title\n\n<!-- generated:tests:begin -->\n| Directory |") and text.endswith("tail\n")
    assert gen_docs.main(["--check", "--root", str(root)]) == 0


def test_docs_directory_and_files_without_markers(tmp_path, capsys):
    root = _tree(tmp_path, "# no markers\n")
    (root / "docs").mkdir()
    (root / "docs" / "plain.md").write_text("nothing generated here\n")
    (root / "docs" / "suite.md").write_text("<!-- generated:tests:begin -->\n<!-- generated:tests:end -->\n")
    assert gen_docs.main(["--check", "--root", str(root)]) == 1
    assert "stale: docs/suite.md: generated block 'tests'" in capsys.readouterr().out


def test_missing_reference_module_leaves_the_block(tmp_path, monkeypatch):
    monkeypatch.setitem(gen_docs.GENERATORS, "functions", gen_docs._reference("glint.no_such_module_for_docs"))
    readme = "<!-- generated:functions:begin -->\nkept\n<!-- generated:functions:end -->\n"
    root = _tree(tmp_path, readme)
    assert gen_docs.main(["--check", "--root", str(root)]) == 0
    assert gen_docs.main(["--root", str(root)]) == 0
    assert (root / "README.md").read_text() == readme


@pytest.mark.parametrize(
    "readme, message",
    [
        ("<!-- generated:tests:begin -->\n", "README.md:1: block 'tests' has no end marker"),
        ("<!-- generated:tests:end -->\n", "README.md:1: end of block 'tests' without its begin"),
        ("<!-- generated:tests:begin -->\n<!-- generated:settings:begin -->\n", "begins inside block 'tests'"),
        ("<!-- generated:nosuch:begin -->\n<!-- generated:nosuch:end -->\n", "unknown generated block 'nosuch'"),
    ],
)
def test_malformed_blocks_are_errors(tmp_path, capsys, readme, message):
    root = _tree(tmp_path, readme)
    assert gen_docs.main(["--check", "--root", str(root)]) == 2
    assert message in capsys.readouterr().err
