"""Measure peak GPU memory of training, fine-tuning and inference on your own NVIDIA GPU, as measured_memory.yaml rows.

Every case builds its model from an embedded config (dimensions copied from knowledge/models.yaml) with random
weights -- nothing is downloaded -- runs one warm-up step and two measured steps, and records
torch.cuda.max_memory_allocated / max_memory_reserved. Each case becomes two rows (peak-allocated, peak-reserved) in
the schema of tests/data/measured_memory.yaml, or one `oom: true` row when the GPU ran out of memory.

  python bench/gpu_measure.py --dry-run [--preset full] [--gpu h100-sxm]   # plan + the estimator's figures; no torch
  python bench/gpu_measure.py --preset quick --out measured.yaml           # measure (about 5 min on one H100/H200)
  python bench/gpu_measure.py --compare measured.yaml                      # measured vs estimate (memory_accuracy)
  python bench/gpu_measure.py --device cpu --tiny                          # smoke test of the code paths on the CPU

Needs torch, transformers and (for LoRA) peft; bitsandbytes for the QLoRA cases and timm or torchvision for the CNN
case are optional: those cases are skipped, saying why, when the package is missing. A global --time-budget
(seconds, counted from the start) stops starting new cases once spent; results are written after every case, so a
killed run keeps what it measured. docs/measuring.md says how to run it and how to add the rows to the test data.
Measuring needs nothing from bot/ (a bare GPU machine will do; where the project imports, each progress line also
shows the estimate); --dry-run and --compare use the project's estimator.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import json
import os
import platform
import re
import shlex
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
GIB = 1024 ** 3
SCRIPT = "bench/gpu_measure.py"

# ----- model configurations (knowledge/models.yaml; tests/test_gpu_measure.py checks they still agree) ------------
# type: the transformers model_type (AutoConfig.for_model); qwen2 has q/k/v biases built into its attention.
MODELS: dict[str, dict[str, Any]] = {
    "qwen2.5-0.5b": dict(type="qwen2", layers=24, hidden=896, heads=14, kv_heads=2, head_dim=64, ffn=4864,
                         vocab=151936, tied=True, max_context=32768, params_b=0.494),
    "qwen2.5-1.5b": dict(type="qwen2", layers=28, hidden=1536, heads=12, kv_heads=2, head_dim=128, ffn=8960,
                         vocab=151936, tied=True, max_context=131072, params_b=1.544),
    "qwen2.5-7b": dict(type="qwen2", layers=28, hidden=3584, heads=28, kv_heads=4, head_dim=128, ffn=18944,
                       vocab=152064, tied=False, max_context=131072, params_b=7.616),
    "llama-3.2-1b": dict(type="llama", layers=16, hidden=2048, heads=32, kv_heads=8, head_dim=64, ffn=8192,
                         vocab=128256, tied=True, max_context=131072, params_b=1.236),
    "llama-3.1-8b": dict(type="llama", layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336,
                         vocab=128256, tied=False, max_context=131072, params_b=8.03),
    "mistral-7b": dict(type="mistral", layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336,
                       vocab=32768, tied=False, max_context=32768, params_b=7.248),
}
CNN_MODELS = {"resnet-50": dict(type="resnet50", params_b=0.02556)}
TINY = dict(layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, ffn=128, vocab=512, max_context=4096)


def param_count(spec: dict[str, Any]) -> int:
    """Parameters of a Llama/Qwen2/Mistral decoder from its dimensions (what from_config builds)."""
    h, hd = spec["hidden"], spec["head_dim"]
    q, kv = spec["heads"] * hd, spec["kv_heads"] * hd
    per_layer = h * q + 2 * h * kv + q * h + 3 * h * spec["ffn"] + 2 * h
    if spec["type"] == "qwen2":
        per_layer += q + 2 * kv                     # q/k/v biases
    return spec["layers"] * per_layer + spec["vocab"] * h * (1 if spec["tied"] else 2) + h


def tiny_spec(model: str) -> dict[str, Any]:
    base = MODELS[model]
    spec = dict(base, **TINY)
    spec["params_b"] = param_count(spec) / 1e9
    return spec


# ----- cases ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    model: str
    method: str                       # inference | full | lora | qlora
    precision: str                    # bf16 (AMP over fp32 weights) | bf16-true | fp32 | nf4 (QLoRA base)
    batch_size: int
    seq_len: int | None = None        # training: tokens per sample
    context: int | None = None        # inference: prompt + new tokens per sequence
    new_tokens: int = 0
    grad_checkpointing: bool = False
    lora_rank: int | None = None
    lora_targets: str | None = None   # "q,v" | "q,k,v,o" | "q,k,v,o,mlp" (peft target_modules="all-linear")
    attention: str = "sdpa"           # sdpa | eager
    image_size: int | None = None     # CNN cases
    varlen: bool = False              # each step a different length up to seq_len (unpacked data, as ms-swift runs)
    kbit_prep: bool = False           # QLoRA through peft.prepare_model_for_kbit_training (the HF QLoRA recipe)

    @property
    def cnn(self) -> bool:
        return self.model in CNN_MODELS

    @property
    def task(self) -> str:
        if self.method == "inference":
            return "inference"
        return "train" if self.cnn else "finetune"

    @property
    def optimizer(self) -> str | None:
        return None if self.method == "inference" else "adamw"

    @property
    def prompt_len(self) -> int:
        return (self.context or 0) - self.new_tokens

    @property
    def id(self) -> str:
        parts = [self.model]
        if self.method == "inference":
            parts += ["infer", f"b{self.batch_size}", f"ctx{self.context}", f"n{self.new_tokens}"]
        else:
            parts += [self.method, self.precision.replace("-", "")]
            if self.method in ("lora", "qlora"):
                parts.append(f"r{self.lora_rank}{TARGET_TAGS.get(self.lora_targets, 'all')}")
            parts.append(f"b{self.batch_size}")
            parts.append(f"{self.image_size}px" if self.cnn else f"s{self.seq_len}")
            if self.grad_checkpointing:
                parts.append("gc")
            if self.varlen:
                parts.append("varlen")
            if self.kbit_prep:
                parts.append("kbitprep")
        if self.attention != "sdpa":
            parts.append(self.attention)
        return "-".join(parts)

    def shrunk(self) -> "Case":
        """The same case at toy sizes (--tiny): exercises the code path in seconds on a CPU."""
        kw = dict(self.__dict__)
        kw["batch_size"] = min(self.batch_size, 2)
        if self.seq_len:
            kw["seq_len"] = min(self.seq_len, 64)
        if self.context:
            kw["new_tokens"] = min(self.new_tokens, 4)
            kw["context"] = min(self.context, 48) + kw["new_tokens"]
        if self.image_size:
            kw["image_size"] = 64
        return Case(**kw)


def _inf(model, b, ctx, n=32):
    return Case(model, "inference", "bf16-true", b, context=ctx, new_tokens=n)


def _full(model, prec, b, s, gc=False, attention="sdpa"):
    return Case(model, "full", prec, b, seq_len=s, grad_checkpointing=gc, attention=attention)


def _lora(model, r, targets, b, s, gc=False, method="lora", attention="sdpa", varlen=False, kbit_prep=False):
    return Case(model, method, "nf4" if method == "qlora" else "bf16-true", b, seq_len=s, grad_checkpointing=gc,
                lora_rank=r, lora_targets=targets, attention=attention, varlen=varlen, kbit_prep=kbit_prep)


ALL = "q,k,v,o,mlp"
TARGET_TAGS = {"q,v": "qv", "q,k,v,o": "qkvo"}      # anything else: peft's "all-linear"


def peft_targets(case: Case) -> list[str] | str:
    if case.lora_targets in TARGET_TAGS:
        return [f"{m}_proj" for m in case.lora_targets.split(",")]
    return "all-linear"


QUICK = [
    # inference: load + generate, several batch x context sizes
    _inf("qwen2.5-0.5b", 1, 1024),
    _inf("qwen2.5-7b", 1, 4096),
    _inf("qwen2.5-7b", 16, 4096),
    _inf("llama-3.1-8b", 8, 8192),
    # full fine-tuning: AMP (fp32 master) and pure bf16, with and without gradient checkpointing
    _full("qwen2.5-0.5b", "bf16", 4, 1024),
    _full("qwen2.5-1.5b", "bf16", 4, 2048),
    _full("qwen2.5-1.5b", "bf16", 4, 2048, gc=True),
    _full("qwen2.5-1.5b", "bf16-true", 8, 1024),
    _full("qwen2.5-7b", "bf16-true", 1, 2048, gc=True),
    # LoRA on a bf16 base
    _lora("llama-3.1-8b", 16, ALL, 4, 2048),
    _lora("llama-3.1-8b", 16, ALL, 4, 2048, gc=True),
    _lora("mistral-7b", 8, "q,v", 2, 1024),
    # QLoRA (bitsandbytes NF4) and a CNN
    _lora("qwen2.5-1.5b", 16, ALL, 4, 1024, gc=True, method="qlora"),
    Case("resnet-50", "full", "bf16", 64, image_size=224),
]
FULL = QUICK + [
    _inf("qwen2.5-1.5b", 64, 2048, 64),
    _inf("mistral-7b", 32, 4096, 64),
    _inf("llama-3.1-8b", 1, 32768),
    _inf("qwen2.5-7b", 1, 1024, 256),
    _full("qwen2.5-0.5b", "fp32", 4, 1024),
    _full("qwen2.5-0.5b", "bf16", 8, 2048, gc=True),
    _full("qwen2.5-1.5b", "bf16", 8, 4096, gc=True),
    _full("qwen2.5-7b", "bf16-true", 4, 2048),
    _full("llama-3.1-8b", "bf16-true", 1, 4096, gc=True),
    _full("qwen2.5-7b", "bf16", 1, 1024, gc=True),        # 16-18 B/param: near an H200's capacity
    _full("llama-3.1-8b", "bf16", 1, 1024, gc=True),      # expected to run out of memory even on 141 GB
    _lora("qwen2.5-7b", 64, ALL, 8, 2048, gc=True),
    _lora("llama-3.1-8b", 8, "q,v", 1, 8192),
    _lora("mistral-7b", 16, ALL, 4, 4096, gc=True),
    _lora("qwen2.5-1.5b", 16, ALL, 2, 2048, attention="eager"),
    _lora("llama-3.1-8b", 16, ALL, 4, 2048, gc=True, method="qlora"),
    _lora("llama-3.1-8b", 16, ALL, 1, 2048, method="qlora"),
    _lora("qwen2.5-7b", 64, ALL, 8, 1024, gc=True, method="qlora"),
    Case("resnet-50", "full", "bf16", 256, image_size=224),
    Case("resnet-50", "full", "fp32", 128, image_size=224),
]
# Cases that settle what the published rows left open (README, "Target ... is not met"): does a run over samples of
# varying length reserve much more than one at a fixed length (ms-swift's Qwen-7B LoRA rows), and does the HF QLoRA
# recipe (prepare_model_for_kbit_training upcasts every non-4-bit weight to fp32) explain the QLoRA rows' gap?
QUESTIONS = [
    _lora("qwen2.5-7b", 8, ALL, 1, 2048, gc=True),
    _lora("qwen2.5-7b", 8, ALL, 1, 2048, gc=True, varlen=True),
    _lora("qwen2.5-7b", 8, ALL, 1, 8192, gc=True, varlen=True),
    _lora("llama-3.1-8b", 32, "q,v", 4, 512, method="qlora"),
    _lora("llama-3.1-8b", 32, "q,v", 4, 512, method="qlora", kbit_prep=True),
    _lora("llama-3.1-8b", 32, "q,v", 4, 512),
]
# Published runs re-created (fms-acceleration's Mistral-7B QLoRA rows: batch 4 of packed 4,096-token samples, LoRA r16
# on q,k,v,o, checkpointing; TRL's prepare_model_for_kbit_training vs fms-acceleration's prepare without the upcast)
PUBLISHED = [
    _lora("mistral-7b", 16, "q,k,v,o", 4, 4096, gc=True, method="qlora", kbit_prep=True),
    _lora("mistral-7b", 16, "q,k,v,o", 4, 4096, gc=True, method="qlora"),
]
# Issue 31 item 7: with activation checkpointing the caching allocator reserves well above what is allocated (each
# layer's recompute frees and re-requests blocks of shifting sizes); run each case once per allocator setting
# (--alloc-conf expandable_segments:True in a second process: PYTORCH_CUDA_ALLOC_CONF is read when CUDA starts).
ALLOCATOR = [
    _full("llama-3.1-8b", "bf16-true", 8, 2048, gc=True),
    _full("qwen2.5-7b", "bf16-true", 1, 2048, gc=True),
    _full("qwen2.5-1.5b", "bf16", 4, 2048, gc=True),
    _full("qwen2.5-1.5b", "bf16", 8, 4096, gc=True),
    _lora("llama-3.1-8b", 16, ALL, 4, 2048, gc=True),
    _lora("qwen2.5-7b", 8, ALL, 1, 8192, gc=True, varlen=True),
]
PRESETS = {"quick": QUICK, "full": FULL, "questions": QUESTIONS, "published": PUBLISHED, "allocator": ALLOCATOR}
VARLEN_STEPS = 12       # measured steps of a varying-length case (fixed-length cases take two)


def varlen_lengths(seq_len: int, steps: int = VARLEN_STEPS, seed: int = 0) -> list[int]:
    """Lengths from seq_len/8 to seq_len in a fixed pseudo-random order, the longest last (as a long tail arrives)."""
    import random
    rng = random.Random(seed)
    lo = max(8, seq_len // 8)
    out = [rng.randint(lo, seq_len) for _ in range(steps - 1)]
    return out + [seq_len]


def plan(preset: str = "quick", tiny: bool = False, only: str | None = None) -> list[Case]:
    cases = [c.shrunk() if tiny else c for c in PRESETS[preset]]
    cases = list({c.id: c for c in cases}.values())        # shrinking can make two cases one
    if only:
        cases = [c for c in cases if re.search(only, c.id)]
    return cases


def spec_of(case: Case, tiny: bool) -> dict[str, Any]:
    if case.cnn:
        return CNN_MODELS[case.model]
    return tiny_spec(case.model) if tiny else MODELS[case.model]


def est_seconds(case: Case, tiny: bool = False) -> float:
    """Rough wall time of one case on an H100-class GPU (build, 3 steps, clean-up), for the time budget."""
    if tiny:
        return 3.0
    pb = spec_of(case, False)["params_b"]
    build = 3 + 0.6 * pb
    if case.method == "inference":
        flops = 2 * pb * 1e9 * case.batch_size * case.prompt_len
        steps = 3 * (flops / 300e12 + case.new_tokens * 0.035)
    elif case.cnn:
        steps = 3 * (0.05 + case.batch_size * 0.004)
    else:
        flops = 6 * pb * 1e9 * case.batch_size * case.seq_len * (1.33 if case.grad_checkpointing else 1.0)
        steps = 3 * (flops / 300e12 + 0.3)
    if case.method == "qlora":
        build += 4 * pb                 # write the bf16 base to disk, read it back and quantise it
        steps *= 1.5
    return round(build + steps + 2, 1)


# ----- GPU names -> knowledge/gpus.yaml ids ------------------------------------------------------------------------
def gpu_id_for(name: str, total_gib: float | None = None) -> str | None:
    """knowledge/gpus.yaml id of a torch.cuda.get_device_name() string (None when not in the knowledge base)."""
    n = name.upper()
    big = total_gib is not None and total_gib > 48
    rules: list[tuple[str, str | Callable[[], str]]] = [
        (r"GH200", "gh200"), (r"H200", "h200"), (r"H100.*NVL", "h100-nvl"), (r"H100.*PCIE", "h100-pcie"),
        (r"H100", "h100-sxm"), (r"H800", "h800"), (r"\bH20\b", "h20"), (r"B300", "b300"), (r"B200", "b200"),
        (r"A100", lambda: "a100-80gb" if ("80G" in n or big) else "a100-40gb"), (r"A800", "a800-80gb"),
        (r"A10G", "a10g"), (r"\bA10\b", "a10"), (r"\bA30\b", "a30"), (r"\bA40\b", "a40"), (r"L40S", "l40s"),
        (r"\bL4\b", "l4"), (r"\bL20\b", "l20"), (r"RTX PRO 6000", "rtx-pro-6000"), (r"RTX 6000 ADA", "rtx-6000-ada"),
        (r"RTX A6000", "rtx-a6000"), (r"QUADRO RTX 6000", "quadro-rtx-6000"), (r"5090", "rtx-5090"),
        (r"4090", "rtx-4090"), (r"3090", "rtx-3090"), (r"2080 ?TI", "rtx-2080ti"),
        (r"V100", lambda: "v100-32gb" if ("32G" in n or (total_gib or 0) > 20) else "v100-16gb"),
        (r"\bT4\b", "t4"), (r"P100", "p100"), (r"\bP4\b", "p4"),
    ]
    for pattern, gid in rules:
        if re.search(pattern, n):
            return gid() if callable(gid) else gid
    return None


# ----- rows in tests/data/measured_memory.yaml's schema --------------------------------------------------------------
def method_text(case: Case, spec: dict[str, Any]) -> str:
    if case.cnn:
        amp = "fp32 weights + torch.autocast(bfloat16)" if case.precision == "bf16" else "fp32, no autocast"
        return (f"ResNet-50 (timm resnet50, else torchvision), random init, {amp}, random images {case.batch_size} x 3 x "
                f"{case.image_size} x {case.image_size} (seq_len does not apply), cross-entropy over 1000 classes, "
                "torch AdamW (fp32 states)")
    arch = (f"{spec['type']} config: {spec['layers']} layers, hidden {spec['hidden']}, {spec['heads']} heads / "
            f"{spec['kv_heads']} KV heads x {spec['head_dim']}, ffn {spec['ffn']}, vocab {spec['vocab']}, "
            f"{'tied' if spec['tied'] else 'untied'} embeddings")
    build = (f"random weights from the {arch}, built directly on the device with AutoModelForCausalLM.from_config, "
             f"attention {case.attention}")
    if case.method == "inference":
        how = (f"bf16 weights, HF generate (greedy, DynamicCache default) on {case.batch_size} x {case.prompt_len} random "
               f"prompt tokens, exactly {case.new_tokens} new tokens (min_new_tokens = max_new_tokens), "
               "torch.inference_mode; context = prompt + new tokens")
    elif case.method == "full":
        how = {"bf16": "fp32 weights + torch.autocast(bfloat16) forward, fp32 gradients and AdamW states",
               "bf16-true": "bf16 weights and gradients, AdamW states in bf16 (the parameter dtype), no fp32 master "
                            "copy, no autocast",
               "fp32": "fp32 weights, no autocast"}[case.precision]
        how += "; loss = HF causal-LM loss over all b x s tokens (logits upcast to fp32 inside the loss)"
    else:
        targets = peft_targets(case)
        targets = ",".join(targets) if isinstance(targets, list) else 'target_modules="all-linear" (q,k,v,o,gate,up,down)'
        how = (f"peft LoRA r={case.lora_rank} alpha={2 * case.lora_rank} dropout 0 on {targets}; adapters upcast to "
               "fp32 by peft (autocast_adapter_dtype), frozen base, no torch.autocast")
        if case.method == "qlora":
            prep = ("peft.prepare_model_for_kbit_training called (non-4-bit weights upcast to fp32)" if case.kbit_prep
                    else "embeddings and LM head stay bf16; prepare_model_for_kbit_training NOT called")
            how = ("base saved to a temp dir and reloaded with BitsAndBytesConfig(load_in_4bit, nf4, double quant, "
                   f"bf16 compute); {prep}; " + how)
        else:
            how = "bf16 base; " + how
    if case.method != "inference":
        how += "; gradients freed with zero_grad(set_to_none=True)"
        if case.grad_checkpointing:
            how += ("; gradient checkpointing of every decoder layer (HF activation_checkpointing_enable, formerly "
                    "gradient_checkpointing_enable, use_reentrant=False)")
        if case.varlen:
            how += (f"; {VARLEN_STEPS} measured steps of varying length ({', '.join(map(str, varlen_lengths(case.seq_len)))} "
                    "tokens, batch padded to none: every sample that length), seq_len is the longest")
    return f"{build}; {how}"


def allocator_of(alloc_conf: str | None) -> str:
    """The CUDA caching allocator's mode a PYTORCH_CUDA_ALLOC_CONF value selects: 'expandable_segments' (segments
    grown in place by mapping more pages, so freed blocks of one size serve later requests of another) or the
    default 'caching' (fixed-size segments; blocks split and cached, fragmenting under shifting request sizes)."""
    conf = (alloc_conf or "").replace(" ", "").lower()
    return "expandable_segments" if "expandable_segments:true" in conf else "caching"


def make_row(case: Case, *, gpu: str, what: str, measured: float | None, oom: bool = False,
             device_name: str = "", quote: str = "", caveats: str = "", tiny: bool = False,
             adamw_impl: str | None = None, alloc_conf: str | None = None) -> dict[str, Any]:
    """One row in the measured_memory.yaml schema (what: peak-allocated | peak-reserved)."""
    spec = spec_of(case, tiny)
    suffix = "oom" if oom else {"peak-allocated": "alloc", "peak-reserved": "reserved"}.get(what, "unknown")
    model = f"gpumeasure-tiny-{spec['type']}" if tiny and not case.cnn else case.model
    allocator = allocator_of(alloc_conf)
    mode = "-expseg" if allocator == "expandable_segments" else ""
    rid = f"gpum-{gpu.split(' ')[0]}-{case.id}{'-tiny' if tiny else ''}{mode}-{suffix}"
    row: dict[str, Any] = {"id": rid, "model": model}
    if tiny and not case.cnn:
        row["params_b"] = round(spec["params_b"], 9)
        row["arch"] = {k: spec[k] for k in ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab", "ffn")}
    inference = case.method == "inference"
    row.update({
        "task": case.task, "method": case.method, "precision": case.precision, "optimizer": case.optimizer,
        "batch_size": case.batch_size, "seq_len": None if inference or case.cnn else case.seq_len,
        "grad_checkpointing": None if inference else case.grad_checkpointing,
        "gpus": 1, "sharding": "none", "offload": "none",
        "lora_rank": case.lora_rank, "lora_targets": case.lora_targets,
        "context": case.context if inference else None, "concurrency": case.batch_size if inference else None,
        "attention": None if case.cnn else case.attention, "component": "total",
        "measured": None if measured is None else round(measured, 3), "unit": "GiB", "what": what, "gpu": gpu})
    if inference and not case.cnn:      # model.generate: the whole prompt in one forward pass, the cache grown
        row.update({"engine": "transformers", "prompt_tokens": case.prompt_len})
    if case.kbit_prep:      # peft's prepare called directly: nothing is cast back to 16-bit
        row["kbit_upcast"] = "all"
    if case.method in ("lora", "qlora"):
        row.update({"framework": "hf", "lora_dropout": 0.0})     # transformers + PEFT, the LoraConfig built below
    if not inference and not case.cnn:
        row["autocast"] = case.precision == "bf16"     # only the AMP cases run under torch.autocast
        if adamw_impl:
            row["adamw_impl"] = adamw_impl
    if alloc_conf is not None or allocator != "caching":
        row["allocator"] = allocator       # PYTORCH_CUDA_ALLOC_CONF as the run had it (bench rows before: unrecorded)
    if oom:
        row["oom"] = True
    row["source"] = {"title": f"gpu-advisor {SCRIPT} on {device_name or gpu}", "url": None, "quote": quote}
    row["caveats"] = caveats
    return row


# ----- writing results ---------------------------------------------------------------------------------------------
def dump_rows(rows: list[dict[str, Any]]) -> str:
    try:
        import yaml
    except ImportError:     # JSON is YAML: one flow mapping per list item
        return "".join(f"- {json.dumps(r, ensure_ascii=False)}\n" for r in rows)
    return yaml.safe_dump(rows, sort_keys=False, allow_unicode=True, width=120, default_flow_style=False) if rows else ""


def load_rows(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    try:
        import yaml
        return yaml.safe_load(text) or []
    except ImportError:
        return [json.loads(line[2:]) for line in text.splitlines() if line.startswith("- {")]


class Writer:
    """Rewrites --out after every case (atomically), or streams each case's rows to stdout."""

    def __init__(self, out: str | None, header: str, append: bool = False):
        self.path = Path(out) if out and out != "-" else None
        self.header = header
        self.rows: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.previous: list[dict[str, Any]] = []
        if self.path and append and self.path.exists():
            self.previous = load_rows(self.path)

    def start(self) -> None:
        """The header: comment lines at the top of the file, or of stdout."""
        if self.path is None:
            sys.stdout.write("".join(f"# {line}\n" for line in self.header.splitlines()))
            sys.stdout.flush()
        else:
            self.flush()

    def add(self, rows: list[dict[str, Any]], note: str | None = None) -> None:
        self.rows.extend(rows)
        if note:
            self.notes.append(note)
        if self.path is None:
            if rows:
                sys.stdout.write(dump_rows(rows))
            if note:
                sys.stdout.write(f"# {note}\n")
            sys.stdout.flush()
            return
        self.flush()

    def flush(self) -> None:
        if self.path is None:
            return
        lines = [f"# {line}" if line else "#" for line in self.header.splitlines()]
        lines += [f"# {n}" for n in self.notes]
        body = "\n".join(lines) + "\n" + (dump_rows(self.previous + self.rows) or "[]\n")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(body, encoding="utf-8")
        os.replace(tmp, self.path)


# ----- measuring ---------------------------------------------------------------------------------------------------
@dataclass
class Result:
    status: str                        # ok | oom | skipped | timeout | error
    note: str = ""
    peak_alloc: float | None = None    # GiB, over build + warm-up + measured steps
    peak_reserved: float | None = None
    steady_alloc: float | None = None  # GiB, the two measured steps alone
    steady_reserved: float | None = None
    after_build: float | None = None   # GiB allocated once the model (and optimizer) exist
    baseline: float | None = None      # GiB allocated before the case started
    device_used: float | None = None   # GiB in use on the device (mem_get_info) after the measured steps
    retries: int | None = None         # caching-allocator cudaMalloc retries (memory pressure)
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class CaseTimeout(BaseException):
    """Raised by the alarm; a BaseException so that library code catching Exception cannot swallow it."""


@contextlib.contextmanager
def alarm(seconds: float | None):
    """Raise CaseTimeout in the main thread after `seconds` (Unix); a no-op elsewhere."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def handler(signum, frame):
        raise CaseTimeout(f"case exceeded {seconds:.0f} s")
    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _version(name: str) -> str:
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return "not installed"


def _importable(name: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(name) is not None


def _cnn_impl() -> str | None:
    """'timm' or 'torchvision', whichever imports (timm itself needs torchvision), else None."""
    for name in ("timm", "torchvision"):
        try:
            __import__(name)
            return name
        except Exception:  # noqa: BLE001 -- a broken install counts as missing
            continue
    return None


class TorchEnv:
    """torch, the device and its memory counters. Imported only when measuring."""

    def __init__(self, device: str, tiny: bool, tmp_dir: str | None, adamw: str):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")          # random weights only: never reach a hub
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        import warnings
        warnings.filterwarnings("ignore", category=FutureWarning)    # API renames announced by transformers/peft
        import torch
        with contextlib.suppress(Exception):
            import transformers
            transformers.utils.logging.disable_progress_bar()
        self.torch = torch
        self.alloc_conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF") or ""   # read by CUDA at start: set before import
        self.tiny = tiny
        self.tmp_dir = tmp_dir
        self.adamw = adamw
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        if self.cuda:
            if not torch.cuda.is_available():
                raise SystemExit("CUDA is not available: use --device cpu --tiny for a smoke test without a GPU")
            if self.device.index is None:
                self.device = torch.device("cuda", torch.cuda.current_device())
            torch.cuda.set_device(self.device)
            self.device_name = torch.cuda.get_device_name(self.device)
            self.total_gib = torch.cuda.mem_get_info(self.device)[1] / GIB
            for dt in (torch.bfloat16, torch.float32):   # create the cuBLAS handle/workspace before any measurement
                a = torch.randn(256, 256, device=self.device, dtype=dt)
                (a @ a).sum().item()
                del a
            torch.cuda.synchronize()
        else:
            self.device_name = f"CPU {platform.machine()}"
            self.total_gib = None
        self.gpu_id = gpu_id_for(self.device_name, self.total_gib) if self.cuda else None
        self.versions = {"torch": torch.__version__, "cuda": getattr(torch.version, "cuda", None) or "none",
                         "transformers": _version("transformers"), "peft": _version("peft"),
                         "bitsandbytes": _version("bitsandbytes"), "timm": _version("timm"),
                         "torchvision": _version("torchvision")}
        self.gpu = self.gpu_id or (f"unknown ({self.device_name}, {self.total_gib:.1f} GiB)" if self.cuda else "cpu")

    # memory counters (None on the CPU) ------------------------------------------------------------------------------
    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    def cleanup(self) -> None:
        gc.collect()
        if self.cuda:
            self.torch.cuda.synchronize(self.device)
            self.torch.cuda.empty_cache()

    def reset_peak(self) -> None:
        if self.cuda:
            self.torch.cuda.reset_peak_memory_stats(self.device)

    def allocated(self) -> float | None:
        return self.torch.cuda.memory_allocated(self.device) / GIB if self.cuda else None

    def peaks(self) -> tuple[float | None, float | None]:
        if not self.cuda:
            return None, None
        tc = self.torch.cuda
        return tc.max_memory_allocated(self.device) / GIB, tc.max_memory_reserved(self.device) / GIB

    def device_used(self) -> float | None:
        if not self.cuda:
            return None
        free, total = self.torch.cuda.mem_get_info(self.device)
        return (total - free) / GIB

    def retries(self) -> int | None:
        return self.torch.cuda.memory_stats(self.device).get("num_alloc_retries") if self.cuda else None

    # what a case needs -----------------------------------------------------------------------------------------------
    def missing_for(self, case: Case) -> str | None:
        if case.cnn:
            return None if _cnn_impl() else "needs timm or torchvision (pip install timm)"
        if not _importable("transformers"):
            return "needs transformers (pip install transformers)"
        if case.method in ("lora", "qlora") and not _importable("peft"):
            return "needs peft (pip install peft)"
        if case.method == "qlora":
            if not _importable("bitsandbytes"):
                return "needs bitsandbytes (pip install bitsandbytes)"
            if not _importable("accelerate"):
                return "needs accelerate for from_pretrained(device_map=...) (pip install accelerate)"
        return None

    def is_oom(self, exc: BaseException) -> bool:
        oom_cls = getattr(self.torch.cuda, "OutOfMemoryError", None) or getattr(self.torch, "OutOfMemoryError", None)
        if oom_cls is not None and isinstance(exc, oom_cls):
            return True
        msg = str(exc)
        return isinstance(exc, RuntimeError) and ("out of memory" in msg.lower() or "CUBLAS_STATUS_ALLOC_FAILED" in msg)


def _dtype_kw(dtype) -> dict[str, Any]:
    """transformers >= 4.56 takes dtype=, older releases torch_dtype=."""
    import transformers
    nums = [int(x) for x in re.findall(r"\d+", transformers.__version__)[:2]]
    return {"dtype": dtype} if tuple(nums) >= (4, 56) else {"torch_dtype": dtype}


def hf_config(spec: dict[str, Any], case: Case):
    from transformers import AutoConfig
    kw = dict(hidden_size=spec["hidden"], num_hidden_layers=spec["layers"], num_attention_heads=spec["heads"],
              num_key_value_heads=spec["kv_heads"], head_dim=spec["head_dim"], intermediate_size=spec["ffn"],
              vocab_size=spec["vocab"], tie_word_embeddings=spec["tied"],
              max_position_embeddings=spec["max_context"])
    if spec["type"] == "mistral":
        kw["sliding_window"] = None      # Mistral 7B v0.3 (32768 vocab): no sliding window, as in the knowledge base
    cfg = AutoConfig.for_model(spec["type"], **kw)
    cfg.use_cache = case.method == "inference"
    return cfg


def _adamw(env: TorchEnv, params):
    torch = env.torch
    kw: dict[str, Any] = {"lr": 1e-5}
    if env.cuda:
        kw["fused" if env.adamw == "fused" else "foreach"] = True
    return torch.optim.AdamW(params, **kw)


def _load_4bit(env: TorchEnv, cfg, case: Case):
    """Random bf16 weights -> temp dir -> from_pretrained with bitsandbytes NF4 (the ordinary QLoRA load path)."""
    torch = env.torch
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig
    tmp = tempfile.mkdtemp(prefix="gpu-measure-", dir=env.tmp_dir)
    try:
        with torch.device(env.device):
            base = AutoModelForCausalLM.from_config(cfg, **_dtype_kw(torch.bfloat16))
        base.save_pretrained(tmp)
        del base
        env.cleanup()
        env.reset_peak()        # the measured job starts at loading the 4-bit model
        qcfg = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                                  bnb_4bit_compute_dtype=torch.bfloat16)
        where = env.device.index if env.cuda else "cpu"
        return AutoModelForCausalLM.from_pretrained(tmp, quantization_config=qcfg, device_map={"": where},
                                                    attn_implementation=case.attention, **_dtype_kw(torch.bfloat16))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build_llm(env: TorchEnv, case: Case, state: dict[str, Any]) -> None:
    """Model (+ optimizer, inputs) into `state`, and state['step']: one generate call or one training step."""
    torch = env.torch
    from transformers import AutoModelForCausalLM
    spec = spec_of(case, env.tiny)
    cfg = hf_config(spec, case)
    if case.method == "qlora":
        model = _load_4bit(env, cfg, case)
    else:
        dtype = torch.float32 if case.precision in ("bf16", "fp32") else torch.bfloat16   # bf16 = AMP: fp32 master
        with torch.device(env.device):
            model = AutoModelForCausalLM.from_config(cfg, attn_implementation=case.attention, **_dtype_kw(dtype))
    state["model"] = model
    if case.method == "inference":
        model.eval()
        state["ids"] = torch.randint(3, spec["vocab"], (case.batch_size, case.prompt_len), device=env.device)
        state["mask"] = torch.ones_like(state["ids"])
        n = case.new_tokens

        def generate() -> None:
            with torch.inference_mode():
                out = state["model"].generate(input_ids=state["ids"], attention_mask=state["mask"], max_new_tokens=n,
                                              min_new_tokens=n, do_sample=False, pad_token_id=0)
            state["out_shape"] = tuple(out.shape)
            del out
        state["step"] = generate
        return
    model.config.use_cache = False
    if case.grad_checkpointing:
        if hasattr(model, "activation_checkpointing_enable"):      # transformers >= 5.2x renamed it
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if case.kbit_prep:
        from peft import prepare_model_for_kbit_training
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=case.grad_checkpointing)
    if case.method in ("lora", "qlora"):
        from peft import LoraConfig, get_peft_model
        targets = peft_targets(case)
        lcfg = LoraConfig(r=case.lora_rank, lora_alpha=2 * case.lora_rank, lora_dropout=0.0, target_modules=targets,
                          bias="none", task_type="CAUSAL_LM")
        model = get_peft_model(model, lcfg)
        state["model"] = model
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    state["trainable"] = sum(p.numel() for p in params)
    state["opt"] = _adamw(env, params)
    del params
    state["ids"] = torch.randint(3, spec["vocab"], (case.batch_size, case.seq_len), device=env.device)
    amp = case.precision == "bf16"
    lengths = iter(varlen_lengths(case.seq_len) * 2) if case.varlen else None

    def train_step() -> None:
        ids = state["ids"][:, :next(lengths)] if lengths is not None else state["ids"]
        with torch.autocast(device_type=env.device.type, dtype=torch.bfloat16, enabled=amp):
            loss = state["model"](input_ids=ids, labels=ids).loss
        loss.backward()
        state["opt"].step()
        state["opt"].zero_grad(set_to_none=True)
        state["loss"] = float(loss.detach())
        del loss
    state["step"] = train_step


def build_cnn(env: TorchEnv, case: Case, state: dict[str, Any]) -> None:
    torch = env.torch
    if _cnn_impl() == "timm":
        import timm
        model = timm.create_model("resnet50", pretrained=False, num_classes=1000)
        state["impl"] = f"timm {_version('timm')}"
    else:
        import torchvision
        model = torchvision.models.resnet50(weights=None)
        state["impl"] = f"torchvision {_version('torchvision')}"
    state["model"] = model.to(env.device, dtype=torch.float32).train()
    del model
    state["opt"] = _adamw(env, list(state["model"].parameters()))
    s = case.image_size
    state["x"] = torch.randn(case.batch_size, 3, s, s, device=env.device)
    state["y"] = torch.randint(0, 1000, (case.batch_size,), device=env.device)
    amp = case.precision == "bf16"

    def train_step() -> None:
        with torch.autocast(device_type=env.device.type, dtype=torch.bfloat16, enabled=amp):
            logits = state["model"](state["x"])
        loss = torch.nn.functional.cross_entropy(logits.float(), state["y"])
        del logits
        loss.backward()
        state["opt"].step()
        state["opt"].zero_grad(set_to_none=True)
        state["loss"] = float(loss.detach())
        del loss
    state["step"] = train_step


def measure_case(env: TorchEnv, case: Case, timeout_s: float | None) -> Result:
    """Build, warm up, two measured steps; peaks in GiB. OOM, timeout and errors are caught and the GPU freed."""
    missing = env.missing_for(case)
    if missing:
        return Result("skipped", note=missing)
    start = time.monotonic()
    env.cleanup()
    res = Result("ok", baseline=env.allocated())
    state: dict[str, Any] = {}
    env.reset_peak()
    try:
        with alarm(timeout_s):
            (build_cnn if case.cnn else build_llm)(env, case, state)
            env.sync()
            res.after_build = env.allocated()
            state["step"]()                      # warm-up (optimizer states are created here)
            env.sync()
            warm_alloc, warm_res = env.peaks()
            env.reset_peak()
            for _ in range(VARLEN_STEPS if case.varlen else 2):
                state["step"]()
            env.sync()
            res.steady_alloc, res.steady_reserved = env.peaks()
            if env.cuda:
                res.peak_alloc = max(warm_alloc, res.steady_alloc)
                res.peak_reserved = max(warm_res, res.steady_reserved)
            res.device_used = env.device_used()
            res.retries = env.retries()
    except CaseTimeout as exc:
        res.status, res.note = "timeout", str(exc)
    except Exception as exc:  # noqa: BLE001 -- any failure must free the GPU and let the next case run
        if env.is_oom(exc):
            res.status = "oom"
            res.note = " ".join(str(exc).split())[:300]
            res.peak_alloc, res.peak_reserved = env.peaks()     # the high-water mark before the failed allocation
        else:
            res.status, res.note = "error", f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"
    for key in ("out_shape", "loss", "trainable", "impl"):
        if key in state:
            res.extra[key] = state[key]
    state.clear()
    env.cleanup()
    res.seconds = time.monotonic() - start
    return res


# ----- results -> rows ---------------------------------------------------------------------------------------------
def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def rows_for(case: Case, res: Result, env, command: str, date: str) -> list[dict[str, Any]]:
    if res.status not in ("ok", "oom"):
        return []
    spec = spec_of(case, env.tiny)
    v = env.versions
    versions = (f"torch {v['torch']} (CUDA {v['cuda']}), transformers {v['transformers']}, peft {v['peft']}, "
                f"bitsandbytes {v['bitsandbytes']}")
    cap = f"{env.total_gib:.1f} GiB" if env.total_gib else "n/a"
    alloc_conf = getattr(env, "alloc_conf", None)
    common = dict(gpu=env.gpu, device_name=env.device_name, tiny=env.tiny, alloc_conf=alloc_conf,
                  adamw_impl=(env.adamw if env.cuda else "for-loop"))     # _adamw(): fused or foreach on CUDA
    where = f"{env.device_name} ({cap} per torch.cuda.mem_get_info)" if env.cuda else env.device_name
    details = (f"First-hand measurement by {SCRIPT} on {where}, {date}, {versions}, "
               f"PYTORCH_CUDA_ALLOC_CONF={alloc_conf or '(unset)'}. {method_text(case, spec)}.")
    if res.status == "oom":
        quote = (f"out of memory on {env.device_name} ({cap}); high-water mark before the failure "
                 f"{_fmt(res.peak_alloc)} GiB allocated / {_fmt(res.peak_reserved)} GiB reserved; {versions}; "
                 f"command: {command}")
        caveats = (f"{details} torch raised: {res.note}. The peak shown in the quote is only what was allocated when "
                   "the failing allocation was requested.")
        return [make_row(case, what="peak-allocated", measured=None, oom=True, quote=quote, caveats=caveats, **common)]
    extras = ""
    if "trainable" in res.extra:
        extras += f" Trainable parameters: {res.extra['trainable']:,}."
    if "out_shape" in res.extra:
        extras += f" generate returned {list(res.extra['out_shape'])}."
    if "loss" in res.extra:
        extras += f" Last loss {res.extra['loss']:.3f}."
    if "impl" in res.extra:
        extras += f" Model from {res.extra['impl']}."
    if not env.cuda:
        caveats = (f"CPU smoke run (--device cpu): GPU memory unavailable, so `measured` is null; not for "
                   f"measured_memory.yaml. {details}{extras}")
        quote = f"no GPU memory reading on {env.device_name}; {versions}; command: {command}"
        return [make_row(case, what="unknown", measured=None, quote=quote, caveats=caveats, **common)]
    steps = f"{VARLEN_STEPS} measured steps of varying length" if case.varlen else "two measured steps"
    caveats = (f"{details} Peak over the model build, one warm-up step and {steps} "
               f"(torch.cuda.reset_peak_memory_stats before the build); the measured steps alone peaked at "
               f"{_fmt(res.steady_alloc)} GiB allocated / {_fmt(res.steady_reserved)} GiB reserved; "
               f"{_fmt(res.after_build)} GiB allocated after the build; {_fmt(res.baseline)} GiB allocated before the "
               f"case; {_fmt(res.device_used)} GiB in use on the device after the steps (mem_get_info: includes the "
               f"CUDA context); allocator retries {res.retries}; {res.seconds:.0f} s.")
    caveats += extras
    rows = []
    for what, value in (("peak-allocated", res.peak_alloc), ("peak-reserved", res.peak_reserved)):
        fn = "max_memory_allocated" if what == "peak-allocated" else "max_memory_reserved"
        quote = f"{what} {value:.3f} GiB (torch.cuda.{fn} / 2**30) on {env.device_name}; {versions}; command: {command}"
        rows.append(make_row(case, what=what, measured=value, quote=quote, caveats=caveats, **common))
    return rows


def run_cases(cases: list[Case], env, writer: Writer, *, budget_s: float, case_timeout_s: float,
              measure: Callable[..., Result] = measure_case, clock: Callable[[], float] = time.monotonic,
              start: float | None = None, command: str = "", date: str = "") -> dict[str, list[str]]:
    """Measure each case in turn within the time budget; rows are written after every case."""
    t0 = clock() if start is None else start
    done: dict[str, list[str]] = {"ok": [], "oom": [], "skipped": [], "timeout": [], "error": [], "not started": []}
    for i, case in enumerate(cases, 1):
        elapsed = clock() - t0
        if elapsed >= budget_s:
            rest = [c.id for c in cases[i - 1:]]
            done["not started"] += rest
            note = f"time budget {budget_s:.0f} s spent after {elapsed:.0f} s: {len(rest)} case(s) not started"
            log(note)
            writer.add([], note)
            break
        need = est_seconds(case, getattr(env, "tiny", False))
        if elapsed + need > budget_s:
            done["not started"].append(case.id)
            note = f"not started {case.id}: about {need:.0f} s needed, {budget_s - elapsed:.0f} s of the budget left"
            log(f"[{i}/{len(cases)}] {note}")
            writer.add([], note)
            continue
        log(f"[{i}/{len(cases)}] {case.id} (about {need:.0f} s; {elapsed:.0f} s elapsed) ...")
        # a case may overrun its estimate, but never the per-case limit nor the budget by more than a minute
        timeout = max(10.0, min(case_timeout_s, budget_s - elapsed + 60))
        res = measure(env, case, timeout)
        done[res.status].append(case.id)
        rows = rows_for(case, res, env, command, date)
        note = None if res.status == "ok" else f"{res.status}: {case.id}: {res.note}"
        writer.add(rows, note)
        if res.status == "ok":
            log(f"    peak allocated {_fmt(res.peak_alloc)} GiB, reserved {_fmt(res.peak_reserved)} GiB "
                f"({res.seconds:.0f} s){estimate_suffix(rows)}")
        else:
            log(f"    {res.status.upper()}: {res.note} ({res.seconds:.0f} s)")
    return done


def estimate_suffix(rows: list[dict[str, Any]]) -> str:
    """', estimate X GiB' when the project (bot/, pydantic) is importable here; '' on a bare GPU machine."""
    if not rows or rows[0].get("measured") is None:
        return ""
    try:
        res = _accuracy().evaluate(rows[:1])
    except Exception:  # noqa: BLE001 -- the estimator is optional while measuring
        return ""
    return f"; estimator {res[0]['estimate']:.2f} GiB ({res[0]['err']:+.0%})" if res and "err" in res[0] else ""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ----- --dry-run and --compare (no torch; use the project's estimator) -----------------------------------------------
def _accuracy():
    bench = str(ROOT / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    import memory_accuracy
    return memory_accuracy


def planned_workloads(cases: list[Case], gpu: str = "h200", tiny: bool = False):
    """(case, row skeleton, Workload, estimate) for each case, mapped exactly as memory_accuracy maps a measured row."""
    ma = _accuracy()
    from bot.estimate.memory import estimate_memory
    out = []
    for case in cases:
        row = make_row(case, gpu=gpu, what="peak-allocated", measured=None, tiny=tiny)
        model = ma.model_for(row)
        w = ma.workload_for(row, model)
        out.append((case, row, w, estimate_memory(w, model)))
    return out


def dry_run(cases: list[Case], gpu: str, tiny: bool, budget_s: float) -> int:
    from bot.estimate.arch import ALLOCATOR_SLACK
    from bot.knowledge.loader import default_knowledge
    kb = default_knowledge()
    cap = kb.gpus[gpu].memory_gib if gpu in kb.gpus else None
    print(f"{len(cases)} case(s); estimates from bot.estimate.memory.estimate_memory with the Workload that "
          f"bench/memory_accuracy.py builds from each row; capacity of {gpu}: {cap if cap else '?'} GiB")
    print(f"{'case':<52} {'task':<9} {'est alloc':>9} {'reserved':>9} {'per-GPU':>8} {'fits':>5} {'~s':>5}")
    total = 0.0
    for case, _row, w, est in planned_workloads(cases, gpu=gpu, tiny=tiny):
        secs = est_seconds(case, tiny)
        total += secs
        fits = "?" if cap is None else ("yes" if est.per_gpu_gib <= cap else "OOM")
        print(f"{case.id:<52} {w.task:<9} {est.allocated_gib:>9.2f} {est.allocated_gib * (1 + ALLOCATOR_SLACK):>9.2f} "
              f"{est.per_gpu_gib:>8.2f} {fits:>5} {secs:>5.0f}")
    print(f"estimated wall time about {total:.0f} s plus imports (budget {budget_s:.0f} s; the run stops starting "
          "cases once the budget is spent)")
    return 0


def compare(path: Path) -> int:
    ma = _accuracy()
    rows = load_rows(path)
    usable = [r for r in rows if r.get("oom") or r.get("measured") is not None]
    for r in rows:
        if r not in usable:
            print(f"{r['id']:<64} no GPU measurement (CPU smoke row)")
    results = ma.evaluate(usable)
    print(f"{'id':<64} {'what':<15} {'measured':>9} {'estimate':>9} {'err':>7}")
    for r in results:
        if "skipped" in r:
            print(f"{r['id']:<64} skipped: {r['skipped']}")
        elif r.get("oom"):
            verdict = "predicted" if r["correct"] else "MISSED"
            print(f"{r['id']:<64} {'OOM':<15} {'> ' + str(r['gpu_gib']):>9} {r['estimate']:>9.2f} {verdict:>7}")
        else:
            mark = " *" if r.get("excluded") else ""
            print(f"{r['id'] + mark:<64} {r['what']:<15} {r['measured']:>9.2f} {r['estimate']:>9.2f} {r['err']:>+7.0%}")
    comparable = [r for r in results if "err" in r and not r.get("excluded")]
    if comparable:
        s = ma.summary(results)
        e = s["estimator"]
        why = ", ".join(sorted({r["excluded"] for r in results if r.get("excluded")})) or "none"
        print(f"\n{s['rows']} comparable rows (* = left out of the summary: {why}); "
              f"{s['oom_correct']}/{s['oom_rows']} out-of-memory runs predicted")
        print(f"  estimator median |error| {e['median_abs_error']:.1%}, within ±15%: {e['within_15_share']:.0%}, "
              f"mean |error| {e['mean_abs_error']:.1%}")
    return 0


# ----- command line ------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="quick",
                    help="quick: ~5 min on one H100/H200; full: every case (the time budget still applies)")
    ap.add_argument("--cases", metavar="REGEX", help="only the cases whose id matches")
    ap.add_argument("--out", metavar="FILE", help="YAML file for the rows (default: stdout); rewritten after each case")
    ap.add_argument("--append", action="store_true", help="keep the rows already in --out and add the new ones")
    ap.add_argument("--time-budget", type=float, default=480, metavar="SECONDS",
                    help="stop starting new cases once this much time has passed since the start (default 480)")
    ap.add_argument("--case-timeout", type=float, default=180, metavar="SECONDS",
                    help="abandon one case after this long (default 180)")
    ap.add_argument("--device", default="cuda", help="torch device (default cuda; cpu only with --tiny)")
    ap.add_argument("--tiny", action="store_true", help="2-layer toy configs and small sizes: a smoke test, not data")
    ap.add_argument("--adamw", choices=("fused", "foreach"), default="fused", help="torch AdamW implementation on CUDA")
    ap.add_argument("--alloc-conf", metavar="CONF",
                    help="PYTORCH_CUDA_ALLOC_CONF for this run (e.g. expandable_segments:True), set before torch "
                         "starts CUDA; rows record the allocator mode and their ids end in -expseg")
    ap.add_argument("--tmp-dir", help="where QLoRA cases write the random bf16 base before the 4-bit load")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and the estimator's figures; no torch")
    ap.add_argument("--gpu", default="h200", help="--dry-run: knowledge-base GPU id to check the fit against")
    ap.add_argument("--compare", metavar="FILE", type=Path, help="measured vs estimate for a file this script wrote")
    args = ap.parse_args(argv)

    if args.compare:
        return compare(args.compare)
    cases = plan(args.preset, tiny=args.tiny, only=args.cases)
    if not cases:
        ap.error(f"no case of preset {args.preset!r} matches {args.cases!r}")
    if args.dry_run:
        return dry_run(cases, args.gpu, args.tiny, args.time_budget)
    if args.device.startswith("cpu") and not args.tiny:
        ap.error("--device cpu measures nothing useful at full size: add --tiny")

    start = time.monotonic()
    command = "python " + " ".join(shlex.quote(a) for a in [SCRIPT] + (sys.argv[1:] if argv is None else argv))
    date = datetime.date.today().isoformat()
    if args.alloc_conf is not None:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = args.alloc_conf
    log(f"gpu_measure: {len(cases)} case(s), preset {args.preset}{' (tiny)' if args.tiny else ''}, "
        f"budget {args.time_budget:.0f} s; importing torch ...")
    env = TorchEnv(args.device, args.tiny, args.tmp_dir, args.adamw)
    log(f"device: {env.device_name} -> gpu id {env.gpu}; total {_fmt(env.total_gib)} GiB; "
        + ", ".join(f"{k} {v}" for k, v in env.versions.items()))
    header = (f"Produced by {SCRIPT} on {env.device_name} ({env.gpu}), {date}.\n"
              f"Command: {command}\n"
              "Rows in the schema of tests/data/measured_memory.yaml (docs/measuring.md says how to add them).")
    writer = Writer(args.out, header, append=args.append)
    writer.start()
    done = run_cases(cases, env, writer, budget_s=args.time_budget, case_timeout_s=args.case_timeout,
                     start=start, command=command, date=date)
    writer.flush()
    log(f"done in {time.monotonic() - start:.0f} s: " + ", ".join(f"{len(v)} {k}" for k, v in done.items() if v)
        + (f"; rows in {args.out}" if writer.path else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
