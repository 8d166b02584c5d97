"""``glint bench serve``: the Flight SQL server (``glint serve``) measured
over loopback by ADBC clients in this process, the server in its own.

- **Streaming**: a large result, TPC-H lineitem's numeric and date columns
  (``STREAM_QUERY``: 68 bytes a row, about 400 MB at SF 1), read by one
  client, then by 8 clients at once; GB/s = the result's Arrow bytes / the
  wall time from the query's submission to its last batch (decimal GB). The
  first read is untimed (it loads the columns to the device); then the median
  of ``--runs``.
- **Latency**: ``SELECT 42`` and TPC-H Q6, ``--calls`` calls each spread over
  ``--clients`` clients (8) calling one after another at once; a call is the
  query's submission through its last batch. p50, p99, mean and calls per
  second; each client's first 2 calls are untimed.

Every answer is checked: the streamed rows against lineitem's count, 42, and
Q6's value against the first call's. The report (JSON and markdown) goes to
``--out`` (default ``bench/results/serve-sf<SF>-<device>-<date>/``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import secrets
import select
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from glint.bench.machine import slug
from glint.cli.common import EXIT_OK, console
from glint.errors import GlintError, GlintIOError
from glint.workloads import tpch

STREAM_QUERY = (
    "SELECT l_orderkey, l_partkey, l_suppkey, l_linenumber, l_quantity, l_extendedprice, "
    "l_discount, l_tax, l_shipdate FROM lineitem"
)
WARMUP_CALLS = 2


def _start_server(data: Path, device: str, token: str, extra: list[str], log: Path) -> tuple[subprocess.Popen, int]:
    cmd = [sys.executable, "-m", "glint", "serve", "--port", "0", "--device", device, "--token", token]
    cmd += ["--parquet", str(data), "--max-client-queries", "0", *extra]
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if select.select([proc.stdout], [], [], 0.5)[0]:
            m = re.search(r"listening on \S+:(\d+) ", proc.stdout.readline())
            if m:
                return proc, int(m.group(1))
    proc.kill()
    raise GlintError(f"glint serve did not start (its log: {log})")


def _connect(port: int, token: str):
    import adbc_driver_flightsql.dbapi as dbapi

    return dbapi.connect(
        f"grpc://127.0.0.1:{port}",
        db_kwargs={"adbc.flight.sql.authorization_header": f"Bearer {token}"},
        autocommit=True,
    )


def _read(con, sql: str) -> tuple[int, int, object]:
    """(rows, Arrow bytes, the first value) of a query read batch by batch."""
    rows = nbytes = 0
    first = None
    with con.cursor() as cur:
        cur.execute(sql)
        for batch in cur.fetch_record_batch():
            if first is None and batch.num_rows:
                first = batch.column(0)[0].as_py()
            rows += batch.num_rows
            nbytes += batch.nbytes
    return rows, nbytes, first


def _at_once(n: int, work) -> list:
    """``work(i)`` on ``n`` threads started together; their results in order."""
    out: list = [None] * n
    errors: list = []
    start = threading.Barrier(n)

    def run(i):
        try:
            start.wait()
            out[i] = work(i)
        except Exception as e:  # noqa: BLE001 - raised below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


def _stream(cons: list, runs: int, expected_rows: int) -> dict:
    def timed(con):
        t0 = time.perf_counter()
        rows, nbytes, _ = _read(con, STREAM_QUERY)
        if rows != expected_rows:
            raise GlintError(f"the streamed result has {rows} rows, lineitem {expected_rows}")
        return nbytes, time.perf_counter() - t0

    _read(cons[0], STREAM_QUERY)  # untimed: the columns go to the device
    one = [timed(cons[0]) for _ in range(runs)]
    nbytes = one[0][0]
    wall = statistics.median(t for _, t in one)
    many = [max(t for _, t in _at_once(len(cons), lambda i: timed(cons[i]))) for _ in range(runs)]
    wall_many = statistics.median(many)
    return {
        "query": STREAM_QUERY,
        "rows": expected_rows,
        "bytes": nbytes,
        "one_client": {"seconds": wall, "gbps": nbytes / wall / 1e9, "runs": [t for _, t in one]},
        f"{len(cons)}_clients": {
            "seconds": wall_many,
            "gbps": len(cons) * nbytes / wall_many / 1e9,
            "runs": many,
        },
    }


def _latency(cons: list, sql: str, calls: int, check) -> dict:
    per_client = max(1, calls // len(cons))

    def client(i):
        con, times = cons[i], []
        for k in range(WARMUP_CALLS + per_client):
            t0 = time.perf_counter()
            rows, _, first = _read(con, sql)
            dt = time.perf_counter() - t0
            check(rows, first)
            if k >= WARMUP_CALLS:
                times.append(dt)
        return times

    t0 = time.perf_counter()
    times = sorted(t for ts in _at_once(len(cons), client) for t in ts)
    wall = time.perf_counter() - t0
    q = statistics.quantiles(times, n=100, method="inclusive") if len(times) > 1 else times * 99
    return {
        "query": sql,
        "calls": len(times),
        "clients": len(cons),
        "p50_ms": q[49] * 1e3,
        "p99_ms": q[98] * 1e3,
        "mean_ms": statistics.fmean(times) * 1e3,
        "min_ms": times[0] * 1e3,
        "max_ms": times[-1] * 1e3,
        "calls_per_s": len(times) / wall,
    }


def run_serve_bench(args, err) -> dict:
    if args.runs < 1:
        raise GlintError("--runs must be at least 1")
    data = Path(args.data) if args.data else tpch.ensure_tpch_data(args.sf, progress=True)
    token = secrets.token_hex(16)
    extra = []
    if args.gpu_memory_limit:
        extra += ["--memory-limit", args.gpu_memory_limit]
    if args.chunk_rows:
        extra += ["--chunk-rows", str(args.chunk_rows)]
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = Path(os.path.expanduser(args.out)) if args.out else None
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"glint-bench-serve-{stamp}.log"
    err.print(f"starting glint serve over {data} ({args.device})", markup=False, highlight=False)
    proc, port = _start_server(data, args.device, token, extra, log)
    cons = []
    try:
        cons = [_connect(port, token) for _ in range(args.clients)]
        (count,) = _read(cons[0], "SELECT count(*) FROM lineitem")[2:]
        (device,) = _read(cons[0], "SELECT device FROM glint_memory")[2:]
        err.print(f"streaming lineitem ({count:,} rows)", markup=False, highlight=False)
        stream = _stream(cons, args.runs, count)
        q6 = tpch.tpch_query(6)
        q6_value = _read(cons[0], q6)[2]

        def check_42(rows, first):
            if (rows, first) != (1, 42):
                raise GlintError(f"SELECT 42 gave {first!r}")

        def check_q6(rows, first):
            if (rows, first) != (1, q6_value):
                raise GlintError(f"Q6 gave {first!r}, first {q6_value!r}")

        err.print(f"latency: {args.calls} calls of each query over {args.clients} clients", markup=False)
        latency = {
            "select_42": _latency(cons, "SELECT 42", args.calls, check_42),
            "tpch_q6": _latency(cons, q6, args.calls, check_q6),
        }
    finally:
        for c in cons:
            c.close()
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    report = {
        "benchmark": "serve",
        "sf": args.sf,
        "data": str(data),
        "device": device,
        "date": stamp,
        "clients": args.clients,
        "stream": stream,
        "latency": latency,
        "server_log": str(log),
    }
    report["out_dir"] = str(out_dir or Path("bench") / "results" / f"serve-sf{args.sf:g}-{slug(device)}-{stamp}")
    return report


def markdown(report: dict) -> str:
    s, lat = report["stream"], report["latency"]
    many = next(k for k in s if k.endswith("_clients"))
    lines = [
        f"# glint serve over loopback: TPC-H SF {report['sf']:g} on {report['device']}",
        "",
        f"Streaming `{s['query']}`: {s['rows']:,} rows, {s['bytes'] / 1e9:.2f} GB of Arrow",
        "",
        "| clients | seconds | GB/s |",
        "|--:|--:|--:|",
        f"| 1 | {s['one_client']['seconds']:.3f} | {s['one_client']['gbps']:.2f} |",
        f"| {report['clients']} | {s[many]['seconds']:.3f} | {s[many]['gbps']:.2f} |",
        "",
        f"Latency over {report['clients']} clients at once (submission to last batch):",
        "",
        "| query | calls | p50 ms | p99 ms | mean ms | calls/s |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for name, r in lat.items():
        lines.append(
            f"| {name} | {r['calls']} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['mean_ms']:.2f} | "
            f"{r['calls_per_s']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def cmd_bench_serve(args) -> int:
    """``glint bench serve [--sf SF] [--device cuda] [--clients 8] [--calls N] [--runs K] [--out DIR]``."""
    out, err = console(), console(stderr=True)
    try:
        import adbc_driver_flightsql.dbapi  # noqa: F401
    except ImportError:
        raise GlintError("glint bench serve needs adbc-driver-flightsql: pip install -e '.[bench]'") from None
    report = run_serve_bench(args, err)
    text = markdown(report)
    out.print(text, markup=False, highlight=False)
    out_dir = Path(report["out_dir"])
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "serve.json").write_text(json.dumps(report, indent=2) + "\n")
        (out_dir / "serve.md").write_text(text)
    except OSError as e:
        raise GlintIOError(f"cannot write the report into {str(out_dir)!r}: {e.strerror or e}") from None
    err.print(f"wrote {out_dir / 'serve.json'}, {out_dir / 'serve.md'}", markup=False, highlight=False)
    return EXIT_OK
