"""Regenerate the generated blocks of README.md and docs/*.md.

A generated block is everything between two marker lines::

    <!-- generated:NAME:begin -->
    ...
    <!-- generated:NAME:end -->

and NAME picks what goes in it:

* ``tests``: a table of the test suite, per directory under tests/: its test
  modules, test functions (``def test_*``, before parametrization) and
  sqllogictest files and records (as tests/sqllogic/runner.py parses them).
* ``functions``: ``glint.functions.reference.reference_markdown()``.
* ``settings``: ``glint.runtime.settings.reference_markdown()``.

A block whose module or function is not there (yet) is left as it is.

Usage (from the repository root)::

    python scripts/gen_docs.py            # rewrite the blocks that changed
    python scripts/gen_docs.py --check    # exit 1, naming each stale block, when one would change

Exit status: 0 when every block is up to date (or was rewritten), 1 when
``--check`` found a stale block, 2 for a malformed block or an unknown NAME.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_MARKER = re.compile(r"^<!-- generated:(?P<name>[A-Za-z0-9_-]+):(?P<edge>begin|end) -->\s*$")


class DocsError(Exception):
    """A malformed block or a block of an unknown generator; names the file and line."""


class Unavailable(Exception):
    """The generator's source is not in this checkout (yet): the block stays as it is."""


# ------------------------------------------------------------------ generators
def _test_functions(path: Path) -> int:
    """The test functions pytest collects from one module, before
    parametrization: ``def test_*`` at module level and in ``Test*`` classes."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))

    def count(body) -> int:
        n = 0
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
                n += 1
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                n += count(node.body)
        return n

    return count(tree.body)


def _importable() -> None:
    """glint and tests.sqllogic importable from this script's repository."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def _sqllogic_parser():
    _importable()
    from tests.sqllogic import runner

    return runner.parse_file


@dataclass
class _Row:
    modules: int = 0
    functions: int = 0
    test_files: int = 0
    records: int = 0


def tests_table(root: Path) -> str:
    """The ``tests`` block: per directory under tests/ (tests/ itself for the
    modules at its top), the test modules, test functions, sqllogictest
    files and their records."""
    tests = root / "tests"
    if not tests.is_dir():
        raise Unavailable("no tests/ directory")
    rows: dict[str, _Row] = {}
    parse_file = None
    for path in sorted(tests.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(tests)
        key = "tests" if len(rel.parts) == 1 else f"tests/{rel.parts[0]}"
        if path.suffix == ".py" and path.name.startswith("test_"):
            row = rows.setdefault(key, _Row())
            row.modules += 1
            row.functions += _test_functions(path)
        elif path.suffix == ".test":
            parse_file = parse_file or _sqllogic_parser()
            row = rows.setdefault(key, _Row())
            row.test_files += 1
            row.records += len(parse_file(path).records)
    total = _Row(
        *(sum(getattr(r, f) for r in rows.values()) for f in ("modules", "functions", "test_files", "records"))
    )
    lines = ["| Directory | Test modules | Test functions | sqllogictest files | Records |", "|---|--:|--:|--:|--:|"]
    for key in sorted(rows, key=lambda k: (k != "tests", k)):
        r = rows[key]
        lines.append(f"| `{key}/` | {r.modules} | {r.functions} | {r.test_files or ''} | {r.records or ''} |")
    lines.append(f"| **total** | {total.modules} | {total.functions} | {total.test_files} | {total.records} |")
    return "\n".join(lines) + "\n"


def _reference(module: str) -> Callable[[Path], str]:
    """A generator calling ``module.reference_markdown()``; Unavailable when the
    module or the function is not in this checkout."""

    def generate(root: Path) -> str:
        _importable()
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name and (module == e.name or module.startswith(e.name + ".")):
                raise Unavailable(f"no module {module}") from None
            raise
        fn = getattr(mod, "reference_markdown", None)
        if fn is None:
            raise Unavailable(f"{module} has no reference_markdown()")
        text = fn()
        return text if text.endswith("\n") else text + "\n"

    return generate


GENERATORS: dict[str, Callable[[Path], str]] = {
    "tests": tests_table,
    "functions": _reference("glint.functions.reference"),
    "settings": _reference("glint.runtime.settings"),
}


# ------------------------------------------------------------------ blocks
@dataclass
class Block:
    name: str
    begin: int  # index of the begin marker line
    end: int  # index of the end marker line


def find_blocks(lines: list[str], where: str) -> list[Block]:
    """The generated blocks of a file's lines (kept line ends), checked for
    balance: every begin has its end, and blocks do not nest."""
    blocks: list[Block] = []
    open_name, open_at = None, 0
    for i, line in enumerate(lines):
        m = _MARKER.match(line)
        if not m:
            continue
        name, edge = m["name"], m["edge"]
        if edge == "begin":
            if open_name is not None:
                raise DocsError(
                    f"{where}:{i + 1}: block {name!r} begins inside block {open_name!r} (begun at line {open_at + 1})"
                )
            open_name, open_at = name, i
        else:
            if open_name != name:
                raise DocsError(f"{where}:{i + 1}: end of block {name!r} without its begin")
            blocks.append(Block(name, open_at, i))
            open_name = None
    if open_name is not None:
        raise DocsError(f"{where}:{open_at + 1}: block {open_name!r} has no end marker")
    return blocks


def regenerate(text: str, where: str, root: Path, cache: dict) -> tuple[str, list[str]]:
    """(new text, names of the blocks that changed) of one file."""
    lines = text.splitlines(keepends=True)
    blocks = find_blocks(lines, where)
    changed: list[str] = []
    for block in reversed(blocks):  # from the end: earlier indices stay valid
        gen = GENERATORS.get(block.name)
        if gen is None:
            raise DocsError(
                f"{where}:{block.begin + 1}: unknown generated block {block.name!r} (known: {', '.join(GENERATORS)})"
            )
        if block.name not in cache:
            try:
                cache[block.name] = gen(root)
            except Unavailable:
                cache[block.name] = None
        content = cache[block.name]
        if content is None:
            continue
        new = content.splitlines(keepends=True)
        if lines[block.begin + 1 : block.end] != new:
            lines[block.begin + 1 : block.end] = new
            changed.append(block.name)
    return "".join(lines), list(reversed(changed))


def doc_files(root: Path) -> list[Path]:
    files = [root / "README.md"] if (root / "README.md").is_file() else []
    docs = root / "docs"
    if docs.is_dir():
        files += sorted(docs.glob("*.md"))
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if a block is stale")
    ap.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the tree whose README.md, docs/ and tests/ to read (default: this script's repository)",
    )
    args = ap.parse_args(argv)
    root = args.root.resolve()
    cache: dict = {}
    status = 0
    for path in doc_files(root):
        where = str(path.relative_to(root))
        old = path.read_text(encoding="utf-8")
        try:
            new, changed = regenerate(old, where, root, cache)
        except DocsError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        for name in changed:
            if args.check:
                print(f"stale: {where}: generated block {name!r} (run python scripts/gen_docs.py)")
                status = 1
            else:
                print(f"updated: {where}: generated block {name!r}")
        if changed and not args.check:
            path.write_text(new, encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main())
