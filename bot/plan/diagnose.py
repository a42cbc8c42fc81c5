"""'We get 300 tok/s on vLLM with an 8B on an A10G, is that normal?', '为什么 4 张 4090 训练 MFU 只有 15%', 'our MFU
dropped from 45% to 20% going from 1 to 4 nodes over 100GbE': a number the user MEASURED, set against the advisor's own
estimate of what that hardware should do for that job (bot/estimate serving_speed / training_speed), with a verdict
(normal / low / high) and the figures behind the likely causes. Pure arithmetic over the estimators; the conversation
layer reads the numbers from the text and the renderer words the result (bot/render/templates/diagnose.yaml).
"""
from __future__ import annotations

from typing import Any

from bot.estimate.speed import training_speed
from bot.estimate.speed_hw import COLLECTIVE_EFFICIENCY, RDMA_GBS
from bot.estimate.speed_serve import serving_speed
from bot.knowledge.loader import KnowledgeBase
from bot.plan.workload import build_workload
from bot.records.models import Link

# a measured figure within this share of the estimate is what the hardware does (the estimators' spread on the
# published rows is about +-30 %, knowledge/estimate_spread.yaml); below it, something is costing throughput
NORMAL_LOW = 0.7
NORMAL_HIGH = 1.5
DEFAULT_SERVE_GPU = "a100-80gb"
DEFAULT_TRAIN_GPU = "h100-sxm"
DEFAULT_PARAMS_B = 7.0
DEFAULT_LLM = 8.0
GPUS_A_NODE = 8
# vLLM's default --max-num-seqs: a server's full batch, however much more its KV cache would hold
ENGINE_MAX_SEQS = 256
# a drop to more nodes down to this share of the estimate's own drop is what the network explains
SCALING_EXPLAINED = 0.6


def _verdict(ratio: float) -> str:
    return "low" if ratio < NORMAL_LOW else ("high" if ratio > NORMAL_HIGH else "normal")


def _job(kb: KnowledgeBase, slots: dict[str, Any], default_params: float) -> tuple[str | None, float, bool]:
    """The model named (or a size said), else an assumed size: (model id, params_b, assumed?)."""
    mid = slots.get("model") if slots.get("model") in kb.models else None
    params = slots.get("params_b") or (kb.models[mid].params_b if mid else None)
    return mid, float(params or default_params), not params


def _gpu(kb: KnowledgeBase, slots: dict[str, Any], default: str) -> tuple[str, bool]:
    """The card named (a family named bare, 'H100', 'A100': its largest SXM module, as the planner reads it), else
    the default, said as assumed."""
    from bot.knowledge.loader import GPU_FAMILIES
    g = slots.get("gpu_model")
    if g in kb.gpus:
        return g, False
    ids = [x for x in GPU_FAMILIES.get(g or "", []) if x in kb.gpus]
    if ids:
        cards = [kb.gpus[x] for x in ids]
        sxm = [c for c in cards if (c.form_factor or "").startswith("SXM")]
        return max(sxm or cards, key=lambda c: c.memory_gib).id, False
    return default, True


def _scaling_verdict(measured_ratio: float, estimated_ratio: float) -> str:
    """The MFU kept going to more nodes, measured against the estimate's for that network: within reach of it, the
    network explains the drop ('expected'); far below it, something else costs too ('low')."""
    return "expected" if measured_ratio >= estimated_ratio * SCALING_EXPLAINED else "low"


def _serving_job(kb: KnowledgeBase, slots: dict[str, Any]) -> tuple:
    """The serving workload a measured number is judged against: the model and card said (or the defaults, marked
    assumed), tensor-parallel over the cards said, on one node."""
    mid, params, p_assumed = _job(kb, slots, DEFAULT_LLM)
    gid, g_assumed = _gpu(kb, slots, DEFAULT_SERVE_GPU)
    gpu = kb.gpus[gid]
    job = {k: v for k, v in slots.items() if k in ("model", "params_b", "precision", "input_len", "output_len",
                                                   "request_tokens", "kv_dtype")}
    job.update(params_b=params, gpu_model=gid)
    w, model, _ = build_workload(kb, "inference", job, {})
    n = int(slots.get("gpus") or 1)
    w = w.model_copy(update={"gpus": n, "tensor_parallel": n, "nodes": 1})
    return mid, params, p_assumed, gid, g_assumed, gpu, w, model, n


def serving_check(kb: KnowledgeBase, slots: dict[str, Any], measured_tps: float) -> dict[str, Any]:
    """A measured output rate (tokens/s) against the replica's modelled rate on that card: at the concurrency said,
    else the range from one request to the most the KV cache holds, and the concurrency that would give it."""
    mid, params, p_assumed, gid, g_assumed, gpu, w, model, n = _serving_job(kb, slots)
    one = serving_speed(w.model_copy(update={"concurrency": 1}), model, gpu)
    full_c = max(min(one.max_concurrency, ENGINE_MAX_SEQS), 1)
    full = serving_speed(w.model_copy(update={"concurrency": full_c}), model, gpu)
    said = slots.get("concurrency")
    at = serving_speed(w.model_copy(update={"concurrency": int(said)}), model, gpu) if said else None
    expected = at.output_tokens_per_s if at else full.output_tokens_per_s
    ratio = measured_tps / expected if expected else 0.0
    # the concurrency whose modelled rate is closest to what was measured (what the number says about the load)
    implied = None
    if not said and one.output_tokens_per_s < measured_tps <= full.output_tokens_per_s:
        lo, hi = 1, full_c
        while lo < hi:
            mid_c = (lo + hi) // 2
            if serving_speed(w.model_copy(update={"concurrency": mid_c}), model, gpu).output_tokens_per_s \
                    < measured_tps:
                lo = mid_c + 1
            else:
                hi = mid_c
        implied = lo
    if said:
        verdict = _verdict(ratio)
    elif measured_tps < one.output_tokens_per_s * NORMAL_LOW:
        verdict = "low"             # below what even one request at a time gets
    elif ratio > NORMAL_HIGH:
        verdict = "high"
    else:
        verdict = "normal" if ratio >= NORMAL_LOW else "load"     # normal for a light load, low for a full one
    return {"kind": "serving", "measured": measured_tps, "expected": expected, "ratio": ratio, "verdict": verdict,
            "model": mid, "params_b": params, "params_assumed": p_assumed, "gpu": gid, "gpu_assumed": g_assumed,
            "gpus": n, "one_tps": one.output_tokens_per_s, "one_tpot_ms": one.tpot_ms,
            "full_tps": full.output_tokens_per_s, "max_concurrency": full_c,
            "concurrency": int(said) if said else None, "implied_concurrency": implied,
            "input_len": w.input_len or one.input_len, "output_len": w.output_len or one.output_len,
            "bandwidth_gbs": gpu.memory_bandwidth_gbs if hasattr(gpu, "memory_bandwidth_gbs") else None}


def latency_check(kb: KnowledgeBase, slots: dict[str, Any], ttft_ms: float | None, tpot_ms: float | None
                  ) -> dict[str, Any]:
    """A measured time to first token or time per output token against the replica's modelled one on that card:
    with one request in flight (the fastest it gets) and at a full batch (the slowest a busy server gets, queueing
    aside)."""
    mid, params, p_assumed, gid, g_assumed, gpu, w, model, n = _serving_job(kb, slots)
    one = serving_speed(w.model_copy(update={"concurrency": int(slots.get("concurrency") or 1)}), model, gpu)
    full_c = max(min(one.max_concurrency, ENGINE_MAX_SEQS), 1)
    full = serving_speed(w.model_copy(update={"concurrency": full_c}), model, gpu)
    what = "ttft" if ttft_ms else "tpot"
    measured = float(ttft_ms or tpot_ms or 0.0)
    fast, slow = (one.ttft_ms, full.ttft_ms) if what == "ttft" else (one.tpot_ms, full.tpot_ms)
    if measured <= fast / NORMAL_LOW:
        verdict = "normal"
    elif measured <= max(slow, fast) * 1.3:
        verdict = "busy"           # what a loaded server gives: more requests in flight, each slower
    else:
        verdict = "slow"
    return {"kind": "latency", "what": what, "measured": measured, "expected": fast, "full": slow,
            "ratio": fast / measured if measured else 0.0, "verdict": verdict, "model": mid, "params_b": params,
            "params_assumed": p_assumed, "gpu": gid, "gpu_assumed": g_assumed, "gpus": n,
            "concurrency": one.concurrency, "max_concurrency": full_c, "input_len": one.input_len,
            "output_len": one.output_len}


def _training_job(kb: KnowledgeBase, slots: dict[str, Any], gid: str, gpus: int, nodes: int, params: float,
                  mid: str | None):
    job = {k: v for k, v in slots.items() if k in ("model", "method", "precision", "seq_len", "batch_size",
                                                   "sharding")}
    job.update(params_b=params, gpu_model=gid, gpus=gpus, nodes=nodes)
    if mid:
        job["model"] = mid
    intent = "finetune" if slots.get("method") in ("lora", "qlora", "freeze") else "train"
    w, model, _ = build_workload(kb, intent, job, {"method": slots.get("method") or "full"})
    return w, model


def training_check(kb: KnowledgeBase, slots: dict[str, Any], measured_mfu: float | None,
                   measured_tps: float | None = None, per_gpu: bool = False) -> dict[str, Any]:
    """A measured MFU (or training tokens/s, in all or a GPU) against the modelled MFU of that job on that many of
    those cards (one node, their own link)."""
    mid, params, p_assumed = _job(kb, slots, DEFAULT_PARAMS_B)
    gid, g_assumed = _gpu(kb, slots, DEFAULT_TRAIN_GPU)
    gpus = int(slots.get("gpus") or 1)
    nodes = int(slots.get("nodes") or 1)
    w, model = _training_job(kb, slots, gid, gpus, nodes, params, mid)
    gpu = kb.gpus[gid]
    sp = training_speed(w, model, gpu)
    terms = {t.name: t.value for t in sp.terms}
    comm = terms.get("exposed data-parallel communication per step", 0.0)
    ddp = training_speed(w.model_copy(update={"sharding": "ddp", "offload": "none"}), model, gpu) if gpus > 1 \
        else None
    tps_gpu = None
    if measured_mfu is None:
        # tokens/s measured: the MFU they are, at the estimate's FLOPs a token on this card's peak
        tps_gpu = (measured_tps or 0.0) / (1 if per_gpu else gpus)
        measured_mfu = tps_gpu / sp.tokens_per_s_per_gpu * sp.mfu if sp.tokens_per_s_per_gpu else 0.0
    ratio = measured_mfu / sp.mfu if sp.mfu else 0.0
    return {"kind": "training", "measured": measured_mfu, "measured_tps_gpu": tps_gpu,
            "expected_tps_gpu": sp.tokens_per_s_per_gpu, "expected": sp.mfu, "ratio": ratio,
            "verdict": _verdict(ratio), "model": mid, "params_b": params, "params_assumed": p_assumed, "gpu": gid,
            "gpu_assumed": g_assumed, "gpus": gpus, "sharding": w.sharding, "batch_size": w.batch_size,
            "seq_len": w.seq_len, "grad_accumulation": w.grad_accumulation, "step_s": sp.step_s,
            "comm_s": comm, "comm_share": comm / sp.step_s if sp.step_s else 0.0,
            "nvlink": bool(gpu.nvlink_gbs), "ddp_mfu": ddp.mfu if ddp else None}


def scaling_check(kb: KnowledgeBase, slots: dict[str, Any], mfu_before: float | None, mfu_after: float,
                  nodes: int, net_gbits: float | None, rdma: bool) -> dict[str, Any]:
    """MFU that fell when the job went from one node to `nodes` over a network of `net_gbits` per node: the
    gradient all-reduce each step moves over that network, its time against the step's compute, the MFU the
    estimator gives for it, and the same job with each fix (RDMA, HSDP, 4x gradient accumulation, ZeRO-3)."""
    mid, params, p_assumed = _job(kb, slots, DEFAULT_PARAMS_B)
    gid, g_assumed = _gpu(kb, slots, DEFAULT_TRAIN_GPU)
    per_node = int(slots.get("gpus") or 0) // max(nodes, 1) if (slots.get("gpus") or 0) >= nodes * 2 else GPUS_A_NODE
    gpus = per_node * nodes
    gbits = net_gbits or 100.0
    net = Link(inter="rdma" if rdma else "tcp", inter_gbs=gbits / 8)
    w, model = _training_job(kb, {**slots, "sharding": slots.get("sharding") or "ddp"}, gid, gpus, nodes, params, mid)
    gpu = kb.gpus[gid]
    one_w = w.model_copy(update={"gpus": per_node, "nodes": 1})

    def mfu(work, link=None) -> tuple[float, dict[str, float]]:
        sp = training_speed(work, model, gpu, link)
        return sp.mfu, {**{t.name: t.value for t in sp.terms}, "step": sp.step_s}

    one, one_terms = mfu(one_w)
    now, terms = mfu(w, net)
    grad_gb = params * 2          # bf16 gradients, GB
    ring = 2 * (nodes - 1) / nodes * grad_gb
    wire = gbits / 8 * COLLECTIVE_EFFICIENCY
    allreduce_s = ring / wire
    compute_s = terms.get("one micro-batch", 0.0) * w.grad_accumulation
    fixes = {
        "rdma": mfu(w, Link(inter="rdma", inter_gbs=RDMA_GBS))[0],
        "hsdp": mfu(w.model_copy(update={"sharding": "hsdp"}), net)[0],
        "accumulation": mfu(w.model_copy(update={"grad_accumulation": w.grad_accumulation * 4}), net)[0],
        "zero3": mfu(w.model_copy(update={"sharding": "zero3"}), net)[0],
    }
    implied_share = 1 - mfu_after / mfu_before if mfu_before else None
    return {"kind": "scaling", "measured": mfu_after, "before": mfu_before, "nodes": nodes, "gbits": gbits,
            "rdma": rdma, "model": mid, "params_b": params, "params_assumed": p_assumed, "gpu": gid,
            "gpu_assumed": g_assumed, "per_node": per_node, "gpus": gpus, "sharding": w.sharding,
            "grad_gb": grad_gb, "ring_gb": ring, "wire_gbs": wire, "allreduce_s": allreduce_s,
            "compute_s": compute_s, "exposed_s": terms.get("exposed data-parallel communication per step", 0.0),
            "step_s": terms["step"], "one_step_s": one_terms["step"], "one_mfu": one, "expected": now,
            "implied_share": implied_share, "fixes": fixes, "rdma_gbits": RDMA_GBS * 8,
            "verdict": _scaling_verdict(mfu_after / (mfu_before or one), now / one if one else 1.0),
            "grad_accumulation": w.grad_accumulation}
