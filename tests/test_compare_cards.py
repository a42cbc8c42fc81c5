"""A comparison of two GPUs for a job when no flavor on file rents them (a 4090, an A800, a 3090): the verdict rests
on the cards themselves, judged as the user's own cards would be (the fewest in one machine that hold the job, with
4-bit weights as the alternative for serving), never only "no plan on offer holds the job".

Expectations from arithmetic, written before running:
- 32B inference: bf16 weights 65.5 GB. A800 80 GB: one card (65.5 GB + a little KV < 76 GiB usable).
  4090 24 GB: 2 cards hold 32.8 GB each (> 22.8 usable), so 4 (16.4 GB each + KV); 4-bit ~18 GB -> 1-2 cards.
- Llama 3 70B inference: bf16 141 GB; 24 GB cards: 8 x 17.6 GB (4 x 35 does not fit) for both 4090 and 3090,
  so the tie goes to the faster decoder: the 4090 (1,008 vs 936 GB/s).
- Full fine-tuning Qwen2.5-7B (AdamW, 16 bytes/param = 122 GB): an A800 needs ZeRO-3 over several cards;
  eight 24 GB 3090s hold ~15 GB of states each plus activations: at the edge of 22.8 GiB usable.
"""
from __future__ import annotations

import pytest

from bot.render.reply import compare_lines


@pytest.fixture(scope="module")
def core():
    from bot.conversation.turn import Core
    return Core.load()


def _cards(core, slots, intent, gpu_id):
    return core.advisor._cards_needed(intent, slots, {}, "en", core.kb.gpus[gpu_id])


def test_32b_serving_fits_one_a800_and_four_4090s(core):
    slots = {"params_b": 32.0}
    a800, r4090 = _cards(core, slots, "inference", "a800-80gb"), _cards(core, slots, "inference", "rtx-4090")
    assert a800["cards"] == 1 and 60 < a800["need_gib"] < 76
    assert r4090["cards"] == 4 and r4090["need_gib"] <= 24 * 0.95
    assert r4090["int4"]["cards"] in (1, 2)            # 4-bit weights hold it on fewer cards


def test_70b_serving_ties_on_cards_and_goes_to_the_faster_decoder(core, monkeypatch):
    """With neither card rented by a flavor on file (RunPod's 4090 taken away here, as for a knowledge base without
    it), the tie on cards goes to the faster decoder."""
    kb_class, gone = type(core.kb), ("rtx-4090", "rtx-3090")
    for name in ("flavors_of", "candidates"):
        original = getattr(kb_class, name)
        monkeypatch.setattr(kb_class, name, lambda self, *a, _o=original, **k: tuple(
            f for f in _o(self, *a, **k) if f.gpu not in gone))
    r = core.turn("4090 还是 3090 跑 llama 3 70b 推理", {})[0].model_dump()
    plans = core.advisor.compare(r["slots"], {}, "zh")
    by = {x["gpu"]: x for x in plans["side"]}
    assert not any(x["rented"] for x in plans["side"])
    assert by["rtx-4090"]["cards"]["cards"] == by["rtx-3090"]["cards"]["cards"] == 8
    assert plans["by_cards"] == "rtx-4090" and plans["why"] == "bandwidth"


def test_compare_keeps_the_training_method(core):
    """'3090 vs A800 for full fine-tuning qwen2.5 7b' compares a full fine-tune, not serving the model."""
    p = core.parser.parse("3090 vs A800 for full fine-tuning qwen2.5 7b")
    assert p.intent == "compare" and p.slots.filled()["method"] == "full"
    p = core.parser.parse("4090 或 A800 跑 32B 推理?")
    assert p.intent == "compare"                        # '或' between two GPUs asks to compare them


def test_unrented_lines_say_the_cards_and_never_an_impossible_inequality(core):
    side = [{"name": "rtx-3090", "gpu": "rtx-3090", "gpu_name": "RTX 3090", "consumer": True, "rented": False,
             "pick": None, "cards": {"cards": None, "need_gib": 22.81, "memory_gib": 24.0, "usable_gib": 22.8,
                                   "steps": [{"change": "chunked_loss", "per_gpu_gib": 21.8, "fits": True,
                                              "workload": {}}]}},
            {"name": "a800", "gpu": "a800-80gb", "gpu_name": "A800 80GB", "consumer": False, "rented": False,
             "pick": None, "cards": {"cards": 4, "need_gib": 42.5, "memory_gib": 80.0, "usable_gib": 76.0,
                                   "steps": []}}]
    data = {"side": side, "best": None, "by_cards": "a800", "why": "cards", "training": True}
    lines = compare_lines(core.kb, core.templates, data, "en")
    assert lines[0].startswith("For this job: A800 80GB") and "fewer cards" in lines[0]
    text = "\n".join(lines)
    assert "22.9 GiB per card, over the 22.8 GiB usable of 24" in text      # never "22.8 > 24"
    assert "needs 4 in one machine" in text and "consumer card" in text


def test_a_serving_comparison_says_how_fast_each_card_serves(core):
    """'A10 or L4 for a 13B chatbot, 20 users?': the A10 has twice the L4's memory bandwidth; each side says its
    time per token as well as its price, so the faster card's premium can be judged."""
    r = core.turn("A10 or L4 for a 13B chatbot, 20 users?", {})[0].model_dump()
    lines = [line for line in r["text"].split("\n") if line.startswith(("NVIDIA A10:", "NVIDIA L4:")) and " - " in line]
    assert len(lines) == 2 and all("ms per token" in line for line in lines), r["text"]
    a10, l4 = (float(line.split("about ")[-1].split(" ms per token")[0]) for line in lines)
    assert a10 < l4                                       # 600 vs 300 GB/s: the A10 decodes faster
