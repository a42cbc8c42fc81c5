"""Candidate generation: how many instances of a flavor the job needs, and the job-level facts the rules read.

A flavor's plan depends only on its GPU memory and count, so plans are computed once per such pair.
"""
from __future__ import annotations

import math
from typing import Any

from bot.plan.engine import RuleSet, evaluate
from bot.plan.workload import estimate_on, tp_degrees
from bot.knowledge.loader import KnowledgeBase
from bot.records.kb import Flavor, Model
from bot.records.models import MemoryEstimate, Workload

MIN_HEADROOM = 0.05          # never plan on the last 5% of a card: fragmentation spikes and driver reservations
MAX_INSTANCES = 64

Plan = tuple[int, int, MemoryEstimate]       # (instances, GPUs in total, estimate)


class Sizer:
    """Sizes the job on each flavor: the fewest instances whose cards hold it with MIN_HEADROOM to spare."""

    def __init__(self, w: Workload, model: Model | None, cache: dict[int, MemoryEstimate], user_fixed: bool,
                 batch_fixed: bool = True):
        self.w, self.model, self.cache, self.user_fixed = w, model, cache, user_fixed
        self.batch_fixed = batch_fixed       # the user stated the batch: it is not the planner's to split
        self.plans: dict[tuple[float, int], Plan | None] = {}
        # flavor shape -> (micro-batch, accumulation steps) its one-GPU plan needs; one-GPU estimates per micro-batch
        self.micro: dict[tuple[float, int], tuple[int, int]] = {}
        self._micro_est: dict[int, MemoryEstimate] = {}
        self.searched = 0            # plans evaluated (flavor x instances x replicas), reported by bench/latency.py
        self.speed_memo: dict = {}   # one question's replica timings (perf.replica_speed)
        self.layout_memo: dict = {}  # one question's training layouts: memory and time of each (plan/layouts.py)
        # the critic's MFU floor for training plans (rules/critic.yaml mfu-floor): the search stops scaling a flavor out
        # once it is under it and falling (plans.size_training); None: search every count
        self.mfu_floor: float | None = None
        # (GPUs by id, models) for the speed models of images, audio and denoisers (kinds.job_speed); set by the advisor
        self.speed_ctx: tuple[dict, list] | None = None
        # a served LLM's sizing workloads at fewer sequences than `w` (job_stage), tried on a one-card flavor that does
        # not hold `w`; (card GiB, cards, GPUs) -> the sequences and tokens each the plan's estimate was made at
        self.fewer: list[tuple[int, Workload]] = []
        self.seqs: dict[tuple[float, int, int], tuple[int, int]] = {}

    def est(self, n: int) -> MemoryEstimate:
        return estimate_on(self.w, self.model, n, self.cache)

    def plan(self, f: Flavor) -> Plan | None:
        """(instances, GPUs in total, estimate) for running the job on flavor f, or None if it cannot fit."""
        key = (f.gpu_memory_gib, f.gpu_count)
        if key not in self.plans:
            self.plans[key] = self._plan_for(f)
        return self.plans[key]

    def _plan_for(self, f: Flavor) -> Plan | None:
        usable = f.gpu_memory_gib * (1 - MIN_HEADROOM)
        if self.user_fixed:
            n = self.w.gpus
            k = math.ceil(n / f.gpu_count)
            est = self.est(n)
            return (k, n, est) if est.per_gpu_gib <= usable else None
        one = self.est(1)
        if one.per_gpu_gib <= usable:
            return 1, 1, one
        if self.w.method == "inference":
            return self._serving_plan(f, usable) or self._fewer_plan(f, usable)
        split = self._micro_batch_plan(f, usable)
        if split:
            return split
        k = 1
        while k <= MAX_INSTANCES:
            n = k * f.gpu_count
            if n > 1:
                est = self.est(n)
                if est.per_gpu_gib <= usable:
                    return k, n, est
            k = k + 1 if k < 4 else k * 2
        return None

    def most_gpus(self, f: Flavor) -> int:
        """The most GPUs a plan on flavor f is sized over (the last count `_plan_for` tries)."""
        if self.w.method == "inference":
            return 8 * max(tp_degrees(self.model, f.gpu_count) or [1])
        return MAX_INSTANCES * f.gpu_count

    def _micro_batch_plan(self, f: Flavor, usable: float) -> Plan | None:
        """One GPU at a smaller micro-batch, the assumed batch kept by gradient accumulation: what an engineer tries
        before renting a second card (the same samples per optimizer step, a little slower per sample)."""
        w = self.w
        if self.batch_fixed or w.batch_size < 2 or (self.user_fixed and w.gpus > 1):
            return None
        mb = w.batch_size // 2
        while mb >= 1:
            acc = w.grad_accumulation * (w.batch_size // mb)
            if mb not in self._micro_est:     # the same for every card size: estimated once per micro-batch
                cw = w.model_copy(update={"batch_size": mb, "grad_accumulation": acc})
                self._micro_est[mb] = estimate_on(cw, self.model, 1, {})
            est = self._micro_est[mb]
            if est.per_gpu_gib <= usable:
                self.micro[(f.gpu_memory_gib, f.gpu_count)] = (mb, acc)
                return 1, 1, est
            mb //= 2
        return None

    def _fewer_plan(self, f: Flavor, usable: float) -> Plan | None:
        """A one-card flavor that holds the weights and one or two sequences, not the few the replica is first
        sized at: one replica on it at those (the load then sets how many), instead of no plan on it at all (an 8B
        model with 6k-token RAG prompts on a 24 GB A10G: not 7 x 8-card g5.48xlarge because a g5.xlarge 'does not
        fit' four such prompts)."""
        if f.gpu_count != 1:
            return None
        for c, cw in self.fewer:
            est = estimate_on(cw, self.model, 1, {})
            if est.per_gpu_gib <= usable:
                self.seqs[(f.gpu_memory_gib, f.gpu_count, 1)] = (c, cw.context)
                return 1, 1, est
        return None

    def _serving_plan(self, f: Flavor, usable: float) -> Plan | None:
        """Tensor parallelism inside one instance over a degree the attention heads divide by (vLLM's rule);
        beyond that, pipeline stages on several instances."""
        degrees = tp_degrees(self.model, f.gpu_count)
        for k in (1, 2, 3, 4, 6, 8):
            for t in degrees:
                n = k * t
                if n > 1 and (k == 1 or t > 1):
                    est = self.est(n)
                    if est.per_gpu_gib <= usable:
                        return k, n, est
                    break            # the largest degree did not fit: smaller ones will not either
        return None


def gpus_needed(kb: KnowledgeBase, sizer: Sizer) -> int:
    """Job-level facts use the best case: the GPUs the job needs on the largest card on offer."""
    biggest = kb.max_gpu_memory_gib or 80
    w, user_fixed = sizer.w, sizer.user_fixed
    best = None
    for n in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512):
        est = sizer.est(n if not user_fixed else w.gpus)
        if est.per_gpu_gib <= biggest * (1 - MIN_HEADROOM):
            best = n if not user_fixed else w.gpus
            break
        if user_fixed:
            break
    return best or (w.gpus if user_fixed else 512)


def _vendor_of(gpu_id: str) -> str | None:
    """The vendor of a card id of gpus.yaml, by its id's prefix (ascend-*: Huawei; mi*: AMD Instinct); None for the
    others (NVIDIA, or no card named)."""
    if gpu_id.startswith("ascend"):
        return "huawei"
    if gpu_id.startswith("mi") and gpu_id[2:3].isdigit():
        return "amd"
    return None


def job_facts(intent: str, w: Workload, model: Model | None, slots: dict[str, Any], base: MemoryEstimate,
              gpus: int, provider: str) -> dict[str, Any]:
    """The facts about the job (not any flavor) that the select and check rules read."""
    nodes_needed = max(w.nodes, math.ceil(gpus / 8))
    return {
        "task": "rendering" if intent == "rendering" else w.task, "method": w.method, "params_b": w.params_b,
        "per_gpu_gib": base.per_gpu_gib, "gpus_needed": gpus, "nodes_needed": nodes_needed,
        "multi_gpu": gpus > 1, "multi_node": nodes_needed > 1,
        "sharded": w.sharding in ("zero3", "fsdp", "zero2", "zero1") or gpus > 1,
        "sharded_adapters": w.method in ("lora", "qlora") and gpus > 1 and (
            w.sharding in ("zero3", "fsdp") or gpus != w.gpus),
        "budget": slots.get("budget"), "budget_amount_set": slots.get("budget_amount") is not None,
        "duration": slots.get("duration") or ("long" if (slots.get("deadline_days") or 0) > 60 else None),
        "concurrency": w.concurrency if w.method == "inference" else None, "latency": slots.get("latency"),
        "has_tokens": bool(w.tokens), "model_kind": model.kind if model else "unknown",
        "precision": w.precision, "provider": provider, "gpu_named": bool(slots.get("gpu_model")),
        "npu_named": str(slots.get("gpu_model") or "").startswith("ascend"),
        # the vendor of the card the user named (an Ascend NPU, an AMD Instinct): engines with CUDA-only kernels
        # (faster-whisper's CTranslate2, bitsandbytes, FlashAttention-2, TensorRT) do not run there as on NVIDIA
        "named_vendor": _vendor_of(str(slots.get("gpu_model") or "")),
        "model_family": model.family if model else None,
        "batch_job": bool(slots.get("offline")) and w.method == "inference",
    }


class Shapes:
    """The select rules for a candidate's own shape (several GPUs? several instances?), evaluated once per shape."""

    def __init__(self, rules: RuleSet, facts: dict[str, Any], lang: str):
        self.rules, self.facts, self.lang = rules, facts, lang
        self.job = evaluate(rules, facts, "select", lang)
        self._by_shape: dict[tuple[bool, bool], Any] = {(facts["multi_gpu"], facts["multi_node"]): self.job}

    def __call__(self, n: int, k: int):
        key = (n > 1, k > 1)
        if key not in self._by_shape:
            self._by_shape[key] = evaluate(self.rules, {**self.facts, "multi_gpu": key[0], "multi_node": key[1],
                                                        "sharded": self.facts["sharded"] or key[0]},
                                           "select", self.lang)
        return self._by_shape[key]
