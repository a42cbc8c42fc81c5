"""Model dimensions and per-element sizes the memory formulas share: read from the knowledge base, or scaled from
a bare parameter count."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from bot.records.kb import Model
from bot.records.models import MemoryTerm

GIB = 1024 ** 3
WEIGHT_BYTES = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0,
                # int4: group-wise (g=128) fp16 scale + zero point = 4 + 32/128 bits (AWQ / GPTQ layout)
                "int4": (4 + 32 / 128) / 8,
                # nf4 with double quantization: fp8 absmax per 64 weights + fp32 per 256 blocks
                "nf4": (4 + 8 / 64 + 32 / (64 * 256)) / 8}
NF4_SINGLE_QUANT_BYTES = (4 + 32 / 64) / 8     # without double quantization: one fp32 absmax per 64 weights
OPTIMIZER_BYTES = {"adamw": 8.0, "adamw8bit": 2.0, "sgd": 4.0}
CUDA_CONTEXT_GIB = 1.0      # CUDA context + kernels: 0.3-2 GiB observed (1343 MiB on a V100, HF docs; vLLM 1.8 GiB)
# Families whose MLP is a plain (GELU/ReLU) two-matrix MLP rather than a gated SwiGLU/GeGLU one.
NON_GATED = ("gpt2", "gpt-2", "bert", "roberta", "t5", "whisper", "vit", "clip", "phi-1", "phi-2", "falcon",
             "bloom", "bloomz", "mt0", "t0", "starcoder", "octocoder", "gpt-neox", "gptneox", "pythia", "stablelm",
             "opt", "codegen")
ALLOCATOR_SLACK = 0.07      # caching-allocator fragmentation: reserved/allocated measured 1.03-1.11
# under FSDP / ZeRO-3 the all-gathered blocks are allocated on their own CUDA stream, whose freed blocks the caching
# allocator does not hand to the compute stream: fms-acceleration's FSDP runs on 2 GPUs read (nvidia-smi - 1 GiB
# context) / peak allocated = 1.22-1.25 where the same jobs on one GPU read 1.10-1.15 (tests/data rows fms-*)
ALLOCATOR_SLACK_SHARDED = 0.17
# Checkpointed training on one GPU: recomputation frees and re-requests activation blocks of shifting sizes, so the
# reserved peak rises above the allocated one by a share of the activations alive at the peak besides the share of
# the rest. Own H200 runs (tests/data/gpu_measure/h200-allocator-*-2026-12-04.yaml; torch 2.11, transformers 5.17;
# six checkpointed jobs, each under both allocators): with PyTorch's default caching allocator reserved - allocated
# was 3.8-20.8 GiB, 0.07 of the rest and 0.20-0.45 of the activations (0.30 the middle); with
# PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True 1.3-13.2 GiB, 0.02 of the rest and 0.06-0.39 of the activations
# (0.25). A run over samples of varying length under the caching allocator reserved far more (18.1 GiB over 30.1,
# 1.1x its activations): not modelled, the estimate assumes fixed-length (packed) batches.
CHECKPOINTED_SLACK = {"caching": (0.07, 0.30), "expandable_segments": (0.02, 0.25)}    # (rest, activations)


class Note(str):
    """An assumption in English (the JSON contract), carrying a template key and values for other languages."""

    def __new__(cls, key: str, text: str, **ctx):
        obj = super().__new__(cls, text)
        obj.key, obj.ctx = key, ctx
        return obj


def add_term(terms: list[MemoryTerm], name: str, category: str, nbytes: float, formula: str) -> None:
    """Append a named term of `nbytes` (skipped when empty), with the formula that produced it."""
    if nbytes > 0:
        terms.append(MemoryTerm.model_construct(name=name, category=category, gib=round(nbytes / GIB, 4),
                                                formula=formula))



@dataclass(frozen=True)
class Arch:
    """The dimensions the formulas need; from the knowledge base, or scaled from a parameter count."""
    params: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    gated_mlp: bool
    tied: bool
    fused_qkv: bool = False     # one Linear for q, k and v: a LoRA on it copies its input once
    experts: int = 1
    active_experts: int = 1
    shared_experts: int = 0
    expert_ffn: int = 0
    dense_layers: int = 0
    kv_dim: int = 0             # cached elements per token and layer (K+V, or the MLA latent)
    sliding_window: int | None = None
    sliding_share: float = 0.0
    decoder_layers: int = 0     # encoder-decoder: the decoder's share of `layers` (0 = decoder-only)
    encoder_tokens: int | None = None
    generates: bool = True      # keeps a KV cache when serving (not BERT / ViT encoders)
    dropout: bool = False
    transformer: bool = True
    activation_gib_per_sample: float | None = None
    inference_gib_per_sample: float | None = None
    basis_bytes: int = 4
    basis_at: str = ""          # the measured condition of the activation basis, said with the estimate
    basis_px: int | None = None  # the image side the basis was measured at ('640x640 image, ...'): activations scale
                                 # with the pixel count, the square of the side (issue 30: YOLO at 1280 px)
    derived: bool = False       # dimensions scaled from the parameter count, not read from a config

    @property
    def embedding_params(self) -> float:
        return self.vocab * self.hidden * (1 if self.tied else 2)

    def linear_modules(self) -> list[tuple[str, int, int, int]]:
        """(name, in, out, copies per layer) of each linear layer in a block."""
        q = self.heads * self.head_dim
        kv = self.kv_heads * self.head_dim
        mods = [("q", self.hidden, q, 1), ("k", self.hidden, kv, 1), ("v", self.hidden, kv, 1),
                ("o", q, self.hidden, 1)]
        if self.experts > 1:
            n = self.experts + self.shared_experts
            mods += [("gate", self.hidden, self.expert_ffn, n), ("up", self.hidden, self.expert_ffn, n),
                     ("down", self.expert_ffn, self.hidden, n)]
        elif self.gated_mlp:
            mods += [("gate", self.hidden, self.ffn, 1), ("up", self.hidden, self.ffn, 1),
                     ("down", self.ffn, self.hidden, 1)]
        else:
            mods += [("up", self.hidden, self.ffn, 1), ("down", self.ffn, self.hidden, 1)]
        return mods

    @property
    def active_ffn(self) -> int:
        """The MLP width one token runs through: the routed experts' for a mixture of experts."""
        return self.expert_ffn * self.active_experts if self.experts > 1 else self.ffn

    @property
    def layer_params(self) -> float:
        return sum(i * o * n for _, i, o, n in self.linear_modules())

    @property
    def active_params(self) -> float:
        if self.experts <= 1:
            return self.params
        per_expert = 3 * self.hidden * self.expert_ffn
        moe_layers = self.layers - self.dense_layers
        idle = (self.experts - self.active_experts) * per_expert * moe_layers
        return max(self.params - idle, self.params * 0.02)


# Dimensions of well-known dense decoder configurations, used to scale a bare parameter count ("a 30B model").
_SCALE = [(0.5, 24, 896, 14, 2), (1.5, 28, 1536, 12, 2), (3, 28, 3072, 24, 8), (7, 32, 4096, 32, 8),
          (13, 40, 5120, 40, 8), (34, 60, 7168, 56, 8), (70, 80, 8192, 64, 8), (175, 96, 12288, 96, 8),
          (405, 126, 16384, 128, 8), (1000, 160, 20480, 160, 16)]


_ARCH_MEMO: dict[tuple[int, float], tuple[Model | None, Arch]] = {}


def arch_of(model: Model | None, params_b: float) -> Arch:
    """The model's dimensions (or a bare count's, scaled from _SCALE), memoised: the planner asks for the same model
    thousands of times an answer. The memo holds the model itself, so an id reused by another object never hits."""
    key = (id(model), params_b)
    hit = _ARCH_MEMO.get(key)
    if hit is not None and hit[0] is model:
        return hit[1]
    if len(_ARCH_MEMO) > 4096:
        _ARCH_MEMO.clear()
    arch = _arch_of(model, params_b)
    _ARCH_MEMO[key] = (model, arch)
    return arch


def _arch_of(model: Model | None, params_b: float) -> Arch:
    params = params_b * 1e9
    if model is not None and model.is_transformer:
        heads = model.heads or max(1, model.hidden // 64)
        head_dim = model.head_dim or model.hidden // heads
        moe = model.moe
        fam = f"{model.family} {model.id}".lower()
        gated = model.kind in ("llm", "multimodal") and not any(fam.startswith(n) or f" {n}" in fam
                                                                for n in NON_GATED)
        return Arch(params=params, layers=model.layers, hidden=model.hidden, heads=heads,
                    kv_heads=model.kv_heads or heads, head_dim=head_dim, ffn=model.ffn or 4 * model.hidden,
                    vocab=model.vocab or (32000 if model.kind in ("llm", "multimodal") else 0),
                    gated_mlp=gated, tied=model.tied_embeddings, fused_qkv=model.fused_qkv,
                    experts=moe.experts if moe else 1, active_experts=moe.active_experts if moe else 1,
                    shared_experts=moe.shared_experts if moe else 0,
                    expert_ffn=(moe.expert_ffn or model.ffn or 4 * model.hidden) if moe else 0,
                    dense_layers=moe.dense_layers if moe else 0, kv_dim=model.kv_dim_per_token_layer,
                    sliding_window=model.sliding_window, sliding_share=model.sliding_window_layers or 0.0,
                    decoder_layers=model.decoder_layers or 0, encoder_tokens=model.encoder_tokens,
                    generates=model.kind not in ("encoder", "vision-transformer"),
                    dropout=not gated, transformer=True)
    if model is not None:   # CNN / detector / diffusion / speech without transformer dims
        basis = model.activation_basis
        return Arch(params=params, layers=0, hidden=0, heads=0, kv_heads=0, head_dim=0, ffn=0, vocab=0,
                    gated_mlp=False, tied=True, transformer=False,
                    activation_gib_per_sample=basis.gib_per_sample if basis else None,
                    inference_gib_per_sample=basis.inference_gib_per_sample if basis else None,
                    basis_bytes=basis.precision_bytes if basis else 4,
                    basis_at=f"{basis.at} [{basis.source}]" if basis else "", basis_px=_basis_px(basis))
    size, layers, hidden, heads, kv = min(_SCALE, key=lambda r: abs(math.log(r[0] / params_b)))
    # keep the layer count and width shape of the nearest known model, scale width to the parameter count
    scale = math.sqrt(params_b / size)
    hidden = max(256, int(round(hidden * scale / 128)) * 128)
    heads = max(1, hidden // 128)
    return Arch(params=params, layers=layers, hidden=hidden, heads=heads, kv_heads=min(kv, heads), head_dim=128,
                ffn=int(hidden * 3.5), vocab=128256, gated_mlp=True, tied=False,
                kv_dim=2 * min(kv, heads) * 128, derived=True)


def _basis_px(basis) -> int | None:
    """The side of the square image an activation basis was measured at ('640x640 image, training ...'), if it says."""
    m = re.match(r"\s*(\d{2,5})\s*x\s*(\d{2,5})", basis.at) if basis is not None else None
    return int(m.group(1)) if m and m.group(1) == m.group(2) else None
