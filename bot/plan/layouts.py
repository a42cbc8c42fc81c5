"""The parallel layout a training plan on n GPUs runs: ZeRO-3 over all of them, or, for a mixture of experts trained
in full, expert x pipeline x data parallelism as Megatron-LM / Megatron-Bridge / NeMo and DeepSpeed-MoE run it.

ZeRO-3 alone gathers every expert of every layer on every GPU each micro-batch, though a token uses 8 of 128: the
gathers, not the compute, then bound the step (Qwen3-30B-A3B on 136 H100 ran at 1,662 tokens/s a GPU, where
NVIDIA's AutoModel runs it at 11,842 on 8). Expert parallelism keeps each GPU's experts resident and moves the tokens
instead (all-to-all); the dense part is small and replicated, its optimizer state sharded (ZeRO-1, Megatron's
distributed optimizer), and pipeline stages split the layers when the experts still do not fit. The search tries every
expert-parallel degree that divides the expert count and fits in one instance (its all-to-all on NVLink), with 1-16
pipeline stages, and keeps the fastest that fits in memory: on a fixed GPU count the fastest is the cheapest.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bot.estimate.arch import arch_of
from bot.estimate.kinds import job_memory
from bot.plan import perf
from bot.plan.links import LinkEvidence
from bot.records.kb import GPU, Model
from bot.records.models import MemoryEstimate, Workload

PIPELINE_DEGREES = (1, 2, 4, 8, 16)     # stages tried; Megatron-Bridge's MoE recipes use 1-16 (DeepSeek-V3: 16)


@dataclass(frozen=True)
class Timed:
    """One layout of a plan: its workload, memory per GPU and wall clock."""
    w: Workload
    estimate: MemoryEstimate
    hours: float
    mfu: float | None


def zero3_workload(w: Workload, n: int, per_instance: int) -> Workload:
    """ZeRO-3 over the n GPUs on as many nodes as instances: what DeepSpeed and FSDP users run."""
    return w.model_copy(update={"gpus": n, "sharding": "zero3" if n > 1 else "none",
                                "nodes": max(1, math.ceil(n / per_instance))})


def expert_degrees(experts: int, per_instance: int, n: int) -> list[int]:
    """Expert-parallel degrees above 1 that divide the expert count, fit in one instance and divide n."""
    return [ep for ep in range(2, min(experts, per_instance) + 1) if experts % ep == 0 and n % ep == 0]


def expert_layouts(w: Workload, model: Model | None, n: int, per_instance: int) -> list[Workload]:
    """EP x PP x DP layouts of a full-training mixture of experts on n GPUs, for each PP the largest EP first (the
    least memory). The samples per optimizer step stay
    the user's: with n / PP data-parallel replicas each runs PP times the micro-batches (which also keeps the 1F1B
    bubble, (PP - 1) / micro-batches, small)."""
    moe = model.moe if model is not None else None
    if moe is None or moe.experts <= 1 or w.method != "full" or n < 2:
        return []
    layers = model.layers - (moe.dense_layers or 0)
    nodes = max(1, math.ceil(n / per_instance))
    out = []
    for pp in PIPELINE_DEGREES:
        if pp > 1 and (n % pp or pp > layers // 2):
            continue
        for ep in sorted(expert_degrees(moe.experts, per_instance, n // pp), reverse=True):
            out.append(w.model_copy(update={
                "gpus": n, "nodes": nodes, "sharding": "zero1", "expert_parallel": ep, "pipeline_parallel": pp,
                "tensor_parallel": 1, "virtual_pipeline": 1, "grad_accumulation": w.grad_accumulation * pp}))
    return out


TENSOR_DEGREES = (8, 4, 2)     # tensor-parallel degrees tried inside one instance (Megatron-LM keeps TP in a node)


def dense_layouts(w: Workload, model: Model | None, n: int, per_instance: int) -> list[Workload]:
    """TP x PP x DP layouts of a dense model trained in full across instances, as Megatron-LM runs one (its "3D
    parallelism"): tensor parallelism inside each instance, whose all-reduces every layer stay on the instance's
    own link; pipeline stages across instances, so only one micro-batch's activations cross the network at each
    stage boundary; data-parallel replicas over what is left, their optimizer state sharded (ZeRO-1, Megatron's
    distributed optimizer). Across a network without RDMA this is what makes a 70B full fine-tune possible at all:
    ZeRO-3 gathers every layer's parameters over the network every micro-batch. The samples per optimizer step stay
    the user's (each of the n / (TP x PP) replicas runs TP x PP times the micro-batches, which also keeps the 1F1B
    bubble small). The two largest TP degrees that divide the instance and the attention heads are tried."""
    if (model is not None and model.moe is not None and model.moe.experts > 1) or w.method not in ("full", "freeze") \
            or n <= per_instance or n % per_instance:
        return []
    a = arch_of(model, w.params_b)
    tps = [t for t in TENSOR_DEGREES if t <= per_instance and per_instance % t == 0 and a.heads % t == 0][:2]
    out = []
    for tp in tps:
        for pp in PIPELINE_DEGREES[1:]:
            if n % (tp * pp) or pp > a.layers // 2:
                continue
            out.append(w.model_copy(update={
                "gpus": n, "nodes": n // per_instance, "sharding": "zero1", "tensor_parallel": tp,
                "pipeline_parallel": pp, "expert_parallel": 1, "virtual_pipeline": 1,
                "grad_accumulation": w.grad_accumulation * tp * pp}))
    return out


def fastest_expert_layout(w: Workload, model: Model | None, gpu: GPU, n: int, per_instance: int,
                          usable_gib: float, link: LinkEvidence, memo: dict) -> Timed | None:
    """The fastest expert-parallel layout of n GPUs whose memory fits `usable_gib` a GPU, or None (a dense model, no
    such layout fits, or the GPU has no speed on file). `memo` keeps one question's estimates and timings: they do
    not depend on the flavor beyond its GPU, count per instance and link."""
    return _fastest(expert_layouts(w, model, n, per_instance), model, gpu, n, per_instance, usable_gib, link, memo)


def fastest_dense_layout(w: Workload, model: Model | None, gpu: GPU, n: int, per_instance: int,
                         usable_gib: float, link: LinkEvidence, memo: dict) -> Timed | None:
    """The fastest TP x PP x DP layout of a dense model on n GPUs that fits `usable_gib` a GPU, or None. For each TP
    degree only the fewest pipeline stages that fit are timed: more stages add bubble and sends and save only
    memory, so they are not faster (and the planner stays fast on pre-training scale-out)."""
    best: Timed | None = None
    settled: set[int] = set()
    for cw in dense_layouts(w, model, n, per_instance):
        if cw.tensor_parallel in settled:
            continue
        timed = _fastest([cw], model, gpu, n, per_instance, usable_gib, link, memo)
        if timed is None:
            continue
        settled.add(cw.tensor_parallel)
        if best is None or timed.hours < best.hours:
            best = timed
    return best


def _fastest(candidates: list[Workload], model: Model | None, gpu: GPU, n: int, per_instance: int,
             usable_gib: float, link: LinkEvidence, memo: dict) -> Timed | None:
    """The fastest of the layouts whose memory fits, each estimated and timed once per question (`memo`)."""
    best: Timed | None = None
    too_big: set[tuple[int, int]] = set()    # (TP, PP) whose largest EP did not fit: a smaller EP holds more
    for cw in candidates:
        degrees = (cw.tensor_parallel, cw.pipeline_parallel)
        if degrees in too_big:
            continue
        mkey = ("mem", n, cw.nodes, cw.expert_parallel, *degrees)
        if mkey not in memo:
            memo[mkey] = job_memory(cw, model)
        est = memo[mkey]
        if est.per_gpu_gib > usable_gib:
            too_big.add(degrees)
            continue
        tkey = ("time", gpu.id, n, per_instance, link, cw.expert_parallel, *degrees)
        if tkey not in memo:
            memo[tkey] = perf.train_time(cw, model, gpu, n, per_instance, link)
        tt = memo[tkey]
        if tt is not None and (best is None or tt.hours < best.hours):
            best = Timed(cw, est, tt.hours, tt.mfu)
    return best


def layout_of_workload(cw: Workload, n: int, experts: int) -> dict[str, Any]:
    """The plan's layout as the answer shows it: data, tensor, pipeline and expert degrees, ZeRO stage, batch."""
    tp_pp = cw.tensor_parallel * cw.pipeline_parallel
    lay = {"dp": max(1, n // tp_pp), "tp": cw.tensor_parallel, "pp": cw.pipeline_parallel, "sharding": cw.sharding,
           "micro_batch": cw.batch_size, "checkpointing": "full" if cw.grad_checkpointing else cw.checkpointing,
           "precision": cw.precision, "kv_dtype": None}
    if cw.expert_parallel > 1:
        lay.update(ep=cw.expert_parallel, experts=experts, grad_accumulation=cw.grad_accumulation)
    elif tp_pp > 1:
        lay.update(grad_accumulation=cw.grad_accumulation)
    return lay


def layout_workload(w: Workload, n: int, per_instance: int, layout: dict[str, Any] | None) -> Workload:
    """The workload a plan's layout times: its expert-parallel layout when it has one, hybrid sharding when the
    planner chose it, else ZeRO-3 over n GPUs."""
    base = zero3_workload(w, n, per_instance)
    if layout and layout.get("sharding") == "hsdp" and layout.get("ep", 1) <= 1:
        return base.model_copy(update={"sharding": "hsdp"})     # ZeRO-3 inside each instance, replicas across
    if not layout or (layout.get("ep", 1) <= 1 and layout.get("tp", 1) * layout.get("pp", 1) <= 1):
        return base
    return base.model_copy(update={"sharding": layout["sharding"], "expert_parallel": layout.get("ep", 1),
                                   "pipeline_parallel": layout["pp"], "tensor_parallel": layout["tp"],
                                   "grad_accumulation": layout["grad_accumulation"]})
