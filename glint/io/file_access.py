"""Where SQL may read and write files. A connection with external access off
(the ``enable_external_access`` setting, as DuckDB's) reads and writes files
only under its ``allowed_directories``: every path a statement names (``FROM
'file'``, ``read_csv`` / ``read_parquet``, ``COPY ... TO`` / ``FROM``) is
checked by its real path, so ``..`` and symbolic links that lead out of the
directories are refused as well, before anything is read or written.

A path is checked twice: as written (a glob by the directory before its first
wildcard), before any directory is listed, so that nothing outside is even
looked at; then each file it resolves to, so that a link inside an allowed
directory cannot point out of it.

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> access = FileAccess([d])
>>> access.check_read(os.path.join(d, "x.parquet"))
>>> access.permits(os.path.join(d, "sub", "x.csv")), access.permits(os.path.join(d, "..", "x.parquet"))
(True, False)
>>> FileAccess([]).check_write("x.csv")
Traceback (most recent call last):
...
glint.errors.PermissionDenied: Permission Error: cannot write "x.csv": it is outside the allowed directories (none: file access is disabled)
>>> FileAccess(None).check_write("/anywhere/x.csv")
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from glint.errors import PermissionDenied

_GLOB_CHARS = "*?["


def _expanded(path) -> str:
    return os.path.expanduser(os.fspath(path))


def static_prefix(text: str) -> str:
    """The directory part of a glob before its first wildcard.

    >>> static_prefix("/data/*/x.parquet"), static_prefix("rel/x*.csv"), static_prefix("*.csv")
    ('/data', 'rel', '.')
    """
    parts = text.split(os.sep)
    for i, part in enumerate(parts):
        if any(c in part for c in _GLOB_CHARS):
            return os.sep.join(parts[:i]) or (os.sep if text.startswith(os.sep) else ".")
    return text


class FileAccess:
    """The files a connection's SQL may touch: all (``allowed`` None), or
    those under the ``allowed`` directories (none when empty)."""

    def __init__(self, allowed: Sequence[str] | None):
        self.allowed = None if allowed is None else tuple(os.path.realpath(_expanded(d)) for d in allowed)

    @staticmethod
    def from_settings(settings) -> FileAccess:
        if settings.enable_external_access:
            return FileAccess(None)
        return FileAccess(settings.allowed_directories)

    @property
    def unrestricted(self) -> bool:
        return self.allowed is None

    def permits(self, path) -> bool:
        """Whether the real path of ``path`` lies under an allowed directory."""
        if self.allowed is None:
            return True
        real = os.path.realpath(_expanded(path))
        return any(real == d or real.startswith(d.rstrip(os.sep) + os.sep) for d in self.allowed)

    def _refuse(self, verb: str, path) -> PermissionDenied:
        where = ", ".join(self.allowed) if self.allowed else "none: file access is disabled"
        return PermissionDenied(
            f'Permission Error: cannot {verb} "{os.fspath(path)}": it is outside the allowed directories ({where})'
        )

    def check_read(self, paths) -> None:
        """The paths (a path, a glob or a list of them) as a statement wrote
        them, before they are resolved: PermissionDenied for one outside."""
        if self.allowed is None:
            return
        for p in paths if isinstance(paths, (list, tuple)) else [paths]:
            text = _expanded(p)
            target = static_prefix(text) if any(c in text for c in _GLOB_CHARS) and not os.path.exists(text) else text
            if not self.permits(target):
                raise self._refuse("read", p)

    def check_files(self, files: Iterable) -> None:
        """The files a path resolved to (links followed): PermissionDenied
        for one outside."""
        if self.allowed is None:
            return
        for f in files:
            if not self.permits(f):
                raise self._refuse("read", f)

    def check_write(self, path) -> None:
        """A file a statement would write (COPY ... TO): its real path (a link
        there followed) must lie under an allowed directory."""
        if self.allowed is not None and not self.permits(path):
            raise self._refuse("write", path)
