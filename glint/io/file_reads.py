"""Reading byte ranges of files: the scan's column chunks as stored, read
straight into the buffers they are copied up from.

:class:`FileRange` is bytes of a file not read yet and :class:`FileRuns`
several such ranges laid out in one buffer; the staging reads them into
its pinned buffers (glint.io.transfer) with ``preadv`` (the GIL is
released while the kernel copies), through the files a scan keeps open
(:class:`FileHandles`). :class:`BufferPool` keeps the host buffers of
column chunks read into host memory for reuse.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading

import numpy as np

from glint.errors import GlintIOError


class BufferPool:
    """Host buffers for column chunks read as stored, kept for reuse once
    released (a scan releases a chunk's after copying it up), so that
    reading does not page-fault fresh memory in for every chunk: buffers
    of power-of-two sizes from 64 KiB, at most ``limit`` bytes kept."""

    def __init__(self, limit: int = 4 << 30):
        self.limit = limit
        self.kept = 0
        self._free: dict[int, list] = {}
        self._lock = threading.Lock()

    def get(self, n: int) -> bytearray:
        size = max(1 << 16, 1 << (max(n, 1) - 1).bit_length())
        with self._lock:
            got = self._free.get(size)
            if got:
                self.kept -= size
                return got.pop()
        return bytearray(size)

    def put(self, buf) -> None:
        size = len(buf)
        if size & (size - 1) or size < 1 << 16:
            return
        with self._lock:
            if self.kept + size <= self.limit:
                self._free.setdefault(size, []).append(buf)
                self.kept += size


RAW_BUFFERS = BufferPool()
_READ_BUFFERS = threading.local()
_REUSE_MAX = 64 << 20  # a thread keeps a read buffer of at most this size


def read_bytes(path: str, start: int, n: int, reuse: bool | None = False, files: FileHandles | None = None):
    """``n`` bytes of a file from ``start`` (see read_chunk_bytes;
    ``files``: see FileHandles)."""
    if reuse and n <= _REUSE_MAX:
        buf = getattr(_READ_BUFFERS, "buf", None)
        if buf is None or len(buf) < n:
            buf = _READ_BUFFERS.buf = bytearray(max(n, 1 << 20))
    elif reuse is None:
        # a buffer of the pool below (fresh memory per chunk page-faults in:
        # on the device host 16 threads reading into fresh buffers moved
        # 0.8 GB/s, into pyarrow's pool 1.7 GB/s)
        buf = RAW_BUFFERS.get(n)
    else:
        buf = bytearray(n)
    mv = memoryview(buf)
    _pread_into(path, start, mv[:n], files)
    if reuse is None:
        return mv[:n]
    return mv[:n] if reuse else bytes(buf)


class FileRange:
    """Bytes of a file not read yet: ``size`` bytes from ``start``. The
    scan's staging reads them straight into its pinned buffers
    (glint.io.transfer: no host copy in between); :meth:`read` reads
    them into host memory (the reference path, the tests). (A plain class
    with slots: a cold scan makes one per row group and column, under the
    GIL, and a frozen dataclass's constructor cost several times more.)"""

    __slots__ = ("path", "start", "size")

    def __init__(self, path: str, start: int, size: int):
        self.path, self.start, self.size = path, start, size

    def __repr__(self) -> str:
        return f"FileRange({self.path!r}, {self.start}, {self.size})"

    def __eq__(self, other) -> bool:
        return isinstance(other, FileRange) and (self.path, self.start, self.size) == (
            other.path,
            other.start,
            other.size,
        )

    __hash__ = None

    def __len__(self) -> int:
        return self.size

    def read(self) -> bytes:
        return read_bytes(self.path, self.start, self.size)

    def read_into(self, out, at: int = 0, files: FileHandles | None = None) -> None:
        """Bytes [at, at + len(out)) of the range into ``out`` (a writable
        contiguous buffer: a numpy view of a pinned buffer)."""
        read_file_into(self.path, self.start + at, out, files)


def read_file_into(path: str, start: int, out, files: FileHandles | None = None) -> None:
    """``len(out)`` bytes of a file from ``start`` into the writable buffer
    ``out`` (``preadv``: the GIL is released while the kernel copies); or,
    ``out`` a list of such buffers, into them one after the other (one
    system call); errors name the file."""
    try:
        bufs = [_byte_view(b) for b in out] if isinstance(out, list) else [_byte_view(out)]
        _preadv(path, start, bufs, files)
    except FileNotFoundError:
        raise GlintIOError(f"No such file: {path!r} (it was there when the table was registered)") from None


def _byte_view(b) -> memoryview:
    """A writable buffer as a memoryview of bytes (no new view when it is one)."""
    if type(b) is memoryview and b.format == "B":
        return b
    return memoryview(b).cast("B")


def _pread_into(path: str, start: int, mv: memoryview, files: FileHandles | None = None) -> None:
    """Fills ``mv`` with the file's bytes from ``start`` (``preadv`` until
    done; ``files``: through its open file, else opened for this read); a
    file shorter than that is a GlintIOError naming it."""
    _preadv(path, start, [mv], files)


def _preadv(path: str, start: int, bufs: list, files: FileHandles | None = None) -> None:
    """Fills the buffers (memoryviews of bytes), one after the other, with
    the file's bytes from ``start``: one ``preadv`` for them all (more when
    the kernel returns less)."""
    n = sum(len(b) for b in bufs)
    if files is None:
        fd = os.open(path, os.O_RDONLY)
        try:
            got = _preadv_fd(fd, start, bufs, n)
        finally:
            os.close(fd)
    else:
        fd, token = files.acquire(path)
        try:
            got = _preadv_fd(fd, start, bufs, n)
        finally:
            files.release(fd, token)
    if got != n:
        raise GlintIOError(
            f"{path}: the bytes at {start}..{start + n} run past the end of the file "
            "(it changed after it was registered)"
        )


_IOV_MAX = 1024


def _preadv_fd(fd: int, start: int, bufs: list, n: int) -> int:
    got = 0
    while got < n:
        k = os.preadv(fd, bufs[:_IOV_MAX], start + got)
        if not k:
            break
        got += k
        while bufs and k >= len(bufs[0]):  # the buffers filled
            k -= len(bufs[0])
            bufs = bufs[1:]
        if k:
            bufs = [bufs[0][k:]] + bufs[1:]
    return got


class FileHandles:
    """Files kept open for the reads of one scan (its staging's preads,
    its dictionary pages): a read costs one system call, not three (open,
    pread, close). Each system call gives up the GIL, and taking it back
    waits for the thread that holds it, up to the interpreter's switch
    interval (5 ms) when that thread runs Python: with the decoding threads
    busy, the staging of TPC-H Q1 at SF 100 (2,000 column chunks a scan
    chunk) moved 0.33 GB/s a thread.
    :meth:`close` closes them once no read is using them (a read after it
    opens its own)."""

    def __init__(self):
        self._fds: dict[str, int] = {}
        self._active: set = set()  # the reads using an fd now (a token each)
        self._tokens = itertools.count()
        self._closed = False
        self._lock = threading.Lock()  # (opening a file, closing them all)

    @contextlib.contextmanager
    def fd(self, path: str):
        fd, token = self.acquire(path)
        try:
            yield fd
        finally:
            self.release(fd, token)

    def acquire(self, path: str) -> tuple[int, object]:
        """(an open fd of the file, a token for release()): the scan's, or a
        fresh one of this read's own once the handles are closed."""
        # No lock on the way of a read (a dozen staging and decoding threads
        # read through one scan's handles; a lock whose holder lost the GIL
        # inside it held them all up): the token goes into the set before
        # ``_closed`` is read, and close() sets ``_closed`` before it looks
        # at the set, so a read that sees the handles open is seen by close()
        # (set.add / discard and next() on a count are single steps under the GIL).
        token = next(self._tokens)
        self._active.add(token)
        try:
            if not self._closed:
                fd = self._fds.get(path)
                if fd is None:
                    with self._lock:
                        fd = self._fds.get(path)
                        if fd is None:
                            fd = self._fds[path] = os.open(path, os.O_RDONLY)
                return fd, token
        except BaseException:
            self._done(token)
            raise
        self._done(token)
        return os.open(path, os.O_RDONLY), None

    def release(self, fd: int, token) -> None:
        if token is None:
            os.close(fd)
        else:
            self._done(token)

    def _done(self, token) -> None:
        self._active.discard(token)
        if self._closed and not self._active:
            self._close_all()

    def close(self) -> None:
        self._closed = True
        if not self._active:
            self._close_all()

    def __del__(self):  # a scan dropped without closing: its files are not left open
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def _close_all(self) -> None:
        with self._lock:
            fds, self._fds = list(self._fds.values()), {}
        for fd in fds:
            os.close(fd)


class FileRuns:
    """Byte ranges of files (``paths[file[i]]`` from ``start[i]``,
    ``length[i]`` bytes) at offsets ``off[i]`` of a buffer of ``size``
    bytes (what lies between them is left as it was). The staging reads a
    window of it at a time (:meth:`read_into`: one ``pread`` per range in the
    window), where a write per column chunk cost Python per row group and
    column under the GIL."""

    __slots__ = ("paths", "file", "start", "off", "length", "size", "_ends")

    def __init__(self, paths: list, file, start, off, length, size: int):
        self.paths, self.file, self.start, self.off, self.length, self.size = paths, file, start, off, length, size
        self._ends = off + length

    def __len__(self) -> int:
        return self.size

    def read_into(self, out, at: int = 0, files: FileHandles | None = None) -> None:
        """Bytes [at, at + len(out)) of the buffer into ``out`` (the ranges'
        bytes there; the rest of ``out`` is left as it was)."""
        mv = _byte_view(out)
        lo, hi = at, at + len(mv)
        i0 = int(np.searchsorted(self._ends, lo, side="right"))
        i1 = int(np.searchsorted(self.off, hi, side="left"))
        if i1 <= i0:
            return
        paths = self.paths
        for f, s, a, e in zip(
            self.file[i0:i1].tolist(), self.start[i0:i1].tolist(), self.off[i0:i1].tolist(), self._ends[i0:i1].tolist()
        ):
            a0, e0 = max(a, lo), min(e, hi)
            if e0 > a0:
                read_file_into(paths[f], s + a0 - a, mv[a0 - lo : e0 - lo], files)

    def read(self) -> bytes:
        out = bytearray(self.size)
        self.read_into(memoryview(out))
        return bytes(out)
