"""A model from its config.json (`estimate --config`): architecture and parameter count as transformers builds it."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bot.estimate.hfconfig import model_from_config
from bot.records.errors import InvalidRequest

LLAMA_31_8B = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
               "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256,
               "max_position_embeddings": 131072, "tie_word_embeddings": False, "hidden_act": "silu"}
DEEPSEEK_V3 = {"hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
               "num_attention_heads": 128, "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1,
               "num_experts_per_tok": 8, "first_k_dense_replace": 3, "kv_lora_rank": 512, "q_lora_rank": 1536,
               "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "vocab_size": 129280,
               "quantization_config": {"quant_method": "fp8", "fmt": "e4m3"}}


@pytest.mark.parametrize("cfg, params_b, precision", [
    (LLAMA_31_8B, 8.030, None),                         # 8,030,261,248 in the model card's count
    (DEEPSEEK_V3, 671.0, "fp8"),                        # 671B main model, shipped in FP8
    ({"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 36, "intermediate_size": 2880,
      "num_attention_heads": 64, "num_key_value_heads": 8, "num_local_experts": 128, "num_experts_per_tok": 4,
      "head_dim": 64, "vocab_size": 201088, "quantization_config": {"quant_method": "mxfp4"}}, 116.8, "int4"),
])
def test_parameters_and_release_precision_come_from_the_config(cfg, params_b, precision):
    model, notes = model_from_config(cfg)
    assert model.params_b == pytest.approx(params_b, rel=0.002)
    assert model.release_precision == precision
    assert any("computed from the config" in n for n in notes)


def test_a_vision_language_config_sizes_its_language_model():
    model, notes = model_from_config({"model_type": "llava", "vision_config": {"hidden_size": 1024},
                                      "text_config": LLAMA_31_8B})
    assert model.kind == "multimodal" and model.hidden == 4096 and "vision tower" in notes[-1]


def test_a_config_without_dimensions_is_refused_with_a_fix():
    with pytest.raises(InvalidRequest) as err:
        model_from_config({"model_type": "mystery", "vocab_size": 1000})
    assert "hidden" in str(err.value)


def test_estimate_accepts_a_config_file(tmp_path):
    from bot.surfaces.cli.main import main
    path = tmp_path / "config.json"
    path.write_text(json.dumps(DEEPSEEK_V3))
    res = CliRunner().invoke(main, ["estimate", "--config", str(path), "--method", "inference", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["workload"]["precision"] == "fp8" and 600 < out["per_gpu_gib"] < 700
    assert any("computed from the config" in a for a in out["assumptions"])
