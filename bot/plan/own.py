"""The user's own cards as a plan of their own (issue 16): every card they named, a layout searched over them, the
memory per card, the time from the speed model, and no rental cost.

An engineer with a fixed set of cards does not give up at the first layout that overflows: they shard over all the
cards, split the batch into micro-batches with gradient accumulation, turn on checkpointing, use a fused or 8-bit
optimizer, and offload to CPU, roughly in that order (each step costs more speed than the one before), and stop at
the first layout that fits with the planner's 5 % spare. The steps taken are part of the answer. Only when no
layout fits does the answer turn to changes of the job itself (LoRA instead of full, QLoRA), never more cards.

Serving on one's own cards is judged by the KV-cache budget the cards leave beside the weights: it fits when a
full-length sequence fits and the budget holds the stated users at the request length the speed model assumes
(Targets: 1,024 prompt + 256 output tokens); the answer states that budget in sequences and tokens.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from bot.estimate.fit import make_it_fit
from bot.estimate.kinds import job_memory, job_speed, timed_by_items
from bot.plan.capacity import Capacity, of_kind_speed
from bot.estimate.speed_encoder import MAX_BATCH, generates
from bot.estimate.vision import DECODE_IMAGES_PER_CORE, decode_cores
from bot.plan import layouts, perf
from bot.plan.candidates import MIN_HEADROOM
from bot.plan.links import LinkEvidence, pcie_gbs
from bot.plan.plans import Targets
from bot.plan.workload import tp_degrees
from bot.records.errors import InvalidRequest
from bot.records.kb import GPU, Model
from bot.records.models import MemoryEstimate, Workload

KV_SLACK = 1.07              # the allocator's slack on the KV cache (as plans.size_serving)
MICRO = "micro-batch with gradient accumulation"
# CPU offload needs host memory for what it moves there. Assumed: 1.5x the cards' memory, at least 128 GiB (Answer.AI's
# two-24 GB-card workstations had 128 GB of RAM; an 8 x 80 GB DGX A100 has 1-2 TB); the answer states what it needs.
HOST_RAM_PER_GPU_GIB = 1.5
HOST_RAM_MIN_GIB = 128.0
# The network a class of training server ships with, when the user does not name theirs (issue 31): an 8-GPU SXM
# server (HGX baseboard, DGX) carries one 400 Gb/s ConnectX-7 RDMA NIC a GPU for its compute fabric
# (nvidia-dgx-basepod-core); an Atlas 800T A2 (8 Ascend 910B over HCCS) carries 4 dual-port 200GE RoCE NICs on its
# parameter plane (daocloud-atlas800t-a2). Such servers bought for training are clustered over that fabric, so it is
# the prior, said as an assumption; plain TCP Ethernet is said beside it as the risk.
FABRIC_SOURCES = {"nvlink": "nvidia-dgx-basepod-core", "hccs": "daocloud-atlas800t-a2"}


@dataclass
class OwnPlan:
    """The user's cards, judged: the layout that fits (or the nearest), and what it took."""
    gpu: GPU | None                      # None: a card known only by its memory ("my 24GB card")
    memory_gib: float
    cards: int                           # the cards the user named
    used: int                            # the cards the plan uses (all of them unless `fewer` says why)
    fits: bool
    workload: Workload
    estimate: MemoryEstimate
    changes: list[dict[str, Any]] = field(default_factory=list)   # layout changes made to fit: {change, per_gpu_gib}
    steps: list[dict[str, Any]] = field(default_factory=list)     # no layout fits: job changes that would
    fewer: str | None = None             # why fewer cards than named: "tp_heads"
    hours: float | None = None
    mfu: float | None = None
    link: str | None = None              # the link the time assumes: nvlink or pcie
    hours_rdma: float | None = None      # across machines: the time were their network RDMA (it is timed as TCP)
    network: str | None = None           # between their machines as they said it: rdma, tcp, or None (not said)
    network_gbps: float | None = None
    replicas: int = 1
    kv_tokens: int | None = None         # serving: tokens the KV budget holds per replica
    full_sequences: int | None = None    # serving: sequences of the full context that budget holds
    request_tokens: int | None = None    # serving: tokens of the request the load is sized with
    users: int | None = None
    tpot_ms: float | None = None
    ttft_ms: float | None = None      # the first token at that load: a whole answer's budget is judged with it
    encoder: dict[str, Any] | None = None  # an encoder served: requests/s of all the cards, batch, request ms, load
    bracket: list[dict[str, Any]] = field(default_factory=list)   # a card known by its memory: each card on file
    timed: bool = False                  # the job can be timed (training with tokens, or LLM serving)
    fewer_fail: float | None = None      # a GPU named without a count: GiB per card one of them would need
    zero3_hours: float | None = None     # across machines in TP x PP: what the sharded (ZeRO-3/hybrid) layout takes
    for_deadline: str | None = None      # a GPU named without a count, sized to the time: "deadline" or "horizon"
    fewer_offload: str | None = None     # ... and what one would move to host RAM to hold it (None: one does not)
    fewer_steps: list[dict[str, Any]] = field(default_factory=list)   # ... and the job changes that fit it on one
    experts: int = 0                     # a mixture of experts run expert-parallel: its routed experts
    network_assumed: str | None = None   # not said: the RDMA fabric their server class ships with ("rdma")
    hours_tcp: float | None = None       # ... and the time were their machines joined by plain TCP Ethernet
    rate: float | None = None            # images, clips: items per second on all the cards the plan uses
    capacity: Capacity | None = None     # serving: the load asked, in its unit, against what their cards carry
    items: dict[str, Any] | None = None  # ... and the job they are timed over: unit, per epoch, epochs, items


def plan_own(w: Workload, model: Model | None, gpu: GPU | None, memory_gib: float, cards: int,
             targets: Targets, batch_fixed: bool, speed_ctx: tuple[dict, list] | None = None,
             network: tuple[str | None, float | None] = (None, None)) -> OwnPlan:
    """The user's `cards` cards of `memory_gib` each, as a plan: serving or training. `speed_ctx` (GPUs by id,
    models) times image, audio and denoiser training by their own speed models; `network` is what they said
    connects their machines (kind, Gbit/s)."""
    w = w.model_copy(update={"gpus": cards, "nodes": max(1, math.ceil(cards / 8))})
    if w.method == "inference":
        plan = _serving(w, model, memory_gib, cards, targets)
    else:
        plan = _training(w, model, memory_gib, cards, batch_fixed)
    plan.gpu = gpu
    plan.network, plan.network_gbps = network
    if (network[0] is None and gpu is not None and w.method != "inference" and plan.used > CARDS_PER_MACHINE
            and server_fabric(gpu)):
        plan.network_assumed = "rdma"
    plan.timed = bool(w.tokens) if w.method != "inference" else w.kind in ("llm", "multimodal")
    if plan.fits and gpu is not None:
        _time(plan, model, gpu, targets, speed_ctx)
    return plan


# ----- a card known only by its memory ---------------------------------------------------------------------------
def cards_of_memory(gpus: Iterable[GPU], memory_gib: float) -> list[GPU]:
    """The cards on file with this memory (as sold: a '24GB' card has 24 GiB, so within half a GiB) whose memory
    bandwidth is on file: the user's card is one of them or another card of that size."""
    return [g for g in gpus if abs(g.memory_gib - memory_gib) <= 0.5 and g.memory_bandwidth_gbs]


def bracket(plan: OwnPlan, model: Model | None, cards: list[GPU], targets: Targets) -> list[dict[str, Any]]:
    """The card is not named, so its speed is not known: the plan timed on each card on file with its memory
    (training: hours for the tokens; serving: time per output token at the users), fastest first. The answer states
    the range as what it is, rather than one figure for a card it guessed."""
    out = []
    for gpu in cards:
        trial = replace(plan, gpu=gpu, hours=None, mfu=None, tpot_ms=None, link=None)
        _time(trial, model, gpu, targets)
        if trial.hours or trial.tpot_ms:
            out.append({"gpu": gpu.id, "gpu_name": gpu.name, "hours": round(trial.hours, 1) if trial.hours else None,
                        "mfu": round(trial.mfu, 3) if trial.mfu else None,
                        "tpot_ms": round(trial.tpot_ms, 1) if trial.tpot_ms else None})
    return sorted(out, key=lambda b: (b["hours"] or b["tpot_ms"], b["gpu"]))


def card_decides(plan: OwnPlan, deadline_days: float | None) -> bool:
    """Does which card it is change the answer? Yes when the deadline is met on some of the cards of its memory and
    missed on others; a bracket that is wholly inside or outside the deadline leaves the answer the same."""
    if not deadline_days or len(plan.bracket) < 2 or not plan.bracket[0]["hours"]:
        return False
    return len({b["hours"] <= deadline_days * 24 for b in plan.bracket}) == 2


# ----- training --------------------------------------------------------------------------------------------------
def _training(w: Workload, model: Model | None, mem: float, n: int, batch_fixed: bool) -> OwnPlan:
    """Up the rungs until the job fits on every card; then drop every rung the fit no longer needs (most costly
    first) and take the largest micro-batch that still fits, so the plan changes no more than it must."""
    usable = mem * (1 - MIN_HEADROOM)
    if w.kind not in ("llm", "multimodal", "diffusion") or (w.algorithm != "sft" and w.kind == "diffusion"):
        est = job_memory(w, model)      # images, audio, scenes: as stated, no ladder
        return OwnPlan(None, mem, n, n, est.per_gpu_gib <= usable, w, est)
    if w.kind == "diffusion":
        # a denoiser's batch said is the images a step averages over: micro-batches with gradient accumulation give
        # the same step (GroupNorm, no batch statistics), as kohya's and diffusers' scripts run on 24 GB cards
        batch_fixed = False
    applied: list[tuple[str, dict[str, Any]]] = []
    cur, est = w, job_memory(w, model)
    for change, update in _rungs(w, n, batch_fixed):
        if est.per_gpu_gib <= usable:
            break
        cand = _valid(cur, update)
        e = _estimate(cand, model) if cand is not None else None
        if e is not None and host_gib(e) > host_ram_gib(mem, n):
            continue                  # more than the machine's RAM would hold: not a layout of these cards
        if e is not None and e.per_gpu_gib < est.per_gpu_gib * 0.98:
            cur, est = cand, e
            applied.append((change, update))
    fits = est.per_gpu_gib <= usable
    if fits:
        applied = _prune(w, model, usable, applied)
    plan = _replay(w, model, mem, n, applied)
    if not fits and w.algorithm == "sft":     # make_it_fit's ladder sizes supervised training (estimate_memory)
        plan.steps = [s.model_dump() for s in make_it_fit(plan.workload, model, mem, MIN_HEADROOM, max_gpus=n)
                      if s.workload.get("gpus", n) <= n]
    return plan


def _prune(w: Workload, model: Model | None, usable: float, applied: list[tuple[str, dict[str, Any]]]
           ) -> list[tuple[str, dict[str, Any]]]:
    """Without each rung in turn (the costliest first): kept only when the job no longer fits without it. The
    micro-batch comes last: the largest that fits with the rungs left."""
    keep = [a for a in applied if a[0] != MICRO]
    for rung in reversed(list(keep)):
        trial = [a for a in keep if a is not rung]
        if _fits(_build(w, trial), model, usable):
            keep = trial
    if batch := next((a for a in reversed(applied) if a[0] == MICRO), None):
        mb = w.batch_size // 2
        while mb > batch[1]["batch_size"] and not _fits(_build(w, keep + [_micro(w, mb)]), model, usable):
            mb //= 2
        if not _fits(_build(w, keep), model, usable):
            keep.append(_micro(w, max(mb, batch[1]["batch_size"])))
    return keep


def _replay(w: Workload, model: Model | None, mem: float, n: int, applied: list[tuple[str, dict[str, Any]]]
            ) -> OwnPlan:
    """The plan after the rungs kept, with the memory after each one (so every figure shown is of that layout)."""
    cur, changes = w, []
    for change, update in applied:
        cur = _valid(cur, update) or cur
        e = job_memory(cur, model)
        changes.append({"change": change, "per_gpu_gib": round(e.per_gpu_gib, 1), **_ctx(update),
                        **({"host": round(host_gib(e))} if "offload" in update else {})})
    est = job_memory(cur, model)
    return OwnPlan(None, mem, n, n, est.per_gpu_gib <= mem * (1 - MIN_HEADROOM), cur, est, changes)


def _build(w: Workload, applied: list[tuple[str, dict[str, Any]]]) -> Workload:
    cur = w
    for _change, update in applied:
        cur = _valid(cur, update) or cur
    return cur


def host_gib(est: MemoryEstimate) -> float:
    """GiB of host RAM the estimate's CPU offload needs across the job (0 without offload)."""
    return max((float(k["ctx"].get("host", 0)) for k in est.assumption_keys
                if k.get("key") in ("est.offload", "est.offload_params")), default=0.0)


def host_ram_gib(mem: float, n: int) -> float:
    return max(HOST_RAM_MIN_GIB, HOST_RAM_PER_GPU_GIB * mem * n)


def _fits(w: Workload, model: Model | None, usable: float) -> bool:
    est = _estimate(w, model)
    return est is not None and est.per_gpu_gib <= usable


def _estimate(w: Workload, model: Model | None) -> MemoryEstimate | None:
    """The estimate, or None for a combination the estimator refuses (parameter offload without sharding)."""
    try:
        return job_memory(w, model)
    except InvalidRequest:
        return None


def _micro(w: Workload, mb: int) -> tuple[str, dict[str, Any]]:
    return (MICRO, {"batch_size": mb, "grad_accumulation": w.grad_accumulation * max(1, w.batch_size // mb)})


def _rungs(w: Workload, n: int, batch_fixed: bool) -> list[tuple[str, dict[str, Any]]]:
    """Layout changes that keep the job (model, method, data, global batch), cheapest in speed first."""
    full = w.method in ("full", "freeze")
    rungs: list[tuple[str, dict[str, Any]]] = []
    if n > 1 and w.sharding not in ("zero3", "fsdp"):
        rungs.append(("shard over all cards", {"sharding": "zero3" if full else "fsdp"}))
    if full and w.optimizer == "adamw" and w.adamw_impl == "foreach":
        rungs.append(("fused AdamW", {"adamw_impl": "fused"}))
    if w.checkpointing == "none" and not w.grad_checkpointing:
        rungs.append(("gradient checkpointing", {"checkpointing": "full", "grad_checkpointing": True}))
    tp = max(1, w.tensor_parallel)
    while w.algorithm in ("ppo", "grpo") and tp * 2 <= min(8, n):
        # online RL: the colocated rollout engine's weights and KV cache split over more cards of a machine (verl's
        # rollout.tensor_model_parallel_size, OpenRLHF's --vllm_tensor_parallel_size)
        tp *= 2
        rungs.append(("rollout engine tensor parallel", {"tensor_parallel": tp}))
    if not batch_fixed:
        mb = w.batch_size // 2
        while mb >= 1:
            rungs.append(_micro(w, mb))
            mb //= 2
    rungs.append(("chunked cross-entropy loss", {"chunked_loss": True}))
    if w.optimizer == "adamw":
        rungs.append(("8-bit AdamW", {"optimizer": "adamw8bit"}))
    if full:
        rungs.append(("offload optimizer state to CPU", {"offload": "optimizer"}))
    if n > 1:
        rungs.append(("offload parameters too", {"offload": "full"}))
    return rungs


def _valid(w: Workload, update: dict[str, Any]) -> Workload | None:
    try:
        return Workload.model_validate(w.model_copy(update=update).model_dump())
    except (InvalidRequest, ValueError):
        return None


def _ctx(update: dict[str, Any]) -> dict[str, Any]:
    if "batch_size" in update:
        return {"micro": update["batch_size"], "steps": update["grad_accumulation"]}
    if "tensor_parallel" in update:
        return {"tp": update["tensor_parallel"]}
    return {}


# ----- serving ---------------------------------------------------------------------------------------------------
def _serving(w: Workload, model: Model | None, mem: float, n: int, targets: Targets) -> OwnPlan:
    """Replicas of the smallest tensor-parallel degree whose KV budget holds the users; else one replica over the
    largest degree the attention heads allow, with what would make it fit."""
    usable = mem * (1 - MIN_HEADROOM)
    users = targets.load_sequences() or w.concurrency
    request = targets.input_len + targets.output_len
    if w.kind not in ("llm", "multimodal") or not generates(model):
        # images, audio, an encoder: each card runs its own copy (nothing to split, no KV cache to hold the users)
        one = w.model_copy(update={"gpus": 1, "nodes": 1, "tensor_parallel": 1})
        est = job_memory(one, model)
        # an encoder's plan is n one-card copies (its layout says so); images and audio keep the workload asked
        return OwnPlan(None, mem, n, n, est.per_gpu_gib <= usable, w if generates(model) else one, est, replicas=n)
    degrees = sorted(t for t in tp_degrees(model, n) if t <= n)
    best: OwnPlan | None = None
    for t in degrees:
        replicas = n // t
        per_replica = max(1, math.ceil(users / replicas))
        rw = w.model_copy(update={"gpus": t, "tensor_parallel": t, "nodes": max(1, math.ceil(t / 8)),
                                  "concurrency": per_replica})
        plan = _kv_budget(rw, model, mem, usable, n, t, replicas, per_replica, request)
        plan.users = users
        if plan.fits:
            return plan
        best = plan
    assert best is not None
    if not best.steps:
        best.steps = [s.model_dump() for s in make_it_fit(best.workload, model, mem, MIN_HEADROOM, max_gpus=n)
                      if s.workload.get("gpus", best.workload.gpus) <= best.workload.gpus]
    return best


def _kv_budget(rw: Workload, model: Model | None, mem: float, usable: float, n: int, t: int, replicas: int,
               users: int, request: int) -> OwnPlan:
    """One replica of t cards: what the KV budget beside the weights holds, and whether that serves the users."""
    est = job_memory(rw, model)
    kv = est.breakdown.get("kv_cache", 0.0)
    fixed = est.per_gpu_gib - kv * KV_SLACK
    per_token = kv * KV_SLACK / max(1, rw.concurrency * rw.context)
    budget = int((usable - fixed) / per_token) if per_token > 0 else 0
    full = budget // rw.context if rw.context else 0
    fits = est.per_gpu_gib <= usable or (full >= 1 and budget >= users * min(request, rw.context))
    plan = OwnPlan(None, mem, n, t * replicas, fits, rw, est, replicas=replicas, kv_tokens=max(0, budget),
                   full_sequences=max(0, full), request_tokens=min(request, rw.context))
    if fits and est.per_gpu_gib > usable:
        # it holds the users at the assumed request length, not all of them at the full context: the estimate
        # shown is the replica at the full-length sequences its budget holds
        small = rw.model_copy(update={"concurrency": max(1, full)})
        plan.estimate = job_memory(small, model)
        plan.changes.append({"change": "kv budget", "per_gpu_gib": round(plan.estimate.per_gpu_gib, 1),
                             "tokens": budget, "sequences": full, "users": users, "request": plan.request_tokens})
    if not fits and full >= 1 and request < rw.context:
        # one window fits but not the users: what they need at the request length, as a paged KV cache holds them,
        # not a full window each (100 users of Llama-2-13b on one A100 had read 363 GiB, 132 at 1,280 tokens).
        # A window that does not fit at all keeps its own estimate: vLLM does not start, a shorter one is the fix
        held = rw.model_copy(update={"context": max(request, math.ceil(rw.context / max(1, users)))})
        est_held = job_memory(held, model)
        if est_held.per_gpu_gib > usable:
            plan.workload, plan.estimate = held, est_held
    if t * replicas < n:
        plan.fewer = "tp_heads"
    return plan


# ----- time ------------------------------------------------------------------------------------------------------
def server_fabric(gpu: GPU) -> str | None:
    """The link inside the server class the card is built into: 'nvlink' for SXM modules (HGX/DGX NVSwitch
    baseboards), 'hccs' for Ascend NPU modules (Atlas 800 servers: 8 modules over HCCS), None for a card that goes
    into any PCIe server, whose links say nothing about its server."""
    form = gpu.form_factor or ""
    if form.startswith("SXM") and gpu.nvlink_gbs:
        return "nvlink"
    if gpu.vendor == "huawei" and "NPU module" in form:
        return "hccs"
    return None


def own_link(gpu: GPU, network: str | None = None, gbps: float | None = None) -> LinkEvidence:
    """SXM modules sit on NVLink baseboards (HGX), Ascend NPU modules on HCCS (Atlas 800: its bandwidth, where the
    knowledge base has none, is timed at the PCIe rate by the speed model); any other card's link is not known and
    is timed as PCIe. Between machines, the network the user described (InfiniBand/RoCE or Ethernet, at its rate) or
    the one their server class ships with ('rdma', plan.network_assumed), else unknown (timed as TCP)."""
    inter = network or "unknown"
    inter_gbs = gbps / 8 if gbps else None
    fabric = server_fabric(gpu)
    if fabric:
        return LinkEvidence("nvlink", "derived", gpu.nvlink_gbs / 2 if gpu.nvlink_gbs else None, inter, inter_gbs)
    return LinkEvidence("unknown", "unknown", pcie_gbs(gpu.form_factor), inter, inter_gbs)


def _time(plan: OwnPlan, model: Model | None, gpu: GPU, targets: Targets,
          speed_ctx: tuple[dict, list] | None = None) -> None:
    """Training: wall clock for the tokens (or the images, clips: dataset x epochs) on every card of the layout
    found; serving: the time per output token at the users each replica serves."""
    link = own_link(gpu, plan.network or plan.network_assumed, plan.network_gbps)
    plan.link = "nvlink" if link.intra == "nvlink" else "pcie"
    w = plan.workload
    if w.method != "inference":
        if plan.network_assumed and w.tokens and not timed_by_items(w):
            plan.hours_tcp = _tcp_risk(plan, model, gpu)
        if timed_by_items(w):
            gpus_by_id, models = speed_ctx or ({}, [])
            speed = job_speed(w.model_copy(update={"gpus": plan.used}), model, gpu, gpus_by_id, models)
            plan.hours = speed.hours if speed is not None else None
            if speed is not None and speed.items:
                plan.rate = speed.rate
                plan.items = {"unit": speed.unit, "item_unit": speed.item_unit, "per_epoch": speed.items_per_epoch,
                              "epochs": speed.epochs, "items": speed.items}
        elif w.tokens:
            _train_time(plan, model, gpu, link)
        return
    if not generates(model) and w.kind in ("llm", "multimodal"):
        plan.encoder = _encoder_rate(plan, model, gpu, targets)
        if plan.encoder and plan.encoder["qps"]:
            per_card = plan.encoder["requests_per_s"] / max(1, plan.used)
            plan.capacity = Capacity("requests/s", plan.encoder["qps"], per_card, plan.used, 1)
        return
    if w.kind not in ("llm", "multimodal"):
        plan.capacity = _kind_capacity(plan, model, gpu, speed_ctx)
        _kind_batch_hours(plan, model, gpu, speed_ctx)
        return
    sw = w.model_copy(update={"input_len": targets.input_len, "output_len": targets.output_len})
    cap = max(1, (plan.kv_tokens or 0) // max(1, plan.request_tokens or 1))
    speed = perf.replica_speed(sw, model, gpu, w.gpus, min(cap, max(1, w.concurrency)), math.inf, link)
    if speed is not None:
        plan.tpot_ms, plan.ttft_ms = speed.tpot_ms, speed.ttft_ms
    load = targets.load_sequences()
    if load and plan.replicas:
        # what their replicas hold at once: the KV budget's requests each (the sequences the load means)
        plan.capacity = Capacity("sequences", load, cap, plan.replicas, max(1, plan.used // plan.replicas))


def _kind_capacity(plan: OwnPlan, model: Model | None, gpu: GPU, speed_ctx: tuple[dict, list] | None
                   ) -> Capacity | None:
    """Images, audio, video on their cards, a copy on each: what one card carries of the load asked (live
    streams, images/s) and so what all of them do (capacity.of_kind_speed)."""
    gpus_by_id, models = speed_ctx or ({}, [])
    speed = job_speed(plan.workload.model_copy(update={"gpus": 1, "nodes": 1}), model, gpu, gpus_by_id, models)
    return of_kind_speed(speed, 1, plan.used)


def _kind_batch_hours(plan: OwnPlan, model: Model | None, gpu: GPU, speed_ctx: tuple[dict, list] | None) -> None:
    """Hours of audio to transcribe on their cards ('50k hours of whisper on our 40 L4s'): the time on all of them,
    a copy on each, from the speed model that times the rented plans (it was asked for tokens instead)."""
    w = plan.workload
    if not w.dataset_items or plan.hours is not None or w.kind != "speech":
        return
    gpus_by_id, models = speed_ctx or ({}, [])
    speed = job_speed(w.model_copy(update={"gpus": plan.used, "nodes": 1}), model, gpu, gpus_by_id, models)
    if speed is not None and speed.hours:
        plan.hours, plan.rate = speed.hours, speed.rate


def _encoder_rate(plan: OwnPlan, model: Model | None, gpu: GPU, targets: Targets) -> dict[str, Any] | None:
    """An encoder on the user's cards: each card a copy at the batch the latency target allows (what its memory
    holds beside the weights), their requests/s together, and the cards the asked rate needs."""
    w = plan.workload
    per_seq = plan.estimate.breakdown.get("activations", 0.0) * 1.07 / max(1, w.concurrency)
    room = plan.memory_gib * (1 - MIN_HEADROOM) - (plan.estimate.per_gpu_gib - per_seq * w.concurrency)
    cap = max(1, min(MAX_BATCH, int(room / per_seq) if per_seq > 0 else MAX_BATCH))
    speed = perf.encoder_replica(w, model, gpu, w.context, targets.request_ms, cap)
    if speed is None:
        return None
    rate = targets.encoder_rate()      # the stated QPS, or the users' requests in flight (Little's law)
    qps = round(rate, 1) if rate else None
    return {"requests_per_s": round(speed.sequences_per_s * plan.used, 1), "batch": speed.batch,
            "request_ms": round(speed.forward_ms, 1), "qps": qps,
            "cards_for_qps": math.ceil(qps / speed.sequences_per_s) if qps else None}


def _dense_layout_if_faster(plan: OwnPlan, model: Model | None, gpu: GPU, link: LinkEvidence) -> None:
    """A dense model trained in full across the user's machines over a network without RDMA runs tensor parallelism
    inside each machine and pipeline stages across them when that fits and beats ZeRO-3 or hybrid sharding (as a
    rental plan does, plans._dense_layout_if_faster); what the sharded layout took is kept to say beside it."""
    before = plan.hours
    if _layout_if_faster(plan, model, gpu, link, layouts.fastest_dense_layout):
        plan.zero3_hours = before


def _expert_layout_if_faster(plan: OwnPlan, model: Model | None, gpu: GPU, link: LinkEvidence) -> None:
    """A mixture of experts trained in full on the user's cards runs expert x pipeline x data parallelism when that
    fits and beats the ZeRO-3 layout found (as a rental plan does, plans._expert_layout_if_faster)."""
    if _layout_if_faster(plan, model, gpu, link, layouts.fastest_expert_layout):
        plan.experts = model.moe.experts


def _layout_if_faster(plan: OwnPlan, model: Model | None, gpu: GPU, link: LinkEvidence, search) -> bool:
    """The plan in the fastest layout `search` finds on the user's cards, when that fits and beats the one found; a
    layout that needed CPU offload or 8-bit optimizer state is left as it is. Whether it changed."""
    w = plan.workload
    if w.sharding not in ("zero3", "hsdp") or w.offload != "none" or w.optimizer != "adamw":
        return False
    usable = plan.memory_gib * (1 - MIN_HEADROOM)
    best = search(w, model, gpu, plan.used, min(plan.used, 8), usable, link, {})
    if best is None or best.hours >= plan.hours:
        return False
    plan.workload, plan.estimate, plan.hours, plan.mfu = best.w, best.estimate, best.hours, best.mfu
    return True


def _train_time(plan: OwnPlan, model: Model | None, gpu: GPU, link: LinkEvidence) -> None:
    """Their cards' wall clock. Across machines the network they described, else TCP, with hybrid sharding
    (ZeRO-3 inside each 8-card machine, one gradient all-reduce a step across them) where one machine's cards hold
    the sharded job and that is faster, and the time over InfiniBand/RoCE is kept to say beside it."""
    w, n = plan.workload, plan.used
    per_node = min(n, 8)
    tt = perf.train_time(w, model, gpu, n, per_node, link)
    if tt is None:
        return
    if n > per_node and w.sharding in ("zero3", "fsdp") and w.offload != "full":
        # (parameter offload runs under ZeRO-3/FSDP only: a hybrid layout of it is refused, and crashed here)
        hybrid_w = w.model_copy(update={"sharding": "hsdp", "nodes": math.ceil(n / per_node)})
        hybrid_est = job_memory(hybrid_w, model)
        hybrid = perf.train_time(hybrid_w, model, gpu, n, per_node, link) \
            if hybrid_est.per_gpu_gib <= plan.memory_gib * (1 - MIN_HEADROOM) else None
        if hybrid is not None and hybrid.hours < tt.hours:
            plan.workload, plan.estimate, tt = hybrid_w, hybrid_est, hybrid
    plan.hours, plan.mfu = tt.hours, tt.mfu
    sharded = plan.workload
    if n > per_node and (link.inter != "rdma" or link.inter_gbs):
        # their network is TCP, or an RDMA network at the rate they gave ('200G RoCE' a machine is 25 GB/s shared by
        # 8 cards, not a cluster fabric): every layer's gathers may then cost more than TP x PP's few sends
        _dense_layout_if_faster(plan, model, gpu, link)
    _expert_layout_if_faster(plan, model, gpu, link)
    if n > per_node and link.inter != "rdma":
        # over InfiniBand/RoCE the sharded layout may be the faster one again: the better of the two is said
        fabric = LinkEvidence(link.intra, link.intra_how, link.intra_gbs, "rdma", None)
        times = [t.hours for t in (perf.train_time(w, model, gpu, n, per_node, fabric)
                                   for w in ([plan.workload] if plan.workload is sharded else
                                             [plan.workload, sharded])) if t is not None]
        if times and min(times) < plan.hours * 0.9:
            plan.hours_rdma = min(times)


def _tcp_risk(plan: OwnPlan, model: Model | None, gpu: GPU) -> float | None:
    """The time of the same job were their machines joined by plain TCP Ethernet instead of the fabric their server
    class ships with: the best layout over TCP (TP x PP where it beats sharding), said beside the assumed time."""
    trial = replace(plan, network="tcp", network_assumed=None, hours=None, mfu=None, zero3_hours=None,
                    hours_rdma=None)
    _train_time(trial, model, gpu, own_link(gpu, "tcp"))
    return trial.hours


# ----- data loading ------------------------------------------------------------------------------------------------
CARDS_PER_MACHINE = 8            # as the plan's machine count (own_row 'instances') takes it


def own_feed(plan: OwnPlan) -> dict[str, Any] | None:
    """An image-training job on their cards: the images per second each of their machines must decode and augment to
    keep its cards busy (the cards' rate over their machines), and the CPU cores a CPU DataLoader needs for that at
    the best per-core rate measured (vision.DECODE_IMAGES_PER_CORE). Their CPU is not known, so this is what it must
    have, not a verdict on it. None for any other job, or one not timed."""
    w = plan.workload
    if w.kind != "vision" or w.task == "inference" or not plan.rate:
        return None
    machines = max(1, math.ceil(plan.used / CARDS_PER_MACHINE))
    need = plan.rate / machines
    return {"images_per_s": round(need, 1), "cores": decode_cores(need), "per_core": DECODE_IMAGES_PER_CORE,
            "machines": machines}


# ----- the public row ----------------------------------------------------------------------------------------------
def own_layout(plan: OwnPlan) -> dict[str, Any]:
    """The layout the user's cards run, in the shape of a rental plan's layout (plans.layout_of) plus what the
    search changed: offload and optimizer."""
    w = plan.workload
    if w.method == "inference":
        tp = w.tensor_parallel if w.kind in ("llm", "multimodal") else 1     # images, audio: a copy per card
        return {"dp": plan.replicas, "tp": tp, "pp": 1, "sharding": "none", "micro_batch": None,
                "checkpointing": "none", "precision": w.precision, "kv_dtype": w.kv_dtype or w.precision,
                "concurrency": w.concurrency, "context": w.context}
    if w.algorithm in ("ppo", "grpo"):
        # online RL: the workload's tensor_parallel is the colocated rollout engine's, not the trained model's
        return {"dp": plan.used, "tp": 1, "pp": 1, "sharding": w.sharding, "micro_batch": w.batch_size,
                "grad_accumulation": w.grad_accumulation,
                "checkpointing": "full" if w.grad_checkpointing else w.checkpointing, "precision": w.precision,
                "kv_dtype": None, "offload": w.offload, "optimizer": w.optimizer, "chunked_loss": w.chunked_loss,
                "rollout_tp": max(1, w.tensor_parallel)}
    lay = {"dp": plan.used // (w.pipeline_parallel * w.tensor_parallel), "tp": w.tensor_parallel,
           "pp": w.pipeline_parallel, "sharding": w.sharding,
           "micro_batch": w.batch_size, "grad_accumulation": w.grad_accumulation,
           "checkpointing": "full" if w.grad_checkpointing else w.checkpointing,     # as a rental plan's layout says
           "precision": w.precision, "kv_dtype": None, "offload": w.offload, "optimizer": w.optimizer,
           "chunked_loss": w.chunked_loss}
    if w.expert_parallel > 1:
        lay.update(ep=w.expert_parallel, experts=plan.experts)
    return lay


def fabric_sources(plan: OwnPlan) -> list[str]:
    """The source of the server class's fabric where the plan assumes it (none otherwise)."""
    if plan.network_assumed and plan.gpu is not None:
        return [FABRIC_SOURCES[server_fabric(plan.gpu)]]
    return []


def _row_sources(plan: OwnPlan) -> list[str]:
    """The card's sources, and the server class's where its fabric is assumed."""
    return (list(plan.gpu.sources) if plan.gpu else []) + fabric_sources(plan)


def own_row(plan: OwnPlan, gpu_name: str) -> dict[str, Any]:
    """The `yours` recommendation (ask --json): the fields of a rental row, with no price, instance or provider
    (provider and flavor read "own"), plus the changes that made it fit and, when nothing did, the steps that would."""
    est = plan.estimate
    mem = plan.memory_gib
    return {
        "id": "own", "provider": "own", "flavor": "own", "gpu": plan.gpu.id if plan.gpu else None,
        "gpu_name": gpu_name, "gpu_count": plan.cards, "gpu_memory_gib": mem,
        "interconnect": plan.link, "interconnect_detail": None, "rdma": None, "network": None,
        "instances": max(1, math.ceil(plan.used / 8)), "gpus_total": plan.used, "cards": plan.cards,
        "price_per_hour": None, "spot_price_per_hour": None, "currency": None, "price_kind": "own",
        "price_date": None, "price_basis": None, "fits": plan.fits,
        "headroom_pct": round(100 * (1 - est.per_gpu_gib / mem), 1), "per_gpu_gib": round(est.per_gpu_gib, 2),
        "need_gpus": None, "blocked_by": None, "evidence": None, "region": None, "job_cost": None,
        "job_hours": (round(plan.hours, 1) if plan.hours >= 1 else round(plan.hours, 3)) if plan.hours else None, "ruled_out": None if plan.fits else "no_fit",
        "over_budget": False, "sources": _row_sources(plan), "note": None,
        "label": "yours", "layout": own_layout(plan), "replicas": plan.replicas, "costs": [], "breaks": [], "why": [],
        "hourly_total": None, "monthly_cost": None, "interconnect_evidence": None, "intra_link": plan.link,
        "inter_link": (plan.network or plan.network_assumed or "tcp") if plan.used > 8 else None,
        "network_gbps": plan.network_gbps, "network_said": plan.network is not None,
        # not said: the fabric their server class ships with, and the time over plain TCP beside it
        "network_assumed": plan.network_assumed,
        "job_hours_tcp": round(plan.hours_tcp, 1) if plan.hours_tcp else None, "mfu": round(plan.mfu, 3) if plan.mfu else None,
        "job_hours_rdma": round(plan.hours_rdma, 1) if plan.hours_rdma else None,
        "replica_concurrency": plan.workload.concurrency if plan.workload.method == "inference" else None,
        "tpot_ms": round(plan.tpot_ms, 1) if plan.tpot_ms else None, "ttft_ms": round(plan.ttft_ms) if plan.ttft_ms else None, "encoder": plan.encoder,
        "changes": list(plan.changes), "fit_steps": list(plan.steps), "fewer_cards": plan.fewer,
        "kv_tokens": plan.kv_tokens, "full_sequences": plan.full_sequences, "request_tokens": plan.request_tokens,
        "users": plan.users, "user_currency": None, "price_per_hour_user": None, "user_rate_date": None,
        # a card known by its memory: its plan timed on each card on file of that memory (fastest first), and
        # whether the job could be timed at all (training with tokens, or serving)
        "bracket": list(plan.bracket), "timed": plan.timed,
        # a GPU named without a count, held by several of them: what one card would need (it does not hold it)
        "one_card_gib": round(plan.fewer_fail, 1) if plan.fewer_fail else None,
        "one_card_offload": plan.fewer_offload, "one_card_steps": list(plan.fewer_steps),
        "zero3_hours": round(plan.zero3_hours, 1) if plan.zero3_hours else None, "for_deadline": plan.for_deadline,
        # images, clips: the rate on all their cards and the dataset x epochs it is timed over; for images, what
        # their machines' CPUs must decode to feed the cards
        "items_per_s": round(plan.rate, 1) if plan.rate else None, "items": dict(plan.items) if plan.items else None,
        "feed": own_feed(plan),
        "capacity": plan.capacity.record() if plan.capacity is not None else None,
    }
