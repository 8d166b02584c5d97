"""``python -m glint.distributed.run --worker``: the entry of a rank process that
``glint.connect(ranks=N)`` launched (its store, rank and settings come in the
environment). Ranks that ``torchrun`` starts run the ``glint`` command itself
(``torchrun ... -m glint COMMAND ... --ranks env``)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] != ["--worker"]:
        print(
            "usage: python -m glint.distributed.run --worker (started by glint.connect(ranks=N)); "
            "under torchrun, run the glint command with --ranks env",
            file=sys.stderr,
        )
        return 2
    from glint.distributed.launch import worker_main

    return worker_main()


if __name__ == "__main__":
    sys.exit(main())
