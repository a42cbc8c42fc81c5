"""Time and cost of a job: the speed model (speed.py, speed_serve.py) priced per billing mode.

The functions here are the older entry points the planner and the CLI call; they delegate to the speed model, so
every caller states the same times."""
from __future__ import annotations

import math
from typing import Any, Iterable

from bot.estimate.adapters import trainable_params
from bot.estimate.arch import arch_of
from bot.estimate.speed import serving_speed, training_speed
from bot.records.kb import GPU, Flavor, Model
from bot.records.models import Compute, Link, ServingSpeed, Workload

GPUS_PER_NODE = 8
# The fixed-utilisation rule that came before the speed model; posttrain.py (issue 17) still sizes RL/DPO jobs with
# it, and bench/speed_accuracy.py keeps it as a peer.
TRAIN_MFU = 0.40


def peak_tflops(gpu: GPU, precision: str) -> tuple[float, str]:
    """Dense tensor throughput used for the job's precision, and which figure it was."""
    if precision in ("fp8",) and gpu.fp8_tflops:
        return gpu.fp8_tflops, "FP8"
    if precision in ("bf16", "nf4", "int4", "int8", "fp8") and gpu.bf16_tflops:
        return gpu.bf16_tflops, "BF16"
    if precision in ("fp16", "bf16", "nf4", "int4", "int8", "fp8") and gpu.fp16_tflops:
        return gpu.fp16_tflops, "FP16"
    if gpu.fp32_tflops:
        return gpu.fp32_tflops, "FP32"
    return gpu.fp16_tflops or gpu.bf16_tflops or 0.0, "FP16"


def training_flops(w: Workload, model: Model | None) -> tuple[float, str]:
    """6 x active params x tokens (4 x + 2 x trainable for adapters, + 2 x with recomputation): the older rule."""
    a = arch_of(model, w.params_b)
    active = a.active_params
    if w.method in ("lora", "qlora", "freeze"):
        per_token = 4 * active + 2 * trainable_params(w, a)
        how = "4 x active params (forward + input gradients) + 2 x trainable params"
    else:
        per_token = 6 * active
        how = "6 x active params"
    if w.grad_checkpointing:
        per_token += 2 * active
        how += " + 2 x active params (recomputed forward)"
    return per_token * (w.tokens or 0), how


def on_gpus(w: Workload, gpus: int) -> Workload:
    """The workload spread over `gpus` GPUs (at most 8 a node), keeping what the user fixed."""
    nodes = max(w.nodes, math.ceil(gpus / GPUS_PER_NODE))
    return w.model_copy(update={"gpus": gpus, "nodes": nodes})


def training_time(w: Workload, model: Model | None, gpu: GPU, gpus: int, link: Link | None = None
                  ) -> Compute | None:
    """GPU-hours and wall clock for w.tokens on `gpus` GPUs, goodput included."""
    if not w.tokens or not peak_tflops(gpu, w.precision)[0]:
        return None                   # no tokens, or a card whose throughput is not on file: no time to give
    job = on_gpus(w, gpus)
    sp = training_speed(job, model, gpu, link)
    if sp.tokens_per_s <= 0:
        return None
    hours = w.tokens / sp.tokens_per_s / 3600 / sp.goodput
    flops = sp.flops_per_token * w.tokens
    return Compute(flops=flops, gpu=gpu.id, gpus=gpus, utilization=round(sp.mfu, 3),
                   gpu_hours=round(hours * gpus, 1), days=round(hours / 24, 2), hours=round(hours, 2),
                   tokens_per_s_per_gpu=round(sp.tokens_per_s_per_gpu, 1), mfu=round(sp.mfu, 3),
                   tokens=w.tokens, flops_per_token=sp.flops_per_token, goodput=sp.goodput,
                   basis=f"{w.tokens:.3g} tokens x {sp.flops_per_token:.3g} model FLOPs = {flops:.3g} FLOPs, at "
                         f"{sp.tokens_per_s_per_gpu:,.0f} tokens/s per GPU "
                         f"(MFU {sp.mfu:.0%} of {gpu.name}) on {gpus} GPU(s), {sp.goodput:.0%} goodput")


def serving(w: Workload, model: Model | None, gpu: GPU, gpus: int = 1, link: Link | None = None) -> ServingSpeed:
    """One replica on `gpus` GPUs, tensor-parallel across them unless the workload says otherwise."""
    tp = w.tensor_parallel if w.tensor_parallel > 1 else gpus
    return serving_speed(on_gpus(w, gpus).model_copy(update={"tensor_parallel": tp}), model, gpu, link)


def decode_tokens_per_second(w: Workload, model: Model | None, gpu: GPU, gpus: int = 1) -> float | None:
    """Output tokens/s of one replica at w.concurrency, prefill included (what a user of the service sees)."""
    if not gpu.memory_bandwidth_gbs:
        return None
    return serving(w, model, gpu, gpus).output_tokens_per_s


def prefill_tokens_per_second(w: Workload, model: Model | None, gpu: GPU, gpus: int = 1) -> float | None:
    """Prompt tokens/s of one replica prefilling alone."""
    return serving(w, model, gpu, gpus).prefill_tokens_per_s_max


def job_costs(gpu_hours: float, flavors: Iterable[Flavor]) -> list[dict[str, Any]]:
    """The job's GPU-hours priced per billing mode at the lowest per-GPU-hour price on file for that GPU.

    Pay-per-use and spot come from the catalog's hourly prices; yearly/monthly prices are not published per hour in
    a comparable way, so they are not invented here (the billing checklist says when they pay off)."""
    out = []
    for mode, field in (("on-demand", "on_demand"), ("spot", "spot")):
        priced = [(getattr(f.price, field) / f.gpu_count, f) for f in flavors
                  if f.price is not None and getattr(f.price, field)]
        if not priced:
            continue
        per_gpu, f = min(priced, key=lambda pf: (pf[0], pf[1].id))
        out.append({"mode": mode, "per_gpu_hour": round(per_gpu, 4), "currency": f.price.currency,
                    "cost": round(per_gpu * gpu_hours, 2), "flavor": f.id, "price_kind": f.price.kind,
                    "price_date": f.price.date.isoformat() if f.price.date else None,
                    "price_date_basis": f.price.date_basis})
    return out
