"""A rank's link to the other ranks: the store for control, the collective
backend for data, and the protocol that keeps them in step.

Every rank runs the same plan, so every rank meets the same exchanges in the
same order: the k-th exchange of a query is *step* k on every rank. Each step
starts with a size exchange through the store (the information exchange of
"Terabyte-scale analytics in the blink of an eye", §2.3): each rank posts
what it will send (rows per destination, column layouts, string sizes) and
reads every other rank's post, so receivers allocate exact buffers and
collectives get their split sizes. Only then does data move, with Gloo (CPU)
or NCCL (CUDA): ``all_to_all_single`` with uneven splits, or one broadcast
per sending rank, each straight into the receive buffer of a column.

The size exchange is also where failures surface, within a bounded time:

- a rank whose query fails (a SQL run-time error in its rows, out of memory)
  posts an *abort* for the query; the others stop at their next step, no
  collective is left half done, and rank 0 raises the original error: the
  connection stays usable;
- a rank that does not reach a step within ``timeout`` seconds is named in a
  :class:`~glint.errors.RankFailure`; a ``watch`` callback (rank 0 of a local
  launch checks its rank processes) names a rank that exited at once.

Store keys (under the connection's prefix): ``x/<query>/<step>/<rank>`` the
posts, ``x/<query>/<step>/n`` how many ranks posted, ``x/<query>/abort/<rank>``
and ``x/<query>/aborts`` a failed rank's error.
"""

from __future__ import annotations

import datetime
import os
import pickle
import time
import traceback

import torch
import torch.distributed as dist

from glint.distributed.stats import RankStats
from glint.errors import GlintError, RankFailure

# NVLink multicast (NVLS) and symmetric-memory multicast stay off: exchanges are
# point-to-point and broadcasts, and multicast set-up has hung on shared hosts
NCCL_DEFAULTS = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}
POLL_MIN_S = 0.00002  # first re-check of the store while waiting (a check is one round trip, ~50 us)
POLL_MAX_S = 0.001  # the longest pause between checks: a rank that waits long learns within 1 ms


class PeerAborted(Exception):
    """Another rank's query failed: this rank stops its part (not a user error)."""

    def __init__(self, rank: int, error):
        super().__init__(f"rank {rank} failed")
        self.rank = rank
        self.error = error


def encode_error(e: BaseException) -> tuple:
    """An exception as something another process can raise again: glint's own
    errors keep their type and message; anything else becomes its text."""
    if isinstance(e, PeerAborted):
        return e.error
    if isinstance(e, GlintError):
        try:
            return ("glint", pickle.dumps(e))
        except Exception:  # noqa: BLE001 - an unpicklable subclass: its message will do
            return ("glint", pickle.dumps(GlintError(str(e))))
    text = "".join(traceback.format_exception_only(type(e), e)).strip()
    return ("internal", text, "".join(traceback.format_exception(type(e), e, e.__traceback__)))


def decode_error(payload, rank: int) -> BaseException:
    if payload[0] == "glint":
        return pickle.loads(payload[1])
    err = RuntimeError(f"rank {rank}: {payload[1]}")
    if os.environ.get("GLINT_DEBUG") and len(payload) > 2:
        err.add_note(payload[2])
    return err


def poll(ready, deadline: float, on_wait=None) -> bool:
    """Calls ``ready()`` with growing pauses until it is true (True) or the
    monotonic ``deadline`` passes (False); ``on_wait()`` runs between tries."""
    pause = POLL_MIN_S
    while True:
        if ready():
            return True
        if time.monotonic() >= deadline:
            return False
        if on_wait is not None:
            on_wait()
        time.sleep(pause)
        pause = min(POLL_MAX_S, pause * 2)


def make_backend(store, rank: int, size: int, device: torch.device, timeout: float):
    """The collective backend of a rank: NCCL for CUDA tensors, Gloo for CPU
    ones (built directly on the store, so one process can hold several)."""
    td = datetime.timedelta(seconds=timeout)
    if device.type == "cuda":
        if not hasattr(dist, "ProcessGroupNCCL"):
            raise GlintError("this torch build has no NCCL: distributed CUDA ranks need it")
        for k, v in NCCL_DEFAULTS.items():
            os.environ.setdefault(k, v)
        torch.cuda.set_device(device)
        opts = dist.ProcessGroupNCCL.Options()  # as torch.distributed builds an NCCL group
        opts.is_high_priority_stream = False
        opts._timeout = td
        opts.global_ranks_in_group = list(range(size))
        opts.group_name = "glint"
        return dist.ProcessGroupNCCL(store, rank, size, opts)
    return dist.ProcessGroupGloo(store, rank, size, td)


class Communicator:
    """One rank's store, collective backend and per-query exchange state."""

    def __init__(self, store, rank: int, size: int, device: torch.device, backend, timeout: float, watch=None):
        self.store = store
        self.rank, self.size = rank, size
        self.device = device
        self.backend = backend
        self.timeout = float(timeout)
        self.watch = watch
        self.qid = None
        self.step = 0  # the exchange this rank is at
        self.posted = 0  # the last step it posted
        self.aborted = False
        self.stats = RankStats(rank)
        self.fault = None  # (step, action, seconds): a test hook, see inject_fault
        self._own: list[str] = []  # store keys this rank wrote for the current query
        self._stale: list[str] = []  # and for the queries before it, not deleted yet (drop_stale)

    # ------------------------------------------------------------ queries
    def begin(self, qid) -> None:
        """A new query: steps count from 1 again. The previous query's keys
        may go (all ranks are done with it: rank 0 posts a command only after
        every rank replied to the last); they are deleted by
        :meth:`drop_stale` while the rank has nothing else to do, not here,
        where a query waits for them (a round trip to the store each, 1-3 ms
        a query). Beginning the current query again is a no-op."""
        if qid == self.qid:
            return
        self._stale += self._own
        self._own = []
        self.qid, self.step, self.posted, self.aborted = qid, 0, 0, False
        self.stats = RankStats(self.rank)
        self._own.append(f"x/{qid}/aborts")  # made by the first rank that checks it

    def drop_stale(self) -> None:
        """Deletes the keys of the queries before the current one (a rank
        calls it once its part of a command is done: a rank other than 0
        after its reply, rank 0 before it waits for the replies)."""
        stale, self._stale = self._stale, []
        for k in stale:
            try:
                self.store.delete_key(k)
            except Exception:  # noqa: BLE001 - the store may be gone at shutdown
                break

    def _drop_keys(self) -> None:
        self._stale += self._own
        self._own = []
        self.drop_stale()

    def _set(self, key: str, value: bytes) -> None:
        self.store.set(key, value)
        self._own.append(key)

    def inject_fault(self, step: int, action: str, seconds: float = 0.0) -> None:
        """Test hook: at exchange ``step`` of the next query this rank exits
        (``exit``), sleeps (``sleep``) or raises an ExecutionError (``raise``)."""
        self.fault = (step, action, seconds)

    def _trip_fault(self) -> None:
        step, action, seconds = self.fault
        if self.step != step:
            return
        self.fault = None
        if action == "exit":
            os._exit(17)
        if action == "sleep":
            time.sleep(seconds)
        if action == "raise":
            from glint.errors import ExecutionError

            raise ExecutionError(f"injected fault on rank {self.rank} at exchange {step}")

    # ------------------------------------------------------------ size exchange
    def sync(self, post, what: str) -> tuple[list, float]:
        """Posts this rank's ``post`` for the next step and returns every
        rank's (in rank order) and the seconds spent waiting for them."""
        self.step += 1
        if self.fault is not None:
            self._trip_fault()
        base = f"x/{self.qid}/{self.step}"
        self._set(f"{base}/{self.rank}", pickle.dumps((what, post)))
        self.posted = self.step
        counter = f"{base}/n"
        arrived = self.store.add(counter, 1)
        self._own.append(counter)
        t0 = time.perf_counter()
        if arrived < self.size:  # (the last rank to arrive need not ask again)
            self.wait_for(
                lambda: self.store.add(counter, 0) >= self.size,
                lambda: self._missing(base),
                f"exchange {self.step} ({what})",
            )
        wait_s = time.perf_counter() - t0
        others = [r for r in range(self.size) if r != self.rank]
        values = self.store.multi_get([f"{base}/{r}" for r in others]) if others else []
        posts = [None] * self.size
        posts[self.rank] = post
        for r, v in zip(others, values):
            theirs, posts[r] = pickle.loads(v)
            if theirs != what:  # the same plan meets its exchanges in the same order on every rank
                raise RuntimeError(
                    f"ranks out of step at exchange {self.step}: rank {r} is at {theirs}, rank {self.rank} at {what}"
                )
        return posts, wait_s

    def _missing(self, base: str) -> list[int]:
        return [r for r in range(self.size) if r != self.rank and not self.store.check([f"{base}/{r}"])]

    def wait_for(self, ready, missing, what: str, timeout: float | None = None) -> None:
        """Waits until ``ready()``; raises PeerAborted as soon as a rank posts
        an abort for this query, RankFailure naming ``missing()`` ranks after
        the timeout, or what the watch callback raises."""
        aborts = f"x/{self.qid}/aborts"
        checks = [0]

        def between():
            checks[0] += 1
            if self.store.add(aborts, 0):
                self._raise_abort()
            if self.watch is not None and checks[0] % 16 == 0:
                self.watch()

        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        try:
            ok = poll(ready, deadline, between)
        except dist.DistError as e:
            raise RankFailure(
                f"rank {self.rank} lost contact with the other ranks' store while waiting for "
                f"{what}: {str(e).splitlines()[0]}"
            ) from None
        if ok:
            return
        if self.store.add(aborts, 0):
            self._raise_abort()
        if self.watch is not None:
            self.watch()
        late = missing()
        names = ", ".join(map(str, late)) if late else "?"
        raise RankFailure(
            f"rank{'s' if len(late) > 1 else ''} {names} did not reach {what} within "
            f"{self.timeout:g} s (it hangs or died); the query is stopped on every rank",
            late[0] if len(late) == 1 else None,
        )

    def _raise_abort(self):
        for r in range(self.size):
            key = f"x/{self.qid}/abort/{r}"
            if r != self.rank and self.store.check([key]):
                raise PeerAborted(r, pickle.loads(self.store.get(key)))
        raise PeerAborted(-1, ("internal", "a rank aborted the query"))

    def abort(self, error: BaseException) -> None:
        """Tells the other ranks that this rank's part of the query failed."""
        if self.aborted or self.qid is None or isinstance(error, PeerAborted):
            return
        self.aborted = True
        try:
            self._set(f"x/{self.qid}/abort/{self.rank}", pickle.dumps(encode_error(error)))
            self.store.add(f"x/{self.qid}/aborts", 1)
            self._own.append(f"x/{self.qid}/aborts")
        except Exception:  # noqa: BLE001 - the store is gone: the others time out
            pass

    # ------------------------------------------------------------ data
    # Collectives are started as asynchronous work handles, always from the
    # thread that runs the query and in the same order on every rank (the plan
    # and the size exchange fix it), so an exchange in rounds can have one
    # round in flight while it prepares the next. Gloo runs a started
    # collective on the process group's own threads (each under its own tag),
    # NCCL on its own stream: several may be in flight on the group, as long
    # as no two threads issue them at once (the order would differ per rank).
    def wait(self, work, what: str) -> None:
        """Waits for a started collective; a backend error or timeout becomes
        a RankFailure naming this rank (and, in a local launch, an exited one)."""
        try:
            work.wait()
        except RuntimeError as e:
            if self.watch is not None:
                self.watch()
            raise RankFailure(f"{what} failed on rank {self.rank}: {str(e).splitlines()[0]}") from None

    def start_alltoall(self, out: torch.Tensor, inp: torch.Tensor, out_splits: list[int], in_splits: list[int]):
        """Starts an uneven all-to-all along dim 0: rank r gets in_splits[r]
        rows of ``inp`` from this rank; this rank's ``out`` holds what each
        rank sent it, in rank order (out_splits rows each). Both tensors must
        stay untouched until :meth:`wait`."""
        return self.backend.alltoall_base(out, inp, out_splits, in_splits, dist.AllToAllOptions())

    @property
    def can_group(self) -> bool:
        """Whether the backend takes a group of point-to-point transfers as
        one launch (NCCL: :meth:`start_group`)."""
        b = self.backend
        return (
            self.device.type == "cuda"
            and bool(getattr(b, "supports_coalescing", False))
            and hasattr(b, "_start_coalescing")
            and hasattr(b, "_end_coalescing")
        )

    def start_group(self, sends: list[tuple[torch.Tensor, int]], recvs: list[tuple[torch.Tensor, int]]):
        """Starts a group of point-to-point transfers as one operation (only
        where :attr:`can_group`): each (tensor, peer) of ``sends`` goes to that
        peer, each of ``recvs`` is filled from it; between two ranks the k-th
        send of one matches the k-th receive of the other. The tensors must be
        contiguous and stay untouched until :meth:`wait`."""
        b = self.backend
        b._start_coalescing()
        for t, peer in sends:
            b.send([t], peer, 0)
        for t, peer in recvs:
            b.recv([t], peer, 0)
        return b._end_coalescing()

    def start_broadcast(self, t: torch.Tensor, root: int):
        """Starts a broadcast of the root rank's ``t`` into ``t`` of every rank (contiguous, in place)."""
        opts = dist.BroadcastOptions()
        opts.rootRank = root
        opts.rootTensor = 0
        return self.backend.broadcast([t], opts)

    def alltoall(
        self, out: torch.Tensor, inp: torch.Tensor, out_splits: list[int], in_splits: list[int], what: str
    ) -> None:
        """:meth:`start_alltoall`, waited for."""
        self.wait(self.start_alltoall(out, inp, out_splits, in_splits), what)

    def broadcast(self, t: torch.Tensor, root: int, what: str) -> None:
        """:meth:`start_broadcast`, waited for."""
        self.wait(self.start_broadcast(t, root), what)

    def all_reduce(self, t: torch.Tensor, op: str, what: str) -> None:
        """``t`` on every rank becomes the element-wise sum / min / max over the ranks."""
        opts = dist.AllreduceOptions()
        opts.reduceOp = {"sum": dist.ReduceOp.SUM, "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}[op]
        self.wait(self.backend.allreduce([t], opts), what)

    def close(self) -> None:
        self._drop_keys()
        backend, self.backend = self.backend, None
        if backend is not None:
            for name in ("shutdown", "abort"):
                fn = getattr(backend, name, None)
                if fn is not None:
                    try:
                        fn()
                        break
                    except Exception:  # noqa: BLE001 - best effort at teardown
                        continue
