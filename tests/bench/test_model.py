"""The performance model (glint.bench.model) on the committed reports of
TPC-H SF 10 on 1, 2 and 4 H200s of one host: fitted on 1 and 4 ranks, it
predicts the 2-rank run it never saw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glint.bench import model as M

RUNS = Path(__file__).resolve().parents[2] / "bench/results/exchange-tpch-sf10-ranks-h200x4-2026-11-27"


def _load(n: int) -> dict:
    return json.loads((RUNS / f"tpch-sf10-ranks{n}.json").read_text())


def test_the_fit_splits_each_query_and_keeps_its_one_gpu_time():
    one, four = _load(1), _load(4)
    link, per, predict = M.model(one, four)
    assert link.latency_s > 0 and 1 < link.gbps < 1000
    assert len(per) == 22
    for q in one["queries"]:
        fixed, var, steps = per[q["label"]]
        assert 0 <= fixed <= q["glint_warm_s"] and abs(fixed + var - q["glint_warm_s"]) < 1e-12
        assert abs(predict(q["label"], 1) - q["glint_warm_s"]) < 1e-12  # one rank: no exchange
    # more ranks on one host never add compute; another host only adds link time
    assert all(predict(label, 8) <= predict(label, 4) + 0.05 for label in per)


def test_predictions_for_two_ranks_it_never_saw():
    text = M.report(
        str(RUNS / "tpch-sf10-ranks1.json"), str(RUNS / "tpch-sf10-ranks4.json"), [str(RUNS / "tpch-sf10-ranks2.json")]
    )
    line = next(row for row in text.splitlines() if row.startswith("2 ranks:"))
    within = int(line.split()[2])
    assert within >= 15, text  # 16 of 22 when written
    assert "| Q01 |" in text and "2x8 GPUs" in text


def test_step_bytes_follow_the_kind_of_exchange():
    assert M.step_bytes("shuffle", 300.0, 4, 4) == 300.0
    assert M.step_bytes("broadcast", 300.0, 4, 4) == 300.0
    assert M.step_bytes("broadcast", 300.0, 4, 8) > 300.0  # each rank receives more of the data
    assert M.step_bytes("shuffle", 300.0, 4, 8) < 300.0  # each rank's share shrinks
    assert M.step_bytes("shuffle", 300.0, 4, 1) == 0.0


def test_wrong_inputs_name_the_file(tmp_path):
    from glint.errors import GlintError

    one, two, four = (str(RUNS / f"tpch-sf10-ranks{n}.json") for n in (1, 2, 4))
    with pytest.raises(GlintError, match="nope.json: cannot be read"):
        M.report(str(tmp_path / "nope.json"), four)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(GlintError, match="bad.json: not JSON"):
        M.report(one, str(bad))
    with pytest.raises(GlintError, match="ranks1.json: the model is fitted on a run of 2 or more ranks"):
        M.report(one, one)
    with pytest.raises(GlintError, match="ranks2.json: the one-GPU report ran on 2 ranks"):
        M.report(two, four)
    other = json.loads(Path(four).read_text()) | {"sf": 100}
    (tmp_path / "sf100.json").write_text(json.dumps(other))
    with pytest.raises(GlintError, match="sf100.json: tpch SF 100 is not the one-GPU report's tpch SF 10"):
        M.report(one, str(tmp_path / "sf100.json"))
