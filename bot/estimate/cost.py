"""Compute time and cost: training FLOPs -> GPU-hours at a stated utilisation; inference throughput bounds.

Training compute is about 6 x (active) parameters x tokens (Kaplan et al. 2020; EleutherAI "Transformer Math
101": C = 6PD), 8 x with full activation recomputation. LoRA skips the weight gradients of the frozen base: about
4 x P per token. Decode is bounded by memory bandwidth (every step reads the weights and the KV cache), prefill by
compute.
"""
from __future__ import annotations

from typing import Any, Iterable

from bot.estimate.adapters import trainable_params
from bot.estimate.arch import WEIGHT_BYTES, arch_of
from bot.records.models import Compute, Workload
from bot.records.kb import GPU, Flavor, Model

TRAIN_MFU = 0.40          # model FLOPs utilisation assumed for a well-tuned training job
DECODE_BW_EFFICIENCY = 0.70


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


def training_time(w: Workload, model: Model | None, gpu: GPU, gpus: int, mfu: float = TRAIN_MFU) -> Compute | None:
    if not w.tokens:
        return None
    flops, how = training_flops(w, model)
    peak, which = peak_tflops(gpu, w.precision)
    if peak <= 0:
        return None
    seconds_one_gpu = flops / (peak * 1e12 * mfu)
    gpu_hours = seconds_one_gpu / 3600
    days = gpu_hours / gpus / 24
    return Compute(flops=flops, gpu=gpu.id, gpus=gpus, utilization=mfu, gpu_hours=round(gpu_hours, 1),
                   days=round(days, 2),
                   basis=f"{w.tokens:.3g} tokens x ({how}) = {flops:.3g} FLOPs at {mfu:.0%} of {gpu.name} "
                         f"dense {which} {peak:g} TFLOPS")


def decode_tokens_per_second(w: Workload, model: Model | None, gpu: GPU, gpus: int = 1) -> float | None:
    """Upper bound on aggregate decode throughput: each step reads all weights once plus every sequence's KV."""
    if not gpu.memory_bandwidth_gbs:
        return None
    a = arch_of(model, w.params_b)
    weights = a.params * WEIGHT_BYTES[w.precision]
    active_weights = a.active_params * WEIGHT_BYTES[w.precision]
    kv_per_seq = a.kv_dim * 2 * (a.decoder_layers or a.layers) * (w.context / 2) if a.transformer else 0
    bytes_per_step = min(weights, active_weights * max(1, w.concurrency)) + kv_per_seq * w.concurrency
    bandwidth = gpu.memory_bandwidth_gbs * 1e9 * gpus * DECODE_BW_EFFICIENCY
    return w.concurrency * bandwidth / bytes_per_step


def prefill_tokens_per_second(w: Workload, model: Model | None, gpu: GPU, gpus: int = 1, mfu: float = 0.5
                              ) -> float | None:
    a = arch_of(model, w.params_b)
    peak, _ = peak_tflops(gpu, w.precision)
    if not peak:
        return None
    return peak * 1e12 * mfu * gpus / (2 * a.active_params)


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
                    "price_date": f.price.date.isoformat()})
    return out
