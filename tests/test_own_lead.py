"""Their own cards hold the job: the answer leads with them, and nothing about renting (why a rental is on another
cloud than the default one, 'ask Huawei for a quote') comes before that verdict. The rental, when shown, carries its
own explanation after the fold."""
from __future__ import annotations

import pytest

OWN_JOBS = [
    ("zh", "我们有两台 8卡 A800 服务器，想全参微调 Qwen2.5-32B，数据 20万条平均1.5k token，2个epoch，大概多久？"),
    ("zh", "手上有 16 张 H800（两台机器），LoRA 微调 Llama 3.1 70B，5 万条样本每条 2k token，3 个 epoch 要多久"),
    ("en", "we own 2 servers with 8x A800 each; full fine-tune qwen2.5-32b on 300k samples of 1k tokens, 2 epochs. how long?"),
    ("en", "we have 16 H800 in two boxes, continue pre-training a 14B on 20B tokens, how many days?"),
]
RENTAL_WORDS = ("询价", "quote", "其他云上", "elsewhere are shown first", "shown first")


@pytest.mark.parametrize("lang, text", OWN_JOBS)
def test_nothing_about_renting_before_their_cards(core, lang, text):
    reply, _ = core.turn(text, {})
    assert reply.lang == lang
    lines = reply.text.split("\n")
    assert lines[1].startswith(("你的硬件", "Yours:")), reply.text      # their cards' verdict right under the headline
    # everything before a rental pick (or, with none shown, before the checklist) is about their cards
    end = next(i for i, line in enumerate(lines) if line.startswith(("推荐", "Pick", "检查清单", "Checklist")))
    before = "\n".join(lines[:end])
    assert not any(w in before for w in RENTAL_WORDS), before
