"""GPU memory of a training, fine-tuning or inference job: pure arithmetic, every term named.

Sources of the formulas (research/memory-estimation.md): bytes per parameter from the ZeRO paper and the HF
"model training anatomy" doc (18 B/param for mixed-precision AdamW); per-layer activations after Korthikanti et
al. 2022, re-derived for gated (SwiGLU) MLPs, grouped-query attention and memory-efficient attention; the KV cache
as 2 x layers x kv_heads x head_dim x bytes x tokens (MLA caches the compressed latent); NF4 with double
quantization at 4 + 8/64 + 32/(64*256) bits per weight (QLoRA paper and Manning's account of it).
"""
from __future__ import annotations

from bot.estimate.adapters import (adapted_modules, adapter_copy_bytes, adapter_input_elements, fp32_input, head_quantised,
                       nf4_weights, quant_formula, quant_notes, quantised_split, trainable_params)
from bot.estimate.arch import ALLOCATOR_SLACK, CUDA_CONTEXT_GIB, GIB, OPTIMIZER_BYTES, WEIGHT_BYTES, Arch, Note, arch_of
from bot.records.errors import InvalidRequest
from bot.records.models import MemoryEstimate, MemoryTerm, Workload
from bot.records.kb import Model


def validate(w: Workload) -> None:
    """Refuse combinations that cannot run, saying why and what to use instead."""
    if w.method == "qlora" and w.precision in ("fp32",):
        raise InvalidRequest("QLoRA keeps the base model in 4-bit NF4 and computes in 16-bit; fp32 does not apply",
                             fix="use --precision bf16 (or fp16 on GPUs without bf16) with --method qlora")
    if w.method == "inference" and w.task != "inference":
        raise InvalidRequest("method 'inference' is for serving", fix="use --method full/freeze/lora/qlora to train")
    if w.sharding in ("zero1", "zero2", "zero3", "fsdp") and w.gpus < 2:
        raise InvalidRequest(f"{w.sharding.upper()} shards model states across GPUs, and one GPU has nothing to "
                             "shard with", fix="give --gpus 2 or more, or use --sharding none")
    if w.offload == "full" and w.sharding not in ("zero3", "fsdp"):
        raise InvalidRequest("offloading the parameters needs ZeRO-3 or FSDP",
                             fix="add --sharding zero3 (or fsdp), or use --offload optimizer")
    if w.method in ("lora", "qlora") and w.precision in ("int8", "int4", "nf4") and w.method == "lora":
        raise InvalidRequest(f"LoRA over a {w.precision} base is QLoRA", fix="use --method qlora")
    if w.method in ("full", "freeze") and w.precision in ("int8", "int4", "nf4", "fp8"):
        raise InvalidRequest(f"full or freeze training with {w.precision} weights is not supported by the common "
                             "frameworks", fix="train in bf16/fp16 (mixed precision), or use --method qlora")
    if w.nodes > w.gpus:
        raise InvalidRequest(f"{w.nodes} nodes but only {w.gpus} GPUs in total", fix="--gpus counts all GPUs")
    if w.tensor_parallel > w.gpus:
        raise InvalidRequest("tensor parallel degree exceeds the GPU count", fix="lower --tensor-parallel")
    if w.fsdp_mixed_frozen and (w.method not in ("lora", "qlora") or w.sharding not in ("fsdp", "zero3")):
        raise InvalidRequest("frozen parameters sharing FSDP units only happens in LoRA/QLoRA under FSDP",
                             fix="add --sharding fsdp --gpus 2 or more with --method lora, or drop --fsdp-mixed-frozen")
    if w.bnb_saves_input and w.method != "qlora":
        raise InvalidRequest("only QLoRA runs its matmuls through bitsandbytes' 4-bit kernels",
                             fix="use --method qlora, or drop --bnb-saves-input")
    if w.kbit_upcast != "none" and w.method != "qlora":
        raise InvalidRequest("the fp32 upcast of prepare_model_for_kbit_training only happens to a quantised "
                             "base model", fix="use --method qlora, or drop --kbit-upcast")
    nf4 = nf4_weights(w)
    if not w.double_quant and not nf4:
        raise InvalidRequest("double quantisation is a setting of NF4 weights (QLoRA, or serving in nf4)",
                             fix="use --method qlora or --precision nf4, or drop --no-double-quant")
    if w.quantized_lm_head and not (nf4 or w.precision in ("int8", "int4", "fp8")):
        raise InvalidRequest("only a quantised model can have a quantised LM head",
                             fix="use --method qlora or a quantised --precision (nf4, int8, int4, fp8), or drop "
                                 "--quantize-lm-head")


def estimate_memory(w: Workload, model: Model | None = None) -> MemoryEstimate:
    validate(w)
    a = arch_of(model, w.params_b)
    terms: list[MemoryTerm] = []
    notes: list[Note] = []
    if a.derived:
        notes.append(Note("est.derived_arch", f"no architecture on file: dimensions scaled from a Llama-like "
                          f"{w.params_b:g}B model ({a.layers} layers, hidden {a.hidden}, GQA with {a.kv_heads} KV heads)",
                          params_b=f"{w.params_b:g}", layers=a.layers, hidden=a.hidden, kv_heads=a.kv_heads))
    if w.method == "inference":
        _inference(w, a, terms, notes)
        n = w.tensor_parallel if w.tensor_parallel > 1 else w.gpus
    else:
        _training(w, a, terms, notes)
        _peak_phase(w, terms, notes)
        n = w.gpus
    _overhead(terms)
    per_gpu = sum(t.gib for t in terms)
    allocated = sum(t.gib for t in terms if t.name not in ("CUDA context", "allocator slack"))
    breakdown = {c: 0.0 for c in ("weights", "gradients", "optimizer", "activations", "kv_cache", "overhead")}
    for t in terms:
        breakdown[t.category] += t.gib
    return MemoryEstimate(per_gpu_gib=round(per_gpu, 2), total_gib=round(per_gpu * n, 2),
                          allocated_gib=round(allocated, 2),
                          breakdown={k: round(v, 2) for k, v in breakdown.items()},
                          terms=terms,
                          assumptions=[str(x) for x in notes], gpus=n,
                          assumption_keys=[{"key": x.key, "ctx": x.ctx} for x in notes])


def _term(terms: list[MemoryTerm], name: str, category: str, nbytes: float, formula: str) -> None:
    if nbytes > 0:
        terms.append(MemoryTerm.model_construct(name=name, category=category, gib=round(nbytes / GIB, 4),
                                                formula=formula))


def _shards(w: Workload) -> tuple[int, int, int]:
    """How many ways (params, grads, optimizer) are split across GPUs."""
    n = w.gpus
    return {"none": (1, 1, 1), "ddp": (1, 1, 1), "zero1": (1, 1, n), "zero2": (1, n, n),
            "zero3": (n, n, n), "fsdp": (n, n, n)}[w.sharding]


def _training(w: Workload, a: Arch, terms: list[MemoryTerm], notes: list[str]) -> None:
    p_sh, g_sh, o_sh = _shards(w)
    half = w.precision in ("fp16", "bf16")
    P = a.params
    T = trainable_params(w, a)
    frozen = P - T if w.method != "qlora" else P
    opt_bytes = _optimizer_bytes(w, a)
    if w.method in ("full", "freeze"):
        if w.precision == "fp32":
            wbytes, gbytes, master = 4.0, 4.0, 0.0
        elif w.pure_bf16:
            wbytes, gbytes, master = 2.0, 2.0, 0.0
            opt_bytes = opt_bytes / 2 if w.optimizer == "adamw" else opt_bytes
        else:   # mixed precision: fp32 weights (the master copy) + the 16-bit copy autocast keeps for backward
            wbytes, gbytes, master = 4.0, 4.0, 2.0
        off_w = w.offload == "full"
        off_o = w.offload in ("optimizer", "full")
        shard_note = f" / {p_sh} GPUs" if p_sh > 1 else ""
        if off_w:
            _term(terms, "gathered layer parameters", "weights", 2 * a.layer_params * 2 if a.transformer else 0,
                  "2 blocks of 16-bit parameters gathered at a time (ZeRO-3 prefetch); the rest lives in CPU RAM")
        else:
            if w.method == "freeze":
                _term(terms, "frozen weights", "weights", frozen * (2.0 if half else 4.0) / p_sh,
                      f"{frozen / 1e9:.2f}B frozen params x {2 if half else 4} B{shard_note}")
                _term(terms, "trainable weights", "weights", T * wbytes / p_sh,
                      f"{T / 1e9:.2f}B trainable params x {wbytes:g} B{shard_note}")
            else:
                label = "fp32 weights" if wbytes == 4 else "16-bit weights"
                if off_o and half and not w.pure_bf16:   # ZeRO-Offload keeps the fp32 master copy on the CPU
                    _term(terms, "16-bit weights", "weights", P * 2 / p_sh, f"{P / 1e9:.2f}B x 2 B{shard_note}")
                else:
                    _term(terms, label, "weights", P * wbytes / p_sh, f"{P / 1e9:.2f}B x {wbytes:g} B{shard_note}")
                    if master and w.method == "full":
                        _term(terms, "16-bit weight copy (autocast)", "weights", P * master / p_sh,
                              f"{P / 1e9:.2f}B x {master:g} B{shard_note}")
        grad_b = 2.0 if (off_o and half) else gbytes
        if w.no_sync_accumulation and g_sh > 1:
            _term(terms, "unsharded gradients (no_sync)", "gradients", T * grad_b,
                  f"{T / 1e9:.2f}B trainable x {grad_b:g} B, not sharded while accumulating under no_sync()")
            notes.append(Note("est.no_sync", "gradient accumulation under no_sync(): every GPU holds unsharded "
                              "gradients until the syncing step; sync every micro-batch to keep them sharded"))
        else:
            gsh = f" / {g_sh} GPUs" if g_sh > 1 else ""
            _term(terms, "gradients", "gradients", T * grad_b / g_sh, f"{T / 1e9:.2f}B trainable x {grad_b:g} B{gsh}")
        if not off_o:
            osh = f" / {o_sh} GPUs" if o_sh > 1 else ""
            _term(terms, f"{w.optimizer} state", "optimizer", T * opt_bytes / o_sh,
                  f"{T / 1e9:.2f}B trainable x {opt_bytes:g} B{osh}")
        else:
            host = f"{T * (opt_bytes + 4) / GIB:.0f}"
            notes.append(Note("est.offload", "optimizer state (and the fp32 master weights) offloaded to CPU RAM: "
                              f"about {host} GiB of host memory across the job", host=host))
    else:   # LoRA / QLoRA: frozen base + small fp32 adapters
        if w.method == "qlora":
            lin, wb, emb, big = quantised_split(w, a) if a.transformer else (P, WEIGHT_BYTES["nf4"], 0, 0)
            _term(terms, "NF4 base weights", "weights", lin * wb, quant_formula(w, a, lin, wb))
            quant_notes(w, a, notes)
            upcast = w.kbit_upcast == "all"
            eb = 4 if upcast else 2
            frozen_bytes = lin * wb + emb * eb
            named = "embeddings" if head_quantised(w, a) else "embeddings and LM head"
            _term(terms, f"fp32 {named} (upcast)" if upcast else f"16-bit {named}",
                  "weights", emb * eb, f"{emb / 1e9:.2f}B params x {eb} B (not quantised"
                  + ("; cast to fp32 by prepare_model_for_kbit_training)" if upcast else ")"))
            if a.transformer:
                _term(terms, "dequantised weight buffer", "weights", big * 2, "largest quantised matrix in 16-bit")
        else:
            b = 2.0 if half else 4.0
            frozen_bytes = P * b
            _term(terms, "frozen base weights", "weights", P * b / p_sh,
                  f"{P / 1e9:.2f}B x {b:g} B" + (f" / {p_sh} GPUs" if p_sh > 1 else ""))
        if w.fsdp_mixed_frozen:
            _frozen_gradients(w, frozen_bytes, terms, notes)
        _term(terms, "adapter weights (fp32)", "weights", T * 4, f"{T / 1e6:.1f}M params (rank {w.lora_rank}, "
              f"{w.lora_targets}) x 4 B")
        _term(terms, "adapter gradients", "gradients", T * 4, f"{T / 1e6:.1f}M x 4 B")
        _term(terms, f"{w.optimizer} state", "optimizer", T * opt_bytes, f"{T / 1e6:.1f}M x {opt_bytes:g} B")
    if p_sh > 1 and w.offload != "full" and a.transformer:
        # FSDP / ZeRO-3 unshard the unit being computed and prefetch the next; this GPU's own shard is counted above
        gb = WEIGHT_BYTES["nf4"] if w.method == "qlora" else (2.0 if half else 4.0)
        _term(terms, "gathered layer parameters", "weights", 2 * a.layer_params * gb * (1 - 1 / p_sh),
              f"2 blocks x {a.layer_params / 1e6:.0f}M params x {gb:.3g} B unsharded at a time (the one computed and "
              "the one prefetched)")
    _activations(w, a, terms, notes)


def _frozen_gradients(w: Workload, stored: float, terms: list[MemoryTerm], notes: list[str]) -> None:
    """FSDP flattens each unit into one parameter; when frozen base weights share a unit with the adapters, the
    unit's gradient covers the frozen weights too (PyTorch FSDP docs), sharded unless accumulated under no_sync()."""
    n = 1 if w.no_sync_accumulation else w.gpus
    how = "unsharded under no_sync()" if n == 1 else f"/ {n} GPUs"
    _term(terms, "gradients of frozen weights (shared FSDP units)", "gradients", stored / n,
          f"a gradient as large as the {stored / GIB:.2f} GiB of frozen weights, {how}")
    notes.append(Note("est.fsdp_mixed_frozen", "frozen and trainable parameters share FSDP units, so gradients "
                      "are kept for the frozen weights too; wrap the adapters in their own units (PEFT's FSDP "
                      "auto-wrap policy) to avoid it"))


def _optimizer_bytes(w: Workload, a: Arch) -> float:
    if w.optimizer == "adafactor":   # factored second moment: one row and one column vector per matrix
        return 4.0 * 2 / max(a.hidden, 64) if a.transformer else 0.1
    return OPTIMIZER_BYTES[w.optimizer]


def _activations(w: Workload, a: Arch, terms: list[MemoryTerm], notes: list[str]) -> None:
    b, s = w.batch_size, w.seq_len
    p = 4 if w.precision == "fp32" else 2
    if not a.transformer:
        if a.basis_at:
            notes.append(Note("est.basis", f"activations per sample from a measurement: {a.basis_at}", at=a.basis_at))
        if a.activation_gib_per_sample is None and a.inference_gib_per_sample:
            per = a.inference_gib_per_sample * 3 * GIB * p / a.basis_bytes
            notes.append(Note("est.basis_from_inference", "training activations taken as 3x the measured "
                              "inference activations per sample"))
            _term(terms, "activations", "activations", per * (0.35 if w.grad_checkpointing else 1) * w.batch_size,
                  f"3 x {per / 3 / GIB:.2f} GiB per sample (inference basis) x batch {w.batch_size}")
            return
        if a.activation_gib_per_sample is None:
            per = 0.5 * GIB
            notes.append(Note("est.no_basis", "no measured activation basis for this model: 0.5 GiB per sample "
                              "assumed"))
        else:
            per = a.activation_gib_per_sample * GIB * p / a.basis_bytes
        if w.grad_checkpointing:
            per *= 0.35
        _term(terms, "activations", "activations", per * b, f"{per / GIB:.3f} GiB per sample x batch {b}")
        return
    h, L = a.hidden, a.layers
    tp = w.tensor_parallel
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
    # the loss's tensors, per logit: in forward the logits, their fp32 upcast and the log-softmax (p + 8 B); in
    # backward the saved log-softmax and the fp32 gradients of it and of the logits (12 B; the trainer has dropped
    # the model's output by then).
    if not a.vocab:
        loss, loss_how = 0.0, ""
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
    if w.grad_checkpointing:
        _term(terms, "checkpointed layer inputs", "activations", sum(n * t * b * h * hs for n, t in stacks) / tp,
              " + ".join(f"{n} layers x seq {t}" for n, t in stacks) + f" x batch {b} x hidden {h} x {hs} B"
              + (" (fp32 after the k-bit upcast)" if hs != p else ""))
        # one recomputed layer's working set: its saved tensors, and in its backward the gradients of the MLP's
        # product and of both its factors (in the dtype of its activations). The loss's backward finishes before
        # the first layer is recomputed, so the peak is the larger of the two, not their sum
        pg = 4 if w.kbit_upcast != "none" else p
        recompute = (max(layer.values()) + 3 * max(t for _, t in stacks) * b * a.active_ffn * pg) / tp
        if loss > recompute:
            _term(terms, "logits and loss", "activations", loss, loss_how + f"; more than one recomputed layer "
                  f"({recompute / GIB:.2f} GiB), which is never alive at the same time")
        else:
            _term(terms, "one layer recomputed", "activations", recompute, "the working set of one block in backward"
                  + (f"; more than the loss's {loss / GIB:.2f} GiB, freed before it" if loss else ""))
    else:
        attn = "memory-efficient attention" if w.flash_attention else "eager attention (s^2 scores kept)"
        if w.method in ("lora", "qlora") and w.framework == "hf":
            copies = sum(n * t for n, t in stacks) * b * adapter_input_elements(w, a) * adapter_copy_bytes(w, p)
            if copies:
                gib = f"{copies / tp / GIB:.1f}"
                notes.append(Note("est.lora_input_copies", "PEFT keeps its adapters in fp32, so each adapted layer "
                                  f"saves its own copy of its input: {gib} GiB of the activations without gradient "
                                  "checkpointing (LitGPT and torchtune layers do not copy)", gib=gib))
        _term(terms, "layer activations", "activations", sum(n * layer[t] for n, t in stacks) / tp,
              " + ".join(f"{n} layers x {layer[t] / GIB:.3f} GiB (seq {t})" for n, t in stacks)
              + f", batch {b}, {attn}")
        if loss:
            _term(terms, "logits and loss", "activations", loss, loss_how)


# terms that exist in forward and backward only: autocast's cache of 16-bit weights, FSDP's unsharded blocks
_FORWARD_ONLY = ("16-bit weight copy (autocast)", "gathered layer parameters")


def _peak_phase(w: Workload, terms: list[MemoryTerm], notes: list[str]) -> None:
    """Training peaks either in forward/backward (activations) or in the optimizer step (gradients, state and the
    step's temporaries), not both: activations are freed before the step, and without gradient accumulation
    zero_grad(set_to_none=True) frees the gradients before the next forward."""
    G = sum(t.gib for t in terms if t.category == "gradients")
    if G < 0.5:         # LoRA's adapter gradients: below the estimate's resolution, counted as always alive
        return
    O = sum(t.gib for t in terms if t.category == "optimizer")
    temp = O / 2 if w.optimizer == "adamw" and w.adamw_impl == "foreach" else 0.0    # one moment-sized list
    copy = sum(t.gib for t in terms if t.name in _FORWARD_ONLY)
    acts = sum(t.gib for t in terms if t.category == "activations")
    keep = w.grad_accumulation > 1 or w.no_sync_accumulation or not w.zero_grad_frees
    total = sum(t.gib for t in terms)
    backward = total if keep else total - G
    step = total - copy - acts + temp
    if step > backward:
        terms[:] = [t for t in terms if t.category != "activations" and t.name not in _FORWARD_ONLY]
        _term(terms, "AdamW step temporary (foreach)", "optimizer", temp * GIB,
              "one moment-sized list torch.optim.AdamW(foreach=True) allocates in its step")
        notes.append(Note("est.step_peak", f"the peak is the optimizer step ({step:.1f} GiB: weights, gradients, "
                          f"optimizer state{' and its foreach temporary' if temp else ''}); the activations "
                          f"({acts:.1f} GiB) are freed by then", gib=f"{step:.1f}", acts=f"{acts:.1f}"))
    elif not keep:
        terms[:] = [t for t in terms if t.category != "gradients"]
        notes.append(Note("est.grads_freed", f"gradients ({G:.1f} GiB) are freed by zero_grad before each forward, "
                          "so they are never alive with the activations; gradient accumulation would keep them",
                          gib=f"{G:.1f}"))


def _layer_activation_bytes(w: Workload, a: Arch, p: int, s: int) -> float:
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
    if not w.flash_attention:
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


def _inference(w: Workload, a: Arch, terms: list[MemoryTerm], notes: list[str]) -> None:
    tp = w.tensor_parallel if w.tensor_parallel > 1 else w.gpus
    P = a.params
    wb = WEIGHT_BYTES[w.precision]
    if w.precision in ("int8", "int4", "nf4", "fp8") and a.transformer:
        lin, wb, emb, big = quantised_split(w, a)
        quant_notes(w, a, notes)
        _term(terms, f"{w.precision} weights", "weights", lin * wb / tp,
              quant_formula(w, a, lin, wb) + (f" / TP {tp}" if tp > 1 else ""))
        _term(terms, "16-bit embeddings" + ("" if head_quantised(w, a) else " and LM head"), "weights", emb * 2 / tp,
              f"{emb / 1e9:.2f}B x 2 B")
        if w.precision == "nf4" and w.context > 1:
            # bitsandbytes' 4-bit matmul dequantises the whole matrix for a multi-token (prefill) input
            _term(terms, "dequantised weight buffer", "weights", big * 2 / tp, "largest quantised matrix in 16-bit, "
                  "during prefill")
    else:
        _term(terms, f"{w.precision} weights", "weights", P * wb / tp,
              f"{P / 1e9:.2f}B params x {wb:g} B" + (f" / TP {tp}" if tp > 1 else ""))
    if not a.transformer:
        if a.basis_at:
            notes.append(Note("est.basis", f"activations per sample from a measurement: {a.basis_at}", at=a.basis_at))
        scale = (4 if w.precision == "fp32" else 2) / a.basis_bytes
        if a.inference_gib_per_sample:
            # not scaled by precision: SDXL's measured working set per image was the same in fp32 and fp16
            per = a.inference_gib_per_sample * GIB
            _term(terms, "activations (forward only)", "activations", per * w.concurrency,
                  f"{per / GIB:.2f} GiB per sample (measured basis) x {w.concurrency}")
            return
        if a.activation_gib_per_sample is None:
            notes.append(Note("est.no_basis", "no measured activation basis for this model: 0.5 GiB per sample "
                              "assumed"))
        per = (a.activation_gib_per_sample or 0.5) * GIB * scale
        _term(terms, "activations (forward only)", "activations", per * w.concurrency * 0.3,
              f"30% of the training activations per sample x {w.concurrency}")
        return
    kv_bytes = 4 if w.precision == "fp32" else 2
    ctx = w.context
    if not a.generates:     # an encoder (BERT, ViT) runs one forward pass per request: no KV cache to keep
        tokens = a.encoder_tokens or ctx
        work = w.concurrency * tokens * (4 * a.hidden + 2 * a.ffn) * 2 / tp + \
            (a.heads * tokens * tokens * w.concurrency * 4 if not w.flash_attention else 0)
        _term(terms, "activations and workspace", "activations", work,
              f"one block's intermediates over {w.concurrency} x {tokens} tokens")
        return
    kv_layers = a.decoder_layers or a.layers
    full_layers = kv_layers * (1 - a.sliding_share)
    win_layers = kv_layers * a.sliding_share
    win_ctx = min(ctx, a.sliding_window) if a.sliding_window else ctx
    per_seq = a.kv_dim * kv_bytes * (full_layers * ctx + win_layers * win_ctx)
    kind = "MLA latent" if a.kv_dim and a.kv_heads == a.heads and a.kv_dim < 2 * a.heads * a.head_dim else \
        f"{a.kv_heads} KV heads x head_dim {a.head_dim} x K,V"
    _term(terms, "KV cache", "kv_cache", per_seq * w.concurrency / tp,
          f"{kv_layers} {'decoder ' if a.decoder_layers else ''}layers x {kind} ({a.kv_dim} values) x {ctx} tokens x "
          f"{w.concurrency} sequences x {kv_bytes} B" + (f" / TP {tp}" if tp > 1 else ""))
    if a.decoder_layers:
        # cross-attention keys and values over the encoder output, computed once per sequence and kept
        enc = a.encoder_tokens or ctx
        _term(terms, "cross-attention KV cache", "kv_cache", a.kv_dim * kv_bytes * kv_layers * enc * w.concurrency / tp,
              f"{kv_layers} decoder layers x {a.kv_dim} values x {enc} encoder positions x {w.concurrency} sequences "
              f"x {kv_bytes} B")
    if a.sliding_window and a.sliding_share:
        notes.append(Note("est.sliding", f"{a.sliding_share:.0%} of layers use a {a.sliding_window}-token sliding "
                          "window", share=f"{a.sliding_share:.0%}", window=a.sliding_window))
    # prefill working set of one block for the longest prompt chunk, and last-token logits
    chunk = min(a.encoder_tokens or ctx, 8192) * min(w.concurrency, 4) if ctx > 1 else w.concurrency
    work = chunk * (4 * a.hidden + 3 * a.active_ffn) * 2 / tp + w.concurrency * a.vocab * 4
    _term(terms, "activations and workspace", "activations", work,
          f"one block's prefill intermediates over {chunk} tokens + logits of {w.concurrency} sequences")


def _overhead(terms: list[MemoryTerm]) -> None:
    tensors = sum(t.gib for t in terms) * GIB
    _term(terms, "allocator slack", "overhead", tensors * ALLOCATOR_SLACK,
          f"{ALLOCATOR_SLACK:.0%} of tensor memory (PyTorch caching allocator fragmentation)")
    _term(terms, "CUDA context", "overhead", CUDA_CONTEXT_GIB * GIB, "CUDA context, cuBLAS/cuDNN kernels")
