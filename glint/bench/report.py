"""``glint bench``'s output: the table on the terminal, and the report's
files (JSON, markdown, and a PNG chart when matplotlib is installed)."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

from glint.bench.machine import slug
from glint.bench.plot import plot_report
from glint.bench.profile import TOP_KERNELS
from glint.errors import GlintIOError

MiB = 1 << 20


def _n(k: int, what: str) -> str:
    return f"{k} {what}" + ("" if k == 1 else "s")


def _s(x, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _mib(x) -> str:
    return "-" if x is None else f"{x / MiB:,.0f}"


def _speed(x) -> str:
    return "-" if x is None else (f"{x:.1f}x" if x >= 1 else f"{x:.2g}x")


_CHECK_TEXT = {
    "ok": "ok",
    "unchecked": "unchecked",
    "not checked": "NOT CHECKED (DuckDB failed)",
    "diff": "DIFF",
    "error": "ERROR",
}


def _header(report: dict) -> str:
    return f"{report['title']} SF {report['sf_label']} on {report['device']}"


def print_table(out, report: dict) -> None:
    """The report as a table (and, with --profile, the top kernels), then each failure's details."""
    from rich.table import Table
    from rich.text import Text

    t = Table(title=_header(report) + f" (median of {report['runs']}, s)", header_style="bold")
    dist = report.get("ranks", 1) != 1
    profiled = bool(report.get("profile"))
    extra = [*(_BREAKDOWN_COLUMNS if dist else ()), *(_PROFILE_COLUMNS if profiled else ())]
    for col, just in [
        ("query", "left"),
        ("rows", "right"),
        ("glint warm", "right"),
        ("glint cold", "right"),
        ("DuckDB mem", "right"),
        ("DuckDB parquet", "right"),
        ("speedup", "right"),
        ("peak GPU MiB", "right"),
        ("H2D MiB cold/warm", "right"),
        ("touched MiB", "right"),
        *((c, "right") for c in extra),
        ("check", "left"),
    ]:
        t.add_column(col, justify=just)
    styles = {"ok": "green", "unchecked": "dim", "diff": "bold red", "error": "bold red", "not checked": "bold red"}
    for q in report["queries"]:
        t.add_row(
            q["label"],
            "-" if q["rows"] is None else str(q["rows"]),
            _s(q["glint_warm_s"]),
            _s(q["glint_cold_s"]),
            _s(q["duckdb_memory_s"]),
            _s(q["duckdb_parquet_s"]),
            _speed(q["speedup"]),
            _mib(q["peak_gpu_bytes"]),
            f"{_mib(q.get('cold_h2d_bytes'))}/{_mib(q.get('warm_h2d_bytes'))}",
            _mib(q.get("touched_bytes")),
            *(_breakdown_cells(q) if dist else []),
            *(_profile_cells(q) if profiled else []),
            Text(_CHECK_TEXT[q["status"]], style=styles[q["status"]]),
        )
    t.add_section()
    n_ok = sum(q["status"] in ("ok", "unchecked") for q in report["queries"])
    t.add_row(
        "total",
        "",
        _s(report["glint_warm_total_s"]),
        _s(report["glint_cold_total_s"]),
        _s(report["duckdb_memory_total_s"]),
        _s(report["duckdb_parquet_total_s"]),
        _speed(report["speedup_total"]),
        "",
        "",
        "",
        *([""] * len(extra)),
        f"{n_ok}/{len(report['queries'])} ok",
    )
    out.print(t)
    if profiled:
        _print_top_kernels(out, report)
    for q in report["queries"]:
        details = q["errors"] + q["diffs"]
        if details:
            out.print(Text(f"{q['label']}:", style="bold"))
            for d in details:
                out.print(Text("  " + d))


def _print_top_kernels(out, report: dict) -> None:
    from rich.table import Table

    rows = [(q["label"], k) for q in report["queries"] for k in (q.get("top_kernels") or [])]
    if not rows:
        errors = sorted({q["profile_error"] for q in report["queries"] if q.get("profile_error")})
        why = "; ".join(errors) if errors else "no device kernels (the device fields are null on the CPU)"
        out.print(f"profile: {why}", markup=False, highlight=False)
        return
    t = Table(title=f"top {TOP_KERNELS} kernels per query by GPU time (--profile)", header_style="bold")
    for col, just in (("query", "left"), ("kernel", "left"), ("count", "right"), ("device s", "right")):
        t.add_column(col, justify=just, overflow="fold" if col == "kernel" else "ellipsis")
    for label, k in rows:
        t.add_row(label, k["name"][:_KERNEL_NAME_WIDTH], str(k["count"]), _s(k["total_s"], 4))
    out.print(t)


_BREAKDOWN_COLUMNS = ("compute s", "shuffle s", "bcast s", "gather s", "reduce s", "wait s", "moved MiB", "msgs")


_PROFILE_COLUMNS = ("GPU busy s", "kernels", "memcpy", "host syncs", "touched GB/s")
_KERNEL_NAME_WIDTH = 100


def _count(x) -> str:
    return "-" if x is None else str(x)


def _profile_cells(q: dict) -> list[str]:
    """A query's --profile fields (a dash where they are null, as the device's on the CPU)."""
    gbps, share = q.get("touched_gbps"), q.get("touched_bw_fraction")
    rate = "-" if gbps is None else f"{gbps:.2f}" + ("" if share is None else f" ({100 * share:.2g}% of peak)")
    return [
        _s(q.get("gpu_busy_s"), 4),
        _count(q.get("kernel_launches")),
        _count(q.get("memcpy_count")),
        _count(q.get("host_syncs")),
        rate,
    ]


def _breakdown_cells(q: dict) -> list[str]:
    """A distributed run's warm breakdown of one query (slowest rank's seconds)."""
    b = q.get("breakdown")
    if not b:
        return ["-"] * len(_BREAKDOWN_COLUMNS)
    return [_s(b[k]) for k in ("compute_s", "shuffle_s", "broadcast_s", "gather_s", "allreduce_s", "wait_s")] + [
        _mib(b["bytes_sent"]),
        str(b["messages_sent"]),
    ]


def _markdown_preamble(report: dict) -> list[str]:
    m = report["machine"]
    gib = lambda b: "?" if b is None else f"{b / (1 << 30):.0f} GiB"
    gpu = (
        f"{m['gpu_name']} ({gib(m['gpu_memory_bytes'])}, driver {m['gpu_driver_version'] or '?'}, "
        f"CUDA {m['cuda_version'] or '?'})"
        if m["gpu_name"]
        else "none"
    )
    lines = [
        f"- date: {report['timestamp']}; glint {report['glint_version']}"
        + (f" ({m['glint_commit']})" if m.get("glint_commit") else ""),
        f"- host: {m['hostname']}, {m['cpu_count']} CPUs ({m['cpu_model'] or '?'}), {gib(m['ram_bytes'])} RAM; "
        f"GPU: {gpu}",
        f"- torch {m['torch_version']}, pyarrow {m['pyarrow_version']}, DuckDB {m['duckdb_version'] or '-'}"
        + (
            f" ({report['duckdb_info']['duckdb_threads']} threads"
            + (", compressed in-memory tables" if report["duckdb_info"]["duckdb_memory_compressed"] else "")
            + ")"
            if report["duckdb"]
            else " (not run)"
        ),
        f"- times in seconds: median of {_n(report['runs'], 'run')} after {_n(report['warmup'], 'warm-up run')}; "
        f"glint cold = one run from read_parquet through the result on a fresh connection; "
        f"speedup = DuckDB in-memory / glint warm",
    ]
    probe = m.get("host_probe_s") or {}
    if probe.get("before_glint") and probe.get("after_glint"):
        a, b = probe["before_glint"], probe["after_glint"]
        lines.append(
            f"- host speed: a fixed piece of pure-Python work took {a:.3f} s before glint's runs and {b:.3f} s "
            "after them (glint's host work per chunk runs at this speed)"
            + (" - **the host's speed changed during the run**" if max(a, b) > 1.3 * min(a, b) else "")
        )
    opts = report.get("glint_options") or {}
    if opts:
        lines.append("- glint options: " + ", ".join(f"{k}={v}" for k, v in opts.items()))
    start = (report.get("load_s") or {}).get("glint_cold_process_start_s")
    if start is not None:
        lines.append(
            f"- glint cold runs in a fresh process; its start (imports, CUDA context, a warm-up "
            f"query on a small table) took {start:.2f} s, not counted in the query times"
        )
    planned = [q["plan_s"] for q in report["queries"] if q.get("plan_s") is not None]
    if planned:
        reused = sum(1 for q in report["queries"] if q.get("warm_plan_reused"))
        lines.append(
            f"- planning (parse, bind, optimize) took {sum(planned):.3f} s over the queries' first runs; "
            f"the warm runs of {reused} of {len(planned)} queries reused that plan (the connection's plan "
            "cache, setting plan_cache_entries)"
        )
    if report.get("ranks", 1) != 1:
        lines.append(
            f"- {report['ranks']} ranks{' (tables hash-partitioned on their keys)' if report.get('hash_partition') else ''}; "
            "compute / shuffle / bcast / gather / reduce / wait: the slowest rank's seconds in the last warm "
            "run; moved: bytes sent between ranks"
        )
    if report.get("profile"):
        lines.append(
            "- profile: each query once more under torch.profiler after every query's timed runs; GPU busy = the "
            "union of its kernels, copies and memsets on the device; host syncs = the host's waits for "
            "the device; touched GB/s = columns touched / glint warm, against the device's peak memory "
            "bandwidth where known (the device fields are empty on the CPU)"
        )
    return lines


def _markdown_table(report: dict) -> list[str]:
    dist = report.get("ranks", 1) != 1
    profiled = bool(report.get("profile"))
    extra = [*(_BREAKDOWN_COLUMNS if dist else ()), *(_PROFILE_COLUMNS if profiled else ())]
    lines = [
        "| query | rows | glint warm | glint cold | DuckDB in-memory | DuckDB on Parquet | speedup "
        "| peak GPU MiB | H2D MiB cold | H2D MiB warm | columns touched MiB | "
        + "".join(f"{c} | " for c in extra)
        + "check |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(extra) + "---|",
    ]
    for q in report["queries"]:
        cells = "".join(
            f"{c} | " for c in [*(_breakdown_cells(q) if dist else []), *(_profile_cells(q) if profiled else [])]
        )
        lines.append(
            f"| {q['label']} | {'-' if q['rows'] is None else q['rows']} | {_s(q['glint_warm_s'])} "
            f"| {_s(q['glint_cold_s'])} | {_s(q['duckdb_memory_s'])} | {_s(q['duckdb_parquet_s'])} "
            f"| {_speed(q['speedup'])} | {_mib(q['peak_gpu_bytes'])} | {_mib(q.get('cold_h2d_bytes'))} "
            f"| {_mib(q.get('warm_h2d_bytes'))} | {_mib(q.get('touched_bytes'))} | {cells}"
            f"{_CHECK_TEXT[q['status']]} |"
        )
    n_ok = sum(q["status"] in ("ok", "unchecked") for q in report["queries"])
    lines.append(
        f"| **total** | | {_s(report['glint_warm_total_s'])} | {_s(report['glint_cold_total_s'])} "
        f"| {_s(report['duckdb_memory_total_s'])} | {_s(report['duckdb_parquet_total_s'])} "
        f"| {_speed(report['speedup_total'])} | | | | | " + "| " * len(extra) + f"{n_ok}/{len(report['queries'])} ok |"
    )
    return lines


def _markdown_top_kernels(report: dict) -> list[str]:
    rows = [(q["label"], k) for q in report["queries"] for k in (q.get("top_kernels") or [])]
    if not rows:
        return []
    lines = [
        "",
        f"## Top {TOP_KERNELS} kernels per query by GPU time",
        "",
        "| query | kernel | count | device s |",
        "|---|---|---:|---:|",
    ]
    for label, k in rows:
        name = k["name"][:_KERNEL_NAME_WIDTH].replace("|", "\\|")
        lines.append(f"| {label} | `{name}` | {k['count']} | {_s(k['total_s'], 4)} |")
    return lines


def write_markdown(report: dict, path: Path) -> None:
    lines = [
        f"# {_header(report)}",
        "",
        *_markdown_preamble(report),
        "",
        *_markdown_table(report),
        *_markdown_top_kernels(report),
    ]
    bad = [q for q in report["queries"] if q["errors"] or q["diffs"]]
    if bad:
        lines += ["", "## Failures", ""]
        for q in bad:
            lines.append(f"- **{q['label']}**")
            lines += ["  ```", *("  " + d for d in q["errors"] + q["diffs"]), "  ```"]
    try:
        path.write_text("\n".join(lines) + "\n")
    except OSError as e:
        raise GlintIOError(f"cannot write {str(path)!r}: {e.strerror or e}") from None


def default_out_dir(report: dict) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("bench") / "results" / f"{report['benchmark']}-sf{report['sf_label']}-{slug(report['device'])}-{stamp}"


def write_outputs(report: dict, out_dir: Path, err) -> dict[str, Path]:
    """JSON, markdown and (when matplotlib is installed) PNG into out_dir."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise GlintIOError(f"cannot create the output directory {str(out_dir)!r}: {e.strerror or e}") from None
    stem = f"{report['benchmark']}_sf{report['sf_label']}_{slug(report['device'])}"
    paths = {"json": out_dir / f"{stem}.json", "md": out_dir / f"{stem}.md", "png": out_dir / f"{stem}.png"}
    try:
        paths["json"].write_text(json.dumps(report, indent=2, default=str) + "\n")
    except OSError as e:
        raise GlintIOError(f"cannot write {str(paths['json'])!r}: {e.strerror or e}") from None
    write_markdown(report, paths["md"])
    try:
        plot_report(report, paths["png"])
    except ImportError:
        err.print(
            "[yellow]matplotlib is not installed: no chart written[/] (pip install matplotlib, "
            "or pip install -e '.[bench]')",
            highlight=False,
        )
        del paths["png"]
    return paths
