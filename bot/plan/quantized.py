"""Quantized serving as a plan of its own (issue 31 item 5).

A model published in 16-bit is what people serve in FP8 on cards that compute in FP8: vLLM's FP8 W8A8 "allows for a
2x reduction in model memory requirements and up to a 1.6x improvement in throughput with minimal impact on
accuracy", and an FP8 KV cache halves the cache, usually the larger part of a busy service's memory. So for a
service whose precision the user did not state, the planner sizes the same job with FP8 weights and an FP8 KV cache
on GPUs that compute in FP8 (Ada, Hopper, Blackwell; never on a card without the format), and serves it that way
when that plan meets every target and costs at least MIN_SAVING less than the 16-bit one, or when the 16-bit one
meets nothing. The answer says so first, with the 16-bit plan and its price among the considered, and how to keep
16-bit. INT4 stays a concession ('cheaper?') and the last resort when nothing holds even FP8: its quality loss is
larger and job-dependent.
"""
from __future__ import annotations

from typing import Any

from bot.plan.advice import Advice
from bot.plan.cheaper import MIN_SAVING, cost_of, meets

FP8_SLOTS = {"precision": "fp8", "kv_dtype": "fp8"}
SIXTEEN_BIT = ("bf16", "fp16")
QUANTIZED_KINDS = ("llm", "multimodal")


def quantizable(intent: str, slots: dict[str, Any], base: Advice) -> bool:
    """A generative service whose weights ship in 16-bit, no precision or KV type stated, not on the user's own
    cards (the caller also keeps a named GPU that lacks FP8: the user asked about that card)."""
    w = base.workload
    kind = base.model.kind if base.model is not None else "llm"
    if intent != "inference" or slots.get("precision") or slots.get("kv_dtype") or kind not in QUANTIZED_KINDS:
        return False
    if w.precision not in SIXTEEN_BIT or any(r.get("label") == "yours" for r in base.recommendations):
        return False
    return True


def _rental(advice: Advice) -> dict[str, Any] | None:
    return next((r for r in advice.recommendations if r.get("label") != "yours"), None)


def prefer(base: Advice, quant: Advice) -> bool:
    """The FP8 plan wins when it meets the job and the 16-bit one does not, or meets it for MIN_SAVING less."""
    q = _rental(quant)
    if q is None or not meets(q) or any(t.get("met") is False for t in quant.targets):
        return False
    b = _rental(base)
    if b is None or not meets(b):
        return True
    qc, bc = cost_of(q), cost_of(b)
    if not qc or not bc or qc[1] != bc[1] or q.get("currency") != b.get("currency") or not bc[0]:
        return False
    return 1 - qc[0] / bc[0] >= MIN_SAVING


def served_quantized(base: Advice, quant: Advice) -> Advice:
    """The FP8 answer, saying first what changed and what the 16-bit plan would have been (kept among the
    considered with its price, as a reason of its own)."""
    b = _rental(base)
    ctx: dict[str, Any] = {}
    if b is not None:
        copies = (b.get("instances") or 1) * max(1, b.get("replicas") or 1)
        ctx = {"plan": f"{copies} x {b['flavor']}", "gpus": copies * (b.get("gpu_count") or 1),
               "gpu": b.get("gpu_name") or "", "price": f"{b['hourly_total']:,.2f} {b.get('currency') or ''}/h"
               if b.get("hourly_total") is not None else "?"}
        row = dict(b)
        # it costs more only when it does (FP8 won on price); a 16-bit plan that misses a target may be cheaper
        # (set3-style RAG: 10 x H100 at 32.90 USD/h under 8 x B200 at 78.24 was said to 'cost more')
        row["why"] = ["sixteen_bit"] if meets(b) else \
            ["sixteen_bit_plain", *(f"breaks.{x}" for x in b.get("breaks") or [] if x != "budget")]
        row["label"] = None
        quant.considered.insert(0, row)
    quant.assumptions.insert(0, ("assume.fp8_served" if b is not None else "assume.fp8_only", ctx))
    for key in ("vllm-fp8-w8a8", "vllm-quantization-hardware"):
        for claim in ("memory", "speed"):
            cites = quant.claim_sources.setdefault(claim, [])
            if key not in cites:
                cites.append(key)
    return quant
