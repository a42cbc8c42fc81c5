"""What the card an answer leads with cannot do for the job is said with the verdict on that card, in the short
answer: bf16 training on a V100 or T4 (fp16 with loss scaling instead), FP8 serving on an A100 or older (weight-only,
no speed-up), 4-bit or INT8 kernels on a V100. It used to be a note after the fold about the rental pick only, and
absent when the card was the user's own ('8 张 V100 全参微调，bf16' got 'fits' and nothing else)."""
from __future__ import annotations

import itertools

import pytest

CAVEAT = {"bf16": ("bf16 needs an Ampere", "bf16 需要 Ampere"),
          "fp8": ("FP8 compute needs Ada", "FP8 计算需要 Ada"),
          "int4": ("4-bit weights on a Volta", "Volta 卡（V100）上跑 4 位权重"),
          "int8": ("INT8 (W8A8) kernels need Turing", "INT8（W8A8）内核需要 Turing")}
TRAIN = {"en": ["we have {n} {gpu}, full fine-tune qwen2.5-7b in bf16 on 100k samples of 1k tokens",
                "lora llama 3.1 8b on our {n} {gpu}, bf16, 50k samples x 2k tokens"],
         "zh": ["我们有 {n} 张 {gpu}，bf16 全参微调 Qwen2.5-7B，10万条样本每条1k token",
                "用 {n} 张 {gpu} 做 Qwen2.5-7B 的 LoRA 微调，bf16，5 万条数据每条 2k token"]}
SERVE = {"en": ["serve llama 3.1 70b in {prec} on {n} {gpu} for 10 users", "can {n} {gpu} serve qwen2.5-32b {prec} for 20 users?"],
         "zh": ["在 {n} 张 {gpu} 上用 {prec} 部署 Llama 3.1 70B，10 个并发", "{n} 张 {gpu} 跑 Qwen2.5-32B {prec} 推理，20 个用户够吗"]}
CASES = ([("bf16", lang, t, gpu, {}) for lang in TRAIN for t, gpu in itertools.product(TRAIN[lang], ["V100", "T4"])]
         + [("fp8", lang, t, gpu, {"prec": "FP8"}) for lang in SERVE for t, gpu in itertools.product(SERVE[lang], ["A100", "A10", "V100"])]
         + [("int4", lang, t, "V100", {"prec": "AWQ int4"}) for lang in SERVE for t in SERVE[lang]])


def _short(text: str) -> str:
    lines = text.split("\n")
    end = next(i for i, line in enumerate(lines) if line.startswith(("Checklist", "检查清单", "Sources", "来源")))
    return "\n".join(lines[:end])


@pytest.mark.parametrize("what, lang, template, gpu, more", CASES)
def test_the_card_led_with_says_what_it_cannot_do(core, what, lang, template, gpu, more):
    reply, _ = core.turn(template.format(n=8, gpu=gpu, **more), {})
    assert reply.lang == lang
    phrase = CAVEAT[what][lang == "zh"]
    assert phrase in _short(reply.text), reply.text
    assert sum(phrase in n for n in reply.notes) <= 1        # said once, not again after the fold


@pytest.mark.parametrize("lang, template", [(lang, t) for lang in TRAIN for t in TRAIN[lang]])
def test_cards_that_have_it_get_no_caveat(core, lang, template):
    reply, _ = core.turn(template.format(n=8, gpu="A100"), {})
    assert not any(p in reply.text for pair in CAVEAT.values() for p in pair), reply.text


@pytest.mark.parametrize("text", ["我们有 32 张 910B（4 台 Atlas 800T A2），继续预训练 Qwen2.5-14B，200B token，要多久",
                                  "用 8 张 910B4 做 Qwen2.5-7B 的 LoRA 微调，5 万条样本每条 2k token",
                                  "lora qwen2.5-72b on ascend 910b, 50k samples of 4k tokens"])
def test_ascend_cards_get_no_nvidia_caveat(core, text):
    reply, _ = core.turn(text, {})
    assert not any(p in reply.text for pair in CAVEAT.values() for p in pair), reply.text
