"""'Can X do Y?' for hardware and software: does a card compute in bf16 or FP8, run 4-bit AWQ/GPTQ weights, run vLLM.
A yes or no from the card's datasheet figures and the sources on file, with what to do instead; nothing here is a
guess: where no source read covers the card, the answer says so.

Sources: the card's own datasheet figures (bf16_tflops, fp8_tflops in knowledge/gpus.yaml); vLLM's quantization
hardware table (AWQ from Turing, GPTQ from Volta, Marlin from Ampere, FP8 W8A8 on Ada and Hopper only; FP8
checkpoints weight-only via FP8 Marlin from Turing); Transformer Engine's FP8 recipes (FP8 training on cards with FP8
tensor cores); vLLM-Ascend's device list (Atlas A2 = 910B, A3 = 910C and 300I supported; Ascend 910 not planned).
"""
from __future__ import annotations

from typing import Any

WHAT = ("bf16", "fp8", "int4", "vllm")
_GEN = ("pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell")


def generation(architecture: str) -> str | None:
    """'Ampere (GA100)' -> 'ampere'; None for other vendors' architectures."""
    a = architecture.lower()
    return next((g for g in _GEN if a.startswith(g)), None)


def capability(kb, gpu_id: str, what: str, training: bool = False) -> dict[str, Any]:
    """{kind: capability, gpu, what, answer: yes/no/partly/unknown, why, instead, sources}."""
    g = kb.gpus[gpu_id]
    gen = generation(g.architecture) if g.vendor == "nvidia" else None
    out: dict[str, Any] = {"kind": "capability", "gpu": g.id, "gpu_name": g.name, "what": what,
                           "training": training, "sources": list(g.sources)}
    if what == "bf16":
        out.update(answer="yes" if g.bf16 else "no", why="bf16_yes" if g.bf16 else "bf16_no",
                   tflops=g.bf16_tflops, fp16=g.fp16_tflops)
        if not g.bf16:
            out["sources"] += ["mmengine-amp-docs"]
        return out
    if what == "fp8":
        if g.fp8_tflops:
            out.update(answer="yes", why="fp8_train" if training else "fp8_serve", tflops=g.fp8_tflops)
            out["sources"] += ["te-common-api"] if training else ["vllm-fp8-w8a8"]
        elif gen in ("turing", "ampere") and not training:
            out.update(answer="partly", why="fp8_weight_only")
            out["sources"] += ["vllm-fp8-w8a8", "vllm-quantization-hardware"]
        else:
            out.update(answer="no", why="fp8_no")
            if g.vendor == "nvidia":
                out["sources"] += ["vllm-quantization-hardware"]
        return out
    if what == "int4":
        if gen in ("turing", "ampere", "ada", "hopper", "blackwell"):
            out.update(answer="yes", why="int4_marlin" if gen != "turing" else "int4_turing")
        elif gen == "volta":
            out.update(answer="partly", why="int4_volta")
        elif gen == "pascal":
            out.update(answer="no", why="int4_pascal")
        else:
            out.update(answer="unknown", why="int4_other")
        if gen:
            out["sources"] += ["vllm-quantization-hardware"]
        return out
    # vllm
    if g.vendor == "nvidia":
        out.update(answer="yes" if gen not in ("pascal",) else "unknown", why="vllm_nvidia" if gen != "pascal"
                   else "vllm_old")
        out["sources"] += ["vllm-quantization-hardware"]
    elif g.vendor == "huawei":
        # Atlas A2 (910B) and A3 (910C) supported; the first Ascend 910 'unplanned'; the 310P (not the 310) listed
        verdict = {"ascend-910b": "yes", "ascend-910b4": "yes", "ascend-910c": "yes", "ascend-910": "no"}
        answer = verdict.get(gpu_id, "unknown")
        out.update(answer=answer, why={"yes": "vllm_ascend", "no": "vllm_ascend_910"}.get(answer, "vllm_ascend_other"))
        out["sources"] += ["vllm-ascend-faq"]
    else:
        out.update(answer="unknown", why="vllm_other")
    return out
