"""pytest plugin: every ``*.test`` file under ``tests/sqllogic/`` becomes a pytest
File whose items are its records (``statement``/``query``), named ``L<line>``
(``L<line>[<device>]`` when not on the default cpu device).

This directory's conftest; ``tests/conftest.py`` defines the options:

* ``--device=cpu|cuda|cuda:N|all`` (default cpu; ``all`` adds cuda when
  ``torch.cuda.is_available()``)
* ``--sqllogic-engine=glint|duckdb`` (hidden; ``duckdb`` runs the records
  against DuckDB itself, which checks the expected results and the runner).

Records of one file share one engine connection and one DuckDB table store per
device; running a single item (``-k`` / node id) first replays the statements
before it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sqllogic import runner

SQL_ROOT = Path(__file__).resolve().parent
_SESSIONS = pytest.StashKey[dict]()


def _opt(config: pytest.Config, name: str, default):
    try:
        return config.getoption(name)
    except ValueError:  # options not registered (plugin used on its own)
        return default


def engine_of(config: pytest.Config) -> str:
    return _opt(config, "sqllogic_engine", "glint") or "glint"


def devices_of(config: pytest.Config) -> list[str | None]:
    """The devices to run on; [None] for the duckdb engine (no device)."""
    if engine_of(config) == "duckdb":
        return [None]
    dev = (_opt(config, "device", "cpu") or "cpu").lower()
    if dev == "all":
        devs: list[str | None] = ["cpu"]
        try:
            import torch

            if torch.cuda.is_available():
                devs.append("cuda")
        except Exception:
            pass
        return devs
    return [dev]


def _cuda_missing(device: str | None) -> bool:
    if not device or not device.startswith("cuda"):
        return False
    try:
        import torch

        return not torch.cuda.is_available()
    except Exception:
        return True


def _under(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
        return True
    except ValueError:
        return False


def pytest_collect_file(file_path: Path, parent):
    if file_path.suffix == ".test" and _under(file_path, SQL_ROOT):
        return SQLLogicFile.from_parent(parent, path=file_path)
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sqllogic: a record of a tests/sqllogic/**/*.test file")
    config.stash[_SESSIONS] = {}


def _close_session(config: pytest.Config, key) -> None:
    sess = config.stash.get(_SESSIONS, {}).pop(key, None)
    if sess is not None:
        sess.close()


def pytest_runtest_teardown(item, nextitem) -> None:
    if isinstance(item, SQLLogicItem):
        if nextitem is None or getattr(nextitem, "session_key", None) != item.session_key:
            _close_session(item.config, item.session_key)


def pytest_unconfigure(config: pytest.Config) -> None:
    for key in list(config.stash.get(_SESSIONS, {})):
        _close_session(config, key)


class SQLLogicFile(pytest.File):
    def collect(self):
        test_file = runner.parse_file(self.path)  # a parse error is a collection error
        engine = engine_of(self.config)
        devices = devices_of(self.config)
        for device in devices:
            suffix = f"[{device}]" if device and (len(devices) > 1 or device != "cpu") else ""
            for index, rec in enumerate(test_file.records):
                item = SQLLogicItem.from_parent(
                    self, name=f"L{rec.line}{suffix}", test_file=test_file, index=index, engine=engine, device=device
                )
                reason = runner.skip_reason(rec, engine, device)
                if reason is None and _cuda_missing(device):
                    reason = "CUDA is not available"
                if reason:
                    item.add_marker(pytest.mark.skip(reason=reason))
                yield item


class SQLLogicItem(pytest.Item):
    def __init__(self, *, test_file: runner.TestFile, index: int, engine: str, device: str | None, **kw):
        super().__init__(**kw)
        self.test_file = test_file
        self.index = index
        self.record = test_file.records[index]
        self.engine = engine
        self.device = device
        self.session_key = (str(self.path), engine, device)
        self.add_marker(pytest.mark.sqllogic)
        if device and device.startswith("cuda"):
            self.add_marker(pytest.mark.gpu)

    def _session(self) -> runner.Session:
        sessions = self.config.stash[_SESSIONS]
        sess = sessions.get(self.session_key)
        if sess is None:
            sess = sessions[self.session_key] = runner.Session(self.test_file, self.engine, self.device)
        return sess

    def runtest(self) -> None:
        try:
            self._session().run_index(self.index)
        except runner.RecordSkipped as e:
            pytest.skip(str(e))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, runner.RecordFailure):
            msg = str(excinfo.value)
            cause = excinfo.value.__cause__
            if (
                cause is not None
                and not isinstance(cause, runner.RecordFailure)
                and self.config.getoption("verbose", 0) > 1
            ):
                import traceback

                msg += "\n\n" + "".join(traceback.format_exception(cause))
            return msg
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        where = f"{self.engine}" + (f"/{self.device}" if self.device else "")
        return self.path, self.record.line - 1, f"{self.record.describe()} at line {self.record.line} [{where}]"
