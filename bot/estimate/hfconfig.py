"""A model record from a Hugging Face config.json, so a new model needs no code change (`estimate --config`).

The keys are the ones transformers' configuration classes use (LlamaConfig, Qwen2Config, MixtralConfig,
DeepseekV3Config, GptOssConfig, GPT-2's n_embd/n_layer/n_head; a vision-language model's text_config). The
parameter count is computed from the dimensions and said back, with every key that was missing and what was taken
instead, because a config file names no parameter count.
"""
from __future__ import annotations

from typing import Any

from bot.records.errors import InvalidRequest
from bot.records.kb import MLA, Model, MoE

_KEYS = {"hidden": ("hidden_size", "n_embd", "d_model", "dim"),
         "layers": ("num_hidden_layers", "n_layer", "num_layers", "n_layers"),
         "heads": ("num_attention_heads", "n_head", "num_heads", "n_heads"),
         "kv_heads": ("num_key_value_heads", "num_kv_heads", "n_kv_heads", "multi_query_group_num"),
         "ffn": ("intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"),
         "vocab": ("vocab_size", "padded_vocab_size"),
         "context": ("max_position_embeddings", "n_positions", "seq_length", "max_seq_len")}
_QUANT = {"fp8": "fp8", "mxfp4": "int4", "awq": "int4", "gptq": "int4", "bitsandbytes": "nf4"}


def _first(cfg: dict[str, Any], names: tuple[str, ...]) -> Any:
    return next((cfg[n] for n in names if cfg.get(n) is not None), None)


def _moe(cfg: dict[str, Any], ffn: int) -> MoE | None:
    experts = _first(cfg, ("num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts"))
    if not experts or experts <= 1:
        return None
    return MoE(experts=experts, active_experts=_first(cfg, ("num_experts_per_tok", "experts_per_token",
                                                            "moe_top_k")) or 1,
               shared_experts=cfg.get("n_shared_experts") or 0,
               expert_ffn=cfg.get("moe_intermediate_size") or ffn,
               dense_layers=cfg.get("first_k_dense_replace") or 0)


def _attention_params(cfg: dict[str, Any], h: int, heads: int, kv: int, hd: int) -> int:
    """Weights of one attention block: q, k, v, o; MLA's low-rank projections where the config has them."""
    if cfg.get("kv_lora_rank"):
        q_rank, kv_rank = cfg.get("q_lora_rank") or 0, cfg["kv_lora_rank"]
        nope, rope = cfg.get("qk_nope_head_dim", 128), cfg.get("qk_rope_head_dim", 64)
        v = cfg.get("v_head_dim", 128)
        q = h * q_rank + q_rank * heads * (nope + rope) if q_rank else h * heads * (nope + rope)
        return q + h * (kv_rank + rope) + kv_rank * heads * (nope + v) + heads * v * h
    return h * heads * hd + 2 * h * kv * hd + heads * hd * h


def _params(cfg: dict[str, Any], d: dict[str, int], moe: MoE | None, tied: bool) -> float:
    h, L, ffn, vocab = d["hidden"], d["layers"], d["ffn"], d["vocab"]
    attn = _attention_params(cfg, h, d["heads"], d["kv_heads"], d["head_dim"])
    gated = cfg.get("hidden_act", "silu") in ("silu", "swiglu", "gelu_pytorch_tanh") and "n_embd" not in cfg
    mlp = (3 if gated else 2) * h * ffn
    if moe is None:
        layers = L * (attn + mlp)
    else:
        expert = 3 * h * moe.expert_ffn
        moe_layer = attn + (moe.experts + moe.shared_experts) * expert + h * moe.experts
        layers = moe.dense_layers * (attn + mlp) + (L - moe.dense_layers) * moe_layer
    return layers + vocab * h * (1 if tied else 2)


# the keys model_from_config reads: what a pasted config keeps in the conversation (a config also holds label maps,
# token ids and generation settings that size nothing)
_READ = {k for names in _KEYS.values() for k in names} | {
    "_name_or_path", "model_type", "head_dim", "hidden_act", "tie_word_embeddings", "num_local_experts",
    "n_routed_experts", "num_experts", "moe_num_experts", "num_experts_per_tok", "experts_per_token", "moe_top_k",
    "n_shared_experts", "moe_intermediate_size", "first_k_dense_replace", "kv_lora_rank", "q_lora_rank",
    "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "sliding_window", "use_sliding_window"}


def essentials(cfg: dict[str, Any]) -> dict[str, Any]:
    """The part of a config.json that model_from_config reads (the language model's, a vision tower only marked),
    so a session keeps a few hundred bytes rather than the whole file; the result sizes the same model."""
    out: dict[str, Any] = {k: v for k, v in cfg.items() if k in _READ and isinstance(v, (int, float, str, bool))}
    quant = cfg.get("quantization_config")
    if isinstance(quant, dict) and quant.get("quant_method"):
        out["quantization_config"] = {"quant_method": quant["quant_method"]}
    for sub in ("text_config", "llm_config"):
        if isinstance(cfg.get(sub), dict):
            out[sub] = essentials(cfg[sub])
    if "vision_config" in cfg:
        out["vision_config"] = {}
    return out


def missing_dimensions(cfg: dict[str, Any]) -> list[str]:
    """The dimensions a config must give as positive whole numbers (hidden size, layers, attention heads) that it
    lacks or gives as something else ("4096" in quotes, null), by their transformers names."""
    text = cfg.get("text_config") or cfg.get("llm_config") or cfg
    if not isinstance(text, dict):
        return [names[0] for names in (_KEYS["hidden"], _KEYS["layers"], _KEYS["heads"])]
    bad = []
    for key in ("hidden", "layers", "heads"):
        value = _first(text, _KEYS[key])
        if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            bad.append(_KEYS[key][0])
    return bad


def model_from_config(cfg: dict[str, Any], name: str = "config.json") -> tuple[Model, list[str]]:
    """The Model a config.json describes, and the assumptions made where it was silent."""
    if not isinstance(cfg, dict):
        raise InvalidRequest("the config is not a JSON object", fix="pass a model's config.json")
    vision = "vision_config" in cfg
    text = cfg.get("text_config") or cfg.get("llm_config") or cfg
    notes: list[str] = []
    d = {k: _first(text, names) for k, names in _KEYS.items()}
    missing = [k for k in ("hidden", "layers", "heads") if not d[k]]
    if missing:
        raise InvalidRequest(f"{name} has no {', '.join(missing)} (hidden_size, num_hidden_layers, "
                             "num_attention_heads)", fix="pass the model's own config.json, or use --params N")
    d["kv_heads"] = d["kv_heads"] or d["heads"]
    d["head_dim"] = text.get("head_dim") or d["hidden"] // d["heads"]
    if not d["ffn"]:
        d["ffn"] = 4 * d["hidden"]
        notes.append(f"no intermediate_size: 4 x hidden = {d['ffn']} assumed")
    if not d["vocab"]:
        d["vocab"] = 32000
        notes.append("no vocab_size: 32000 assumed")
    moe = _moe(text, d["ffn"])
    tied = bool(text.get("tie_word_embeddings", cfg.get("tie_word_embeddings", False)))
    params = _params(text, d, moe, tied) / 1e9
    notes.append(f"parameters computed from the config: {params:.2f}B" + (" (language model only; the vision tower "
                                                                          "is not counted)" if vision else ""))
    quant = (cfg.get("quantization_config") or text.get("quantization_config") or {}).get("quant_method")
    window = text.get("sliding_window") if text.get("use_sliding_window", True) else None
    model = Model(id=str(cfg.get("_name_or_path") or name), name=str(cfg.get("_name_or_path") or name),
                  family=str(text.get("model_type") or cfg.get("model_type") or "unknown"),
                  kind="multimodal" if vision else "llm", params_b=round(params, 3), layers=d["layers"],
                  hidden=d["hidden"], heads=d["heads"], kv_heads=d["kv_heads"], head_dim=d["head_dim"],
                  ffn=d["ffn"], vocab=d["vocab"], max_context=d["context"], tied_embeddings=tied, moe=moe,
                  attention="mla" if text.get("kv_lora_rank") else ("gqa" if d["kv_heads"] < d["heads"] else "mha"),
                  mla=MLA(kv_lora_rank=text["kv_lora_rank"], qk_rope_head_dim=text.get("qk_rope_head_dim", 64))
                  if text.get("kv_lora_rank") else None,
                  sliding_window=window if isinstance(window, int) else None,
                  release_precision=_QUANT.get(str(quant)) if quant else None, sources=["user-config"])
    return model, notes
