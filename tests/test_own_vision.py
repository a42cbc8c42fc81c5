"""Image training on the user's own cards (bot/plan/own.py `own_feed`, bot/render/own.py): the rate and hours shown
for their cards are their cards' (not the rental pick's), and the data-loading line says what their machines' CPUs
must decode, as a requirement (their CPU is not known). The rental's Speed line says it is the rental's.

Arithmetic, written before the code ran (vision.py: training = 3 x forward FLOPs at 20 % of the dense 16-bit peak,
data parallel 0.84 inside one server, x 0.90 across servers; knowledge: H100 SXM 989.5 TFLOPS bf16, ResNet-50
8.18 GFLOPs at 224 px; ImageNet-1k 1,281,167 images, 90 epochs; 80 images/s per CPU core):
  one H100 SXM:   989.5e3 x 0.20 / (3 x 8.18) = 197,900 / 24.54 = 8,064.4 images/s
  8 cards:        8 x 8,064.4 x 0.84 = 54,192.7 images/s; 115,305,030 images / 54,192.7 / 3600 = 0.591 h;
                  one machine decodes all of it: ceil(54,192.7 / 80) = ceil(677.4) = 678 cores
  16 cards:       16 x 8,064.4 x 0.84 x 0.90 = 97,546.8 images/s over 2 machines = 48,773.4 each:
                  ceil(48,773.4 / 80) = ceil(609.7) = 610 cores on each
  the rental pick (1 x H100 PCIe, 756.5 TFLOPS bf16): 756.5e3 x 0.2 / 24.54 = 6,165.4 images/s
"""
from __future__ import annotations

import pytest

from bot.render.templates import default_templates


def _ask(core, q):
    return core.turn(q, {})[0].model_dump()


@pytest.mark.parametrize("question, cards, rate, hours, machines, cores", [
    ("train resnet-50 on imagenet with our 8x H100", 8, 54_192.7, 0.591, 1, 678),
    ("we own 16 H100 SXM cards, train resnet-50 on imagenet", 16, 97_546.8, 0.328, 2, 610),
])
def test_rate_hours_and_cores_are_their_cards(core, question, cards, rate, hours, machines, cores):
    r = _ask(core, question)
    mine = r["recommendations"][0]
    assert mine["label"] == "yours" and mine["gpus_total"] == cards
    assert mine["items_per_s"] == pytest.approx(rate, rel=0.002)
    assert mine["job_hours"] == pytest.approx(hours, abs=0.002)
    assert mine["items"]["items"] == 115_305_030 and mine["items"]["epochs"] == 90
    feed = mine["feed"]
    assert feed["machines"] == machines and feed["cores"] == cores and feed["per_core"] == 80
    assert feed["images_per_s"] == pytest.approx(rate / machines, rel=0.002)


@pytest.mark.parametrize("question, lang, said", [
    ("train resnet-50 on imagenet with our 8x H100", "en",
     ["About 54,193 images/s on all 8 cards: 1,281,167 images x 90 epochs = 115,305,030 images, about 0.59 h",
      "needs about 678 CPU cores on that machine. Your CPU is not known"]),
    ("我们有 8 张 H100，用 imagenet 训练 resnet-50", "zh",
     ["全部 8 张卡约 54,193 张图/秒", "需要约 678 个 CPU 核。不知道你的 CPU 配置"]),
    ("we own 16 H100 SXM cards, train resnet-50 on imagenet", "en",
     ["on each of the 2 machines", "needs about 610 CPU cores on each"]),
])
def test_their_lines_say_it(core, question, lang, said):
    r = _ask(core, question)
    assert r["lang"] == lang
    yours = (r["text"] + "\n" + r["details"]).split(default_templates().say("yours.rent", lang))[0]
    for words in said:
        assert words in yours, r["text"]


def test_rental_speed_line_names_the_rental(core):
    """Beside their cards, the Speed line is the pick's (1 x H100 PCIe, 6,165 images/s), and says so; the data item
    names the rental flavor. Without cards of their own the Speed line is as before."""
    r = _ask(core, "train resnet-50 on imagenet with our 8x H100")
    pick = next(x for x in r["recommendations"] if x["label"] == "pick")
    line = next(x for x in (r["text"] + "\n" + r["details"]).split("\n") if x.startswith("Speed:"))
    assert "renting, about 6,165 images/s on 1 x " + pick["gpu_name"] in line, line
    data = next(c for c in r["checklist"] if c["item"] == "data")
    assert pick["flavor"] in data["text"]
    plain = _ask(core, "train resnet-50 on imagenet, cheapest")
    line = next(x for x in plain["text"].split("\n") if x.startswith("Speed:"))
    assert "renting" not in line and "GPU(s)." in line


def test_no_data_line_for_tokens(core):
    """A language model reads tokens already decoded: no images/s and no data-loading line on its own cards."""
    r = _ask(core, "we have 8 x A100 80GB, full fine-tune Qwen2.5-32B on 2B tokens, how long?")
    mine = r["recommendations"][0]
    assert mine["label"] == "yours" and mine["feed"] is None and mine["items_per_s"] is None
    assert "Data loading" not in r["text"] + r["details"]
