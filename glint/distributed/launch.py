"""Starting the ranks of a distributed connection, or joining the ranks
``torchrun`` started, and rank 0's side of the command protocol.

A local launch (``glint.connect(ranks=N)``): the calling process is rank 0.
It opens a TCPStore on a free local port and starts N - 1 processes
(``python -m glint.distributed.run --worker``) with the store's address, their rank
and the connection's settings in their environment. Each rank opens its
engine (device ``cuda:<rank>`` on CUDA), says it is ready, and all build the
collective backend together. Rank 0 watches the processes: one that exits is
named at once.

Under ``torchrun`` every rank is started by it; the store is torchrun's (its
agent's, or one rank 0 serves at MASTER_ADDR:MASTER_PORT), and the ranks stay
up across connections until rank 0's process exits.
"""

from __future__ import annotations

import atexit
import datetime
import json
import os
import pickle
import signal
import subprocess
import sys
import time
import weakref

import torch
import torch.distributed as dist

from glint.distributed.comm import poll
from glint.errors import GlintError, RankFailure

START_TIMEOUT_S = 120.0  # for the rank processes to start (imports, CUDA context)
_ENV = "GLINT_DIST"  # GLINT_DIST_STORE, _RANK, _WORLD, _CONFIG for launched ranks


class World:
    """Rank 0's view of the ranks: the store, the command sequence, and (local
    launch) the rank processes."""

    def __init__(self, store, size: int, timeout: float, procs: dict | None = None, raw_store=None):
        self.store = store
        self.size = size
        self.timeout = timeout
        self.procs = procs if procs is not None else {}  # rank -> Popen (local launch)
        self.raw_store = raw_store
        self.seq = 0
        self.data_keys = 0
        self.closing = False  # the ranks were told to leave
        self.closed = False

    def post(self, cmd) -> int:
        """Posts a command for every other rank; returns its sequence number."""
        seq = self.seq
        self.seq += 1
        if self.size > 1:
            self.store.set(f"cmd/{seq}", pickle.dumps(cmd))
        return seq

    def collect(self, seq: int, timeout: float | None = None) -> dict:
        """The replies of the other ranks to command ``seq`` (rank -> Reply)."""
        if self.size == 1:
            return {}
        counter = f"reply/{seq}/n"
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        calls = [0]

        def between():
            calls[0] += 1
            if calls[0] % 16 == 0:
                self.check()

        try:
            done = poll(lambda: self.store.add(counter, 0) >= self.size - 1, deadline, between)
        except dist.DistError as e:
            raise RankFailure(f"lost the store of the ranks: {str(e).splitlines()[0]}") from None
        others = range(1, self.size)
        if not done:
            self.check()
            late = [r for r in others if not self.store.check([f"reply/{seq}/{r}"])]
            raise RankFailure(
                f"rank{'s' if len(late) > 1 else ''} {', '.join(map(str, late))} did not finish "
                f"within {self.timeout if timeout is None else timeout:g} s (it hangs or died)",
                late[0] if len(late) == 1 else None,
            )
        keys = [f"reply/{seq}/{r}" for r in others]
        replies = dict(zip(others, (pickle.loads(v) for v in self.store.multi_get(keys))))
        for k in keys + [counter, f"cmd/{seq}"]:
            self.store.delete_key(k)
        return replies

    def put_data(self, per_rank: dict) -> str:
        """Stores bytes for the ranks (key suffix -> bytes); returns the key prefix."""
        prefix = f"data/{self.data_keys}"
        self.data_keys += 1
        for suffix, b in per_rank.items():
            self.store.set(f"{prefix}/{suffix}", b)
        return prefix

    def drop_data(self, prefix: str, suffixes) -> None:
        for s in suffixes:
            self.store.delete_key(f"{prefix}/{s}")

    def check(self) -> None:
        """Raises RankFailure naming a rank process that exited."""
        for r, p in self.procs.items():
            rc = p.poll()
            if rc is not None:
                how = (
                    f"was killed by {signal.Signals(-rc).name}"
                    if rc < 0 and -rc in signal.valid_signals()
                    else f"exited with code {rc}"
                )
                raise RankFailure(f"rank {r} {how}", r)

    def shutdown(self, wait_s: float = 10.0) -> None:
        """Ends the rank processes: they leave after a Close command; those
        still there after ``wait_s`` seconds (or at once when 0) are killed."""
        if self.closed:
            return
        self.closed = True
        _LIVE.discard(self)
        deadline = time.monotonic() + wait_s
        for p in self.procs.values():
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


_LIVE: weakref.WeakSet[World] = weakref.WeakSet()


@atexit.register
def _kill_ranks() -> None:  # rank processes never outlive the process that started them
    for w in list(_LIVE):
        for p in w.procs.values():
            if p.poll() is None:
                p.kill()


# ------------------------------------------------------------------ devices
def rank_devices(device: str, ranks: int) -> list[torch.device]:
    """The device of each rank: cuda:r (one GPU per rank) or the CPU."""
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    d = torch.device(device)
    if d.type == "cpu":
        return [d] * ranks
    if d.type != "cuda":
        raise GlintError(f'unsupported device "{device}" for a distributed connection (use "cpu" or "cuda")')
    if d.index is not None:
        raise GlintError(
            f'device "{device}": a distributed connection uses one GPU per rank, cuda:0 to '
            f'cuda:{ranks - 1}; give device="cuda"'
        )
    if not torch.cuda.is_available():
        raise GlintError('device "cuda" requested but CUDA is not available on this machine')
    n = torch.cuda.device_count()
    if ranks > n:
        raise GlintError(f"ranks={ranks} needs {ranks} GPUs (one per rank); this machine has {n}")
    return [torch.device("cuda", r) for r in range(ranks)]


def default_threads(ranks: int) -> int:
    """CPU threads per rank: the machine's cores shared out."""
    return max(1, (os.cpu_count() or 1) // ranks)


# ------------------------------------------------------------------ local launch
def launch_local(ranks: int, devices: list[torch.device], timeout: float, config: dict):
    """Starts ranks 1..N-1; returns (World, rank 0's backend)."""
    from glint.distributed.comm import make_backend

    td = datetime.timedelta(seconds=max(timeout, START_TIMEOUT_S))
    raw = dist.TCPStore("127.0.0.1", 0, None, True, timeout=td, wait_for_workers=False)
    store = dist.PrefixStore("glint", raw)
    procs = {}
    world = World(store, ranks, timeout, procs, raw)
    _LIVE.add(world)
    try:
        threads = config.get("threads") or default_threads(ranks)
        for r in range(1, ranks):
            env = dict(os.environ)
            env.update(
                {
                    f"{_ENV}_STORE": f"127.0.0.1:{raw.port}",
                    f"{_ENV}_RANK": str(r),
                    f"{_ENV}_WORLD": str(ranks),
                    f"{_ENV}_CONFIG": json.dumps(
                        {**config, "device": str(devices[r]), "timeout": timeout, "threads": threads}
                    ),
                    "OMP_NUM_THREADS": str(threads),
                    "TORCH_CPP_LOG_LEVEL": "ERROR",
                }
            )
            procs[r] = subprocess.Popen(
                [sys.executable, "-m", "glint.distributed.run", "--worker"], env=env, stdin=subprocess.DEVNULL
            )
        wait_ready(world, START_TIMEOUT_S)
        backend = make_backend(dist.PrefixStore("pg", store), 0, ranks, devices[0], timeout)
    except BaseException:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
        world.shutdown(0)
        raise
    return world, backend


def wait_ready(world: World, timeout: float) -> None:
    """Until every rank has opened its engine (a rank process that exits is named)."""
    deadline = time.monotonic() + timeout
    keys = [f"ready/{r}" for r in range(1, world.size)]
    if not poll(lambda: world.store.check(keys), deadline, world.check):
        world.check()
        late = [r for r in range(1, world.size) if not world.store.check([f"ready/{r}"])]
        raise RankFailure(
            f"rank{'s' if len(late) > 1 else ''} {', '.join(map(str, late))} did not start within {timeout:g} s",
            late[0] if len(late) == 1 else None,
        )


def start_rank(store, rank: int, size: int, device: torch.device, timeout: float, engine_options: dict):
    """A rank other than 0: its engine, then (with the others) the backend;
    returns its Rank."""
    from glint.distributed.comm import Communicator, make_backend
    from glint.distributed.rank import Rank
    from glint.engine.connection import Connection

    engine = Connection(device=str(device), **engine_options)
    store.set(f"ready/{rank}", b"1")
    backend = make_backend(dist.PrefixStore("pg", store), rank, size, device, timeout)
    return Rank(engine, Communicator(store, rank, size, device, backend, timeout))


def worker_main() -> int:
    """Entry of a launched rank process (``python -m glint.distributed.run --worker``)."""
    host, port = os.environ[f"{_ENV}_STORE"].rsplit(":", 1)
    rank, size = int(os.environ[f"{_ENV}_RANK"]), int(os.environ[f"{_ENV}_WORLD"])
    config = json.loads(os.environ[f"{_ENV}_CONFIG"])
    torch.set_num_threads(int(config.get("threads") or 1))
    timeout = float(config["timeout"])
    raw = dist.TCPStore(host, int(port), None, False, timeout=datetime.timedelta(seconds=max(timeout, START_TIMEOUT_S)))
    store = dist.PrefixStore("glint", raw)
    r = start_rank(store, rank, size, torch.device(config["device"]), timeout, config.get("engine") or {})
    try:
        r.serve()
    except dist.DistError:
        return 1  # rank 0 went away: nothing left to serve
    finally:
        r.comm.close()
    return 0


# ------------------------------------------------------------------ torchrun
class TorchrunWorld(World):
    """The ranks torchrun started; they outlive connections (a closed
    connection resets them) and leave when rank 0's process exits."""

    def shutdown(self, wait_s: float = 10.0) -> None:
        pass  # the ranks stay for the next connection


_TORCHRUN: dict = {}


def torchrun_env() -> tuple[int, int, int]:
    """(rank, world size, local rank) from torchrun's environment."""
    try:
        return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ.get("LOCAL_RANK", "0"))
    except KeyError:
        raise GlintError(
            'ranks="env" joins ranks started by torchrun, but RANK / WORLD_SIZE are not set '
            "(start the program with torchrun, or use ranks=N)"
        ) from None


def torchrun_hosts() -> int:
    """Hosts of a torchrun job (ranks / ranks per host)."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    return max(1, size // max(1, int(os.environ.get("LOCAL_WORLD_SIZE", str(size)))))


def torchrun_store(rank: int, timeout: float):
    host = os.environ.get("MASTER_ADDR", "127.0.0.1")
    port = int(os.environ.get("MASTER_PORT", "29500"))
    agent = os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true"
    raw = dist.TCPStore(
        host,
        port,
        None,
        rank == 0 and not agent,
        timeout=datetime.timedelta(seconds=max(timeout, START_TIMEOUT_S)),
        wait_for_workers=False,
    )
    return raw, dist.PrefixStore("glint", raw)


def torchrun_device(device: str, local_rank: int) -> torch.device:
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device("cuda", local_rank) if device.startswith("cuda") else torch.device("cpu")


def join_torchrun(device: str, timeout: float):
    """Rank 0 of a torchrun job: (TorchrunWorld, its communicator), made once
    per process. Other ranks serve rank 0 here and leave the process when it
    is done (SystemExit)."""
    if "world" in _TORCHRUN:
        return _TORCHRUN["world"], _TORCHRUN["comm"]
    from glint.distributed.comm import Communicator, make_backend

    rank, size, local = torchrun_env()
    dev = torchrun_device(device, local)
    raw, store = torchrun_store(rank, timeout)
    if rank != 0:
        r = start_rank(store, rank, size, dev, timeout, {})
        code = 0
        try:
            r.serve()
        except dist.DistError:
            code = 1
        raise SystemExit(code)
    world = TorchrunWorld(store, size, timeout, None, raw)
    wait_ready(world, START_TIMEOUT_S)
    backend = make_backend(dist.PrefixStore("pg", store), 0, size, dev, timeout)
    comm = Communicator(store, 0, size, dev, backend, timeout, watch=world.check)
    _TORCHRUN.update(world=world, comm=comm, device=dev)

    @atexit.register
    def _close():  # the other ranks leave with rank 0
        from glint.distributed.rank import Close

        try:
            world.collect(world.post(Close()), timeout=30)
        except Exception:  # noqa: BLE001 - they also leave when the store goes
            pass

    return world, comm
