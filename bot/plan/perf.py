"""The planner's one door to performance: training wall-clock and a serving replica's capacity.

A thin adapter over the speed model (bot/estimate/speed.py through cost.py): every planner module asks here, so the
planner states its own policy in one place. The policy: a link the knowledge base does not document is timed as
PCIe inside an instance (the answer asks to confirm NVLink with the vendor) and as TCP between instances (the answer
asks to confirm RDMA); a documented network figure is passed on.
"""
from __future__ import annotations

from dataclasses import dataclass

from bot.estimate import cost
from bot.estimate.posttrain import posttrain_speed
from bot.estimate.speed import training_speed
from bot.estimate.speed_encoder import EncoderSpeed, encoder_speed, encoder_speed_at, generates
from bot.plan.links import LinkEvidence
from bot.records.kb import GPU, Model
from bot.records.models import Link, Workload


@dataclass(frozen=True)
class TrainTime:
    hours: float
    mfu: float | None
    tokens_per_s_per_gpu: float | None


def speed_link(link: LinkEvidence, gpus_in_instance: int | None = None) -> Link:
    """The speed model's Link for a flavor's evidence: unknown inside an instance is PCIe, never assumed NVLink; a
    collective over more of the instance's cards than one NVLink bridge joins runs at PCIe speed (links.py); a
    network no source documents as RDMA is TCP (its documented rate, else the speed model's TCP figure), never
    assumed to be the RDMA cluster fabric the speed model takes when asked about a job alone."""
    intra, gbs = ("pcie" if link.intra == "unknown" else link.intra), link.intra_gbs
    if gpus_in_instance is not None and link.bridged_beyond(gpus_in_instance):
        intra, gbs = "pcie", link.pcie_gbs
    inter = "rdma" if link.inter == "rdma" else "tcp"
    return Link(intra=intra, intra_gbs=gbs, inter=inter, inter_gbs=link.inter_gbs)


def train_time(w: Workload, model: Model | None, gpu: GPU, n: int, gpus_per_instance: int,
               link: LinkEvidence) -> TrainTime | None:
    """Wall-clock hours (goodput included) for w.tokens on n GPUs of `gpu`, over the plan's link."""
    nodes = max(1, -(-n // gpus_per_instance))
    ct = cost.training_time(w.model_copy(update={"nodes": nodes}), model, gpu, n,
                            speed_link(link, min(n, gpus_per_instance)))
    if ct is None or not ct.hours:
        return None
    return TrainTime(ct.hours, ct.mfu, ct.tokens_per_s_per_gpu)


@dataclass(frozen=True)
class ReplicaSpeed:
    concurrency: int                 # sequences one replica serves at the latency target
    requests_per_s: float
    tokens_per_s: float              # output tokens/s of the replica at that concurrency
    ttft_ms: float
    tpot_ms: float
    max_concurrency: int             # what its KV cache holds


def replica_speed(w: Workload, model: Model | None, gpu: GPU, n: int, max_concurrency: int, tpot_ms: float,
                  link: LinkEvidence, memo: dict | None = None) -> ReplicaSpeed | None:
    """The most sequences one replica of n GPUs serves while each still gets a token every `tpot_ms` (prefills
    interleaved), capped by `max_concurrency` (the planner's memory estimate) and what the KV cache holds. `memo`
    (one question's) keeps each (replica, lengths, concurrency) timing: a mix of request sizes times the same
    replicas for the fleet search as for the single-type plans."""
    if max_concurrency < 1 or not gpu.memory_bandwidth_gbs or not cost.peak_tflops(gpu, w.precision)[0]:
        return None            # a card whose bandwidth or throughput is not on file: sized by memory alone
    lk = speed_link(link, n)
    key = (w.params_b, w.precision, w.kv_dtype, w.input_len, w.output_len, w.tensor_parallel, w.nodes, gpu.id, n,
           link)
    memo = {} if memo is None else memo

    def at(c: int):      # split over the replica's own n GPUs, never the tensor-parallel degree the user has at home
        if (key, c) not in memo:
            memo[key, c] = cost.serving(w.model_copy(update={"concurrency": c, "tensor_parallel": n}), model, gpu, n,
                                        lk)
        return memo[key, c]
    one = at(1)
    cap = max(1, min(max_concurrency, one.max_concurrency or max_concurrency))
    lo, hi = 1, cap
    if one.tpot_ms <= tpot_ms:
        while lo < hi:                        # the largest c whose time per output token meets the target
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if at(mid).tpot_ms <= tpot_ms else (lo, mid - 1)
    sp = at(lo)
    return ReplicaSpeed(sp.concurrency, sp.requests_per_s, sp.output_tokens_per_s, sp.ttft_ms, sp.tpot_ms,
                        sp.max_concurrency)


def encoder_replica(w: Workload, model: Model | None, gpu: GPU, seq: int, latency_ms: float, max_batch: int
                    ) -> EncoderSpeed | None:
    """One GPU's copy of an encoder at the largest batch within the latency target and `max_batch` (what its
    memory holds); None where the card's peak is not on file."""
    return encoder_speed(w, model, gpu, seq, latency_ms, max_batch)


def encoder_query_ms(w: Workload, model: Model | None, gpu: GPU, seq: int, fanout: int) -> float | None:
    """One query's wait on one GPU: its `fanout` pairs (or texts) in one forward pass of that batch; None where the
    card's peak is not on file."""
    sp = encoder_speed_at(w, model, gpu, seq, fanout)
    return sp.forward_ms if sp is not None else None


def link_gain(w: Workload, model: Model | None, gpu: GPU, n: int, gpus_per_instance: int, link: LinkEvidence,
              replica_concurrency: int | None = None) -> float:
    """What the flavor's NVLink buys this job in the speed model: the share of a step's time (training: one
    optimizer step, or one sample of post-training; serving: one output token at the replica's concurrency) saved
    against the same cards over their PCIe slots. 0 where the job has one card, the link is not NVLink, a bridge
    joins fewer cards than the job spans (the collective crosses PCIe anyway), or the speed model has no link term
    for the job (images, audio, scenes). A preference for NVLink is worth this much of the price, never a flat
    weight: 8 cards bridged in pairs buy nothing over 8 PCIe cards."""
    per_node = min(n, gpus_per_instance)
    if not generates(model) and w.method == "inference":
        return 0.0             # an encoder's copies share nothing: no collective crosses the link
    if n <= 1 or link.intra != "nvlink" or link.bridged_beyond(per_node) or not link.pcie_gbs:
        return 0.0
    nvlink = speed_link(link, per_node)
    pcie = nvlink.model_copy(update={"intra": "pcie", "intra_gbs": link.pcie_gbs})
    try:
        fast, slow = (_step_s(w, model, gpu, n, lk, replica_concurrency) for lk in (nvlink, pcie))
    except (LookupError, ValueError, ZeroDivisionError):
        return 0.0
    if not fast or not slow or fast >= slow:
        return 0.0
    return 1 - fast / slow


def _step_s(w: Workload, model: Model | None, gpu: GPU, n: int, lk: Link, concurrency: int | None) -> float | None:
    """Seconds per unit of the job's work over link `lk` (see link_gain), or None where no speed applies."""
    job = cost.on_gpus(w, n)
    if w.method == "inference":
        if w.kind not in ("llm", "multimodal") or not gpu.memory_bandwidth_gbs:
            return None
        return cost.serving(job.model_copy(update={"concurrency": max(1, concurrency or w.concurrency)}), model,
                            gpu, n, lk).tpot_ms
    if w.algorithm != "sft":
        rate = posttrain_speed(job, model, gpu, lk).rate
        return 1 / rate if rate else None
    if w.kind not in ("llm", "multimodal"):
        return None
    return training_speed(job, model, gpu, lk).step_s
