"""``python -m glint.dist.run``: the entry of a rank process.

- ``--worker``: a rank that ``glint.connect(ranks=N)`` launched (its store,
  rank and settings come in the environment).
- Under ``torchrun``, every process runs this module with glint's command
  line: rank 0 runs the command (``sql``, ``tpch``, ``bench``...) on a
  connection over all the ranks; the others serve it until it is done::

    torchrun --nnodes 2 --nproc-per-node 8 --node-rank 0 --rdzv-backend c10d \\
        --rdzv-endpoint host0:29500 -m glint.dist.run tpch --sf 100 --device cuda
"""
from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        from .launch import worker_main
        return worker_main()
    from ..errors import GlintError
    from .launch import join_torchrun, torchrun_env
    try:
        rank, _, _ = torchrun_env()
    except GlintError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    if rank != 0:
        import torch
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
        try:
            join_torchrun(_device_arg(argv), _timeout_arg(argv))
        except SystemExit as e:
            return int(e.code or 0)
        return 0
    os.environ["GLINT_RANKS"] = "env"       # the command's connections join these ranks
    from ..cli import main as cli_main
    return cli_main(argv)


def _device_arg(argv: list[str]) -> str:
    for i, a in enumerate(argv):
        if a == "--device" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--device="):
            return a.split("=", 1)[1]
    return "auto"


def _timeout_arg(argv: list[str]) -> float:
    from .connection import DEFAULT_TIMEOUT_S
    for i, a in enumerate(argv):
        if a == "--rank-timeout" and i + 1 < len(argv):
            return float(argv[i + 1])
    return DEFAULT_TIMEOUT_S


if __name__ == "__main__":
    sys.exit(main())
