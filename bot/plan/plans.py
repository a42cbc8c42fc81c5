"""Plans, not flavors: a flavor x instances (x replicas for serving) with its parallel layout, memory per GPU,
wall-clock time and cost, sized to the user's targets.

Training: the fewest GPUs whose memory holds the job, then more instances until the deadline is met (or, with no
deadline, until the run ends within a sensible horizon). Serving: the fewest GPUs a replica needs for its memory,
then as many replicas as the load needs at the latency target. Sizing walks the instance counts of one flavor in a
fixed order, so the result is deterministic.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from bot.plan.candidates import MIN_HEADROOM, Sizer
from bot.plan.load import MIN_THINK_S, min_replicas, serving_load, users_in_flight
from bot.plan.workload import CHAT_OUTPUT, CHAT_PROMPT, DDP_KINDS, request_buckets
from bot.plan.links import LinkEvidence
from bot.plan import layouts, perf
from bot.estimate.kinds import job_memory, job_speed, timed_by_items
from bot.estimate.speed_encoder import MAX_BATCH, generates
from bot.records.kb import GPU, Flavor
from bot.records.models import MemoryEstimate

HORIZON_DAYS = 30            # no deadline stated: a run longer than this is not a sensible default plan
# Latency targets per output token and to the first token. "normal": a chat that streams faster than people read;
# DistServe's chatbot SLO is 0.1 s per token (Zhong et al., OSDI 2024) and MLPerf's Llama 2 70B server scenario
# allows 200 ms and a 2 s first token (mlcommons/inference loadgen/mlperf.conf: llama2-70b.Server.tpot_latency =
# 200, ttft_latency = 2000). "low": MLPerf's interactive scenario, a 5x shorter TPOT (40 ms) and a 450 ms first token.
TPOT_MS = {"low": 40.0, "normal": 100.0}
TTFT_MS = {"low": 450.0, "normal": 2000.0}
# A request to an encoder (a classifier, an embedding model) is one forward pass, timed whole: MLPerf Inference's BERT
# server scenario bounds its 99th percentile at 130 ms (mlcommons/inference loadgen/mlperf.conf:
# bert.Server.target_latency = 130). "low" scales it as MLPerf's interactive LLM scenario scales the first token
# (450 of 2000 ms): about 30 ms.
ENCODER_LATENCY_MS = {"low": 30.0, "normal": 130.0}
OUTPUT_LEN = CHAT_OUTPUT     # tokens a chat request generates when the user does not say
INPUT_LEN = CHAT_PROMPT      # prompt tokens per request when the user does not say
# ZeRO-3 across RDMA-joined instances under this MFU is waiting on the fabric: hybrid sharding is timed beside it
RDMA_ZERO3_MFU = 0.3
MAX_SCALE_GPUS = 4096       # the largest training plan searched (a big pre-training cluster)
# Scaling out over a network no source documents as RDMA (timed as TCP) stops where the GPUs would do less than 30 %
# of the work per GPU-hour they do on the fewest instances: past that point they mostly wait on the network, the job
# costs over three times what its compute does, and an engineer would change the network rather than add nodes
# (at 50 % the cap cut off a 7B pre-train on 23 x 8 H100 PCIe at 861k USD for 36 x 8 A100 PCIe at 1.51 M USD).
MIN_TCP_SCALING = 0.3
UNREACHABLE_TPOT = 1.5      # a time per token no batch meets: the nearest plan batches at this x one sequence's
SIZING_CONCURRENCY = 4       # sequences a serving replica is first sized for; its capacity then comes from memory


def e2e_split(e2e_ms: float, output_len: int, ttft_ms: float) -> tuple[float, float]:
    """A whole response within e2e_ms: the first token within a quarter of it (at most the usual TTFT target), the
    rest of the output tokens in what is left. '2 s for 256 tokens' is about 6 ms a token: only a lightly loaded
    fast card meets it, which is what the answer then says (or the user streams, and the target is TTFT)."""
    ttft = min(ttft_ms, e2e_ms / 4)
    return ttft, max(1.0, (e2e_ms - ttft) / max(1, output_len))


@dataclass(frozen=True)
class Targets:
    """What the user asked for, as numbers the plans are checked against."""
    deadline_h: float | None = None
    concurrency: int | None = None           # concurrent sequences the fleet must serve
    qps: float | None = None
    input_len: int = INPUT_LEN
    output_len: int = OUTPUT_LEN
    tpot_ms: float = TPOT_MS["normal"]
    ttft_ms: float = TTFT_MS["normal"]
    latency_stated: bool = False
    window: int | None = None                # tokens one request may hold (max_model_len): one must always fit
    kv_tokens: int | None = None             # tokens a sequence holds in flight, when request sizes are known
    buckets: tuple[tuple[float, int], ...] = ()   # a mix of request sizes: (share, prompt tokens), sized apart
    items: int | None = None                 # a batch job's items (batch.py): sized for throughput, not latency
    max_seqs: int = 4096                     # sequences one replica may hold (a batch job: vLLM's max_num_seqs)
    request_ms: float = ENCODER_LATENCY_MS["normal"]   # an encoder's whole request (one forward pass)
    min_replicas: int = 1                    # a production service keeps serving while one replica is down
    users: int | None = None                 # concurrent users said, when `concurrency` is their requests in flight
    think_s: float = 0.0                     # an encoder's users: the pause between one's requests (load.MIN_THINK_S)
    fanout: int | None = None                # pairs (a reranker's documents) or texts one query brings
    # the margin plans are sized with (rules/critic.yaml `headroom`, set from the critic by job_stage): replicas
    # carry the peak at `utilisation` of what they hold at the latency target; a timed run takes at most
    # `deadline_share` of the deadline. 1.0: sized to the edge (a test's own rules without the invariant)
    utilisation: float = 1.0
    deadline_share: float = 1.0

    @classmethod
    def from_slots(cls, slots: dict[str, Any], context: int, in_flight: bool = True,
                   generative: bool = True) -> "Targets":
        """The targets of the slots. A sequence holds its prompt and output in the KV cache (the share-weighted
        mean for a mix), not the whole window (see kv_context): with request sizes stated, and, `in_flight`, for
        the chat request assumed (1,024 + 256 tokens) when no context is stated either, as the own-cards verdict
        and the speed model already take it (100 users of Llama-2-13b had been sized at 36 full 4,096-token
        windows a replica: 6 H100s where 2 hold them). A stated context is sized whole: '5 users at 128k'.
        Concurrent users said as people (`concurrency_users`) of a `generative` model are their requests in flight,
        by Little's law (load.users_in_flight): each waits for an answer at the latency targets, then reads it."""
        lat = slots.get("latency") or "normal"
        days = slots.get("deadline_days")
        # each request's output as said (a reasoning model's, when assumed: workload.serving_output); else a chat's
        out_len = slots.get("output_tokens") or min(OUTPUT_LEN, max(1, context // 4))
        buckets = request_buckets(slots)
        prompt = round(sum(share * tokens for share, tokens in buckets)) if buckets else INPUT_LEN
        in_len = max(1, min(prompt, context - out_len))
        ttft = slots.get("ttft_ms") or slots.get("latency_ms") or TTFT_MS[lat]
        tpot = slots.get("tpot_ms") or TPOT_MS[lat]
        if slots.get("e2e_ms") and not slots.get("tpot_ms"):
            ttft, tpot = e2e_split(slots["e2e_ms"], out_len, slots.get("ttft_ms") or TTFT_MS[lat])
        stated = any(slots.get(k) for k in ("latency", "ttft_ms", "tpot_ms", "e2e_ms", "latency_ms"))
        request = slots.get("latency_ms") or slots.get("e2e_ms") or slots.get("ttft_ms") or ENCODER_LATENCY_MS[lat]
        load = serving_load(slots)
        users = concurrency = slots.get("concurrency")
        if users and slots.get("concurrency_users") and generative:
            concurrency = users_in_flight(users, (ttft + out_len * tpot) / 1000, out_len)
        return cls(request_ms=request, deadline_h=days * 24 if days else None, concurrency=concurrency,
                   users=users if concurrency != users else None,
                   think_s=MIN_THINK_S if users and slots.get("concurrency_users") and not generative else 0.0,
                   qps=load.amount if load else None, min_replicas=min_replicas(slots),
                   input_len=in_len, output_len=out_len, tpot_ms=tpot,
                   ttft_ms=ttft, latency_stated=stated, window=context,
                   kv_tokens=in_len + out_len if (buckets or (in_flight and not slots.get("seq_len")))
                   and in_len + out_len < context else None,
                   buckets=tuple(buckets) if len(buckets) > 1 else (), fanout=slots.get("fanout"))

    def for_bucket(self, share: float, prompt: int) -> "Targets":
        """The targets of one request-size bucket of a mix: its share of the load, its own prompt, and a window
        that holds its own requests (a replica for short chats need not hold a 30k-token document)."""
        out = self.output_len
        return replace(self, concurrency=math.ceil(self.concurrency * share) if self.concurrency else None,
                       qps=self.qps * share if self.qps else None, input_len=prompt, window=prompt + out,
                       kv_tokens=prompt + out, buckets=())

    def kv_context(self, concurrency: int) -> int | None:
        """Tokens per sequence a KV pool for `concurrency` sequences is sized at, when request sizes are known:
        those in flight, as vLLM's paged KV cache admits a sequence while free blocks hold it (blocks of 16 tokens,
        allocated as tokens arrive: Kwon et al., SOSP 2023; vllm/v1/core/kv_cache_manager.py allocate_slots), but
        never a pool smaller than one request of the whole window (vLLM refuses to start when max_model_len does
        not fit the KV cache: vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory). None: no sizes
        known, a whole window per sequence."""
        if not self.kv_tokens or not self.window:
            return None
        return max(self.kv_tokens, math.ceil(self.window / max(1, concurrency)))

    def encoder_rate(self) -> float | None:
        """Requests per second an encoder's load means: the stated QPS, or N users each with one request always in
        flight (the convention the LLM path keeps: a user is a sequence in flight) completing within the request
        target, N / request time by Little's law. 50 users at 130 ms is 385 requests/s: what one GPU's copy must
        sustain, not 50 requests in one forward pass (which had sized bert-base for 50 users at 2 x L4). Users said
        as people pause between requests (`think_s`, at least the time to type the next one): 200 people searching
        are 200 / (0.13 + 5) = 39 requests/s, not 1,538."""
        from_users = self.concurrency / (self.request_ms / 1000 + self.think_s) \
            if self.concurrency and self.request_ms else None
        return max(filter(None, (self.qps, from_users)), default=None)

    def load_sequences(self) -> int | None:
        """Concurrent sequences the load means: stated users, or QPS x seconds per request (Little's law)."""
        from_qps = None
        if self.qps:
            per_request_s = (self.ttft_ms + self.output_len * self.tpot_ms) / 1000
            from_qps = math.ceil(self.qps * per_request_s)
        return max(filter(None, (self.concurrency, from_qps)), default=None)


@dataclass
class Sized:
    """One flavor's plan at the targets."""
    instances: int
    gpus_total: int
    estimate: MemoryEstimate
    layout: dict[str, Any]
    hours: float | None = None               # training wall clock
    replicas: int = 1
    breaks: list[str] = field(default_factory=list)      # targets this plan misses: deadline, latency, load
    mfu: float | None = None                 # model FLOPs utilisation the speed model gives the plan
    replica_concurrency: int | None = None
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    # a mix of request sizes: (share, prompt tokens, replicas, sequences each, TPOT ms, TTFT ms) per bucket
    parts: list[tuple] = field(default_factory=list)
    items_per_s: float | None = None         # requests (a batch job's items) one replica completes per second
    request_ms: float | None = None          # an encoder's request latency: one batch's forward pass
    encoder_batch: int | None = None         # requests an encoder's GPU runs in one forward pass
    # a serving replica's workload as its estimate was made (its sequences, the tokens each holds in flight): the
    # checklist's fit hint starts from it, not from the whole load on one replica
    workload: Any = None
    # the time per output token at the load asked (its users spread over the replicas), when a replica holds more
    # than its share: 20 users on an A10 replica that holds 70 decode faster than the 100 ms target it was sized at
    load_tpot_ms: float | None = None
    load_per_replica: int | None = None
    # the load in its own unit and what one replica carries (capacity.Capacity), set where a kind's own speed
    # model sized it (live streams, images/s); the others' is derived from the fields above (capacity.of_sized)
    capacity: Any = None
    # an encoder whose query brings many pairs (a reranker's top-k): one query's pairs on one GPU, and the GPUs each
    # query's pairs are split over so that it returns within the latency target
    query_ms: float | None = None
    query_split: int | None = None


def layout_of(sizer: Sizer, n: int, k: int, replicas: int = 1, sharding: str | None = None) -> dict[str, Any]:
    """The parallel layout the memory estimate assumed for n GPUs on k instances (`sharding`: the one the plan was
    timed with, when the planner chose it)."""
    w = sizer.w
    if w.method == "inference":
        tp = n if k == 1 else n // k
        return {"dp": replicas, "tp": tp, "pp": k, "sharding": "none", "micro_batch": None,
                "checkpointing": "none", "precision": w.precision, "kv_dtype": w.precision}
    sharding = sharding or ("none" if n == 1 else ("zero3" if n != w.gpus or w.sharding == "none" else w.sharding))
    if n > 1 and w.kind in DDP_KINDS and not (n == w.gpus and w.sharding != "none"):
        sharding = "ddp"       # a whole replica per GPU, as workload.estimate_on sized its memory
    return {"dp": n, "tp": 1, "pp": 1, "sharding": sharding, "micro_batch": w.batch_size,
            "checkpointing": "full" if w.grad_checkpointing else "none", "precision": w.precision,
            "kv_dtype": None}


def size_training(f: Flavor, gpu: GPU, k0: int, n0: int, est0: MemoryEstimate, sizer: Sizer, t: Targets,
                  link: LinkEvidence) -> Sized:
    """More instances of f until the deadline (or, without one, the horizon) is met; the fewest that do."""
    base = Sized(k0, n0, est0, layout_of(sizer, n0, k0))
    if not (sizer.w.tokens or timed_by_items(sizer.w)) or sizer.user_fixed:
        base.hours, base.mfu = _hours(sizer, gpu, n0, f.gpu_count, link)
        base = _expert_layout_if_faster(sizer, f, gpu, base, link)
        if t.deadline_h and base.hours and base.hours > t.deadline_h:
            base.breaks.append("deadline")
        return base
    # sized to finish within deadline_share of the deadline (rules/critic.yaml headroom): a restart or a run 20 %
    # slower than modelled still meets it; the horizon is a sanity bound, not a target, and has no margin
    limit = t.deadline_h * t.deadline_share if t.deadline_h else HORIZON_DAYS * 24
    best: Sized | None = None
    prev = k0
    first: Sized | None = None
    for k in _instance_counts(k0, f.gpu_count, link.inter == "rdma"):
        plan = _timed(sizer, f, gpu, k, link)
        if plan is None:
            break
        first = first or plan
        if link.inter != "rdma" and _scaling(first, plan) < MIN_TCP_SCALING:
            break                 # over a network not documented as RDMA, no further: more GPUs mostly wait on it
        if _below_floor(sizer, first, plan):
            best = best if best is not None and best.hours <= plan.hours else plan
            break                 # under the critic's MFU floor and falling: more instances only sink it further
        if best is None or plan.hours < best.hours:
            best = plan
        if plan.hours <= limit:
            return _fewest(sizer, f, gpu, prev, plan, limit, link)
        if best is not plan:
            break                 # more GPUs no longer help: the link, not compute, bounds it
        prev = k
    if best is None:
        return base               # no speed on file for this GPU (Ascend 910B4): sized for memory, untimed
    if t.deadline_h and best.hours <= t.deadline_h:
        return best               # meets the deadline without the margin: the answer says it is tight (critic)
    best.breaks.append("deadline" if t.deadline_h else "horizon")
    return best


def _timed(sizer: Sizer, f: Flavor, gpu: GPU, k: int, link: LinkEvidence) -> Sized | None:
    """k instances of f in the fastest layout that fits: ZeRO-3 over all its GPUs; hybrid sharding (ZeRO-3 inside
    each instance, replicas across them) where one instance's cards hold the sharded job, which across a slow network
    wins by a wide margin (one gradient all-reduce a step crosses it instead of every layer's gathers every
    micro-batch); or expert parallelism for a mixture of experts."""
    sizer.searched += 1
    n = k * f.gpu_count
    hours, share = _hours(sizer, gpu, n, f.gpu_count, link)
    if hours is None:
        return None
    plan = Sized(k, n, sizer.est(n), layout_of(sizer, n, k), hours=hours, mfu=share)
    if k > 1 and f.gpu_count > 1 and (link.inter != "rdma" or share is None or share < RDMA_ZERO3_MFU) \
            and _fits(sizer.est(f.gpu_count), f):
        # over a fast RDMA fabric the two layouts time within a few percent of each other: ZeRO-3 is kept, and the
        # search stays fast; over a thin one (Alibaba's eRDMA, 20 GB/s an instance) ZeRO-3's per-layer gathers sink
        # it (7B on 2 x 8 A100: 10 % MFU, slower than one instance), and hybrid sharding is timed too
        hybrid, hybrid_share = _hours(sizer, gpu, n, f.gpu_count, link, "hsdp")
        if hybrid is not None and hybrid < hours:
            sizer.searched += 1
            plan = Sized(k, n, sizer.est(f.gpu_count), layout_of(sizer, n, k, sharding="hsdp"), hours=hybrid,
                         mfu=hybrid_share)
    if k > 1 and link.inter != "rdma":
        plan = _dense_layout_if_faster(sizer, f, gpu, plan, link)
    return _expert_layout_if_faster(sizer, f, gpu, plan, link)


def _dense_layout_if_faster(sizer: Sizer, f: Flavor, gpu: GPU, plan: Sized, link: LinkEvidence) -> Sized:
    """Across instances with no documented RDMA, a dense model trained in full in the fastest TP x PP x DP layout
    that fits (tensor parallelism inside each instance, pipeline stages across them), when that beats ZeRO-3 or
    hybrid sharding; otherwise the plan as it is. Over RDMA the search is skipped: ZeRO-3 there times close enough,
    and the planner stays fast."""
    return _layout_if_faster(sizer, f, gpu, plan, link, layouts.fastest_dense_layout, 0)


def _fits(est: MemoryEstimate, f: Flavor) -> bool:
    return est.per_gpu_gib <= f.gpu_memory_gib * (1 - MIN_HEADROOM)


def _expert_layout_if_faster(sizer: Sizer, f: Flavor, gpu: GPU, plan: Sized, link: LinkEvidence) -> Sized:
    """The plan in the fastest expert-parallel layout of its GPUs that fits, when that beats its ZeRO-3 layout (a
    mixture of experts trained in full); otherwise the plan as it is."""
    moe = sizer.model.moe if sizer.model is not None else None
    return _layout_if_faster(sizer, f, gpu, plan, link, layouts.fastest_expert_layout, moe.experts if moe else 0)


def _layout_if_faster(sizer: Sizer, f: Flavor, gpu: GPU, plan: Sized, link: LinkEvidence, search, experts: int
                      ) -> Sized:
    """The plan in the fastest layout `search` finds for its GPUs (layouts.fastest_*_layout), when that fits and
    beats the plan's own; otherwise the plan as it is."""
    if plan.hours is None or sizer.w.sharding not in ("zero3", "none") or plan.gpus_total % f.gpu_count:
        return plan
    usable = f.gpu_memory_gib * (1 - MIN_HEADROOM)
    best = search(sizer.w, sizer.model, gpu, plan.gpus_total, f.gpu_count, usable, link, sizer.layout_memo)
    if best is None or best.hours >= plan.hours:
        return plan
    sizer.searched += 1
    lay = layouts.layout_of_workload(best.w, plan.gpus_total, experts)
    return Sized(plan.instances, plan.gpus_total, best.estimate, lay, hours=best.hours, mfu=best.mfu)


def _below_floor(sizer: Sizer, first: Sized, plan: Sized) -> bool:
    """Has scaling out sunk this flavor's MFU under the floor the critic holds every training plan to (rules/
    critic.yaml `mfu-floor`, on the sizer as `mfu_floor`), and is it still falling? Then no larger count of it is a
    plan an engineer would sign, and the search stops there instead of timing ever larger clusters the critic would
    rule out (2,200 single-GPU instances over TCP at 0.2 % MFU for a 13B pre-training was the search's tail)."""
    floor = sizer.mfu_floor
    return (floor is not None and plan is not first and plan.mfu is not None and first.mfu is not None
            and plan.mfu < floor and plan.mfu <= first.mfu)


def _scaling(first: Sized, plan: Sized) -> float:
    """Scaling efficiency of `plan` against the fewest-instance plan: GPU-hours there over GPU-hours here."""
    return (first.hours * first.gpus_total) / (plan.hours * plan.gpus_total)


def _fewest(sizer: Sizer, f: Flavor, gpu: GPU, lo: int, hit: Sized, limit: float, link: LinkEvidence) -> Sized:
    """Between the last instance count that missed (lo) and the first that met the limit, the fewest that meet
    it: a doubling overshoots by up to 2x in GPUs."""
    hi = hit
    while hi.instances - lo > 1:
        mid = _timed(sizer, f, gpu, (lo + hi.instances) // 2, link)
        if mid is not None and mid.hours <= limit:
            hi = mid
        else:
            lo = (lo + hi.instances) // 2
    return hi


def _instance_counts(k0: int, gpus_per_instance: int, fine: bool = True):
    """k0, k0+1, ... up to 4, then doubling, up to MAX_SCALE_GPUS GPUs in all; over a network not documented as
    RDMA (`fine` False) doubling from k0 only: such a plan is a fallback, ranked after every plan that needs no such
    network, so it is searched coarsely (the fewest that meet the deadline are still found between the doublings)."""
    k = k0
    while k * gpus_per_instance <= MAX_SCALE_GPUS:
        yield k
        k = k + 1 if k < 4 and fine else k * 2


def _hours(sizer: Sizer, gpu: GPU, n: int, per_instance: int, link: LinkEvidence, sharding: str | None = None
           ) -> tuple[float | None, float | None]:
    w = sizer.w
    if timed_by_items(w):
        return _hours_by_items(sizer, gpu, n, per_instance), None
    if not w.tokens:
        return None, None
    layout = {"sharding": sharding} if sharding else None
    tt = perf.train_time(timed_workload(w, n, per_instance, layout), sizer.model, gpu, n, per_instance, link)
    return (tt.hours, tt.mfu) if tt else (None, None)


def _hours_by_items(sizer: Sizer, gpu: GPU, n: int, per_instance: int) -> float | None:
    """Wall clock of an image, audio or denoiser training job on n GPUs: its dataset x epochs at the kind's own
    speed (kinds.job_speed), data parallel over ceil(n / per_instance) servers."""
    w = sizer.w.model_copy(update={"gpus": n, "nodes": max(1, math.ceil(n / per_instance))})
    gpus_by_id, models = sizer.speed_ctx or ({}, [])
    speed = job_speed(w, sizer.model, gpu, gpus_by_id, models)
    return speed.hours if speed is not None and speed.hours else None


def timed_workload(w, n: int, per_instance: int, layout: dict[str, Any] | None = None):
    """The workload a training plan on n GPUs is timed with: the user's own layout at their count, else the plan's
    layout (expert parallelism, hybrid sharding, or ZeRO-3 over the n GPUs on as many nodes as instances); the
    answer's compute line uses it too, so its tokens/s are the plan's."""
    lay = layout or {}
    if n == w.gpus and not lay.get("ep") and lay.get("sharding") != "hsdp" and lay.get("tp", 1) * lay.get("pp", 1) <= 1:
        return w
    return layouts.layout_workload(w, n, per_instance, layout)


def est_workload(sizer: Sizer, n: int, k: int):
    """The workload the estimate for a replica of n GPUs on k instances assumed (candidates.estimate_on)."""
    w = sizer.w
    if n == w.gpus:
        return w
    return w.model_copy(update={"gpus": n, "tensor_parallel": n, "nodes": max(1, math.ceil(n / 8))})


def size_serving(f: Flavor, gpu: GPU, k: int, n: int, est: MemoryEstimate, sizer: Sizer, t: Targets,
                 link: LinkEvidence) -> Sized:
    """Replicas of a k-instance, n-GPU replica for the load, at the latency target. A mix of request sizes is
    sized bucket by bucket on the same replica shape and summed: one pool sized at the mean request would
    understate a long prompt's quadratic attention and the decode stalls its prefill causes (8 QPS of 30k-token
    documents alone need more GPUs than 40 QPS at their 6.5k-token mean)."""
    if not generates(sizer.model):
        return size_encoder(f, gpu, k, n, est, sizer, t)
    if t.buckets:
        return _size_buckets(f, gpu, k, n, est, sizer, t, link)
    return _size_one(f, gpu, k, n, est, sizer, t, link)


def _size_buckets(f: Flavor, gpu: GPU, k: int, n: int, est: MemoryEstimate, sizer: Sizer, t: Targets,
                  link: LinkEvidence) -> Sized:
    """Each request-size bucket on its own replicas of this shape: replicas add up, the slowest sets the speed."""
    parts = [(share, prompt, _size_one(f, gpu, k, n, est, sizer, t.for_bucket(share, prompt), link))
             for share, prompt in t.buckets]
    sized = max((p[2] for p in parts), key=lambda s: s.estimate.per_gpu_gib)
    out = Sized(k, n, sized.estimate, sized.layout, replicas=sum(p[2].replicas for p in parts),
                breaks=sorted({b for p in parts for b in p[2].breaks}),
                replica_concurrency=min((p[2].replica_concurrency for p in parts if p[2].replica_concurrency),
                                        default=None),
                tpot_ms=max((p[2].tpot_ms for p in parts if p[2].tpot_ms is not None), default=None),
                ttft_ms=max((p[2].ttft_ms for p in parts if p[2].ttft_ms is not None), default=None))
    out.layout = layout_of(sizer, n, k, out.replicas)
    out.parts = [(share, prompt, s.replicas, s.replica_concurrency, s.tpot_ms, s.ttft_ms) for share, prompt, s in parts]
    return out


def _size_one(f: Flavor, gpu: GPU, k: int, n: int, est: MemoryEstimate, sizer: Sizer, t: Targets,
              link: LinkEvidence) -> Sized:
    if not generates(sizer.model):
        return size_encoder(f, gpu, k, n, est, sizer, t, fill_instance=False)
    w = sizer.w.model_copy(update={"input_len": t.input_len, "output_len": t.output_len})
    sized = Sized(k, n, est, layout_of(sizer, n, k))
    sizer.searched += 1
    if w.kind not in ("llm", "multimodal"):
        return sized    # scenes, images and audio are not decoded token by token: their speed is kinds.job_speed's
    usable = f.gpu_memory_gib * (1 - MIN_HEADROOM)
    kv = est.breakdown.get("kv_cache", 0.0)
    # a sequence holds its tokens in flight (t.kv_tokens) when request sizes are known, else a whole window;
    # + the allocator's 7 % slack on tensors
    # the sequences and tokens each the estimate was made at (fewer than w's on a card that holds only those)
    conc, ctx = sizer.seqs.get((f.gpu_memory_gib, f.gpu_count, n), (w.concurrency, w.context))
    per_seq = kv / max(1, conc * ctx) * (t.kv_tokens or w.context) * 1.07
    fixed = est.per_gpu_gib - kv * 1.07
    max_c = max(1, min(int((usable - fixed) / per_seq) if per_seq > 0 else t.max_seqs, t.max_seqs))
    speed = perf.replica_speed(w, sizer.model, gpu, n, max_c, t.tpot_ms, link, sizer.speed_memo)
    if speed is None:
        return _sized_by_memory(sized, sizer, n, k, max_c, t)
    if speed.tpot_ms > t.tpot_ms and speed.concurrency <= 1:
        # no batch meets the time per token (a whole answer of 2,000 tokens in 3 s): the nearest plan batches at
        # 1.5x the single sequence's time, not hundreds of replicas of one sequence each; it misses, and says so
        speed = perf.replica_speed(w, sizer.model, gpu, n, max_c, speed.tpot_ms * UNREACHABLE_TPOT, link,
                                   sizer.speed_memo) or speed
    if speed.concurrency != w.concurrency:        # the memory each GPU of the replica holds at that concurrency
        sized.estimate = _replica_estimate(sizer, n, k, speed.concurrency, t)
        over = sized.estimate.per_gpu_gib - usable
        if over > 0 and speed.concurrency > 1:    # activations grow with the batch too: take off what overflows
            shrink = max(1, int(speed.concurrency * (1 - over / (sized.estimate.per_gpu_gib - fixed)) * 0.98))
            speed = perf.replica_speed(w, sizer.model, gpu, n, shrink, t.tpot_ms, link, sizer.speed_memo) or speed
            sized.estimate = _replica_estimate(sizer, n, k, speed.concurrency, t)
    sized.replica_concurrency, sized.tpot_ms, sized.ttft_ms = speed.concurrency, speed.tpot_ms, speed.ttft_ms
    sized.items_per_s = speed.requests_per_s
    u = t.utilisation          # the peak at this share of what a replica carries at the latency target
    need = [math.ceil(t.concurrency / (speed.concurrency * u) - 1e-9) if t.concurrency else 1,
            math.ceil(t.qps / (speed.requests_per_s * u) - 1e-9) if t.qps and speed.requests_per_s else 1]
    sized.replicas = max(t.min_replicas, *need)
    loaded = bool(t.concurrency or t.qps)
    if speed.tpot_ms > t.tpot_ms and (loaded or t.latency_stated):
        sized.breaks.append("latency")
    elif speed.ttft_ms > t.ttft_ms and t.latency_stated:
        sized.breaks.append("latency")
    sized.layout = layout_of(sizer, n, k, sized.replicas)
    sized.workload = _replica_workload(sizer, n, k, speed.concurrency, t)
    _at_load(sized, sizer, w, gpu, n, t, link)
    return sized


def _at_load(sized: Sized, sizer: Sizer, w, gpu: GPU, n: int, t: Targets, link: LinkEvidence) -> None:
    """The time per output token each user gets at the stated users, when a replica holds more than its share."""
    if not t.concurrency or not sized.replica_concurrency:
        return
    share = math.ceil(t.concurrency / max(1, sized.replicas))
    if share >= sized.replica_concurrency:
        return
    at = perf.replica_speed(w, sizer.model, gpu, n, share, math.inf, link, sizer.speed_memo)
    if at is not None:
        sized.load_tpot_ms, sized.load_per_replica = at.tpot_ms, at.concurrency


def size_encoder(f: Flavor, gpu: GPU, k: int, n: int, est: MemoryEstimate, sizer: Sizer, t: Targets,
                 fill_instance: bool = True) -> Sized:
    """An encoder (BERT, an embedding model) served: each GPU runs its own copy of the model (a few hundred MB:
    never split) at the largest batch whose forward pass keeps a request within the latency target and whose
    activations fit; the GPUs needed are the request rate over one GPU's rate. With `fill_instance`, an instance
    runs a copy on each of its cards the load needs (one replica is one instance); a batch job's engine
    (batch.py) is one GPU's copy, which that module multiplies itself."""
    w = sizer.w
    sized = Sized(k, n, est, layout_of(sizer, n, k))
    sizer.searched += 1
    act = est.breakdown.get("activations", 0.0) * 1.07 / max(1, w.concurrency)     # + the allocator's slack
    room = f.gpu_memory_gib * (1 - MIN_HEADROOM) - (est.per_gpu_gib - act * w.concurrency)
    cap = max(1, min(MAX_BATCH, int(room / act) if act > 0 else MAX_BATCH))
    speed = perf.encoder_replica(w, sizer.model, gpu, w.context, math.inf if t.items else t.request_ms, cap)
    if speed is None:
        if t.qps or t.concurrency:
            sized.breaks.append("untimed")     # no peak on file: it cannot be said to carry the load
        return sized
    per_gpu = speed.sequences_per_s * n
    rate = t.encoder_rate()
    # the rate at the utilisation target of what a GPU carries (headroom); a batch job's items run flat out
    gpus = max(1, math.ceil(rate / (per_gpu * (1.0 if t.items else t.utilisation)) - 1e-9)) if rate else 1
    engines = min(f.gpu_count // n, gpus) if fill_instance and k == 1 and n < f.gpu_count else 1
    sized.replicas = max(t.min_replicas if not t.items else 1, math.ceil(gpus / engines))
    sized.gpus_total = n * engines
    sized.items_per_s = per_gpu * engines
    sized.replica_concurrency = speed.batch * n * engines
    sized.request_ms, sized.encoder_batch = speed.forward_ms, speed.batch
    if speed.batch != w.concurrency:
        sized.estimate = _replica_estimate(sizer, n, k, speed.batch, t)
    if speed.forward_ms * 2 > t.request_ms and not t.items and (t.qps or t.concurrency or t.latency_stated):
        sized.breaks.append("latency")
    _query_split(sized, sizer, gpu, n, engines, t)
    sized.layout = {**layout_of(sizer, n, k, sized.replicas * engines), "engines_per_replica": engines}
    return sized


def _query_split(sized: Sized, sizer: Sizer, gpu: GPU, n: int, engines: int, t: Targets) -> None:
    """A query that brings many pairs (a reranker scoring its top 50 documents) waits for all of them: on one GPU
    that is one forward pass over the whole fan-out, not one pair's. When that misses half the latency target (a
    query may wait for the batch in flight), each query's pairs are split over enough GPUs to return in time
    (scatter-gather), and the fleet has at least those GPUs; the rate sized above still sets the fleet beyond that."""
    if not t.fanout or t.fanout <= 1 or t.items or not (t.qps or t.concurrency or t.latency_stated):
        return
    one = perf.encoder_query_ms(sizer.w, sizer.model, gpu, sizer.w.context, t.fanout)
    if one is None:
        return
    sized.query_ms = one
    split = max(1, math.ceil(one * 2 / t.request_ms - 1e-9))
    sized.query_split = split
    if split > 1:
        per_replica = max(1, n * engines)
        sized.replicas = max(sized.replicas, math.ceil(split / per_replica))
        part = perf.encoder_query_ms(sizer.w, sizer.model, gpu, sizer.w.context, math.ceil(t.fanout / split))
        if (part is None or part * 2 > t.request_ms) and "latency" not in sized.breaks:
            sized.breaks.append("latency")      # even split, a query's share misses (a batch of one already does)


def _sized_by_memory(sized: Sized, sizer: Sizer, n: int, k: int, max_c: int, t: Targets) -> Sized:
    """A card whose bandwidth or throughput is not on file has no speed: its replicas still hold the whole load,
    each as many sequences as its memory holds, so that a card without figures is never the cheap pick because it
    was sized for a handful of users (GH200 for '50 users' had been sized at 4 sequences). With a latency stated it
    cannot be said to meet it ('untimed'): a card without figures was the pick for '2,000 tokens in 3 s' because
    every timed card missed."""
    if t.latency_stated:
        sized.breaks.append("untimed")
    load = t.load_sequences()
    if not load or load <= sizer.w.concurrency:
        return sized
    per_replica = min(load, max_c)
    sized.replicas = max(t.min_replicas, math.ceil(load / (per_replica * t.utilisation) - 1e-9))
    sized.replica_concurrency = per_replica
    sized.estimate = _replica_estimate(sizer, n, k, per_replica, t)
    sized.workload = _replica_workload(sizer, n, k, per_replica, t)
    return sized


def _replica_workload(sizer: Sizer, n: int, k: int, concurrency: int, t: Targets):
    """The replica's workload at `concurrency` sequences, its KV pool sized by tokens in flight when known."""
    update: dict[str, Any] = {"concurrency": concurrency}
    ctx = t.kv_context(concurrency)
    if ctx:
        update["context"] = ctx
    return est_workload(sizer, n, k).model_copy(update=update)


def _replica_estimate(sizer: Sizer, n: int, k: int, concurrency: int, t: Targets) -> MemoryEstimate:
    """The replica's memory at `concurrency` sequences (_replica_workload)."""
    return job_memory(_replica_workload(sizer, n, k, concurrency, t), sizer.model)


def sizing_workload(w, t: Targets, concurrency: int):
    """The serving workload a replica is first sized with: `concurrency` sequences, each holding its tokens in
    flight when request sizes are known (the pool never smaller than one whole-window request)."""
    update: dict[str, Any] = {"concurrency": concurrency}
    ctx = t.kv_context(concurrency)
    if ctx:
        update.update(context=ctx, input_len=t.input_len, output_len=t.output_len)
    return w.model_copy(update=update) if update != {"concurrency": w.concurrency} else w
