"""Quantized serving on a GPU generation without the kernels (rules/advice.yaml int4-serving-on-volta,
fp8-serving-before-ada, int8-serving-on-volta; vLLM's quantization hardware table): a note in the answer's language,
citing the table, only where the table says the kernels are missing."""
from __future__ import annotations

import pytest

from bot.plan.checklist import arch_family


@pytest.mark.parametrize("gpu, family", [
    ("v100-32gb", "Volta"), ("t4", "Turing"), ("a100-80gb", "Ampere"), ("a10", "Ampere"), ("l4", "Ada"),
    ("h100-sxm", "Hopper"), ("b200", "Blackwell"), ("ascend-910b", "other"),
])
def test_arch_family(core, gpu, family):
    assert arch_family(core.kb.gpus[gpu]) == family


def _note_keys(reply) -> list[str]:
    return [rid for rid in (t.get("rule") for t in reply.rule_trace) if rid]


@pytest.mark.parametrize("question, rule, fires", [
    # the pick is the V100 the user named; AWQ/Marlin are not in vLLM's Volta column, GPTQ is
    ("serve qwen2.5 72b int4 on V100 32GB cards", "int4-serving-on-volta", True),
    ("多张V100卡部署Qwen-72B Int4量化模型失败", "int4-serving-on-volta", True),
    ("serve qwen2.5 72b int4 on A100 80GB cards", "int4-serving-on-volta", False),
    # FP8 W8A8 is only in the Ada and Hopper columns; Ampere runs FP8 checkpoints weight-only
    ("serve llama 3.1 8b in fp8 on an A100", "fp8-serving-before-ada", True),
    ("serve llama 3.1 8b in fp8 on an H100", "fp8-serving-before-ada", False),
    ("serve llama 3.1 8b int8 on a V100", "int8-serving-on-volta", True),
    ("serve llama 3.1 8b int8 on a T4", "int8-serving-on-volta", False),
])
def test_quantized_serving_note_fires_where_the_kernels_are_missing(core, question, rule, fires):
    r, _ = core.turn(question, {})
    assert r.status == "answer"
    fired = [t for t in r.rule_trace if t.get("rule") == rule and t.get("fired")]
    assert bool(fired) == fires, [t for t in r.rule_trace if t.get("rule") == rule]
    if fires:
        assert "vllm-quantization-hardware" in {c["id"] for c in r.citations}
