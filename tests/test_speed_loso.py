"""Leave-one-source-out validation of the speed model (bench/speed_loso.py, issue 31 item 8): rows grouped by
publisher, every fitted constant refitted without the held-out source (or set to its prior when nothing else
constrains it), the shipped constants restored afterwards."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import speed_accuracy  # noqa: E402
import speed_loso  # noqa: E402


@pytest.mark.parametrize("url, source", [
    ("https://github.com/mosaicml/llm-foundry/blob/x/scripts/train/benchmarking/README.md", "mosaicml"),
    ("https://huggingface.co/meta-llama/Llama-3.1-8B", "meta-llama"),
    ("https://github.com/meta-llama/llama/blob/main/MODEL_CARD.md", "meta-llama"),
    ("https://arxiv.org/abs/2412.19437", "arxiv.org"),
])
def test_rows_are_grouped_by_publisher(url, source):
    assert speed_loso.source_of({"source": {"url": url}}) == source


def _subset():
    rows = speed_accuracy.load_rows()
    keep = {"Ascend", "pytorch", "VectorInstitute"}
    return [r for r in rows if speed_loso.source_of(r) in keep]


def test_a_source_alone_in_its_generation_is_predicted_from_the_prior_and_constants_are_restored():
    shipped = {k.label: k.get() for k in speed_loso.KNOBS}
    results = speed_loso.loso(_subset())
    assert {k.label: k.get() for k in speed_loso.KNOBS} == shipped
    ascend = [r for r in results if r["source"] == "Ascend"]
    # Da Vinci has no other source: its share and HCCS rate fall back to the stated guesses (0.40, PCIe rate),
    # which gave about 0.3 of the measured tokens/s on the first run
    assert ascend and all(0.2 < r["loso_ratio"] < 0.45 for r in ascend)
    a100 = [r for r in results if r["source"] in ("pytorch", "VectorInstitute")]
    assert a100 and all(0.5 < r["loso_ratio"] < 2 for r in a100)


def test_the_summary_reports_both_kinds_it_has():
    s = speed_loso.summary([{"id": "a", "kind": "training", "source": "x", "loso_ratio": 1.5},
                            {"id": "b", "kind": "training", "source": "y", "loso_ratio": 0.4}])
    assert s["training"]["rows"] == 2 and s["training"]["within_2x_share"] == 0.5
    assert s["training"]["worst_id"] == "b" and "serving" not in s
