"""Serving memory: weights (quantised or not, split by tensor parallelism), the KV cache, and the working set of the
forward pass."""
from __future__ import annotations

from dataclasses import dataclass

from bot.estimate.adapters import head_quantised, quant_formula, quant_notes, quantised_split
from bot.estimate.activations import pixel_scale
from bot.estimate.arch import GIB, WEIGHT_BYTES, Arch, Note, add_term
from bot.records.models import MemoryTerm, Workload

# Bytes per cached K/V element when the cache is stored in a type of its own (vLLM --kv-cache-dtype fp8)
KV_BYTES = {"fp8": 1, "int8": 1, "int4": 0.5, "nf4": 0.5}


def serving_terms(w: Workload, a: Arch, terms: list[MemoryTerm], notes: list[str]) -> None:
    """The memory terms of a serving replica: weights, KV cache, prefill working set, engine workspace.

    Kept as one function (about 60 lines) on purpose: the weight split, the tensor-parallel degree and the engine
    decided at the top feed every term below, and the terms read in the order an engine allocates them."""
    tp = w.tensor_parallel if w.tensor_parallel > 1 else w.gpus
    P = a.params
    wb = WEIGHT_BYTES[w.precision]
    if w.precision in ("int8", "int4", "nf4", "fp8") and a.transformer:
        lin, wb, emb, big = quantised_split(w, a)
        quant_notes(w, a, notes)
        add_term(terms, f"{w.precision} weights", "weights", lin * wb / tp,
              quant_formula(w, a, lin, wb) + (f" / TP {tp}" if tp > 1 else ""))
        add_term(terms, "16-bit embeddings" + ("" if head_quantised(w, a) else " and LM head"), "weights", emb * 2 / tp,
              f"{emb / 1e9:.2f}B x 2 B")
        if w.precision == "nf4" and w.context > 1:
            # bitsandbytes' 4-bit matmul dequantises the whole matrix for a multi-token (prefill) input
            add_term(terms, "dequantised weight buffer", "weights", big * 2 / tp, "largest quantised matrix in 16-bit, "
                  "during prefill")
    else:
        add_term(terms, f"{w.precision} weights", "weights", P * wb / tp,
              f"{P / 1e9:.2f}B params x {wb:g} B" + (f" / TP {tp}" if tp > 1 else ""))
    if not a.transformer:
        if a.basis_at:
            notes.append(Note("est.basis", f"activations per sample from a measurement: {a.basis_at}", at=a.basis_at))
        scale = (4 if w.precision == "fp32" else 2) / a.basis_bytes
        if a.inference_gib_per_sample:
            # not scaled by precision: SDXL's measured working set per image was the same in fp32 and fp16
            per = a.inference_gib_per_sample * GIB * pixel_scale(w, a)
            add_term(terms, "activations (forward only)", "activations", per * w.concurrency,
                  f"{per / GIB:.2f} GiB per sample (measured basis) x {w.concurrency}")
            return
        if a.activation_gib_per_sample is None:
            notes.append(Note("est.no_basis", "no measured activation basis for this model: 0.5 GiB per sample "
                              "assumed"))
        per = (a.activation_gib_per_sample or 0.5) * GIB * scale * pixel_scale(w, a)
        add_term(terms, "activations (forward only)", "activations", per * w.concurrency * 0.3,
              f"30% of the training activations per sample x {w.concurrency}")
        return
    kv_bytes = KV_BYTES.get(w.kv_dtype or "", 4 if w.precision == "fp32" else 2)   # an FP8/INT8 KV cache: 1 B
    ctx = w.context
    if not a.generates:     # an encoder (BERT, ViT) runs one forward pass per request: no KV cache to keep
        tokens = a.encoder_tokens or ctx
        work = w.concurrency * tokens * (4 * a.hidden + 2 * a.ffn) * 2 / tp + \
            (a.heads * tokens * tokens * w.concurrency * 4 if not w.flash_attention else 0)
        add_term(terms, "activations and workspace", "activations", work,
              f"one block's intermediates over {w.concurrency} x {tokens} tokens")
        return
    kv_layers = a.decoder_layers or a.layers
    full_layers = kv_layers * (1 - a.sliding_share)
    win_layers = kv_layers * a.sliding_share
    win_ctx = min(ctx, a.sliding_window) if a.sliding_window else ctx
    per_seq = a.kv_dim * kv_bytes * (full_layers * ctx + win_layers * win_ctx)
    kind = "MLA latent" if a.kv_dim and a.kv_heads == a.heads and a.kv_dim < 2 * a.heads * a.head_dim else \
        f"{a.kv_heads} KV heads x head_dim {a.head_dim} x K,V"
    add_term(terms, "KV cache", "kv_cache", per_seq * w.concurrency / tp,
          f"{kv_layers} {'decoder ' if a.decoder_layers else ''}layers x {kind} ({a.kv_dim} values) x {ctx} tokens x "
          f"{w.concurrency} sequences x {kv_bytes} B" + (f" / TP {tp}" if tp > 1 else ""))
    if a.decoder_layers:
        # cross-attention keys and values over the encoder output, computed once per sequence and kept
        enc = a.encoder_tokens or ctx
        add_term(terms, "cross-attention KV cache", "kv_cache", a.kv_dim * kv_bytes * kv_layers * enc * w.concurrency / tp,
              f"{kv_layers} decoder layers x {a.kv_dim} values x {enc} encoder positions x {w.concurrency} sequences "
              f"x {kv_bytes} B")
    if a.sliding_window and a.sliding_share:
        notes.append(Note("est.sliding", f"{a.sliding_share:.0%} of layers use a {a.sliding_window}-token sliding "
                          "window", share=f"{a.sliding_share:.0%}", window=a.sliding_window))
    _prefill_and_engine(w, a, terms, notes)


@dataclass(frozen=True)
class Engine:
    """What a serving engine does with memory: how many prompt tokens one forward pass takes (None: the whole
    prompt of every sequence at once), whether it claims a share of the card for its KV pool up front, and whether
    it captures CUDA graphs."""
    prefill_tokens: int | None
    preallocates: str           # "" (the cache grows with each request) or how the pool is sized
    cuda_graphs: bool
    source: str


ENGINES = {
    # transformers generate(): the prompts of the batch go through the model in one forward pass, the dynamic cache
    # grows by concatenation, only the last position's logits are computed (num_logits_to_keep, transformers 4.45+)
    "transformers": Engine(None, "", False, "transformers generate() with the default DynamicCache"),
    # vLLM: chunked prefill, max_num_batched_tokens 8192 for the API server on GPUs of 70 GiB or more (2048 below;
    # vllm/engine/arg_utils.py get_batch_defaults); gpu_memory_utilization 0.9 of the card claimed at start-up
    "vllm": Engine(8192, "gpu_memory_utilization (default 0.9) of the card", True,
                   "vLLM engine args: max_num_batched_tokens, gpu_memory_utilization, CUDA graphs unless enforce_eager"),
    # SGLang: chunked_prefill_size chosen from the GPU's memory (8192 on large cards); mem_fraction_static claimed
    "sglang": Engine(8192, "mem_fraction_static of the card", True,
                     "SGLang server args: chunked_prefill_size, mem_fraction_static, CUDA graphs"),
    # TGI: --max-batch-prefill-tokens default 4096 (launcher docs); its KV blocks fill the free memory at warm-up
    "tgi": Engine(4096, "the memory left after warm-up (--cuda-memory-fraction, default 1.0)", True,
                  "text-generation-launcher: --max-batch-prefill-tokens, --cuda-memory-fraction"),
    # llama.cpp: the compute graph is reserved for n_ubatch (default 512) tokens; the KV cache for n_ctx is
    # allocated when the context is created
    "llama.cpp": Engine(512, "the KV cache of the whole context (n_ctx) at context creation", False,
                        "llama.cpp: -ub/--ubatch-size (default 512), -c/--ctx-size"),
}
CUDA_GRAPHS_GIB = 0.5   # vLLM start-up logs "Graph capturing finished ..., took X GiB": 0.11-0.96 GiB seen


def _prefill_and_engine(w: Workload, a: Arch, terms: list[MemoryTerm], notes: list[str]) -> None:
    """The forward pass's working set (one block's intermediates over the tokens of one prefill step, and the last
    position's logits) and what the engine adds: the chat's default is a chunked-prefill server (8,192-token steps
    over at most 4 sequences), said as an assumption."""
    tp = w.tensor_parallel if w.tensor_parallel > 1 else w.gpus
    ctx = w.context
    prompt = a.encoder_tokens or min(w.input_len or ctx, ctx)
    eng = ENGINES.get(w.engine or "")
    if ctx <= 1:
        chunk = w.concurrency
    elif eng is None:
        chunk = min(prompt, 8192) * min(w.concurrency, 4)
        if not (a.decoder_layers or a.encoder_tokens):     # a text generator's prompt (not Whisper's audio frames)
            notes.append(Note("est.engine_default", "serving engine not given: assumed a server that takes prompts "
                              "8,192 tokens at a time, such as vLLM; plain transformers generation takes the whole "
                              "prompt at once"))
    elif eng.prefill_tokens is None:
        chunk = prompt * w.concurrency
    else:
        chunk = min(prompt * w.concurrency, eng.prefill_tokens)
    work = chunk * (4 * a.hidden + 3 * a.active_ffn) * 2 / tp + w.concurrency * a.vocab * 4
    how = (f"one block's prefill intermediates over {chunk} tokens" + (f" ({w.engine}: the whole prompt at once)"
           if eng is not None and eng.prefill_tokens is None else f" ({w.engine} prefill step)" if eng else "")
           + f" + logits of {w.concurrency} sequences")
    add_term(terms, "activations and workspace", "activations", work, how)
    if eng is None:
        return
    if eng.cuda_graphs:
        add_term(terms, "CUDA graphs", "overhead", CUDA_GRAPHS_GIB * GIB, "decode batch sizes captured as CUDA graphs "
                 f"({eng.source}); vLLM logs 0.11-0.96 GiB")
    if eng.preallocates:
        notes.append(Note("est.engine_pool", f"{w.engine} claims {eng.preallocates} at start-up for its KV-cache pool: "
                          "nvidia-smi shows that share used whatever the load; the figure here is what the job needs "
                          "within it", engine=w.engine, pool=eng.preallocates))
