"""How much memory a query's intermediate results may take on a device: the
budget the join-order search checks its candidate plans against
(``Connection.memory_budget_bytes()`` asks this module).

- CUDA: the device's free memory, counting what PyTorch's caching allocator
  holds but does not use (the next query can reuse it). Tables already
  resident on the device are not free, so they are not in the budget.
- CPU: a fraction of the host memory available now (``MemAvailable``): a
  join also needs temporaries beside its inputs and output (key encodings,
  match counts), and the rest of the process and the machine need room.

A connection that caps its device memory (a ``gpu_memory_limit``) passes the
cap as `limit`: the budget is then at most the cap less what is allocated.

>>> memory_budget_bytes("cpu") > 0
True
>>> memory_budget_bytes("cpu", limit=1 << 20)
1048576
"""

from __future__ import annotations

import os

import torch

HOST_FRACTION = 0.5


def memory_budget_bytes(device: torch.device | str, limit: int | None = None) -> int:
    device = torch.device(device)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        allocated = torch.cuda.memory_allocated(device)
        budget = free + torch.cuda.memory_reserved(device) - allocated
    else:
        allocated = 0
        budget = host_available_bytes() * HOST_FRACTION
    if limit is not None:
        budget = min(budget, limit - allocated)
    return max(0, int(budget))


def host_available_bytes() -> int:
    """Memory the host can give without swapping (Linux ``MemAvailable``;
    elsewhere the physical memory)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30
