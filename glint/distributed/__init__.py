"""Many GPUs (or CPU processes): SPMD execution over torch.distributed.

One process per GPU; every rank runs the same physical plan on its share of
the tables and exchanges rows with the others through collective
communication (NCCL on CUDA, Gloo on the CPU); rank 0 parses, plans and
returns the gathered result (docs/distributed.md).

- :mod:`~glint.distributed.connection`: ``glint.connect(ranks=N)``, the connection
  rank 0 holds; :mod:`~glint.distributed.launch` starts local ranks or joins the
  ones ``torchrun`` started; :mod:`~glint.distributed.rank` is what every rank runs.
- :mod:`~glint.distributed.catalog`: which part of each table a rank reads.
- :mod:`~glint.distributed.comm` (size exchange, failures, collectives) and
  :mod:`~glint.distributed.exchange` (batches in and out of flat buffers) under the
  exchange operators :mod:`~glint.distributed.shuffle`, :mod:`~glint.distributed.broadcast`,
  :mod:`~glint.distributed.gather`, :mod:`~glint.distributed.all_reduce` and the local ones
  in :mod:`~glint.distributed.local`; :mod:`~glint.distributed.run` is the entry of rank
  processes (``torchrun ... -m glint.distributed.run``).
- :mod:`~glint.distributed.planner`: distribution properties through the plan and
  where exchanges go; :mod:`~glint.distributed.cost`: broadcast or shuffle.
- :mod:`~glint.distributed.stats`: per-rank time and traffic of a query.
"""
