"""``glint bench exchange`` on Gloo CPU ranks: the report's fields, and that
glint's shuffle and broadcast delivered exactly the rows they should (the
expected rows recomputed here from the generator, apart from the ranks'
own checks); on CUDA (NCCL, one GPU per rank) when two GPUs are present."""

import json

import pytest
import torch

import glint
from glint.__main__ import main
from glint.bench.exchange import CHECKS, checksums, destinations, make_batch, parse_sizes

SIZES = "64KB,1MB"


def _expected(ranks: int, size: int, seed: int = 0):
    """Per rank: the checksums of the rows the shuffle must bring it, and
    rank 0's batch's (what the broadcast brings every rank)."""
    batches = [make_batch(r, size, seed) for r in range(ranks)]
    shuffle = torch.zeros(ranks, len(CHECKS), dtype=torch.int64)
    for b in batches:
        dest = destinations(b, ranks)
        for r in range(ranks):
            mine = dest == r
            shuffle[r] += checksums([b.filter(mine, int(mine.sum()))])
    return [dict(zip(CHECKS, row.tolist())) for row in shuffle], dict(zip(CHECKS, checksums([batches[0]]).tolist()))


def _check_report(report: dict, ranks: int, runs: int, sizes: str) -> None:
    assert report["benchmark"] == "exchange" and report["ranks"] == ranks and report["runs"] == runs
    assert report["machine"]["torch_version"] and report["gbps_definition"]
    assert [s["size"] for s in report["sizes"]] == parse_sizes(sizes)
    for s in report["sizes"]:
        assert abs(s["bytes_per_rank"] - s["size"]) < 64 and s["raw_bytes_per_rank"] > 0
        for key in ("glint_shuffle", "raw_alltoall", "glint_broadcast", "raw_broadcast"):
            assert s[f"{key}_s"] > 0 and s[f"{key}_gbps"] > 0, key
            assert len(s[f"{key}_runs_s"]) == runs and all(t > 0 for t in s[f"{key}_runs_s"])
        assert s["shuffle_ratio"] > 0 and s["broadcast_ratio"] > 0
        assert s["correct"] and s["shuffle_ok"] and s["broadcast_ok"] and report["all_correct"]
        shuffle, root = _expected(ranks, s["size"], report["seed"])
        assert [p["rank"] for p in s["per_rank"]] == list(range(ranks))
        for p in s["per_rank"]:
            assert p["shuffle_received"] == shuffle[p["rank"]] == p["shuffle_expected"]
            assert p["shuffle_misplaced_rows"] == 0
            assert p["broadcast_received"] == root
        # every row arrived exactly once, and the shuffle did move rows between ranks
        total = sum(p["shuffle_received"]["rows"] for p in s["per_rank"])
        assert total == ranks * make_batch(0, s["size"]).num_rows
        assert all(0 < p["shuffle_received"]["rows"] < total for p in s["per_rank"])


def test_bench_exchange_cli_on_gloo_ranks(tmp_path, capsys):
    out = tmp_path / "tmp"
    assert (
        main(
            ["bench", "exchange", "--ranks", "2", "--device", "cpu", "--sizes", SIZES, "--runs", "2", "--out", str(out)]
        )
        == 0
    )
    report = json.loads((out / "report.json").read_text())
    _check_report(report, 2, 2, SIZES)
    assert (out / "report.md").read_text().count("| ok |") == 2
    assert (out / "report.png").stat().st_size > 0
    text = capsys.readouterr().out
    assert "glint bench exchange" in text and "64KB" in text and "1MB" in text


def test_bench_exchange_catches_wrong_rows(monkeypatch):
    """The ranks' own check fails when the shuffle loses a row (so a passing
    report means the rows were checked)."""
    from glint.bench import exchange as ex
    from glint.distributed import shuffle as sh

    real = sh.ShuffleExec.stream

    def lossy(self, ctx, inp):
        for b in real(self, ctx, inp):
            yield b.take(torch.arange(1, b.num_rows)) if b.num_rows else b

    monkeypatch.setattr(sh.ShuffleExec, "stream", lossy)  # rank 0 only: it runs in this process
    con = glint.connect(ranks=2, device="cpu", timeout=60)
    try:
        (mine, other) = con.call(ex.TARGET, sizes=[1 << 14], runs=1)
    finally:
        con.close()
    assert not mine["sizes"][0]["check"]["shuffle_ok"]
    assert other["sizes"][0]["check"]["shuffle_ok"] and mine["sizes"][0]["check"]["broadcast_ok"]


def test_call_rejects_targets_outside_glint():
    con = glint.connect(ranks=2, device="cpu", timeout=60)
    try:
        with pytest.raises(ValueError, match="glint.<module>:<function>"):
            con.call("os:getcwd")
        assert [v["rank"] for v in con.call("glint.bench.exchange:measure", sizes=[4096], runs=1)] == [0, 1]
    finally:
        con.close()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_bench_exchange_nccl(tmp_path):
    out = tmp_path / "cuda"
    assert (
        main(
            [
                "bench",
                "exchange",
                "--ranks",
                "2",
                "--device",
                "cuda",
                "--sizes",
                "1MB,64MB",
                "--runs",
                "3",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    _check_report(json.loads((out / "report.json").read_text()), 2, 3, "1MB,64MB")
