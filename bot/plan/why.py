"""'Why not just 4 x 4090?', 'why does it OOM?', 'can a 910B serve Qwen2.5-72B?': questions about the job just planned
(or named) that want THIS job's numbers, not a primer. Each returns data the renderer words (bot/render/why.py):

- why_not: the plan the answer gave against the cards the user names, each side's time and cost for the job, and
  what decides it (memory per card on the cards asked, no NVLink/P2P so gradients all-reduce over PCIe, GeForce
  licensing in a datacenter, price);
- why_oom: the job's memory a card on the cards in question (the plan's, or the user's), term by term (weights,
  gradients, optimizer state, activations, KV cache, overhead), and the changes that bring it under the card, each
  with its own figure;
- can_run: yes or no for a card named with a job, the fewest of its cards that hold it, and the serving stack it
  runs on (vLLM-Ascend or MindIE for an Ascend card, vLLM / SGLang / TensorRT-LLM for an NVIDIA one).
Pure arithmetic over the advisor's own estimates; nothing here reads text or templates.
"""
from __future__ import annotations

from typing import Any

from bot.plan.billing import HOURS_MONTH
from bot.plan.candidates import MIN_HEADROOM
from bot.plan.verdicts import COST_TIE
from bot.records.errors import AdvisorError

TERMS = ("weights", "gradients", "optimizer", "activations", "kv_cache", "overhead")
NO_NVLINK_SOURCES = ["gpu-tweaktown-ada-no-nvlink"]
LICENSE_SOURCES = ["gpu-nvidia-geforce-license"]
# the serving stacks a vendor's cards run LLMs on (said with a 'can X serve Y?' answer), and where that is on file
STACKS = {"huawei": {"en": "vLLM-Ascend or MindIE", "zh": "vLLM-Ascend 或 MindIE",
                     "sources": ["vllm-ascend-supported-models", "vllm-ascend-faq"]},
          "nvidia": {"en": "vLLM, SGLang or TensorRT-LLM", "zh": "vLLM、SGLang 或 TensorRT-LLM", "sources": []}}

# model families whose speed on file is an engine with CUDA-only kernels (faster-whisper runs on CTranslate2: CUDA and
# CPU backends, no Ascend one; AMD only by a source build since 2026)
CUDA_ONLY_FAMILIES = ("Whisper",)


def _pick(advice) -> dict[str, Any] | None:
    recs = advice.recommendations or []
    return next((r for r in recs if r.get("label") != "yours"), None) or (recs[0] if recs else None)


def _side_of_pick(kb, pick: dict[str, Any], ccy: str | None) -> dict[str, Any]:
    conv = (lambda v: v) if not ccy or ccy == pick.get("currency") else (
        lambda v: kb.convert(v, pick["currency"], ccy))
    return {"gpu": pick["gpu"], "gpu_name": pick.get("gpu_name") or pick["gpu"], "flavor": pick.get("flavor"),
            "provider": pick.get("provider"), "gpus": (pick.get("gpus_total") or 1) * max(1, pick.get("replicas") or 1),
            "need_gib": pick.get("per_gpu_gib"), "memory_gib": pick.get("gpu_memory_gib"),
            "hours": pick.get("job_hours"),
            "job_cost": round(conv(pick["job_cost"]), 2) if pick.get("job_cost") is not None else None,
            "monthly": round(conv(pick["monthly_cost"]), 2) if pick.get("monthly_cost") is not None else None,
            "currency": ccy}


def _plan_precision(pick: dict[str, Any], slots: dict[str, Any]) -> str | None:
    """The weights' precision the plan chose by itself (FP8, INT8, INT4), None when 16-bit or said by the user."""
    p = ((pick or {}).get("layout") or {}).get("precision")
    return p if p in ("fp8", "int8", "int4") and not slots.get("precision") else None


def _estimate_on(advisor, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str, gpus: int):
    job = advisor._job(intent, {k: v for k, v in slots.items() if k not in ("gpus", "nodes", "gpu_model")},
                       assumed, lang)
    return job.sizer.est(gpus)


def why_not(advisor, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str, gpu_model: str,
            count: int | None) -> dict[str, Any] | None:
    """The plan the job was answered with against `count` x `gpu_model` (the fewest that hold it when no count is
    said): which does the job, in what time, for what, and why."""
    kb = advisor.kb
    plain = {k: v for k, v in slots.items() if k not in ("gpus", "nodes", "gpu_model", "gpu_models", "gpu_excluded",
                                                         "gpu_allowed")}
    try:
        advice = advisor.advise(intent, plain, assumed, lang)
    except AdvisorError:
        return None
    pick = _pick(advice)
    if pick is None:
        return None
    # 'why not just 1 GPU?': no card named is the plan's own card, on the count asked
    ids = [g for g in advisor._gpu_ids(gpu_model) if g in kb.gpus] if gpu_model else [pick["gpu"]]
    if not ids:
        return None
    ccy = pick.get("currency")
    base = _side_of_pick(kb, pick, ccy)
    base["precision"] = _plan_precision(pick, slots)
    if pick["gpu"] in ids:
        # the plan is on that card already: 'why not just one H100?' sets a count against it, else nothing to say
        if not count or count == base["gpus"]:
            return None
        gpu = kb.gpus[pick["gpu"]]
    else:
        gpu = advisor._family_default(ids)
    serving = intent == "inference"
    quant = base["precision"]
    if quant and not (quant == "fp8" and not gpu.fp8_tflops):
        # the plan serves quantized weights (FP8 on the cards that compute in it): the other cards are judged on the
        # same weights, or the comparison would set a bf16 model against an FP8 one
        plain = {**plain, "precision": quant, **({"kv_dtype": "fp8"} if quant == "fp8" else {})}
    try:
        if count:
            job = advisor._job(intent, {**plain, "gpus": count, "gpu_model": gpu.id}, assumed, lang)
            plan = advisor._fewest_that_hold(job, gpu, gpu.memory_gib)
            fewest = advisor._fewest_cards(intent, plain, assumed, lang, gpu) if not plan.fits else None
        else:
            fewest, plan = advisor._fewest_cards(intent, plain, assumed, lang, gpu), None
    except AdvisorError:
        return None
    if plan is not None:
        n, fits, need, hours = count, bool(plan.fits), plan.estimate.per_gpu_gib, plan.hours if plan.fits else None
        offload = plan.workload.offload if plan.fits else None
    else:
        n = fewest["cards"] or count or 1
        fits, need, hours = bool(fewest["cards"]), fewest["need_gib"], fewest.get("hours")
        offload = None
    alt: dict[str, Any] = {"precision": plain.get("precision"), "gpu": gpu.id, "gpu_name": gpu.name, "gpus": n, "need_gib": round(need, 1),
                           "memory_gib": gpu.memory_gib, "usable_gib": round(gpu.memory_gib * (1 - MIN_HEADROOM), 1),
                           "fits": fits, "hours": round(hours, 2) if hours else None, "offload": offload,
                           "fewest": (fewest or {}).get("cards"), "job_cost": None, "monthly": None,
                           "nvlink": bool(gpu.nvlink_gbs), "consumer": "consumer" in gpu.positioning,
                           "bandwidth": gpu.memory_bandwidth_gbs, "tflops": gpu.bf16_tflops or gpu.fp16_tflops}
    price = advisor._card_price(gpu.id, {"cards": n}) if fits else None
    if price and ccy:
        hourly = kb.convert(price["hourly"], price["currency"], ccy)
        alt.update(hourly=round(hourly, 2), monthly=round(hourly * HOURS_MONTH, 2), price_flavor=price["flavor"],
                   price_provider=price["provider"], price_sources=price["sources"],
                   price_provider_name=kb.providers[price["provider"]].display_name(lang)
                   if price["provider"] in kb.providers else price["provider"])
        if hours:
            alt["job_cost"] = round(hourly * hours, 2)
    reasons: list[dict[str, Any]] = []
    if not fits:
        reasons.append({"kind": "memory"})
    elif offload and offload != "none":
        reasons.append({"kind": "offload", "offload": offload})
    if n > 1 and not alt["nvlink"] and gpu.nvlink_capable is False and not serving:
        # no NVLink (and, on GeForce Ada, no P2P): every step's gradients are all-reduced over PCIe
        reasons.append({"kind": "pcie", "sources": NO_NVLINK_SOURCES if alt["consumer"] else []})
    if alt["consumer"]:
        reasons.append({"kind": "licensing", "sources": LICENSE_SOURCES})
    key = "job_cost" if base.get("job_cost") is not None and alt.get("job_cost") is not None else \
        "monthly" if base.get("monthly") is not None and alt.get("monthly") is not None else None
    if not fits:
        winner = "pick"
    elif key is None:
        winner = "unpriced"
    else:
        gap = 1 - min(base[key], alt[key]) / max(base[key], alt[key]) if max(base[key], alt[key]) else 0.0
        winner = "tie" if gap <= COST_TIE else "pick" if base[key] < alt[key] else "alt"
        alt["cost_pct"] = round(100 * gap)
    if fits and hours and base.get("hours"):
        alt["pick_speed_x"] = round(hours / base["hours"], 2)       # > 1: the plan finishes sooner
    return {"kind": "why_not", "pick": base, "alt": alt, "winner": winner, "cost_key": key, "reasons": reasons,
            "serving": serving, "currency": ccy}


def why_oom(advisor, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str,
            gpu_model: str | None = None, count: int | None = None) -> dict[str, Any] | None:
    """The job's memory a card, term by term, on the cards in question (the ones named, else the plan's), whether it
    fits them, and the changes that bring it under (more cards sharding the states, LoRA/QLoRA, 4-bit weights),
    each with its figure on those cards."""
    kb = advisor.kb
    plain = {k: v for k, v in slots.items() if k not in ("gpus", "nodes", "gpu_model", "gpu_models")}
    try:
        advice = advisor.advise(intent, plain, assumed, lang)
    except AdvisorError:
        return None
    pick = _pick(advice)
    ids = [g for g in advisor._gpu_ids(gpu_model) if g in kb.gpus] if gpu_model else []
    if ids:
        gpu = advisor._family_default(ids)
        n, mem, name, where = count or 1, gpu.memory_gib, gpu.name, "named"
    elif pick is not None:
        n, mem, name, where = pick.get("gpus_total") or 1, pick.get("gpu_memory_gib"), pick.get("gpu_name"), "plan"
    else:
        return None
    layout = (pick or {}).get("layout") or {}
    if where == "plan" and layout.get("precision") == "fp8" and not plain.get("precision"):
        # the plan serves FP8 weights and KV cache (the advisor's quantized pick): its memory is that plan's
        plain = {**plain, "precision": "fp8", "kv_dtype": layout.get("kv_dtype") or "fp8"}
    if where == "plan" and pick is not None and pick.get("per_gpu_gib") and advice.memory and \
            abs(advice.memory.per_gpu_gib - pick["per_gpu_gib"]) < 0.05:
        est = advice.memory               # the plan's own estimate, term by term, as the answer before gave it
    else:
        try:
            est = _estimate_on(advisor, intent, plain, assumed, lang, n)
        except AdvisorError:
            return None
    est_total = pick["per_gpu_gib"] if where == "plan" and pick is not None and pick.get("per_gpu_gib") else \
        est.per_gpu_gib
    usable = mem * (1 - MIN_HEADROOM) if mem else None
    breakdown = {k: round(v, 1) for k, v in est.breakdown.items() if k in TERMS}
    out: dict[str, Any] = {"kind": "why_oom", "where": where, "gpu_name": name, "gpus": n, "memory_gib": mem,
                           "usable_gib": round(usable, 1) if usable else None, "need_gib": round(est_total, 1),
                           "breakdown": breakdown, "fits": bool(usable and est_total <= usable),
                           "biggest": max(breakdown, key=breakdown.get) if breakdown else None,
                           "method": slots.get("method"), "serving": intent == "inference", "fixes": []}
    if where == "plan" and n > 1:
        try:
            out["one_card_gib"] = round(_estimate_on(advisor, intent, plain, assumed, lang, 1).per_gpu_gib, 1)
        except AdvisorError:
            pass
    fixes: list[tuple[str, dict[str, Any], int]] = []
    if intent != "inference":
        fixes.append(("more_cards", plain, max(2, n * 2)))
        method = slots.get("method") or assumed.get("method") or "full"
        if intent != "finetune":
            pass                        # pre-training trains every weight: no adapter to fall back on
        elif method == "full":
            fixes.append(("lora", {**plain, "method": "lora"}, n))
        if intent == "finetune" and method in ("full", "lora"):
            fixes.append(("qlora", {**plain, "method": "qlora"}, n))
    else:
        if slots.get("precision") not in ("int4", "nf4"):
            fixes.append(("int4", {**plain, "precision": "int4"}, n))
        fixes.append(("more_cards", plain, max(2, n * 2)))
    for kind, s, cards in fixes:
        try:
            need = _estimate_on(advisor, intent, s, assumed, lang, cards).per_gpu_gib
        except (AdvisorError, ValueError):
            continue
        out["fixes"].append({"kind": kind, "gpus": cards, "need_gib": round(need, 1),
                             "fits": bool(usable and need <= usable)})
    return out


def can_run(advisor, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str, gpu_model: str
            ) -> dict[str, Any] | None:
    """'Can a 910B serve Qwen2.5-72B?': yes with the fewest of its cards that hold the job (and 4-bit weights on
    fewer, for serving), or no with what it needs a card; the stack its vendor's cards serve LLMs with."""
    kb = advisor.kb
    ids = [g for g in advisor._gpu_ids(gpu_model) if g in kb.gpus]
    if not ids:
        return None
    gpu = advisor._family_default(ids)
    plain = {k: v for k, v in slots.items() if k not in ("gpus", "nodes", "gpu_model", "gpu_models")}
    try:
        cards = advisor._cards_needed(intent, plain, assumed, lang, gpu)
    except AdvisorError:
        return None
    model = kb.models.get(str(slots.get("model") or ""))
    llm = model is None or model.kind in ("llm", "multimodal")
    # the LLM serving stacks serve LLMs: a speech, vision or diffusion model is not 'served with vLLM-Ascend'
    stack = STACKS.get(gpu.vendor) if intent == "inference" and llm else None
    # an engine with CUDA-only kernels the speed is measured with (faster-whisper's CTranslate2) on another
    # vendor's card: fits, but only with a port, never a bare yes (rules/advice.yaml whisper-off-cuda-*)
    port = bool(cards.get("cards")) and gpu.vendor != "nvidia" and model is not None and model.family in CUDA_ONLY_FAMILIES
    return {"kind": "can_run", "answer": ("port" if port else "yes") if cards.get("cards") else "no", "gpu": gpu.id, "gpu_name": gpu.name,
            "family": ids,
            "cards": cards.get("cards"), "need_gib": round(cards["need_gib"], 1), "memory_gib": gpu.memory_gib,
            "hours": cards.get("hours"), "int4": cards.get("int4"), "serving": intent == "inference",
            "stack": {"en": stack["en"], "zh": stack["zh"]} if stack else None,
            "sources": list(stack["sources"]) if stack else []}
