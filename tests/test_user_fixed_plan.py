"""Which counts the user said hold every rental plan (bot/plan/workload.user_fixed_plan), and which describe their own
hardware or only say 'one machine' (the rental is then sized on its own merits)."""
from __future__ import annotations

import pytest

from bot.plan.workload import user_fixed_plan


@pytest.mark.parametrize("slots, fixed", [
    ({"gpus": 8}, True),                                              # '8 GPUs, full finetune 7B'
    ({"gpus": 16, "nodes": 2}, True),                                 # '两机十六卡训练 30B 模型'
    ({"nodes": 2}, True),                                             # 'two nodes'
    ({"nodes": 1}, False),                                            # 'on a local machine', 'one node'
    ({}, False),
    ({"gpus": 2, "gpu_model": "rtx-4090"}, False),                    # 'we have 2x RTX 4090': theirs
    ({"gpus": 1, "gpu_memory_gib": 48.0}, False),                     # '我只有一张48G的显卡': theirs
    ({"gpus": 8, "gpu_model": "h100", "renting": True}, True),        # 'rent 8 x H100'
    ({"gpus": 16, "gpu_model": "a100-80gb", "nodes": 2}, True),       # '2 nodes of 8 A100': the layout asked about
])
def test_user_fixed_plan(slots, fixed):
    assert user_fixed_plan(None, slots) is fixed
