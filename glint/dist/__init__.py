"""Many GPUs (or CPU processes): SPMD execution over torch.distributed.

One process per GPU; every rank runs the same physical plan on its share of
the tables and exchanges rows with the others through collective
communication (NCCL on CUDA, Gloo on the CPU); rank 0 parses, plans and
returns the gathered result (DESIGN.md, "Distributed mode").

- :mod:`~glint.dist.connection`: ``glint.connect(ranks=N)``, the connection
  rank 0 holds; :mod:`~glint.dist.launch` starts local ranks or joins the
  ones ``torchrun`` started; :mod:`~glint.dist.rank` is what every rank runs.
- :mod:`~glint.dist.catalog`: which part of each table a rank reads.
- :mod:`~glint.dist.comm` (size exchange, failures, collectives) and
  :mod:`~glint.dist.exchange` (batches in and out of flat buffers) under the
  exchange operators :mod:`~glint.dist.shuffle`, :mod:`~glint.dist.broadcast`,
  :mod:`~glint.dist.gather`, :mod:`~glint.dist.all_reduce` and the local ones
  in :mod:`~glint.dist.local`; :mod:`~glint.dist.run` is the entry of rank
  processes (``torchrun ... -m glint.dist.run``).
- :mod:`~glint.dist.planner`: distribution properties through the plan and
  where exchanges go; :mod:`~glint.dist.cost`: broadcast or shuffle.
- :mod:`~glint.dist.stats`: per-rank time and traffic of a query.
"""
