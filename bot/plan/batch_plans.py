"""Batch (offline) inference plans: one flavor's engines at their maximum throughput, and the replicas a deadline
(or the planner's horizon) needs. The job itself (items and their tokens) is batch.py's; this stage sizes it on
hardware, on top of the serving sizer (plans.py), so it sits above both and nothing below imports it."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.estimate.kinds import job_speed
from bot.plan.batch import job_hours, max_num_seqs, replicas_for, vision_encoder_s
from bot.plan.candidates import MIN_HEADROOM
from bot.plan.plans import Sized, _size_one, layout_of
from bot.plan.workload import tp_degrees
from bot.records.kb import GPU


def size_batch(f, gpu: GPU, p, sizer, t, link, kb):
    """The flavor's batch plan. One engine of n GPUs runs at its maximum batch throughput (no latency target: as
    many sequences as its KV cache and vLLM's max_num_seqs hold); an instance holds as many engines as its cards
    allow (data parallel inside it, as vLLM's data_parallel_size runs them), and the engine's tensor-parallel degree
    is the one of those that holds the model which completes the most items per instance-second: a wider engine
    frees KV memory for more sequences, a narrower one duplicates fewer weights (72B on 8 x H100: 2 engines of TP 4
    against 1 of TP 8). A replica in the answer is one instance (or the instances one engine spans); the replicas
    are as many as the deadline (or the horizon) needs. A card without speed figures is sized for memory, untimed."""
    k, n, est = p
    options = [(n, est)]
    if k == 1 and sizer.w.kind in ("llm", "multimodal"):
        usable = f.gpu_memory_gib * (1 - MIN_HEADROOM)
        options += [(d, sizer.est(d)) for d in sorted(tp_degrees(sizer.model, f.gpu_count))
                    if d > n and sizer.est(d).per_gpu_gib <= usable]
    best = None
    for d, e in options:
        engines = max(1, f.gpu_count // d) if k == 1 else 1
        sized = engine_rate(f, gpu, k, d, e, sizer, t, link, kb)
        if sized.items_per_s:
            sized.items_per_s *= engines
            sized.gpus_total = d * engines
            sized.layout = layout_of(sizer, d, k)
        if best is None or (sized.items_per_s or 0) > (best[0].items_per_s or 0):
            best = (sized, d, engines)
    sized, d, engines = best
    if not sized.items_per_s:
        sized.breaks.append("untimed")     # no speed figures (GH200's bandwidth): it cannot be said to finish
        return sized

    def layout(replicas: int) -> dict[str, Any]:
        return {**layout_of(sizer, d, k, replicas * engines), "engines_per_replica": engines}
    return timed(sized, t, sized.gpus_total, layout)


def engine_rate(f, gpu: GPU, k: int, n: int, est, sizer, t, link, kb):
    """One engine of n GPUs at its maximum throughput: items per second (a language model's through the serving
    speed model plus its vision encoder; an image generator's through its own speed model)."""
    if sizer.w.kind not in ("llm", "multimodal"):
        sized = Sized(k, n, est, layout_of(sizer, n, k))
        speed = job_speed(sizer.w.model_copy(update={"gpus": n}), sizer.model, gpu, kb.gpus,
                          list(kb.models.values()))
        sized.items_per_s = speed.rate if speed is not None and speed.unit == "images/s" else None
        return sized
    sized = _size_one(f, gpu, k, n, est, sizer, replace(t, max_seqs=max_num_seqs(gpu)), link)
    sized.replicas, sized.breaks = 1, []
    if sized.items_per_s:
        per_image = vision_encoder_s(sizer.model, gpu, n, sizer.w.precision)
        sized.items_per_s = 1 / (1 / sized.items_per_s + per_image)
    return sized


def timed(sized, t, gpus_per_replica: int, layout):
    """The replicas for the targets and the job's hours on them, from sized.items_per_s (one replica's rate)."""
    replicas, meets = replicas_for(t.items, sized.items_per_s, t.deadline_h, gpus_per_replica, t.deadline_share)
    sized.replicas = replicas
    sized.hours = job_hours(t.items, sized.items_per_s, replicas)
    sized.layout = layout(replicas)
    if not meets:
        sized.breaks.append("deadline" if t.deadline_h else "horizon")
    return sized
