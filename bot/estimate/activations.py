"""Training activations: what each layer saves for backward, what checkpointing keeps of it, and the loss's tensors
(Korthikanti et al. 2022, re-derived per MLP, attention and adapter kind; sources in memory.py's docstring)."""
from __future__ import annotations

import math

from bot.estimate.adapters import adapted_modules, adapter_copy_bytes, adapter_input_elements, fp32_input
from bot.estimate.arch import GIB, Arch, Note, add_term
from bot.records.models import MemoryTerm, Workload


def pixel_scale(w: Workload, a: Arch) -> float:
    """Activations per image grow with its pixels: (side / the basis's side)^2 when the job's image size is said."""
    return (w.image_size / a.basis_px) ** 2 if w.image_size and a.basis_px else 1.0


def training_activations(w: Workload, a: Arch, terms: list[MemoryTerm], notes: list[str]) -> None:
    """The activation terms of one training step, in the order the step allocates them.

    Kept as one function (about 65 lines) on purpose: each term's size depends on the checkpointing mode decided
    above it, and reading the terms in allocation order is how they are checked against a memory trace."""
    b, s = w.batch_size, w.seq_len
    p = 4 if w.precision == "fp32" else 2
    if a.transformer and w.context_parallel > 1:
        # context parallelism: each GPU holds its seq / CP tokens through every layer and the loss
        s = max(1, s // w.context_parallel)
        notes.append(Note("est.context_parallel", f"each sample's {w.seq_len} tokens split over {w.context_parallel} "
                          f"GPUs (context parallelism): {s} a GPU", seq=w.seq_len, cp=w.context_parallel, local=s))
    if not a.transformer:
        if a.basis_at:
            notes.append(Note("est.basis", f"activations per sample from a measurement: {a.basis_at}", at=a.basis_at))
        if a.activation_gib_per_sample is None and a.inference_gib_per_sample:
            per = a.inference_gib_per_sample * 3 * GIB * p / a.basis_bytes * pixel_scale(w, a)
            notes.append(Note("est.basis_from_inference", "training activations taken as 3x the measured "
                              "inference activations per sample"))
            add_term(terms, "activations", "activations",
                     per * (0.35 if checkpoint_mode(w) != "none" else 1) * w.batch_size,
                  f"3 x {per / 3 / GIB:.2f} GiB per sample (inference basis) x batch {w.batch_size}")
            return
        if a.activation_gib_per_sample is None:
            per = 0.5 * GIB
            notes.append(Note("est.no_basis", "no measured activation basis for this model: 0.5 GiB per sample "
                              "assumed"))
        else:
            per = a.activation_gib_per_sample * GIB * p / a.basis_bytes
        area = pixel_scale(w, a)
        if checkpoint_mode(w) != "none":
            per *= 0.35
        add_term(terms, "activations", "activations", per * area * b,
                 f"{per / GIB:.3f} GiB per sample" + (f" x ({w.image_size}/{a.basis_px})^2" if area != 1 else "") +
                 f" x batch {b}")
        return
    L, tp = a.layers, w.tensor_parallel
    # (layers, tokens) per stack: an encoder-decoder model with a fixed encoder length (Whisper's 1500 audio frames)
    # runs its encoder layers at that length and its decoder layers at the text length
    stacks = [(L, s)]
    if a.encoder_tokens and not a.decoder_layers:    # a fixed input length: ViT's patches of one image
        s = a.encoder_tokens
        stacks = [(L, s)]
        notes.append(Note("est.fixed_tokens", f"each sample is {s} tokens, the model's fixed input length", tokens=s))
    elif a.decoder_layers and a.encoder_tokens:
        stacks = [(L - a.decoder_layers, a.encoder_tokens), (a.decoder_layers, s)]
        notes.append(Note("est.encoder_tokens", f"encoder layers see {a.encoder_tokens} positions, decoder layers "
                          f"the {s}-token text", tokens=a.encoder_tokens, seq=s))
    layer = {tokens: _layer_activation_bytes(w, a, p, tokens) for _, tokens in stacks}
    hs = p       # bytes per element of the hidden states between layers
    if w.kbit_upcast != "none":
        hs = 4
        notes.append(Note("est.kbit_upcast", "prepare_model_for_kbit_training leaves fp32 norm weights, so the hidden "
                          "states between layers are fp32; skip its upcast (fms-acceleration does) to halve them"))
    loss, loss_how = _loss_bytes(w, a, s, p)
    mode = checkpoint_mode(w)
    if mode == "selective":
        layer = {t: _layer_activation_bytes(w, a, p, t, scores=False) for _, t in stacks}
    if mode == "full" or (mode == "selective" and w.selective_policy == "alternate-mm"):
        _recomputed(w, a, stacks, layer, (p, hs), (loss, loss_how), terms, notes)
        return
    attn = ("memory-efficient attention" if w.flash_attention else
            "eager attention, its s^2 scores recomputed (selective checkpointing)" if mode == "selective" else
            "eager attention (s^2 scores kept)")
    if w.method in ("lora", "qlora") and w.framework == "hf":
        copies = sum(n * t for n, t in stacks) * b * adapter_input_elements(w, a) * adapter_copy_bytes(w, p)
        if copies:
            gib = f"{copies / tp / GIB:.1f}"
            notes.append(Note("est.lora_input_copies", "PEFT keeps its adapters in fp32, so each adapted layer "
                              f"saves its own copy of its input: {gib} GiB of the activations without gradient "
                              "checkpointing (LitGPT and torchtune layers do not copy)", gib=gib))
    if mode == "selective":
        notes.append(Note("est.selective_attention", "selective checkpointing: only the attention core (scores, "
                          "softmax, dropout) is recomputed, Korthikanti et al. 2022's 34sbh per layer; with a "
                          "memory-efficient attention kernel nothing of it was kept anyway"))
    add_term(terms, "layer activations", "activations", sum(n * layer[t] for n, t in stacks) / tp,
             " + ".join(f"{n} layers x {layer[t] / GIB:.3f} GiB (seq {t})" for n, t in stacks)
             + f", batch {b}, {attn}")
    if loss:
        add_term(terms, "logits and loss", "activations", loss, loss_how)


def _loss_bytes(w: Workload, a: Arch, s: int, p: int) -> tuple[float, str]:
    """The loss's tensors at their peak, per logit: in forward the logits, their fp32 upcast and the log-softmax
    (p + 8 B); in backward the saved log-softmax and the fp32 gradients of it and of the logits (12 B; the trainer
    has dropped the model's output by then); a chunked loss keeps only the logits and each chunk's log-softmax."""
    b = w.batch_size
    if not a.vocab:
        return 0.0, ""
    if w.fused_loss:
        # Liger's FusedLinearCrossEntropy: chunks of next_pow2(tokens / ceil(vocab / hidden)) tokens, so a chunk's
        # logits are about as large as the hidden states; it keeps the input's gradient, the fp32 loss per token
        # and, when the head trains, the head's gradient
        tokens = s * b
        chunk = min(tokens, 1 << max(0, math.ceil(math.log2(max(1, math.ceil(tokens / math.ceil(a.vocab / a.hidden)))))))
        head = a.vocab * a.hidden * p if w.method in ("full", "freeze") else 0
        loss = chunk * a.vocab * p + tokens * (a.hidden * p + 4) + head
        loss_how = (f"chunks of {chunk} tokens x vocab {a.vocab} x {p} B + the input's gradient and fp32 loss of "
                    f"{tokens} tokens" + (" + the head's gradient" if head else "")
                    + " (fused linear cross-entropy: the whole logits never held)")
    elif w.chunked_loss:
        # every chunk's log-softmax stays saved: LitGPT computes it in the logits' dtype, torchtune in fp32
        ls = p if w.framework == "litgpt" else 4
        loss = s * b * a.vocab * (p + ls)
        loss_how = (f"seq {s} x batch {b} x vocab {a.vocab} x ({p} + {ls}) B (chunked loss: the logits and each "
                    "chunk's log-softmax, no fp32 gradient of the whole)")
    else:
        per = max(p + 8, 12)
        loss = s * b * a.vocab * per
        loss_how = (f"seq {s} x batch {b} x vocab {a.vocab} x {per} B (" + (
            "logits, fp32 upcast, log-softmax" if p + 8 >= 12 else
            "log-softmax and the fp32 gradients of it and of the logits, in backward") + ")")
    return loss, loss_how


def checkpoint_mode(w: Workload) -> str:
    """none, full or selective; grad_checkpointing (the older switch) means full, also on an unvalidated copy."""
    return "full" if w.grad_checkpointing else w.checkpointing


def _recomputed(w: Workload, a: Arch, stacks: list[tuple[int, int]], layer: dict[int, float], sizes: tuple[int, int],
                loss_term: tuple[float, str], terms: list[MemoryTerm], notes: list[str]) -> None:
    """Layers that are recomputed in backward keep what their policy saves (full: the layer's input; torchtitan's
    per-op policy: also the outputs of every other matmul and of attention); layers left out by checkpoint_every keep
    everything. The recomputed layer's working set and the loss's backward are never alive together (the loss's
    backward ends before the first layer is recomputed), so the peak has the larger of the two."""
    b, h, tp = w.batch_size, a.hidden, w.tensor_parallel
    p, hs = sizes
    loss, loss_how = loss_term
    op = checkpoint_mode(w) == "selective"
    every = 1 if op else w.checkpoint_every
    kept = [(n // every, n - n // every, t) for n, t in stacks]        # (recomputed layers, whole layers, tokens)
    per_tok = h * hs + (_alternate_mm_elements(a) * p if op else 0)
    what = "layer input + every other matmul's output + attention output" if op else "layer inputs"
    add_term(terms, "checkpointed layer inputs" if not op else "selectively checkpointed layers", "activations",
             sum(r * t * b * per_tok for r, _n, t in kept) / tp,
             " + ".join(f"{r} layers x seq {t}" for r, _n, t in kept) + f" x batch {b} x {per_tok:,} B ({what})"
             + (" (fp32 after the k-bit upcast)" if hs != p else ""))
    if every > 1:
        add_term(terms, "layer activations (not checkpointed)", "activations",
                 sum(n * layer[t] for _r, n, t in kept) / tp,
                 " + ".join(f"{n} layers x {layer[t] / GIB:.3f} GiB (seq {t})" for _r, n, t in kept)
                 + f": one layer in {every} checkpointed")
    if op:
        notes.append(Note("est.selective_op", "selective (per-op) checkpointing as torchtitan's 'op' policy: each "
                          "layer keeps its input and the outputs of every other matmul and of attention; the rest is "
                          "recomputed in backward"))
    # one recomputed layer's working set: its saved tensors, and in its backward the gradients of the MLP's
    # product and of both its factors (in the dtype of its activations)
    pg = 4 if w.kbit_upcast != "none" else p
    recompute = (max(layer.values()) + 3 * max(t for _, t in stacks) * b * a.active_ffn * pg) / tp
    if loss > recompute:
        add_term(terms, "logits and loss", "activations", loss, loss_how + f"; more than one recomputed layer "
                 f"({recompute / GIB:.2f} GiB), which is never alive at the same time")
    else:
        add_term(terms, "one layer recomputed", "activations", recompute, "the working set of one block in backward"
                 + (f"; more than the loss's {loss / GIB:.2f} GiB, freed before it" if loss else ""))


def _alternate_mm_elements(a: Arch) -> int:
    """Elements per token torchtitan's per-op policy keeps of one block: the outputs of the 1st, 3rd, ... matmul in
    the order they run (q, k, v, o, then gate, up, down: q, v, gate and down for a gated MLP) and the attention
    output (torchtitan parallelize_llama.py _save_list: every aten.mm but every second one, and SDPA)."""
    outs = [o * (a.active_experts if a.experts > 1 and name in ("gate", "up", "down") else n)
            for name, _i, o, n in a.linear_modules()]
    return sum(outs[0::2]) + a.heads * a.head_dim


def _layer_activation_bytes(w: Workload, a: Arch, p: int, s: int, scores: bool = True) -> float:
    """Saved tensors of one block for backward (bytes), Korthikanti et al. re-derived per MLP and attention kind."""
    b, h = w.batch_size, a.hidden
    kvr = a.kv_heads / a.heads
    q = a.heads * a.head_dim
    # a LoRA layer keeps its input itself (read in place, once per distinct input) when it neither casts it (PEFT
    # does unless the input is already fp32) nor passes it through dropout
    shared = w.method in ("lora", "qlora") and w.lora_dropout == 0 and (w.framework != "hf" or fp32_input(w))
    if a.gated_mlp:
        f = a.expert_ffn * a.active_experts + a.expert_ffn * a.shared_experts if a.experts > 1 else a.ffn
        if w.method in ("lora", "qlora"):
            # a frozen linear keeps nothing of its input (its weight needs no gradient); only a LoRA that reads the
            # input in place keeps it (LitGPT / torchtune without dropout; PEFT's own copies are counted below)
            names = {m[0] for m in adapted_modules(w, a)}
            n1, n2 = (h if shared and names & {"q", "k", "v"} else 0), (h if shared and names & {"gate", "up"} else 0)
            prod, out_copy = (f if shared and "down" in names else 0), (q if shared and "o" in names else 0)
            if w.framework == "litgpt":
                # LitGPT's attention: with MHA, V is a view of the fused qkv output, which stays whole; with GQA,
                # K and V are expanded to every head before attention. A LoRA on some of q, k, v keeps the
                # adapters' output of the fused layer (its zero-padding path)
                kv_extra = (q + kvr * q) if a.kv_heads == a.heads else 2 * (q - kvr * q)
                qkv = names & {"q", "k", "v"}
                lora_out = sum({"q": q, "k": kvr * q, "v": kvr * q}[n] for n in qkv) if 0 < len(qkv) < 3 else 0
                out_copy += kv_extra + lora_out
        else:
            n1 = n2 = h
            prod, out_copy = f, q       # o_proj keeps its own contiguous copy of the attention output
        attn = s * b * (n1 + q + 2 * kvr * q + q + out_copy) * p    # norm out, Q, K, V, attention out (+ copy)
        mlp = s * b * (n2 + 3 * f + prod) * p                   # norm out, gate, up, act(gate), gate*up
        rb = p if (w.pure_bf16 or p == 4) else 4                # mixed precision keeps the residual stream in fp32
        # two RMSNorms, each saving its input in fp32 (a 16-bit input is copied up) and, when its weight trains, the
        # normalised input the weight's gradient needs
        norms = s * b * h * (4 + (rb if w.method in ("full", "freeze") else 0)) * 2
        router = s * b * a.experts * 4 if a.experts > 1 else 0
        total = attn + mlp + norms + router
    else:   # GPT-2 / BERT: GELU MLP and dropout (Korthikanti's 34 sbh with f = 4h)
        f = a.ffn
        attn = s * b * h * 11 * p / 2
        mlp = s * b * (3 * h + 4 * f) * p / 2
        norms = s * b * h * 4 * p / 2
        total = attn + mlp + norms
    if w.kbit_upcast != "none" and p < 4:
        # fp32 norm weights make both norm outputs fp32, and bitsandbytes casts its output back to that dtype: the
        # MLP's gate, up and act(gate) (fc and GELU for a plain MLP) are kept in fp32; the copies bitsandbytes casts
        # down for its matmuls are counted with the QLoRA term below
        mlp_kept = 3 * f if a.gated_mlp else 2 * f
        total += s * b * (mlp_kept + (2 * h if shared or w.method not in ("lora", "qlora") else 0)) * (4 - p)
    if not w.flash_attention and scores:
        total += a.heads * s * s * b * (p + 4 + (1 if a.dropout else 0))  # scores: fp32 softmax + cast copy
    if w.method in ("lora", "qlora"):
        mods = len(adapted_modules(w, a))
        a_out = 4 if w.framework == "hf" and (w.pure_bf16 or w.precision == "fp32") else p   # fp32 adapters
        total += mods * s * b * w.lora_rank * a_out                # A x outputs kept for B's gradient
        total += s * b * adapter_input_elements(w, a) * adapter_copy_bytes(w, p)
        if w.method == "qlora" and w.bnb_saves_input:
            # bitsandbytes up to 0.42 saves a 4-bit matmul's input for backward even though the weight is frozen
            # (ctx.tensors = (A, B); 0.43 keeps only B); a frozen 16-bit linear does not
            total += s * b * (2 * h + q + a.active_ffn) * p
    return total
