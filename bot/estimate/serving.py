"""Serving memory: weights (quantised or not, split by tensor parallelism), the KV cache, and the working set of the
forward pass."""
from __future__ import annotations

from bot.estimate.adapters import head_quantised, quant_formula, quant_notes, quantised_split
from bot.estimate.arch import GIB, WEIGHT_BYTES, Arch, Note, add_term
from bot.records.models import MemoryTerm, Workload


def serving_terms(w: Workload, a: Arch, terms: list[MemoryTerm], notes: list[str]) -> None:
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
            per = a.inference_gib_per_sample * GIB
            add_term(terms, "activations (forward only)", "activations", per * w.concurrency,
                  f"{per / GIB:.2f} GiB per sample (measured basis) x {w.concurrency}")
            return
        if a.activation_gib_per_sample is None:
            notes.append(Note("est.no_basis", "no measured activation basis for this model: 0.5 GiB per sample "
                              "assumed"))
        per = (a.activation_gib_per_sample or 0.5) * GIB * scale
        add_term(terms, "activations (forward only)", "activations", per * w.concurrency * 0.3,
              f"30% of the training activations per sample x {w.concurrency}")
        return
    kv_bytes = 4 if w.precision == "fp32" else 2
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
    # prefill working set of one block for the longest prompt chunk, and last-token logits
    chunk = min(a.encoder_tokens or ctx, 8192) * min(w.concurrency, 4) if ctx > 1 else w.concurrency
    work = chunk * (4 * a.hidden + 3 * a.active_ffn) * 2 / tp + w.concurrency * a.vocab * 4
    add_term(terms, "activations and workspace", "activations", work,
          f"one block's prefill intermediates over {chunk} tokens + logits of {w.concurrency} sequences")
