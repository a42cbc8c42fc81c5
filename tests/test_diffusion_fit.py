"""A denoiser's LoRA or full training on the user's own card is judged the way it is run (issue 29 memory verdicts;
set3 s3-15: 'SDXL LoRA, 1024 px, batch 4, one 4090 enough?' said 57.3 GiB, out of memory, no way to fit, rent an
H100; kohya's and diffusers' SDXL LoRA recipes train it on 24 GB cards with gradient checkpointing and, for a
larger batch, micro-batches with gradient accumulation).

Properties over GENERATED jobs (diffusion model x image side x batch x card x method x language):
- gradient checkpointing is on for every diffusion training job (the recipes' setting), the batch said or not;
- the batch said is kept as the step's batch: micro-batch x accumulation = the batch;
- whenever the job fits the card at micro-batch 1 with checkpointing (the cheapest layout), the verdict is that it
  fits; a verdict of 'fits' shows a need within the card; a verdict of 'does not fit' is never given for a job the
  cheapest layout holds.
"""
from __future__ import annotations

import functools

from hypothesis import HealthCheck, given, settings, strategies as st

from bot.estimate.kinds import job_memory
from bot.plan.candidates import MIN_HEADROOM

MODELS = [("sdxl", "SDXL"), ("sd-1.5", "stable diffusion 1.5"), ("flux.1-dev", "FLUX.1-dev"),
          ("sd3-medium", "SD3 medium")]
CARDS = [("rtx-4090", "4090"), ("rtx-3090", "3090"), ("l4", "L4"), ("t4", "T4"), ("a10", "A10"),
         ("a100-80gb", "A100 80GB")]


@functools.lru_cache(maxsize=1)
def _core():
    from bot.conversation.turn import Core
    return Core.load()


@st.composite
def diffusion_jobs(draw):
    (mid, name), (gid, card) = draw(st.sampled_from(MODELS)), draw(st.sampled_from(CARDS))
    px, batch, method = draw(st.sampled_from([512, 768, 1024])), draw(st.sampled_from([1, 2, 4, 8])), \
        draw(st.sampled_from(["LoRA", "full"]))
    lang = draw(st.sampled_from(["en", "zh"]))
    if lang == "en":
        q = f"{method} training of {name}, 300 images, {px}px, batch {batch}, 2000 steps: is one {card} enough? how long?"
    else:
        q = f"{name}训{'LoRA' if method == 'LoRA' else '全参微调'}，300张图，{px}分辨率，batch {batch}，2000步，一张{card}够不够？要多久"
    return q, mid, gid, px, batch, lang


def _cheapest_layout_fits(core, reply, gid: str) -> bool:
    """The job at micro-batch 1, gradient checkpointing and 8-bit AdamW on one card of `gid`."""
    w, model, _ = core.advisor.workload(reply.intent or "finetune", reply.slots, {})
    w = w.model_copy(update={"batch_size": 1, "grad_checkpointing": True, "checkpointing": "full",
                             "optimizer": "adamw8bit", "gpus": 1, "nodes": 1})
    mem = core.kb.gpus[gid].memory_gib
    return job_memory(w, model).per_gpu_gib <= mem * (1 - MIN_HEADROOM)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(job=diffusion_jobs())
def test_a_diffusion_job_on_one_card_is_judged_as_it_is_run(job):
    question, mid, gid, _px, batch, lang = job
    core = _core()
    reply = core.turn(question, {})[0]
    assert reply.lang == lang
    assert reply.slots.get("model") == mid, (question, reply.slots)
    yours = [r for r in reply.recommendations if r.get("label") == "yours"]
    assert yours, (question, reply.text[:400])
    row = yours[0]
    lay = row["layout"]
    assert lay["checkpointing"] == "full", (question, lay)
    assert lay["micro_batch"] * lay["grad_accumulation"] == batch, (question, lay)
    if row["fits"]:
        assert row["per_gpu_gib"] <= row["gpu_memory_gib"], (question, row["per_gpu_gib"])
    elif _cheapest_layout_fits(core, reply, gid):
        raise AssertionError(f"'does not fit' for a job micro-batch 1 holds: {question} {reply.text[:400]}")


def test_s3_15_sdxl_lora_batch_4_fits_a_4090_with_accumulation():
    reply = _core().turn("SDXL训LoRA，200张图，1024分辨率，batch 4 大概3000步，一张4090够不够？要多久", {})[0]
    row = next(r for r in reply.recommendations if r.get("label") == "yours")
    assert row["fits"] and row["per_gpu_gib"] <= 22.8, row["per_gpu_gib"]
    assert row["layout"]["micro_batch"] * row["layout"]["grad_accumulation"] == 4
    assert 0.5 <= row["job_hours"] <= 5, row["job_hours"]
    assert "放不下" not in reply.text and "爆显存" not in reply.text, reply.text[:400]
