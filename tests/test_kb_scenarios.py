"""Conversations the knowledge base must carry: a job "on Huawei Cloud" is answered on Huawei Cloud with what must
be confirmed; a large open model on Ascend gets Ascend facts (cards, runtime, porting); the Ascend explanations
cite Huawei's and vLLM-Ascend's own pages."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bot.surfaces.cli.main import main


def ask(question: str, as_json: bool = True):
    res = CliRunner().invoke(main, ["ask", *(["--json"] if as_json else []), question], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.output) if as_json else res.output


def test_full_fine_tune_of_a_14b_model_on_huawei_cloud_stays_on_huawei_cloud_and_says_what_to_confirm():
    r = ask("full fine-tune qwen2.5 14b on huawei cloud")
    top = r["recommendations"][0]
    assert top["provider"] == "huaweicloud" and top["fits"]
    text = ask("full fine-tune qwen2.5 14b on huawei cloud", as_json=False)
    # the price is indicative (no public Huawei price) and the size comes from the same-stack docs: both said
    assert "No public Huawei Cloud price was found" in text
    assert "Open Telekom Cloud" in text


@pytest.mark.parametrize("question, words", [
    ("serve qwen2.5 72b on ascend 910b", ["Snt9B nodes of 8 cards", "torch_npu", "vLLM-Ascend", "910B4 has 32 GB"]),
    ("在昇腾910B上部署 qwen2.5 72b 推理", ["Snt9B 节点", "torch_npu", "vLLM-Ascend", "910B4 为 32 GB"]),
])
def test_a_large_open_model_on_ascend_gets_ascend_facts(question, words):
    text = ask(question, as_json=False)
    for w in words:
        assert w in text, w
    assert "vLLM-Ascend FAQs" in text or "vLLM-Ascend" in text


def test_ascend_explanations_cite_huaweis_and_vllm_ascends_pages():
    from bot.knowledge.loader import default_knowledge
    kb = default_knowledge()
    t = kb.topics["ascend_frameworks"]
    assert "vllm-ascend-faq" in t.sources and "not the original Ascend 910" in t.text_en
    assert "Ascend 910, Ascend 910 Pro B" in kb.sources["vllm-ascend-faq"].note
    pools = kb.topics["modelarts_pool_codes"]
    assert "No source read says which NVIDIA GPU" in pools.text_en
    assert "GPU models behind the gp-* code names are not stated" in kb.sources["hw-s18"].note
