"""``glint bench``, run in-process at SF 0.01 on the CPU: the report files, their
keys, the checks against DuckDB and the exit codes."""

from __future__ import annotations

import importlib.util
import json

import pytest

from glint.__main__ import main
from glint.bench import duckdb_runs, glint_runs, suites
from glint.errors import ExecutionError

REPORT_KEYS = {
    "benchmark",
    "sf",
    "device",
    "ranks",
    "glint_version",
    "queries",
    "glint_warm_total_s",
    "glint_cold_total_s",
    "duckdb_memory_total_s",
    "duckdb_parquet_total_s",
    "runs",
    "timestamp",
    "machine",
}
QUERY_KEYS = {
    "query",
    "correct",
    "glint_warm_s",
    "glint_cold_s",
    "duckdb_memory_s",
    "duckdb_parquet_s",
    "peak_gpu_bytes",
}
MACHINE_KEYS = {
    "hostname",
    "cpu_count",
    "ram_bytes",
    "gpu_name",
    "gpu_driver_version",
    "torch_version",
    "duckdb_version",
}
FAST = ["--sf", "0.01", "--device", "cpu", "--runs", "1", "--warmup", "0", "--no-cold-process"]


@pytest.fixture(autouse=True, scope="module")
def sf001_data(cached_tpch, cached_ssb):
    """The SF 0.01 data the benchmarks read from the data cache, generated once
    per run before the harness looks for it."""
    cached_tpch(0.01)
    cached_ssb(0.01)


def _report(out, benchmark: str) -> dict:
    files = sorted(p.name for p in out.iterdir())
    stem = f"{benchmark}_sf0.01_cpu"
    assert files == [f"{stem}.json", f"{stem}.md", f"{stem}.png"]
    assert (out / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return json.loads((out / f"{stem}.json").read_text())


def _no_traceback(c) -> None:
    assert "Traceback" not in c.out and "Traceback" not in c.err


def _check_full_report(rep: dict, benchmark: str, n_queries: int, cold: set[str]) -> None:
    assert REPORT_KEYS <= rep.keys() and MACHINE_KEYS <= rep["machine"].keys()
    assert rep["benchmark"] == benchmark and rep["sf"] == 0.01 and rep["device"] == "cpu" and rep["ranks"] == 1
    assert len(rep["queries"]) == n_queries and rep["queries_failed"] == []
    for q in rep["queries"]:
        assert QUERY_KEYS <= q.keys()
        assert q["correct"] is True, (q["query"], q["errors"], q["diffs"])
        assert q["glint_warm_s"] > 0 and q["duckdb_memory_s"] > 0 and q["duckdb_parquet_s"] > 0
        assert q["peak_gpu_bytes"] is None  # CPU run
        assert (q["glint_cold_s"] is not None) == (q["query"] in cold)
        assert q["checked"] == (["warm", "cold"] if q["query"] in cold else ["warm"])
        # the first run planned the query; the timed runs reused its plan (glint.engine.plan_cache)
        assert q["plan_s"] > 0 and q["warm_plan_reused"] is True
    assert rep["glint_warm_total_s"] == pytest.approx(sum(q["glint_warm_s"] for q in rep["queries"]))
    assert rep["glint_cold_total_s"] == pytest.approx(sum(q["glint_cold_s"] or 0 for q in rep["queries"]))


def test_bench_tpch(tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["bench", "tpch", *FAST, "--cold-queries", "1,6,13", "--out", str(out)]) == 0
    c = capsys.readouterr()
    _no_traceback(c)
    rep = _report(out, "tpch")
    _check_full_report(rep, "tpch", 22, {"1", "6", "13"})
    assert rep["queries"][0]["label"] == "Q01" and rep["queries"][0]["tables"] == ["lineitem"]
    assert "Q22" in c.out and "22/22 ok" in c.out
    md = (out / "tpch_sf0.01_cpu.md").read_text()
    assert md.startswith("# TPC-H SF 0.01 on cpu") and "| Q01 | 4 |" in md and "22/22 ok" in md
    assert "the warm runs of 22 of 22 queries reused that plan" in md


@pytest.mark.skipif(importlib.util.find_spec("glint.workloads.ssb") is None, reason="glint.workloads.ssb not present")
def test_bench_ssb(tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["bench", "ssb", *FAST, "--cold-queries", "1.1,4.3", "--out", str(out)]) == 0
    c = capsys.readouterr()
    _no_traceback(c)
    rep = _report(out, "ssb")
    _check_full_report(rep, "ssb", 13, {"1.1", "4.3"})
    assert [q["label"] for q in rep["queries"]][:2] == ["Q1.1", "Q1.2"] and "13/13 ok" in c.out


def test_bench_tpcds(tmp_path, capsys, cached_tpcds, monkeypatch):
    """glint bench tpcds: DuckDB's dsdgen data and query texts, every result
    checked; a query glint refuses is a failed query, named, not a crash."""
    d = cached_tpcds(0.1)
    out = tmp_path / "res"
    argv = [
        "bench",
        "tpcds",
        "--sf",
        "0.1",
        "--data",
        str(d),
        "--device",
        "cpu",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--no-cold-process",
    ]
    assert main([*argv, "--queries", "3,7", "--cold-queries", "3", "--out", str(out)]) == 0
    c = capsys.readouterr()
    _no_traceback(c)
    rep = json.loads((out / "tpcds_sf0.1_cpu.json").read_text())
    assert [q["label"] for q in rep["queries"]] == ["Q03", "Q07"] and rep["queries_correct"] == 2
    assert "2/2 ok" in c.out and rep["queries"][0]["glint_cold_s"] is not None
    assert main([*argv, "--queries", "41", "--no-cold", "--out", str(tmp_path / "q41")]) == 0
    assert "1/1 ok" in capsys.readouterr().out
    # a query glint refuses (here a LIST aggregate put in Q41's place) fails by name
    from glint.workloads import tpcds

    monkeypatch.setattr(tpcds, "tpcds_query", lambda n: "SELECT list(i_item_id) FROM item")
    assert main([*argv, "--queries", "41", "--no-cold", "--no-duckdb", "--out", str(tmp_path / "list")]) == 1
    assert "1 of 1 queries failed: Q41" in capsys.readouterr().err


def test_bench_duckdb_warmup_apart(tmp_path, capsys, monkeypatch):
    """--duckdb-warmup sets DuckDB's untimed runs apart from glint's
    (--warmup): glint warmed up, DuckDB on Parquet run once."""
    from glint.bench import harness

    seen = []
    real = harness.run_duckdb_phases

    def spy(*args, **kw):
        seen.append(args[7])  # the warm-up runs
        return real(*args, **kw)

    monkeypatch.setattr(harness, "run_duckdb_phases", spy)
    argv = ["bench", "tpch", "--sf", "0.01", "--device", "cpu", "--runs", "1", "--no-cold", "--no-duckdb-memory"]
    assert main([*argv, "--warmup", "1", "--duckdb-warmup", "0", "--queries", "6", "--out", str(tmp_path / "a")]) == 0
    assert main([*argv, "--warmup", "1", "--queries", "6", "--out", str(tmp_path / "b")]) == 0
    _no_traceback(capsys.readouterr())
    assert seen == [0, 1]
    assert _report(tmp_path / "a", "tpch")["queries_correct"] == 1


def test_bench_mismatch_fails(tmp_path, capsys, monkeypatch):
    import glint.testing.compare as compare

    monkeypatch.setattr(compare, "compare_query_result", lambda sql, a, e, **kw: ["1 of 1 rows differ"])
    out = tmp_path / "res"
    assert main(["bench", "tpch", *FAST, "--queries", "6", "--no-duckdb-parquet", "--out", str(out)]) == 1
    c = capsys.readouterr()
    _no_traceback(c)
    assert "1 of 1 queries failed: Q06" in c.err and "differs from DuckDB" in c.out
    rep = _report(out, "tpch")
    (q,) = rep["queries"]
    assert q["correct"] is False and q["status"] == "diff" and rep["queries_failed"] == ["Q06"]
    assert q["duckdb_parquet_s"] is None and q["glint_cold_s"] is not None
    assert "## Failures" in (out / "tpch_sf0.01_cpu.md").read_text()


def test_bench_glint_error_fails(tmp_path, capsys, monkeypatch):
    def boom(con, sql, *rest):
        raise ExecutionError("kernel exploded")

    monkeypatch.setattr(glint_runs, "glint_query", boom)
    out = tmp_path / "res"
    assert main(["bench", "tpch", *FAST, "--queries", "1,6", "--no-duckdb", "--out", str(out)]) == 1
    c = capsys.readouterr()
    _no_traceback(c)
    assert "kernel exploded" in c.out and "2 of 2 queries failed" in c.err
    rep = _report(out, "tpch")
    assert [q["status"] for q in rep["queries"]] == ["error", "error"]
    assert all(q["glint_warm_s"] is None and q["glint_cold_s"] is None for q in rep["queries"])


def test_bench_without_duckdb_is_unchecked(tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["bench", "tpch", *FAST, "--queries", "6", "--no-duckdb", "--no-cold", "--out", str(out)]) == 0
    rep = _report(out, "tpch")
    (q,) = rep["queries"]
    assert q["correct"] is None and q["status"] == "unchecked" and q["duckdb_memory_s"] is None
    assert q["glint_cold_s"] is None and rep["cold"] is False and rep["duckdb_memory_total_s"] is None
    # the host's speed, before and after glint's runs, is on record (JSON and markdown)
    probe = rep["machine"]["host_probe_s"]
    assert set(probe) == {"before_glint", "after_glint"} and all(v > 0 for v in probe.values())
    md = (out / "tpch_sf0.01_cpu.md").read_text()
    assert f"took {probe['before_glint']:.3f} s before glint's runs and {probe['after_glint']:.3f} s after" in md


def test_report_says_when_the_hosts_speed_changed():
    from glint.bench.report import _markdown_preamble

    machine = {
        "gpu_name": None,
        "hostname": "h",
        "cpu_count": 2,
        "cpu_model": "x",
        "ram_bytes": 1 << 30,
        "torch_version": "t",
        "pyarrow_version": "p",
        "duckdb_version": None,
        "glint_commit": None,
    }
    base = {"timestamp": "now", "glint_version": "0", "duckdb": False, "runs": 1, "warmup": 0, "queries": []}
    steady = _markdown_preamble(
        {**base, "machine": {**machine, "host_probe_s": {"before_glint": 0.3, "after_glint": 0.32}}}
    )
    changed = _markdown_preamble(
        {**base, "machine": {**machine, "host_probe_s": {"before_glint": 0.27, "after_glint": 0.6}}}
    )
    assert not any("changed during the run" in line for line in steady)
    assert any(
        "0.270 s before glint's runs and 0.600 s after" in line and "changed during the run" in line for line in changed
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--queries", "23"], "there is no TPC-H query 23"),
        (["--runs", "0"], "--runs must be at least 1"),
        (["--device", "tpu"], 'unknown device "tpu"'),
        (["--data", "/nonexistent/dir"], "No such directory"),
        (["--skew", "1", "--data", "/some/dir"], "--skew makes a skewed TPC-H: it goes with tpch, without --data"),
    ],
)
def test_bench_bad_arguments(argv, message, tmp_path, capsys):
    assert main(["bench", "tpch", "--sf", "0.01", "--out", str(tmp_path / "o"), *argv]) == 1
    c = capsys.readouterr()
    _no_traceback(c)
    assert c.err.startswith("Error: ") and message in c.err
    assert not (tmp_path / "o").exists()


def test_bench_ssb_query_names():
    names = ("1.1", "1.2", "1.3", "2.1", "2.2", "2.3", "3.1")
    assert suites.parse_query_names("2, q3.1", names) == ["2.1", "2.2", "2.3", "3.1"]
    assert suites.parse_query_names("1.3-2.2", names) == ["1.3", "2.1", "2.2"]
    with pytest.raises(Exception, match="there is no SSB query '5.1'"):
        suites.parse_query_names("5.1", names, "SSB")


def test_duckdb_compressed_in_memory(cached_tpch):
    from glint.io.file_lists import tables_in_directory

    found = tables_in_directory(cached_tpch(0.01))
    con = duckdb_runs.duckdb_connection(found, ["nation", "region"], views=False, compress=True)
    try:
        assert con.execute("SELECT current_database()").fetchone()[0] == "m"
        assert con.execute("SELECT count(*) FROM nation JOIN region ON n_regionkey = r_regionkey").fetchone() == (25,)
    finally:
        con.close()


def test_bench_cold_runs_in_a_fresh_process(tmp_path, capsys):
    """The cold phase runs in a new Python process; its start-up is reported
    apart, and each query reports the bytes it moved and touched."""
    out = tmp_path / "res"
    args = ["--sf", "0.01", "--device", "cpu", "--runs", "1", "--warmup", "0", "--chunk-rows", "20000"]
    assert main(["bench", "tpch", *args, "--queries", "6", "--no-duckdb-memory", "--out", str(out)]) == 0
    rep = _report(out, "tpch")
    (q,) = rep["queries"]
    assert q["status"] == "ok" and "cold" in q["checked"] and q["glint_cold_s"] > 0
    assert rep["load_s"]["glint_cold_process_start_s"] > 0
    assert rep["glint_options"] == {"chunk_rows": 20000}
    assert q["touched_bytes"] > 0 and q["cold_io"]["chunks"] == 4  # 60,175 lineitem rows in 20,000-row chunks


PROFILE_DEVICE_FIELDS = ("gpu_busy_s", "kernel_launches", "memcpy_count", "host_syncs", "top_kernels")


def test_bench_profile_on_the_cpu(tmp_path, capsys):
    """--profile runs each query once more under torch.profiler: on the CPU the
    device fields are null, the profiled run's time and the touched rate are not."""
    out = tmp_path / "res"
    assert (
        main(["bench", "tpch", *FAST, "--queries", "1,6", "--no-duckdb", "--no-cold", "--profile", "--out", str(out)])
        == 0
    )
    c = capsys.readouterr()
    _no_traceback(c)
    rep = _report(out, "tpch")
    assert rep["profile"] is True
    for q in rep["queries"]:
        assert all(q[k] is None for k in PROFILE_DEVICE_FIELDS), q
        assert q["profile_error"] is None and q["profiled_s"] > 0
        assert q["touched_bytes"] > 0
        assert q["touched_gbps"] == pytest.approx(q["touched_bytes"] / q["glint_warm_s"] / 1e9)
        assert q["touched_bw_fraction"] is None
    assert "GPU busy s" in c.out and "touched GB/s" in c.out and "device fields are null on the CPU" in c.out
    md = (out / "tpch_sf0.01_cpu.md").read_text()
    assert "| GPU busy s | kernels | memcpy | host syncs | touched GB/s |" in md


def test_bench_without_profile_has_null_profile_fields(tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["bench", "tpch", *FAST, "--queries", "6", "--no-duckdb", "--no-cold", "--out", str(out)]) == 0
    c = capsys.readouterr()
    rep = _report(out, "tpch")
    (q,) = rep["queries"]
    assert rep["profile"] is False and q["profiled_s"] is None and q["profile_error"] is None
    assert all(q[k] is None for k in PROFILE_DEVICE_FIELDS)
    assert q["touched_gbps"] > 0 and "GPU busy s" not in c.out


def test_profile_reads_the_kineto_events_when_function_events_fail():
    """Another torch's FunctionEvents: the profile falls back to the Kineto events."""
    from types import SimpleNamespace

    from torch.autograd import DeviceType

    from glint.bench import profile

    def kineto(name, device, start_ns, dur_ns):
        return SimpleNamespace(
            name=lambda: name, device_type=lambda: device, start_ns=lambda: start_ns, duration_ns=lambda: dur_ns
        )

    def broken():
        raise AttributeError("no time_range")

    events = [
        kineto(profile.MARK, DeviceType.CPU, 0, 100_000),
        kineto("cudaStreamSynchronize", DeviceType.CPU, 50_000, 1_000),
        kineto("cudaDeviceSynchronize", DeviceType.CPU, 200_000, 1_000),
        kineto("gemm", DeviceType.CUDA, 10_000, 20_000),
        kineto("Memset (Device)", DeviceType.CUDA, 20_000, 20_000),
    ]
    prof = SimpleNamespace(
        events=broken, profiler=SimpleNamespace(kineto_results=SimpleNamespace(events=lambda: events))
    )
    s = profile.summarize(profile.trace_events(prof))
    assert s["gpu_busy_s"] == pytest.approx(30e-6) and s["kernel_launches"] == 1 and s["memcpy_count"] == 0
    assert s["host_syncs"] == 1 and s["top_kernels"] == [{"name": "gemm", "count": 1, "total_s": pytest.approx(20e-6)}]


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs CUDA")
def test_bench_profile_on_cuda(tmp_path, capsys):
    out = tmp_path / "res"
    assert (
        main(
            [
                "bench",
                "tpch",
                "--sf",
                "0.01",
                "--device",
                "cuda",
                "--runs",
                "1",
                "--warmup",
                "0",
                "--queries",
                "1,6",
                "--no-duckdb",
                "--no-cold",
                "--profile",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    c = capsys.readouterr()
    _no_traceback(c)
    rep = json.loads(next(out.glob("*.json")).read_text())
    for q in rep["queries"]:
        assert q["profile_error"] is None, q["profile_error"]
        assert q["kernel_launches"] > 0 and 0 < q["gpu_busy_s"] <= q["profiled_s"]
        assert q["memcpy_count"] >= 0 and q["host_syncs"] >= 0
        assert 1 <= len(q["top_kernels"]) <= 3 and all(k["count"] > 0 and k["total_s"] > 0 for k in q["top_kernels"])
        assert q["touched_gbps"] > 0
    assert "top 3 kernels per query" in c.out
