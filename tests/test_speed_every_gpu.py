"""Every GPU on file goes through the speed model for every method without raising, including cards whose
bandwidth or TFLOPS the knowledge base does not have (GH200, Ascend): 'need to finetune mistral 7b, budget 500
dollars total, 1B tokens' crashed the whole answer on GH200's missing bandwidth in a QLoRA formula."""
from __future__ import annotations

import pytest

from bot.estimate import cost
from bot.records.models import Link, Workload


@pytest.fixture(scope="module")
def kb():
    from bot.conversation.turn import Core
    return Core.load().kb


@pytest.mark.parametrize("method", ["full", "lora", "qlora"])
def test_training_time_on_every_gpu(kb, method):
    model = kb.models["mistral-7b"] if "mistral-7b" in kb.models else next(iter(kb.models.values()))
    for gpu in kb.gpus.values():
        w = Workload(model=model.id, params_b=model.params_b, method=method, gpus=8, tokens=1e9,
                     precision="nf4" if method == "qlora" else "bf16")
        cost.training_time(w, model, gpu, 8, Link())          # a number or None, never an exception


def test_the_reported_question_is_answered(kb):
    from bot.conversation.turn import Core
    reply, _ = Core.load().turn("need to finetune mistral 7b, budget 500 dollars total, 1B tokens", {})
    assert reply.status in ("answer", "follow_up"), reply.text
    reply, _ = Core.load().turn("QLoRA finetune mistral 7b on 1B tokens, budget 500 dollars total", {})
    assert reply.status == "answer", reply.text


def test_serving_and_the_planner_on_every_gpu(kb):
    """A replica's speed on each card, and the planner's own-card judgement for each GPU by name."""
    from bot.conversation.turn import Core
    core = Core.load()
    model = next(iter(kb.models.values()))
    from bot.plan import perf
    from bot.plan.links import LinkEvidence
    unknown = LinkEvidence("unknown", "unknown", None, "unknown", None)
    for gpu in kb.gpus.values():
        w = Workload(model=model.id, params_b=model.params_b, method="inference", gpus=1, concurrency=4)
        sp = perf.replica_speed(w, model, gpu, 1, 8, 100.0, unknown)    # a speed, or None: never an exception
        assert sp is None or sp.tpot_ms > 0
    for q in ("I have 8x GH200, full finetune llama 3 8b on 1B tokens, how long?",
              "serve qwen2.5 7b on my own ascend 910b", "qlora llama 3 70b on a gh200"):
        reply, _ = core.turn(q, {})
        assert reply.status in ("answer", "follow_up", "info"), reply.text


def test_a_card_without_speed_figures_still_holds_the_whole_load(kb):
    """GH200 has no bandwidth on file: its replica was sized for 4 sequences and won '部署 qwen2.5 32b 给 50 人用'
    on price. Without a speed it is sized by memory: replicas x sequences each >= the 50 users."""
    from bot.conversation.turn import Core
    core = Core.load()
    slots = {"model": "qwen2.5-32b", "params_b": 32.764, "concurrency": 50}
    advice = core.advisor._advise("inference", slots, {}, "en", gpu_ids=["gh200"])     # GH200 flavors only
    gh = [r for r in advice.recommendations if r["gpu"] == "gh200"]
    assert gh, [r["gpu"] for r in advice.recommendations]
    r = gh[0]
    assert (r["replicas"] or 1) * (r["replica_concurrency"] or 0) >= 50, r
