"""Post-training jobs: which models exist, how many sequences each sees, which phases overlap (issue 17)."""
from __future__ import annotations

import pytest

from bot.estimate.posttrain import posttrain_memory, posttrain_speed
from bot.records.errors import InvalidRequest
from bot.records.models import Workload


@pytest.fixture(scope="module")
def qwen(kb):
    return kb.models.get("qwen2.5-7b")


def job(m, **kw) -> Workload:
    base = dict(model=m.id, params_b=m.params_b, method="full", gpus=8, sharding="zero3", batch_size=2,
                seq_len=1024, grad_checkpointing=True)
    if kw.get("gpus") == 1:
        base["sharding"] = "none"
    return Workload(**(base | kw))


def names(est) -> set[str]:
    return {t.name for t in est.terms}


def gib(est, prefix: str) -> float:
    return sum(t.gib for t in est.terms if t.name.startswith(prefix))


def test_full_dpo_adds_a_frozen_reference_and_pairs(qwen):
    dpo = posttrain_memory(job(qwen, algorithm="dpo"), qwen)
    assert "reference weights (frozen, 16-bit)" in names(dpo)
    assert gib(dpo, "reference") == pytest.approx(qwen.params_b * 1e9 * 2 / 8 / 2 ** 30, rel=0.01)
    # chosen + rejected: 2 x batch 2 sequences, 12 B per logit in the loss's backward
    assert gib(dpo, "policy: logits and loss") == pytest.approx(1024 * 4 * qwen.vocab * 12 / 2 ** 30, rel=0.01)
    assert "pt.pairs" in [k["key"] for k in dpo.assumption_keys]


def test_lora_dpo_reference_is_the_base_without_adapters(qwen):
    dpo = posttrain_memory(job(qwen, algorithm="dpo", method="lora", gpus=1), qwen)
    assert not any(t.name.startswith("reference") for t in dpo.terms)
    assert "pt.ref_is_base" in [k["key"] for k in dpo.assumption_keys]


def test_orpo_has_no_reference_and_kto_is_unpaired(qwen):
    orpo = posttrain_memory(job(qwen, algorithm="orpo"), qwen)
    kto = posttrain_memory(job(qwen, algorithm="kto"), qwen)
    assert not any(t.name.startswith("reference") for t in orpo.terms)
    assert "reference weights (frozen, 16-bit)" in names(kto)
    assert gib(kto, "policy: logits and loss") < gib(orpo, "policy: logits and loss")


def test_ppo_keeps_four_models_and_the_rollout_engine(qwen):
    ppo = posttrain_memory(job(qwen, algorithm="ppo"), qwen)
    grpo = posttrain_memory(job(qwen, algorithm="grpo", rl_group=1), qwen)
    assert {"reference weights (frozen, 16-bit)", "reward model weights (frozen, 16-bit)"} <= names(ppo)
    assert any(t.name.startswith("critic: ") for t in ppo.terms)
    assert ppo.per_gpu_gib > grpo.per_gpu_gib > posttrain_memory(job(qwen, algorithm="orpo"), qwen).per_gpu_gib - 5


def test_grpo_kv_cache_grows_with_the_group(qwen):
    small = posttrain_memory(job(qwen, algorithm="grpo", rl_group=4), qwen)
    big = posttrain_memory(job(qwen, algorithm="grpo", rl_group=16), qwen)
    assert gib(big, "rollout engine: KV cache") == pytest.approx(4 * gib(small, "rollout engine: KV cache"), rel=0.01)
    assert "rollout engine: bf16 weights" in names(big)


def test_split_layout_keeps_the_engine_off_the_training_gpus(qwen):
    split = posttrain_memory(job(qwen, algorithm="grpo", colocate=False), qwen)
    assert not any(t.name.startswith("rollout engine") for t in split.terms)
    assert "pt.split" in [k["key"] for k in split.assumption_keys]


def test_reward_model_has_no_vocabulary_logits(qwen):
    rm = posttrain_memory(job(qwen, algorithm="reward_model", method="lora", gpus=1), qwen)
    dpo = posttrain_memory(job(qwen, algorithm="orpo", method="lora", gpus=1), qwen)
    assert gib(rm, "policy: logits") < 0.01 < gib(dpo, "policy: logits")
    assert rm.per_gpu_gib < dpo.per_gpu_gib


def test_offloaded_reference_leaves_the_gpu(qwen):
    on = posttrain_memory(job(qwen, algorithm="dpo"), qwen)
    off = posttrain_memory(job(qwen, algorithm="dpo", ref_offload=True), qwen)
    assert gib(off, "reference") == 0 < gib(on, "reference")


@pytest.mark.parametrize("kw", [dict(algorithm="sft"), dict(algorithm="dpo", colocate=False)])
def test_refuses_what_does_not_exist(qwen, kw):
    with pytest.raises(InvalidRequest):
        posttrain_memory(job(qwen, **kw), qwen)


def test_grpo_speed_counts_generation_and_colocation_takes_turns(qwen, kb):
    gpu = kb.gpus["h100-sxm"]
    together = posttrain_speed(job(qwen, algorithm="grpo", dataset_items=1000), qwen, gpu)
    apart = posttrain_speed(job(qwen, algorithm="grpo", colocate=False, dataset_items=1000), qwen, gpu)
    assert together.unit == "samples/s" and together.hours and together.hours > apart.hours
    assert [t.name for t in together.terms][:2] == ["training compute per sample", "generation per sample"]
    dpo = posttrain_speed(job(qwen, algorithm="dpo"), qwen, gpu)
    assert dpo.hours is None and all(t.name != "generation per sample" for t in dpo.terms)


def test_a_known_mean_completion_still_waits_for_the_longest(qwen, kb):
    """With the mean below the limit, a synchronous step decodes the mean at full batch and then the longest
    completion's remaining tokens nearly alone: slower than if all stopped at the mean, faster than all at the limit."""
    gpu = kb.gpus["h100-sxm"]
    base = dict(algorithm="grpo", rl_group=16, seq_len=128, concurrency=128)
    at_mean = posttrain_speed(job(qwen, rollout_len=500, **base), qwen, gpu).rate
    with_tail = posttrain_speed(job(qwen, rollout_len=2000, rollout_mean=500, **base), qwen, gpu).rate
    at_limit = posttrain_speed(job(qwen, rollout_len=2000, **base), qwen, gpu).rate
    assert at_limit < with_tail < at_mean


def test_online_rl_times_the_old_policy_log_probs_pass(qwen, kb):
    grpo = posttrain_speed(job(qwen, algorithm="grpo"), qwen, kb.gpus["h100-sxm"])
    assert "old-policy log-probs forward" in grpo.terms[0].formula
    dpo = posttrain_speed(job(qwen, algorithm="dpo"), qwen, kb.gpus["h100-sxm"])
    assert "old-policy" not in dpo.terms[0].formula
