"""The checklist's "to make it fit" ladder starts from the plan as picked (its GPUs per replica, its micro-batch),
not from one card: 'serve deepseek r1 for 100 users' picked 8 x H100 NVL at 89.2 of 94 GiB and was told
'int4 weights -> 390.2 GiB; tensor parallel over 8 GPUs -> 47.0 GiB', steps that are bigger than the card or that
the plan already takes."""
from __future__ import annotations

import re

import pytest


@pytest.fixture(scope="module")
def core():
    from bot.conversation.turn import Core
    return Core.load()


@pytest.mark.parametrize("question", [
    "serve deepseek r1 for 100 users",
    "serve llama 3.1 405b for 20 users",
    "部署 Qwen2.5-72B，50 个并发用户",
])
def test_fit_steps_start_from_the_picked_layout(core, question):
    r = core.turn(question, {})[0].model_dump()
    pick = r["recommendations"][0]
    oom = next(c for c in r["checklist"] if c["item"] == "oom")
    text = oom["text"]
    for n in re.findall(r"(?:tensor parallel over|张卡张量并行|张量并行到?) ?(\d+)", text):
        assert int(n) > pick["gpus_total"], text                   # never a degree the plan already has
    for gib in re.findall(r"-> ([\d.]+) GiB", text):
        assert float(gib) < pick["gpu_memory_gib"] * 1.5, text     # sized on the plan's cards, not on one
