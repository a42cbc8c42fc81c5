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


@pytest.mark.parametrize("slots, sharding", [
    # Llama 3 70B LoRA on 8 GPUs: a replica per card carries the 131 GiB bf16 base, over an 80 GB card's 76 usable:
    # the base is sharded (FSDP), an eighth a card
    ({"model": "llama-3-70b", "method": "lora", "gpus": 8}, "fsdp"),
    # QLoRA of the same: ~37 GiB of 4-bit base plus activations fits one 80 GB card: data parallel stays
    ({"model": "llama-3-70b", "method": "qlora", "gpus": 8}, "ddp"),
    # Qwen2.5-7B LoRA on 4 GPUs: ~20 GiB a replica: data parallel, as torchrun/accelerate run it
    ({"model": "qwen2.5-7b", "method": "lora", "gpus": 4}, "ddp"),
    # what the user said stands
    ({"model": "llama-3-70b", "method": "lora", "gpus": 8, "sharding": "zero3"}, "zero3"),
])
def test_a_lora_base_too_big_for_one_card_is_sharded_when_no_sharding_is_said(core, slots, sharding):
    w, _, _ = core.advisor.workload("finetune", slots, {})
    assert w.sharding == sharding
