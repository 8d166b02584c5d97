"""The tables a connection makes for files named in FROM, kept between
queries so that their chunks stay cached on the device (warm runs).

A table is found again by what it reads: the kind, the options and, for
every file the paths resolve to now (a glob is expanded each time), its
absolute path, size and modification time. A file that changed, or a glob
that matches other files, makes a new table; the old one is dropped (with
its cached chunks) when more than ``capacity`` tables are held, least
recently used first. The tables live in the connection's catalog under
hidden names (``HIDDEN_PREFIX``), registered through its ordinary
``read_parquet`` / ``register``, so a distributed connection spreads them
over its ranks as it does any table. Several threads may ask at once (the
sessions of a server share one connection's file tables).

A connection that confines its SQL's files (glint.io.file_access) passes its
``FileAccess``: the paths are checked as written, and the files they resolve
to, before any is read.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import OrderedDict

from glint.errors import GlintIOError
from glint.io.file_access import FileAccess
from glint.io.file_lists import CSV_SUFFIXES, PARQUET_SUFFIXES, resolve_files
from glint.io.file_options import read_parquet_options

HIDDEN_PREFIX = "__glint_file_"
_names = itertools.count(1)


def _identity(files) -> tuple:
    out = []
    for f in files:
        try:
            st = os.stat(f)
        except OSError as e:
            raise GlintIOError(f"Cannot read {os.fspath(f)!r}: {e.strerror or e}") from None
        out.append((os.path.abspath(f), st.st_size, st.st_mtime_ns))
    return tuple(out)


class FileTables:
    """file references -> hidden table names of one connection."""

    def __init__(self, con, capacity: int = 16):
        self.con = con
        self.capacity = capacity
        self._names: OrderedDict[tuple, str] = OrderedDict()
        self._lock = threading.RLock()

    def name_for(self, kind: str, paths, options: dict, access: FileAccess | None = None) -> str:
        """The catalog name of the table reading ``paths`` (made now if the
        files are new or changed); ``access``: where the files may be."""
        if access is not None:
            access.check_read(paths)
        suffixes, what = (PARQUET_SUFFIXES, "Parquet") if kind == "parquet" else (CSV_SUFFIXES, "CSV")
        files = [os.fspath(f) for f in resolve_files(paths, suffixes, what)]
        if access is not None:
            access.check_files(files)
        with self._lock:
            return self._table_for(kind, files, options)

    def _table_for(self, kind: str, files: list[str], options: dict) -> str:
        key = (kind, tuple(sorted(options.items())), _identity(files))
        name = self._names.get(key)
        if name is not None and self.con.has_table(name):
            self._names.move_to_end(key)
            return name
        name = f"{HIDDEN_PREFIX}{next(_names)}"
        if kind == "parquet" and options:
            # the file name as a column, or files matched by name: read into memory
            self.con.register(name, read_parquet_options(files, **options))
        elif kind == "parquet":
            self.con.read_parquet(files[0] if len(files) == 1 else files, name)
        else:
            from glint.io.csv_auto import read_csv_auto

            self.con.register(name, read_csv_auto(files, **options))
        self._names[key] = name
        while len(self._names) > self.capacity:
            _, old = self._names.popitem(last=False)
            if self.con.has_table(old):
                self.con.unregister(old)
        return name

    def clear(self) -> None:
        with self._lock:
            self._names.clear()
