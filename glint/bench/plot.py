"""Bar charts of ``glint bench`` reports (matplotlib, drawn off-screen with
the Agg canvas: no display and no global backend switch needed).

``python -m glint.bench.plot REPORT.json [OUT.png]`` redraws a chart from a
saved report.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

SERIES = [
    ("glint_warm_s", "glint warm", "#1f77b4"),
    ("glint_cold_s", "glint cold", "#9ecae1"),
    ("duckdb_memory_s", "DuckDB in-memory", "#ff7f0e"),
    ("duckdb_parquet_s", "DuckDB on Parquet", "#fdd0a2"),
]
TOTALS = {
    "glint_warm_s": "glint_warm_total_s",
    "glint_cold_s": "glint_cold_total_s",
    "duckdb_memory_s": "duckdb_memory_total_s",
    "duckdb_parquet_s": "duckdb_parquet_total_s",
}


def plot_report(report: dict, path: str | Path) -> Path:
    """Grouped bars per query (glint warm, glint cold, DuckDB in-memory, DuckDB
    on Parquet; log-scale seconds) and the totals beside them. Series without
    any value are left out; failed queries are labelled in red with a '!'."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, NullFormatter

    queries = report["queries"]
    series = [s for s in SERIES if any(q.get(s[0]) for q in queries)]
    n = max(len(queries), 1)
    fig = Figure(figsize=(min(max(7.0, 3.0 + 0.45 * n), 40.0), 4.8), layout="constrained")
    FigureCanvasAgg(fig)
    gs = fig.add_gridspec(1, 2, width_ratios=[max(n, 2), 2.2])
    ax, axt = fig.add_subplot(gs[0]), fig.add_subplot(gs[1])
    width = 0.8 / max(len(series), 1)
    positive = []
    for i, (key, name, colour) in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(queries))]
        ys = [q.get(key) if q.get(key) else math.nan for q in queries]
        positive += [y for y in ys if y == y]
        ax.bar(xs, ys, width, label=name, color=colour, edgecolor="none")
        tot = report.get(TOTALS[key])
        if tot:
            axt.bar([i], [tot], 0.8, color=colour)
            axt.annotate(f"{tot:.3g}", (i, tot), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(queries)))
    labels = [q["label"] + ("!" if q.get("status") not in ("ok", "unchecked") else "") for q in queries]
    ax.set_xticklabels(labels, rotation=90 if n > 16 else 0, fontsize=8)
    for tick, q in zip(ax.get_xticklabels(), queries):
        if q.get("status") not in ("ok", "unchecked"):
            tick.set_color("red")
    if positive:
        for a in (ax, axt):
            a.set_yscale("log")
            a.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            a.yaxis.set_minor_formatter(NullFormatter())
        lo, hi = min(positive), max(positive)
        ax.set_ylim(lo / 1.5, hi * 4)  # head room for the legend
    ax.set_ylabel("seconds (log scale)")
    ax.set_xlim(-0.6, len(queries) - 0.4)
    ax.grid(axis="y", which="major", alpha=0.3)
    if series:
        ax.legend(fontsize=8, loc="upper left", ncols=len(series))
    runs = report.get("runs")
    ax.set_title(
        f"{report.get('title', report['benchmark'])} SF {report.get('sf_label', report['sf'])} on "
        f"{report['device']}" + (f" (median of {runs})" if runs else ""),
        fontsize=10,
    )
    axt.set_xticks(range(len(series)))
    axt.set_xticklabels([s[1] for s in series], rotation=45, ha="right", fontsize=8)
    axt.set_title("total", fontsize=10)
    axt.grid(axis="y", which="major", alpha=0.3)
    path = Path(path)
    fig.savefig(path, dpi=120)
    return path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not 1 <= len(argv) <= 2:
        print("usage: python -m glint.bench.plot REPORT.json [OUT.png]", file=sys.stderr)
        return 2
    src = Path(argv[0])
    try:
        report = json.loads(src.read_text())
    except (OSError, ValueError) as e:
        print(f"Error: cannot read {str(src)!r}: {e}", file=sys.stderr)
        return 1
    dest = Path(argv[1]) if len(argv) > 1 else src.with_suffix(".png")
    try:
        plot_report(report, dest)
    except ImportError:
        print("Error: matplotlib is not installed (pip install matplotlib)", file=sys.stderr)
        return 1
    except (KeyError, TypeError) as e:
        print(f"Error: {str(src)!r} is not a glint bench report ({e})", file=sys.stderr)
        return 1
    print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
