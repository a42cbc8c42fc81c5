"""The how-long verdict's wall clock reads the same in hours and days: a job under a day is said in hours alone
('0.80 h (0 days)' contradicted itself), and a longer one's day figure is its hours over 24."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.render.templates import default_templates
from bot.render.verdicts import time_line

T = default_templates()


@settings(max_examples=200, deadline=None)
@given(hours=st.floats(min_value=0.01, max_value=20000), answer=st.sampled_from(["estimate", "yes"]),
       lang=st.sampled_from(["en", "zh"]))
def test_days_match_hours(hours, answer, lang):
    v = {"answer": answer, "hours": hours, "days": round(hours / 24, 1), "cards": 8, "gpu_name": "H100",
         "deadline_days": 10000}
    line = time_line(T, v, lang)
    days = re.search(r"[（(]([\d,.]+) ?(?:days|天)[)）]", line)
    if hours < 24:
        assert not days, line
    else:
        assert days and abs(float(days.group(1).replace(",", "")) * 24 - hours) <= max(2.4, 0.06 * hours), line


def test_no_answer_says_zero_days(core):
    """Jobs of minutes to hours: no line of the answer says '0.0 days' / '0.0 天' or '(0 天)'."""
    for text in ("lora qwen2.5-7b on an A10, 20k samples x 2k tokens", "用 4090 微调 SDXL LoRA，30 张图",
                 "LoRA 微调 Qwen2.5-7B，数据 1 万条，每条 2k token", "qlora llama 3 8b on 5k samples of 512 tokens",
                 "用 LoRA 微调 qwen2.5-7b，2万 条样本，每条约 512 token，3 个 epoch，30 分钟内完成"):
        reply, _ = core.turn(text, {})
        for bad in ("0.0 days", "0.0 天", "(0 days)", "（0 天）", "约 0 小时", "约 0 GPU 小时", " 0 h on", "About 0 GPU-hours"):
            assert bad not in reply.text, (text, reply.text)
