"""Refinements change only what they name, and what follows from it (the first-run review of 2026-12-04 found later
turns that lost the job or ignored the change: 'same but 2 nodes', 'what about a 13B model then?' after a comparison,
'what's the cheapest setup that actually works?'); a method the job's field settles is assumed, not asked."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from bot.conversation.dialogue import _rescaled_gpus, _usual_method, load_forms
from bot.records import config


@pytest.mark.parametrize("old, new, want", [
    ({"gpus": 8, "nodes": 1}, {"nodes": 2}, {"gpus": 16}),          # one 8-GPU node -> two of them
    ({"gpus": 8}, {"nodes": 4}, {"gpus": 32}),                       # 8 GPUs said alone were one machine's
    ({"gpus": 16, "nodes": 2}, {"nodes": 4}, {"gpus": 32}),          # 8 a node, kept
    ({"gpus": 16}, {"nodes": 2}, {}),                                # 16 never was one machine: spread as it is
    ({"gpus": 12, "nodes": 5}, {"nodes": 2}, {}),                    # not a whole number a node: leave it
    ({"gpus": 8, "nodes": 1}, {"nodes": 2, "gpus": 24}, {}),         # a count said with the nodes wins
    ({}, {"nodes": 2}, {}),                                          # no count before: nothing to scale
])
def test_rescaled_gpus(old, new, want):
    assert _rescaled_gpus(old, new) == want


@given(per_node=st.sampled_from([1, 2, 4, 8]), before=st.integers(1, 16), after=st.integers(1, 64))
@settings(max_examples=60, deadline=None)
def test_a_node_count_keeps_each_machines_cards(per_node, before, after):
    """Whatever the machines before and after, each machine keeps the cards it had."""
    got = _rescaled_gpus({"gpus": per_node * before, "nodes": before}, {"nodes": after})
    assert got == {"gpus": per_node * after}


FORMS = {**load_forms(config.rules_dir()),
         "model_kinds": {"whisper-large-v3": "speech", "yolov8m": "vision", "qwen2.5-7b": "llm", "llama-3.1-70b": "llm"}}


@pytest.mark.parametrize("slots, want", [
    ({"model": "whisper-large-v3"}, "full"),                                    # speech: fine-tuned whole
    ({"model": "yolov8m"}, "full"),                                             # vision: Ultralytics trains it all
    ({"model": "qwen2.5-7b", "params_b": 7.6, "algorithm": "grpo"}, "full"),    # TRL default on a 7B
    ({"model": "llama-3.1-70b", "params_b": 70.6, "algorithm": "dpo"}, "lora"), # too big for one node in full
    ({"params_b": 14, "algorithm": "dpo"}, "full"),                             # at the line: full
    ({"model": "qwen2.5-7b", "params_b": 7.6}, None),                           # plain SFT of an LLM: the user's call
    ({"model": "whisper-large-v3", "method": "lora"}, None),                    # said: nothing to assume
])
def test_usual_method(slots, want):
    got = _usual_method(slots, FORMS)
    assert (got or {}).get("method") == want
    if want:
        assert got["method_why"] in ("whole_model", "posttrain", "posttrain_large")


@pytest.mark.parametrize("text", ["transcribe 2000 hours of audio with whisper large v3",
                                  "部署 whisper-large-v3 做实时转写，50 路并发", "serve yolov8m for 30 camera streams"])
def test_a_service_assumes_no_fine_tuning_method(core, text):
    """The usual method is a training job's: a transcription or a detection service says nothing about fine-tuning."""
    reply, _ = core.turn(text, {})
    assert reply.intent == "inference", (text, reply.intent)
    assert not any("fine-tun" in a or "微调" in a for a in reply.assumptions), reply.assumptions
    assert "method" not in reply.slots, reply.slots


@pytest.mark.parametrize("text, want", [
    ("what if usage triples?", 3), ("traffic doubles next month", 2), ("3x the users", 3), ("用户翻倍怎么办", 2),
    ("请求量涨到三倍呢", 3), ("we double the batch size", None), ("triple check the numbers", None),
    ("serve llama 3 for 3 users", None),
])
def test_a_load_scaled_by_a_factor(text, want):
    from bot.conversation.relative import load_scale
    assert load_scale(text) == want


@given(users=st.integers(1, 5000), qps=st.floats(0.1, 500), factor=st.sampled_from([2.0, 3.0, 4.0, 1.5]))
@settings(max_examples=60, deadline=None)
def test_a_scaled_load_is_the_old_load_times_the_factor(users, qps, factor):
    from bot.conversation.dialogue import _scaled_load
    got = _scaled_load({"concurrency": users, "qps": qps, "model": "m"}, {"load_scale": factor})
    assert got["concurrency"] >= users * factor and got["concurrency"] - users * factor < 1
    assert abs(got["qps"] - qps * factor) <= 1e-4 * qps * factor + 1e-5 and "load_scale" not in got
