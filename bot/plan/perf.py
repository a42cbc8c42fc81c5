"""The planner's one door to performance: training wall-clock and a serving replica's capacity.

A thin adapter: every planner module asks here, so swapping the model behind it (bot/estimate/cost.py today, the
speed model of bot/estimate/speed.py once it lands) changes one file. Until then the training time is cost.py's
compute time (6-8 x params x tokens at 40 % MFU) or, when longer, the gradient exchange of the steps over the
plan's slowest link (overlapped with compute, as DDP buckets and FSDP prefetch do).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from bot.estimate import cost
from bot.estimate.adapters import trainable_params
from bot.estimate.arch import arch_of
from bot.plan.links import LinkEvidence
from bot.records.kb import GPU, Model
from bot.records.models import Workload

UNKNOWN_INTER_GBS = 25 / 8        # no network figure documented: 25 Gbit/s TCP assumed (stated in the answer)
GRAD_BYTES = 2.0                  # bf16 gradients on the wire


@dataclass(frozen=True)
class TrainTime:
    hours: float
    compute_hours: float
    comm_share: float                # share of each step spent exchanging gradients/weights
    link_gbs: float | None           # the slowest link the exchange crosses, GB/s per GPU


def train_time(w: Workload, model: Model | None, gpu: GPU, n: int, gpus_per_instance: int,
               link: LinkEvidence) -> TrainTime | None:
    """Wall-clock hours for w.tokens on n GPUs of `gpu`, with the plan's link; None without a token count."""
    ct = cost.training_time(w, model, gpu, n)
    if ct is None:
        return None
    compute_h = ct.days * 24
    if n <= 1:
        return TrainTime(compute_h, compute_h, 0.0, None)
    bw = link_gbs(link, n, gpus_per_instance)
    a = arch_of(model, w.params_b)
    wire = trainable_params(w, a) * GRAD_BYTES * 2 * (n - 1) / n          # ring all-reduce of the gradients
    if w.sharding in ("zero3", "fsdp"):
        wire = wire * 1.5 if w.method in ("full", "freeze") else wire + 2 * a.params * GRAD_BYTES * (n - 1) / n
    tokens_per_step = w.batch_size * w.seq_len * w.grad_accumulation                # per GPU
    steps = (w.tokens or 0) / (tokens_per_step * n)
    comm_h = steps * wire / (bw * 1e9) / 3600
    # DDP's gradient buckets and FSDP's prefetch overlap the exchange with compute: a step takes the longer of the
    # two (a lower bound where the overlap is imperfect; the link shows once it is the longer one)
    total = max(compute_h, comm_h)
    return TrainTime(total, compute_h, comm_h / (compute_h + comm_h) if comm_h else 0.0, bw)


def link_gbs(link: LinkEvidence, n: int, gpus_per_instance: int) -> float:
    """GB/s per GPU, one direction, of the slowest link a collective over n GPUs crosses."""
    intra = link.intra_gbs or 31.5
    if n <= gpus_per_instance:
        return intra
    inter = link.inter_gbs if link.inter_gbs else UNKNOWN_INTER_GBS
    return min(intra, inter / gpus_per_instance)


@dataclass(frozen=True)
class ReplicaSpeed:
    concurrency: int                 # sequences one replica serves at the latency target
    tokens_per_s: float              # decode tokens/s of the replica at that concurrency
    prefill_tokens_per_s: float
    tpot_ms: float


def replica_speed(w: Workload, model: Model | None, gpu: GPU, n: int, max_concurrency: int,
                  tpot_ms: float) -> ReplicaSpeed | None:
    """The most sequences one replica of n GPUs decodes while each still gets a token every `tpot_ms` (memory
    bandwidth bound: cost.decode_tokens_per_second), capped by what its KV cache holds."""
    if max_concurrency < 1:
        return None

    def per_seq_ms(c: int) -> float:
        tps = cost.decode_tokens_per_second(w.model_copy(update={"concurrency": c}), model, gpu, n)
        return 1000 * c / tps if tps else math.inf
    if per_seq_ms(1) > tpot_ms:
        c = 1
    else:
        lo, hi = 1, max_concurrency
        while lo < hi:                        # the largest c whose time per output token meets the target
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if per_seq_ms(mid) <= tpot_ms else (lo, mid - 1)
        c = lo
    tps = cost.decode_tokens_per_second(w.model_copy(update={"concurrency": c}), model, gpu, n) or 0.0
    prefill = cost.prefill_tokens_per_second(w, model, gpu, n) or 0.0
    return ReplicaSpeed(c, tps, prefill, 1000 * c / tps if tps else math.inf)
