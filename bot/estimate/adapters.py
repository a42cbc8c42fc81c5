"""What LoRA adapters and quantised base weights add to a training or serving job's memory: trainable parameters,
the copies adapter layers keep of their inputs, and how quantised weights are stored (their sources are given with
each rule)."""
from __future__ import annotations

from bot.estimate.arch import NF4_SINGLE_QUANT_BYTES, WEIGHT_BYTES, Arch, Note
from bot.records.models import Workload


def trainable_params(w: Workload, a: Arch) -> float:
    if w.method == "full":
        return a.params
    if w.method == "freeze":   # LLaMA-Factory default: the last 2 blocks trainable
        return min(2, a.layers) * a.layer_params if a.transformer else a.params * 0.1
    if not a.transformer:
        return a.params * 0.01
    return sum(w.lora_rank * (i + o) * n for _, i, o, n in adapted_modules(w, a)) * a.layers


def adapted_modules(w: Workload, a: Arch) -> list[tuple[str, int, int, int]]:
    wanted = {"all-linear": None, "attention": {"q", "k", "v", "o"}, "qkv": {"q", "k", "v"}, "qv": {"q", "v"}}[
        w.lora_targets]
    return [m for m in a.linear_modules() if wanted is None or m[0] in wanted]


def fp32_input(w: Workload) -> bool:
    """The adapted layers' inputs are already fp32 and nothing autocasts them: PEFT's fp32 adapters need no cast."""
    return w.precision == "fp32" or (w.pure_bf16 and w.kbit_upcast != "none")


def adapter_copy_bytes(w: Workload, p: int) -> int:
    """Bytes per input element that a LoRA layer keeps of its own (a frozen base layer keeps nothing of its input).

    PEFT casts the input to its fp32 adapters: without autocast the fp32 copy is what lora_A saves; under autocast
    lora_A casts it back to a new 16-bit copy. Dropout adds its bool mask (and, without a PEFT cast, its output)."""
    drop = 1 if w.lora_dropout > 0 else 0
    if w.framework == "hf":
        if fp32_input(w):
            return 5 * drop                    # fp32 input, no autocast: no cast; dropout's fp32 output and mask
        return (4 if w.pure_bf16 else 2) + drop
    return (p + 1) * drop


def adapter_input_elements(w: Workload, a: Arch) -> float:
    """Input elements per token and layer that the LoRA layers copy (MoE experts see only their routed tokens)."""
    total, fused_qkv = 0.0, False
    for name, i, _o, n in adapted_modules(w, a):
        if (w.framework == "litgpt" or a.fused_qkv) and name in ("q", "k", "v"):
            if fused_qkv:
                continue        # one fused qkv layer: one copy of its input
            fused_qkv = True
        copies = a.active_experts + a.shared_experts if a.experts > 1 and name in ("gate", "up", "down") else n
        total += i * copies
    return total


def nf4_weights(w: Workload) -> bool:
    """The weights are stored in bitsandbytes' NF4: a QLoRA base, or a model served in nf4."""
    return w.method == "qlora" or w.precision == "nf4"


def quantised_split(w: Workload, a: Arch) -> tuple[float, float, float, float]:
    """(quantised params, bytes per quantised param, 16-bit params, largest quantised matrix) of a quantised model.

    Embeddings stay 16-bit in every framework; an untied LM head is quantised only where the framework converts every
    nn.Linear (Lightning's BitsandbytesPrecision). bitsandbytes dequantises each 4-bit matrix to 16 bits for every
    multi-token matmul, so the largest one is a transient buffer, and a quantised LM head is usually the largest."""
    emb = a.embedding_params
    head = a.vocab * a.hidden if head_quantised(w, a) else 0
    big = max([i * o for _, i, o, _n in a.linear_modules()] + [head])
    if nf4_weights(w):
        wb = WEIGHT_BYTES["nf4"] if w.double_quant else NF4_SINGLE_QUANT_BYTES
    else:
        wb = WEIGHT_BYTES[w.precision]
    return a.params - emb + head, wb, emb - head, big


def head_quantised(w: Workload, a: Arch) -> bool:
    """A tied LM head is the input embedding, which no framework quantises."""
    return w.quantized_lm_head and not a.tied


def quant_notes(w: Workload, a: Arch, notes: list[str]) -> None:
    if nf4_weights(w):
        notes.append(Note("est.nf4_dq", "NF4 weights with double-quantised constants (4.127 bits a weight, the QLoRA "
                          "recipe); without double quantisation they take 4.5 bits") if w.double_quant else
                     Note("est.nf4_single", "NF4 weights with one fp32 absmax per 64 weights (4.5 bits a weight, no "
                          "double quantisation)"))
    if head_quantised(w, a):
        notes.append(Note("est.lm_head_quantized", "the LM head is quantised with the other linear layers (LitGPT "
                          "does this); transformers keeps it in 16-bit"))


def quant_formula(w: Workload, a: Arch, lin: float, wb: float) -> str:
    what = ("NF4 + double-quantised constants" if w.double_quant else "NF4 + an fp32 absmax per 64") \
        if nf4_weights(w) else w.precision
    return f"{lin / 1e9:.2f}B linear params" + (" (LM head included)" if head_quantised(w, a) else "") + \
        f" x {wb * 8:.4g} bits ({what})"
