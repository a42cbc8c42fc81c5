"""GPU memory of a training, fine-tuning or inference job: pure arithmetic, every term named.

Sources of the formulas (research/memory-estimation.md): bytes per parameter from the ZeRO paper and the HF
"model training anatomy" doc (18 B/param for mixed-precision AdamW); per-layer activations after Korthikanti et
al. 2022, re-derived for gated (SwiGLU) MLPs, grouped-query attention and memory-efficient attention; the KV cache
as 2 x layers x kv_heads x head_dim x bytes x tokens (MLA caches the compressed latent); NF4 with double
quantization at 4 + 8/64 + 32/(64*256) bits per weight (QLoRA paper and Manning's account of it).
"""
from __future__ import annotations

from bot.estimate.adapters import head_quantised, nf4_weights, quant_formula, quant_notes, quantised_split, trainable_params
from bot.estimate.activations import checkpoint_mode, training_activations
from bot.estimate.arch import (ALLOCATOR_SLACK, ALLOCATOR_SLACK_SHARDED, CHECKPOINTED_SLACK, CUDA_CONTEXT_GIB, GIB, NF4_SINGLE_QUANT_BYTES, OPTIMIZER_BYTES,
                               WEIGHT_BYTES, Arch, Note, add_term, arch_of)
from bot.estimate.parallel import Split, check_expert_parallel, split_of
from bot.estimate.serving import serving_terms
from bot.records.errors import InvalidRequest
from bot.records.models import PARAM_SHARDED, MemoryBasis, MemoryEstimate, MemoryTerm, Workload
from bot.records.kb import Model


def validate(w: Workload) -> None:
    """Refuse combinations that cannot run, saying why and what to use instead."""
    if w.method == "qlora" and w.precision in ("fp32",):
        raise InvalidRequest("QLoRA keeps the base model in 4-bit NF4 and computes in 16-bit; fp32 does not apply",
                             fix="use --precision bf16 (or fp16 on GPUs without bf16) with --method qlora")
    if w.method == "inference" and w.task != "inference":
        raise InvalidRequest("method 'inference' is for serving", fix="use --method full/freeze/lora/qlora to train")
    if w.sharding in ("zero1", "zero2", "zero3", "fsdp", "hsdp") and w.gpus < 2:
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
    if w.checkpoint_every > 1 and checkpoint_mode(w) != "full":
        raise InvalidRequest("checkpointing one layer in N is a form of full checkpointing",
                             fix="add --checkpointing full, or drop --checkpoint-every")
    if w.frozen_dtype and w.method not in ("lora", "freeze"):
        raise InvalidRequest(f"--frozen-dtype sets the frozen base of LoRA or freeze tuning; {w.method} has none "
                             "in 16 or 32 bits", fix="use --kbit-upcast for a QLoRA base's unquantised parts, or drop "
                             "--frozen-dtype")
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
    check_expert_parallel(w, a, model.name if model else f"a {w.params_b:g}B model")
    terms: list[MemoryTerm] = []
    notes: list[Note] = []
    if a.derived:
        notes.append(Note("est.derived_arch", f"no architecture on file: dimensions scaled from a Llama-like "
                          f"{w.params_b:g}B model ({a.layers} layers, hidden {a.hidden}, GQA with {a.kv_heads} KV heads)",
                          params_b=f"{w.params_b:g}", layers=a.layers, hidden=a.hidden, kv_heads=a.kv_heads))
    if w.method == "inference":
        serving_terms(w, a, terms, notes)
        n = w.tensor_parallel if w.tensor_parallel > 1 else w.gpus
    else:
        _training(w, a, terms, notes)
        _peak_phase(w, terms, notes)
        n = w.gpus
    _overhead(w, terms)
    per_gpu = sum(t.gib for t in terms)
    allocated = sum(t.gib for t in terms if t.category != "overhead")
    breakdown = {c: 0.0 for c in ("weights", "gradients", "optimizer", "activations", "kv_cache", "overhead")}
    for t in terms:
        breakdown[t.category] += t.gib
    return MemoryEstimate(per_gpu_gib=round(per_gpu, 2), total_gib=round(per_gpu * n, 2),
                          allocated_gib=round(allocated, 2),
                          breakdown={k: round(v, 2) for k, v in breakdown.items()},
                          terms=terms,
                          assumptions=[str(x) for x in notes], gpus=n,
                          assumption_keys=[{"key": x.key, "ctx": x.ctx} for x in notes],
                          reserved_gib=round(allocated + sum(t.gib for t in terms if t.name == "allocator slack"), 2),
                          bases=measurement_bases(terms))


def measurement_bases(terms: list[MemoryTerm]) -> list[MemoryBasis]:
    """The three readings a published figure can be (they differ by GiBs): PyTorch's peak allocated counts the
    tensors, peak reserved adds the caching allocator's slack, the device total (nvidia-smi) adds everything outside
    PyTorch's allocator: CUDA context, kernels, NCCL, an engine's CUDA graphs."""
    tensors = [t for t in terms if t.category != "overhead"]
    slack = [t for t in terms if t.name == "allocator slack"]
    rest = [t for t in terms if t.category == "overhead" and t.name != "allocator slack"]
    out = []
    for name, reads, part in (("allocated", "torch.cuda.max_memory_allocated", tensors),
                              ("reserved", "torch.cuda.max_memory_reserved", tensors + slack),
                              ("device_total", "nvidia-smi / NVML memory used", tensors + slack + rest)):
        out.append(MemoryBasis(name=name, gib=round(sum(t.gib for t in part), 2), reads=reads,
                               includes=[t.name for t in part]))
    return out


def _shards(w: Workload) -> tuple[int, int, int]:
    """How many ways (params, grads, optimizer) are split across GPUs; hybrid sharding splits them over one node's
    GPUs only (every node holds a whole copy)."""
    n = w.gpus
    local = max(1, n // max(1, w.nodes))
    return {"none": (1, 1, 1), "ddp": (1, 1, 1), "zero1": (1, 1, n), "zero2": (1, n, n),
            "zero3": (n, n, n), "fsdp": (n, n, n), "hsdp": (local, local, local)}[w.sharding]


def _ways(sh: int, split: Split | None) -> tuple[float, str]:
    """What one GPU's share of a parameter-sized state is divided by, and the formula's words for it: ZeRO's shards
    when it shards that state (over all GPUs: each group's data-parallel replicas split what TP, PP and EP left),
    else the model-parallel split (TP/PP of the dense part, EP/PP of the experts), else nothing."""
    if sh > 1:
        return sh, f" / {sh} GPUs"
    if split is None:
        return 1, ""
    return split.params / split.local, f", {split.local / 1e9:.2f}B of them on this GPU ({split.how()})"


def _training(w: Workload, a: Arch, terms: list[MemoryTerm], notes: list[str]) -> None:
    split = split_of(w, a)
    if split is not None and w.method not in ("full", "freeze"):
        raise InvalidRequest("tensor, pipeline and expert parallelism are modelled for full and freeze training",
                             fix="use --sharding (ZeRO/FSDP) to split LoRA or QLoRA training, or --method full")
    zero_p, zero_g, zero_o = _shards(w)
    (p_sh, shard_note), (g_sh, gsh_note), (o_sh, osh_note) = (_ways(x, split) for x in (zero_p, zero_g, zero_o))
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
        if off_w:
            _offload_note(w, P * wbytes, notes)
        else:
            if w.method == "freeze":
                fb = frozen_bytes_per_param(w)
                add_term(terms, "frozen weights", "weights", frozen * fb / p_sh,
                         f"{frozen / 1e9:.2f}B frozen params x {fb:g} B{shard_note}")
                add_term(terms, "trainable weights", "weights", T * wbytes / p_sh,
                      f"{T / 1e9:.2f}B trainable params x {wbytes:g} B{shard_note}")
            else:
                label = "fp32 weights" if wbytes == 4 else "16-bit weights"
                if off_o and half and not w.pure_bf16:   # ZeRO-Offload keeps the fp32 master copy on the CPU
                    add_term(terms, "16-bit weights", "weights", P * 2 / p_sh, f"{P / 1e9:.2f}B x 2 B{shard_note}")
                else:
                    add_term(terms, label, "weights", P * wbytes / p_sh, f"{P / 1e9:.2f}B x {wbytes:g} B{shard_note}")
                    if master and w.method == "full":
                        add_term(terms, "16-bit weight copy (autocast)", "weights", P * master / p_sh,
                              f"{P / 1e9:.2f}B x {master:g} B{shard_note}")
                    if w.fp8_compute and w.method == "full":
                        # Transformer Engine casts a layer's weights to FP8 (and their transpose) as the layer runs
                        # and frees them after its backward: one layer's worth of this GPU's share is in flight
                        per_layer = P / p_sh / max(1.0, a.layers / w.pipeline_parallel)
                        add_term(terms, "FP8 weight copies (Transformer Engine)", "weights", per_layer * 2,
                                 f"one layer's {per_layer / 1e9:.3g}B params x 2 B (FP8 weight and its transpose)")
        grad_b = 2.0 if (off_o and half) else gbytes
        if w.no_sync_accumulation and zero_g > 1:
            add_term(terms, "unsharded gradients (no_sync)", "gradients", T * grad_b,
                  f"{T / 1e9:.2f}B trainable x {grad_b:g} B, not sharded while accumulating under no_sync()")
            notes.append(Note("est.no_sync", "gradient accumulation under no_sync(): every GPU holds unsharded "
                              "gradients until the syncing step; sync every micro-batch to keep them sharded"))
        else:
            add_term(terms, "gradients", "gradients", T * grad_b / g_sh,
                     f"{T / 1e9:.2f}B trainable x {grad_b:g} B{gsh_note}")
        if not off_o:
            add_term(terms, f"{w.optimizer} state", "optimizer", T * opt_bytes / o_sh,
                  f"{T / 1e9:.2f}B trainable x {opt_bytes:g} B{osh_note}")
        else:
            host = f"{T * (opt_bytes + 4) / GIB:.0f}"
            notes.append(Note("est.offload", "optimizer state (and the fp32 master weights) offloaded to CPU RAM: "
                              f"about {host} GiB of host memory across the job", host=host))
    else:   # LoRA / QLoRA: frozen base + small fp32 adapters
        _adapter_training(w, a, T, opt_bytes, terms, notes)
    if a.transformer and (zero_p > 1 or w.offload == "full"):
        _in_flight(w, a, zero_p, split, terms)
    training_activations(w, a, terms, notes)


def _adapter_training(w: Workload, a: Arch, T: float, opt_bytes: float, terms: list[MemoryTerm],
                      notes: list[str]) -> None:
    """LoRA / QLoRA: the frozen base (quantised or not) and the adapters with their gradients and optimizer state.
    Sharding divides every one of them, quantised weights included (FSDP shards bitsandbytes' 4-bit weights through
    their quant_storage dtype, ZeRO-3 likewise); offloading the parameters moves all of them to CPU RAM (FSDP
    CPUOffload(offload_params=True) keeps the gradients and the optimizer step there too)."""
    p_sh, g_sh, o_sh = _shards(w)
    off = w.offload == "full"
    on_gpu = 0.0 if off else 1.0
    shard = f" / {p_sh} GPUs" if p_sh > 1 else ""
    if w.method == "qlora":
        lin, wb, emb, big = quantised_split(w, a) if a.transformer else (a.params, WEIGHT_BYTES["nf4"], 0, 0)
        if p_sh > 1 or off:
            # FSDP / ZeRO-3 shard (or offload) the packed 4-bit data, stored in a float dtype (quant_storage); the
            # quantisation constants are bitsandbytes QuantState metadata on each Linear4bit, which they never touch
            consts = lin * (wb - 0.5)
            add_term(terms, "NF4 base weights", "weights", lin * 0.5 / p_sh * on_gpu,
                     f"{lin / 1e9:.2f}B linear params x 4 bits (packed in quant_storage)" + shard)
            add_term(terms, "NF4 quantisation constants (every GPU)", "weights", consts,
                     f"{lin / 1e9:.2f}B x {(wb - 0.5) * 8:.3g} bits of absmax (QuantState: neither sharded nor "
                     "offloaded)")
        else:
            add_term(terms, "NF4 base weights", "weights", lin * wb, quant_formula(w, a, lin, wb))
        quant_notes(w, a, notes)
        upcast = w.kbit_upcast == "all"
        eb = 4 if upcast else 2
        frozen_bytes = lin * wb + emb * eb
        named = "embeddings" if head_quantised(w, a) else "embeddings and LM head"
        add_term(terms, f"fp32 {named} (upcast)" if upcast else f"16-bit {named}",
                 "weights", emb * eb / p_sh * on_gpu, f"{emb / 1e9:.2f}B params x {eb} B (not quantised"
                 + ("; cast to fp32 by prepare_model_for_kbit_training)" if upcast else ")") + shard)
        if a.transformer:
            add_term(terms, "dequantised weight buffer", "weights", big * 2, "largest quantised matrix in 16-bit")
    else:
        b = frozen_bytes_per_param(w)
        frozen_bytes = a.params * b
        add_term(terms, "frozen base weights", "weights", frozen_bytes / p_sh * on_gpu,
                 f"{a.params / 1e9:.2f}B x {b:g} B" + (f" ({w.frozen_dtype})" if w.frozen_dtype else "") + shard)
    if off:
        _offload_note(w, frozen_bytes + T * (8 + opt_bytes), notes)
        return
    if w.fsdp_mixed_frozen:
        _frozen_gradients(w, frozen_bytes, terms, notes)
    add_term(terms, "adapter weights (fp32)", "weights", T * 4 / p_sh, f"{T / 1e6:.1f}M params (rank {w.lora_rank}, "
             f"{w.lora_targets}) x 4 B" + shard)
    add_term(terms, "adapter gradients", "gradients", T * 4 / g_sh, f"{T / 1e6:.1f}M x 4 B"
             + (f" / {g_sh} GPUs" if g_sh > 1 else ""))
    if w.offload == "optimizer":
        return
    add_term(terms, f"{w.optimizer} state", "optimizer", T * opt_bytes / o_sh, f"{T / 1e6:.1f}M x {opt_bytes:g} B"
             + (f" / {o_sh} GPUs" if o_sh > 1 else ""))


def frozen_bytes_per_param(w: Workload) -> float:
    """Bytes of a frozen (not quantised) base weight: its own dtype when given, else the precision's."""
    if w.frozen_dtype:
        return WEIGHT_BYTES[w.frozen_dtype]
    return 2.0 if w.precision in ("fp16", "bf16") else 4.0


def _in_flight(w: Workload, a: Arch, p_sh: int, split: Split | None, terms: list[MemoryTerm]) -> None:
    """FSDP / ZeRO-3 unshard the block being computed and prefetch the next (ZeRO-3's prefetch, FSDP's
    backward_prefetch), whatever the weights' dtype; with the parameters offloaded both come from CPU RAM whole,
    otherwise this GPU's own shard of them is already counted. Under tensor or expert parallelism a block is
    gathered only within the data-parallel group: its TP share of the dense part and its EP share of the experts."""
    if w.method == "qlora":
        gb, what = (WEIGHT_BYTES["nf4"] if w.double_quant else NF4_SINGLE_QUANT_BYTES), "NF4 params"
    elif w.method in ("lora", "freeze"):
        gb, what = frozen_bytes_per_param(w), "params"
    else:   # gathered in the compute dtype (FSDP MixedPrecision's param_dtype, ZeRO's 16-bit copy)
        gb, what = (2.0 if w.precision in ("fp16", "bf16") else 4.0), "params"
    block = a.layer_params
    if split is not None:
        moe_layers = max(1, a.layers - a.dense_layers)
        experts = split.experts / moe_layers
        block = (block - experts) / split.tp + experts / split.ep
        p_sh = split.dp      # the dense part's ZeRO group (the experts' is smaller: the same 1/p_sh or less resident)
    resident = 0.0 if w.offload == "full" else 1 / p_sh
    add_term(terms, "gathered layer parameters", "weights", 2 * block * gb * (1 - resident),
             f"2 blocks x {block / 1e6:.0f}M {what} x {gb:.3g} B unsharded at a time (the one computed and "
             "the one prefetched)" + ("; the rest lives in CPU RAM" if w.offload == "full" else ""))
    if w.sharding == "fsdp" and a.vocab:
        # what no block holds (embeddings, final norm, LM head) is the root unit, which FSDP does not reshard after
        # forward (FSDP1 _post_forward_reshard: "Do not free the root's parameters in the post-forward";
        # FSDP2's root likewise): it stays unsharded from the forward through the backward
        eb = 4 if (w.kbit_upcast == "all" or w.precision == "fp32") else 2
        add_term(terms, "unsharded root unit (embeddings, LM head)", "weights",
                 a.embedding_params * eb * (1 - resident),
                 f"{a.embedding_params / 1e9:.2f}B params x {eb} B kept whole from forward to backward (FSDP's root)")


def _checkpointed_slack(w: Workload, terms: list[MemoryTerm], tensors: float) -> None:
    """Reserved beyond allocated for a checkpointed job on one GPU, by allocator (arch.CHECKPOINTED_SLACK): a share
    of the activations alive at the peak, which recomputation frees and re-requests at shifting sizes, and a share
    of the rest."""
    acts = sum(t.gib for t in terms if t.category == "activations") * GIB
    rest_share, act_share = CHECKPOINTED_SLACK[w.allocator]
    name = "expandable segments" if w.allocator == "expandable_segments" else "caching allocator"
    add_term(terms, "allocator slack", "overhead", (tensors - acts) * rest_share + acts * act_share,
             f"{rest_share:.0%} of weights and states + {act_share:.0%} of the activations (PyTorch {name}, "
             "checkpointed: recomputation re-requests activation blocks of shifting sizes)")


def _offload_note(w: Workload, host_bytes: float, notes: list[str]) -> None:
    host = f"{host_bytes / GIB:.0f}"
    notes.append(Note("est.offload_params", f"parameters offloaded to CPU RAM ({w.sharding.upper()} parameter "
                      f"offload): about {host} GiB of host memory across the job; on the GPU only the blocks being "
                      "computed", host=host, sharding=w.sharding.upper()))


def _frozen_gradients(w: Workload, stored: float, terms: list[MemoryTerm], notes: list[str]) -> None:
    """FSDP flattens each unit into one parameter; when frozen base weights share a unit with the adapters, the
    unit's gradient covers the frozen weights too (PyTorch FSDP docs), sharded unless accumulated under no_sync()."""
    n = 1 if w.no_sync_accumulation else w.gpus
    how = "unsharded under no_sync()" if n == 1 else f"/ {n} GPUs"
    add_term(terms, "gradients of frozen weights (shared FSDP units)", "gradients", stored / n,
          f"a gradient as large as the {stored / GIB:.2f} GiB of frozen weights, {how}")
    notes.append(Note("est.fsdp_mixed_frozen", "frozen and trainable parameters share FSDP units, so gradients "
                      "are kept for the frozen weights too; wrap the adapters in their own units (PEFT's FSDP "
                      "auto-wrap policy) to avoid it"))


def _optimizer_bytes(w: Workload, a: Arch) -> float:
    if w.optimizer == "adafactor":   # factored second moment: one row and one column vector per matrix
        return 4.0 * 2 / max(a.hidden, 64) if a.transformer else 0.1
    return OPTIMIZER_BYTES[w.optimizer]


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
        add_term(terms, "AdamW step temporary (foreach)", "optimizer", temp * GIB,
              "one moment-sized list torch.optim.AdamW(foreach=True) allocates in its step")
        notes.append(Note("est.step_peak", f"the peak is the optimizer step ({step:.1f} GiB: weights, gradients, "
                          f"optimizer state{' and its foreach temporary' if temp else ''}); the activations "
                          f"({acts:.1f} GiB) are freed by then", gib=f"{step:.1f}", acts=f"{acts:.1f}"))
    elif not keep:
        terms[:] = [t for t in terms if t.category != "gradients"]
        notes.append(Note("est.grads_freed", f"gradients ({G:.1f} GiB) are freed by zero_grad before each forward, "
                          "so they are never alive with the activations; gradient accumulation would keep them",
                          gib=f"{G:.1f}"))


def _overhead(w: Workload, terms: list[MemoryTerm]) -> None:
    tensors = sum(t.gib for t in terms if t.category != "overhead") * GIB
    sharded = w.method != "inference" and w.sharding in PARAM_SHARDED
    if w.method != "inference" and w.checkpointing == "full" and not sharded:     # measured: full checkpointing
        _checkpointed_slack(w, terms, tensors)
    else:
        slack = ALLOCATOR_SLACK_SHARDED if sharded else ALLOCATOR_SLACK
        add_term(terms, "allocator slack", "overhead", tensors * slack,
                 f"{slack:.0%} of tensor memory (PyTorch caching allocator fragmentation"
                 + ("; sharded: all-gathers on their own CUDA stream)" if sharded else ")"))
    add_term(terms, "CUDA context", "overhead", CUDA_CONTEXT_GIB * GIB, "CUDA context, cuBLAS/cuDNN kernels")
