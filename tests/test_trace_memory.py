"""bench/trace_memory.py without torch: which cases it traces, the rows it writes, and that a traced row can never
count as a measurement. (The trace itself needs torch; docs/measuring.md gives the figures it produced.)"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import gpu_measure as gm  # noqa: E402
import memory_accuracy  # noqa: E402
import trace_memory as tm  # noqa: E402

PEAK = {"Parameter": 1.0, "Gradient": 0.5, "Activation": 2.25, "Temp": 0.25, "Optstate": 1.0, "Total": 5.0}


@pytest.mark.parametrize("case, traced", [
    (gm._inf("qwen2.5-7b", 1, 4096), False),                              # generate() branches on token values
    (gm.Case("resnet-50", "full", "bf16", 64, image_size=224), False),     # CNNs: GPU only
    (gm._full("qwen2.5-1.5b", "bf16", 4, 2048, gc=True), True),            # full fine-tuning, AMP
    (gm._lora("llama-3.1-8b", 32, "q,v", 4, 512, method="qlora", kbit_prep=True), True),   # QLoRA via peft's prepare
])
def test_which_cases_are_traced(case, traced):
    assert (tm.why_not_traced(case) is None) == traced


def test_list_needs_no_torch():
    out = subprocess.run([sys.executable, "bench/trace_memory.py", "--list", "--preset", "questions"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert "llama-3.1-8b-qlora-nf4-r32qv-b4-s512-kbitprep" in out and "not traced" not in out


def test_unknown_case_pattern_says_how_to_find_ids():
    res = subprocess.run([sys.executable, "bench/trace_memory.py", "--cases", "no-such-case"], cwd=ROOT,
                         capture_output=True, text=True)
    assert res.returncode != 0 and "--list" in res.stderr


def test_a_traced_row_is_labelled_and_compares_with_the_estimate(tmp_path, capsys):
    case = gm._lora("llama-3.1-8b", 32, "q,v", 4, 512, method="qlora", kbit_prep=True)
    row = tm.row_for(case, PEAK, 12.0, {"torch": "2.x"})
    assert row["id"].startswith("trace-") and row["what"] == "traced-peak-allocated"
    assert row["measured"] == 5.0 and row["kbit_upcast"] == "all"       # peft's prepare called directly
    assert "traced, not measured" in row["caveats"]
    path = tmp_path / "traced.yaml"
    path.write_text(gm.dump_rows([row]), encoding="utf-8")
    assert tm.main(["--compare", str(path)]) == 0
    out = capsys.readouterr().out
    assert row["id"] in out and "1 traced rows" in out


def test_traced_rows_never_count_as_measurements():
    row = tm.row_for(gm._full("qwen2.5-1.5b", "bf16", 4, 2048), PEAK, 1.0, {})
    [res] = memory_accuracy.evaluate([row])
    assert res["excluded"].startswith("traced")
    measured = yaml.safe_load((ROOT / "tests/data/measured_memory.yaml").read_text(encoding="utf-8"))
    assert not [r["id"] for r in measured if r.get("what") == "traced-peak-allocated" or r["id"].startswith("trace-")]
