"""The AWS sizes the catalog extract used to miss (g5.2xlarge-24xlarge, g4dn.xlarge-16xlarge, p3.2xlarge): a question
naming one ('and if we only get a g5.12xlarge (4x A10G)?', 'serve llama 3 8b on a g5.12xlarge') is answered on that
size, never 'I don't know the flavor g5.12xlarge'; a job on it is planned on that size's card, count and cloud."""
from __future__ import annotations

import pytest

ADDED = ["g5.2xlarge", "g5.4xlarge", "g5.8xlarge", "g5.12xlarge", "g5.16xlarge", "g5.24xlarge", "g4dn.xlarge",
         "g4dn.2xlarge", "g4dn.4xlarge", "g4dn.8xlarge", "g4dn.12xlarge", "g4dn.16xlarge", "p3.2xlarge"]


@pytest.mark.parametrize("flavor", ADDED)
def test_added_sizes_are_on_file_with_catalog_facts(kb, flavor):
    f = kb.flavors[f"aws/{flavor}"]
    assert f.provider == "aws" and f.gpu_count >= 1 and f.vcpus and f.memory_gib
    assert f.price and f.price.on_demand and f.price.spot and f.price.spot < f.price.on_demand
    assert "cat-skypilot-aws" in f.sources


JOBS = [("en", "serve llama 3 8b on a {f}"), ("en", "fine-tune mistral 7b with lora on {f}"),
        ("en", "we only get a {f}: can we serve qwen2.5 7b on it?"), ("zh", "在 {f} 上部署 llama 3 8b"),
        ("zh", "用 {f} 做 mistral 7b 的 lora 微调")]


@pytest.mark.parametrize("flavor", ["g5.12xlarge", "g5.24xlarge", "g4dn.12xlarge", "g4dn.xlarge", "g5.2xlarge"])
@pytest.mark.parametrize("lang,form", JOBS)
def test_a_job_on_a_named_size_is_planned_on_its_card_count_and_cloud(core, flavor, lang, form):
    text = form.format(f=flavor)
    f = core.kb.flavors[f"aws/{flavor}"]
    r, state = core.turn(text, {})[:2]
    r = r.model_dump()
    assert "don't know the flavor" not in r["text"] and "不认识" not in r["text"], (text, r["text"][:300])
    s = state["slots"]
    assert s.get("gpu_model") == f.gpu and s.get("provider") == "aws", (text, s)
    assert s.get("gpus") in (None, 1) if f.gpu_count == 1 else s.get("gpus") == f.gpu_count, (text, s)


@pytest.mark.parametrize("text", ["serve llama 3 8b on aws || and if we only get a g5.12xlarge (4x A10G)?",
                                  "在 AWS 上部署 llama 3 8b || 如果只能拿到 g5.12xlarge 呢？"])
def test_a_follow_up_naming_a_size_is_answered_on_it(core, text):
    state: dict = {}
    for turn in text.split(" || "):
        r, state = core.turn(turn, state)[:2]
    r = r.model_dump()
    assert "g5.12xlarge" in r["text"] and "A10G" in r["text"], r["text"][:400]
    assert "don't know the flavor" not in r["text"], r["text"][:300]
