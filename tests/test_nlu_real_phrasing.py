"""Real phrasing (issue 18) and numbers as people write them (issue 21): counts x memory, launcher flags, sharding
and offload, load phrased as requests at once, thousands separators, scientific notation, and counts that cannot be
a job (negative, zero: asked back; beyond any cloud: answered with that fact)."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def parser(core):
    return core.parser


@pytest.mark.parametrize("text, expect", [
    ("4*80G 能全参微调 qwen2.5 7b 吗", {"gpus": 4, "gpu_memory_gib": 80.0}),
    ("I'm trying to fine tune llama-2-70b using 8 x 48GB GPUs", {"gpus": 8, "gpu_memory_gib": 48.0}),
    ("两张24G的卡能 lora 微调 qwen2.5 7b 吗", {"gpus": 2, "gpu_memory_gib": 24.0}),
    ("一张48G的显卡推理72B的模型", {"gpus": 1, "gpu_memory_gib": 48.0}),
    ("I have 2 nodes with 4x 80GB A100 for llama-2 70B fine-tuning", {"gpus": 8, "nodes": 2,
                                                                       "gpu_model": "a100-80gb"}),
    ("2 nodes, each having 8 A100(40GB), finetune llama2 70b", {"gpus": 16, "nodes": 2, "gpu_model": "a100-40gb"}),
    ("32 A100, but on 4 different nodes: fine tune a 78B model", {"gpus": 32, "nodes": 4}),
    ("部署qwen-72b，使用A800（80G）× 2", {"gpus": 2, "gpu_model": "a800-80gb"}),
    ("双卡4090 lora微调13b", {"gpus": 2, "gpu_model": "rtx-4090"}),
    ("Dual RTX 4090 to serve qwen2.5 32b", {"gpus": 2, "gpu_model": "rtx-4090"}),
    ("torchrun --nproc_per_node 8 sft.py --model qwen2.5-7b --per_device_train_batch_size 4",
     {"gpus": 8, "batch_size": 4, "model": "qwen2.5-7b"}),
    ("full sft qwen2.5 7b, deepspeed zero3", {"sharding": "zero3"}),
    ("用deepspeed-zero3-offload全参微调 qwen2.5 7b 要几张卡", {"sharding": "zero3", "offload": "full"}),
    ("lora qwen2.5 7b with zero2 and offload_optimizer", {"sharding": "zero2", "offload": "optimizer"}),
    ("fine-tune llama-2-70b with FSDP on 8 A100", {"sharding": "fsdp"}),
    ("serve llama-2-13b for 100 requests concurrently", {"concurrency": 100}),
    ("serve qwen2.5 7b, around 300 requests at once", {"concurrency": 300}),
    ("serve qwen2.5 7b, Target RPS: >10", {"qps": 10.0}),
    ("qwen 7b chat lora, max-length: 1024", {"seq_len": 1024}),
    ("serve qwen2.5 7b, 3000 input tokens, 30 output tokens", {"request_tokens": 3000, "output_tokens": 30}),
    ("serve llama 3 8b for 10,000 users", {"concurrency": 10000}),
    ("serve llama 3 8b for 1e3 users", {"concurrency": 1000}),
    ("budget up to 1000 $ for training", {"budget_amount": 1000.0, "budget_currency": "USD"}),
    ("dose 8 A100 80g enough to finetune 70b llama2 ?", {"model": "llama-2-70b", "gpus": 8}),
    ("How long would it take to train on an 80GB A100 / H100?", {"gpu_models": ["a100-80gb", "h100"]}),
    ("2 x RTX 4090 (48GB total) serve qwen2.5 14b", {"gpus": 2, "gpu_model": "rtx-4090"}),
    ("一张24G 能推理 qwen2.5 14b 吗", {"gpus": 1, "gpu_memory_gib": 24.0}),
    # own card memory said loosely: the card word first with a verb, memory before 'VRAM'/'显存', a count in words
    ("我的显卡是 16G，能微调 7B 吗", {"gpu_memory_gib": 16.0, "params_b": 7.0}),
    ("I have a 24GB card", {"gpu_memory_gib": 24.0}),
    ("手上两张 48G 的卡", {"gpus": 2, "gpu_memory_gib": 48.0}),
    ("my GPU has 12 GB VRAM, can I run llama 3.1 8b inference", {"gpu_memory_gib": 12.0, "model": "llama-3.1-8b"}),
    ("16G显存能跑 qwen2.5 7b 推理吗", {"gpu_memory_gib": 16.0}),
    ("a card with 24 GB, lora qwen2.5 7b", {"gpu_memory_gib": 24.0, "method": "lora"}),
    ("I have two 24GB cards, serve qwen2.5 7b for 20 users", {"gpus": 2, "gpu_memory_gib": 24.0, "concurrency": 20}),
    ("we have 4 48GB cards, full finetune llama 3 8b", {"gpus": 4, "gpu_memory_gib": 48.0}),
    ("rent 8 gpus with 80gb each", {"gpus": 8}),
    ("部署 qwen2.5 7b，峰值 200 QPS", {"qps": 200.0}),
    ("lora qwen2.5 7b, bs 只能开到 1", {"batch_size": 1}),
    ("budget €3000 per month lora qwen2.5 7b", {"budget_amount": 3000.0, "budget_currency": "EUR",
                                               "budget_period": "month"}),
    ("预算 3000 欧元每月", {"budget_currency": "EUR", "budget_period": "month"}),
    ("1.5万个用户同时在线 llama 3 8b", {"concurrency": 15000}),
])
def test_real_phrasing(parser, text, expect):
    got = parser.parse(text).slots.filled()
    for key, value in expect.items():
        assert got.get(key) == value, (text, key, got)


def test_a_rate_in_tokens_per_second_is_not_a_length(parser):
    assert parser.parse("serve qwen2.5 7b at 50 tokens/s per user, TTFT under 500ms").slots.seq_len is None


@pytest.mark.parametrize("text, method", [
    ("finetune llama2 70b with lora (not qlora)", "lora"),
    ("full fine-tune deepseek 33b rather than lora", "full"),
    ("全参微调 qwen2.5 7b，而不是lora", "full"),
])
def test_a_method_ruled_out_is_not_the_method(parser, text, method):
    assert parser.parse(text).slots.method == method


@pytest.mark.parametrize("text, slot, value", [
    ("serve llama 3 8b for -50 users", "concurrency", -50),
    ("-8 gpus lora qwen2.5 7b", "gpus", -8),
    ("train a 7b model on 0 gpus", "gpus", 0),
])
def test_negative_or_zero_counts_are_kept_to_ask_back(parser, text, slot, value):
    p = parser.parse(text)
    assert p.invalid == {slot: value} and slot not in p.slots.filled()


@pytest.mark.parametrize("text, slot", [
    ("serve llama 3 8b for 1e12 concurrent users", "concurrency"),
    ("train a 7b model on 1e9 GPUs", "gpus"),
    ("lora qwen2.5 7b with a budget of 1e308 USD", "budget_amount"),
    ("train on 1e999 gpus", "gpus"),
])
def test_absurd_counts_are_kept_to_say_so(parser, text, slot):
    p = parser.parse(text)
    assert slot in p.absurd and slot not in p.slots.filled()


def test_a_negative_count_is_asked_back_and_the_answer_continues_the_job(core):
    reply, state = core.turn("-8 gpus lora qwen2.5 7b")
    assert reply.status == "follow_up" and reply.missing == ["gpus"] and "-8" in reply.text + reply.details
    reply, state = core.turn("8 gpus", state)
    assert reply.status == "answer" and reply.slots["gpus"] == 8 and reply.slots["model"] == "qwen2.5-7b"


@pytest.mark.parametrize("text, lang, word", [
    ("serve llama 3 8b for 1e12 concurrent users", "en", "1,000,000,000,000"),
    ("部署 llama 3 8b，1e12 个并发用户", "zh", "并发"),
    ("lora qwen2.5 7b with a budget of 1e308 USD", "en", "1e+308"),
])
def test_an_absurd_count_is_answered_with_that_fact(core, text, lang, word):
    reply, _ = core.turn(text)
    assert reply.status == "info" and reply.lang == lang and word in reply.text + reply.details


def test_zero3_offload_then_zero2_is_a_valid_refinement(core):
    reply, state = core.turn("full fine-tune qwen2.5 7b on 4 A100 with deepspeed zero3 offload")
    assert reply.status == "answer" and reply.slots["offload"] == "full"
    reply, state = core.turn("what about ZeRO-2 instead?", state)
    assert reply.status == "answer" and reply.slots["sharding"] == "zero2"
