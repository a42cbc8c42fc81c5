"""Vision, diffusion, speech and rendering jobs: their own units and their own memory (issue 17)."""
from __future__ import annotations

import pytest

from bot.estimate.kinds import job_memory, job_speed, kind_of_model
from bot.estimate.rendering import host_ram_gib
from bot.records.models import Workload


def speed(kb, mid, gpu, **kw):
    m = kb.models.get(mid)
    base = dict(model=mid, params_b=m.params_b, method="inference", task="inference", precision="fp16",
                kind=kind_of_model(m))
    return job_speed(Workload(**(base | kw)), m, kb.gpus[gpu], kb.gpus, list(kb.models.values()))


def test_resnet50_training_speed_is_near_nvidias_measurements(kb):
    a100 = speed(kb, "resnet-50", "a100-80gb", task="train", method="full")
    v100 = speed(kb, "resnet-50", "v100-16gb", task="train", method="full")
    assert a100.unit == "images/s"
    assert a100.rate == pytest.approx(2470, rel=0.10)      # the calibration row
    assert v100.rate == pytest.approx(1200, rel=0.20)      # a held-out row


def test_vision_epochs_become_hours_and_streams_need_frames(kb):
    train = speed(kb, "yolov8s", "l4", task="train", method="full", dataset_items=100_000, epochs=10)
    assert train.hours == pytest.approx(1_000_000 / train.rate / 3600, rel=0.01)
    serve = speed(kb, "yolov8s", "t4", streams=20, fps=30)
    assert [t.value for t in serve.terms if t.name == "frames needed"] == [600]
    bigger = speed(kb, "yolov8s", "t4", image_size=1280)
    assert bigger.rate == pytest.approx(serve.rate / 4, rel=0.01)


def test_diffusion_serving_counts_steps_and_guidance(kb):
    sd = speed(kb, "sd-1.5", "a100-40gb", steps=50)
    assert sd.unit == "images/s"
    assert sd.rate == pytest.approx(97.28 / (50 * 2), rel=0.01)     # the measured basis, 2 passes per step
    t4 = speed(kb, "sd-1.5", "t4", steps=1)
    assert 2 * t4.rate == pytest.approx(1.79 * 4 * 2, rel=0.35)       # diffusers' T4 row, bandwidth-scaled
    assert "dif.steps" in [k["key"] for k in speed(kb, "sd-1.5", "l4").assumption_keys]


def test_diffusion_lora_training_is_cheaper_than_full(kb):
    full = speed(kb, "sdxl", "a100-80gb", task="train", method="full", dataset_items=1000, epochs=10)
    lora = speed(kb, "sdxl", "a100-80gb", task="train", method="lora", dataset_items=1000, epochs=10)
    assert lora.rate == pytest.approx(full.rate * 1.5, rel=0.01) and lora.hours < full.hours


def test_speech_is_real_time_factor_scaled_by_bandwidth(kb):
    v100 = speed(kb, "whisper-large-v3", "v100-32gb")
    h100 = speed(kb, "whisper-large-v3", "h100-sxm")
    small = speed(kb, "whisper-small", "v100-32gb")
    assert v100.unit == "x real time" and v100.rate == pytest.approx(11.46, rel=0.01)
    # small is ~4x large in the README's own table (measured on an A100), not its 6.4x fewer parameters
    assert h100.rate > 3 * v100.rate and small.rate == pytest.approx(4 * v100.rate, rel=0.01)
    many = speed(kb, "whisper-large-v3", "t4", streams=50)
    assert any(t.name == "GPUs for the streams" and t.value > 1 for t in many.terms)


def test_rendering_memory_is_the_scene_not_a_model(kb):
    w = Workload(params_b=1, kind="rendering", task="inference", method="inference", scene_gib=20)
    est = job_memory(w, None)
    assert est.per_gpu_gib == pytest.approx(20 + 1 + 1920 * 1080 * 64 / 2 ** 30, rel=0.01)
    assert {t.name for t in est.terms} == {"scene (geometry, textures, BVH)", "frame buffers", "CUDA context"}
    assert host_ram_gib(w) == 32 and host_ram_gib(w.model_copy(update={"scene_gib": 40})) == 48
    default = job_memory(w.model_copy(update={"scene_gib": None}), None)
    assert "rnd.scene" in [k["key"] for k in default.assumption_keys]


@pytest.mark.parametrize("mid,gpu,kw", [("resnet-50", "t4", {}), ("yolov8n", "l4", {"streams": 4}),
                                         ("sdxl", "l40s", {"steps": 30}), ("whisper-large-v3", "l4", {}),
                                         ("sd-1.5", "a10", {"task": "train", "method": "lora"})])
def test_non_llm_speeds_never_speak_in_tokens(kb, mid, gpu, kw):
    s = speed(kb, mid, gpu, **kw)
    text = " ".join([s.unit] + [f"{t.name} {t.unit} {t.formula}" for t in s.terms] + s.assumptions).lower()
    assert "token" not in text and "7b" not in text


def test_fp8_released_models_are_served_as_shipped(core):
    """DeepSeek-R1 ships FP8 weights: one 8-GPU node of 80-141 GB cards serves it, not two H200 nodes in bf16."""
    reply, _ = core.turn("serve deepseek r1 for 20 users", {})
    assert reply.status == "answer", reply.text
    weights = [t for t in reply.memory["terms"] if t["category"] == "weights"]
    assert weights[0]["name"] == "fp8 weights"
    top = reply.recommendations[0]
    assert top["gpu_count"] * top["instances"] <= 8


@pytest.mark.parametrize("name, mid", [("Qwen/Qwen2.5-VL-7B-Instruct", "qwen2.5-vl-7b"), ("kimi k2", "kimi-k2"),
                                       ("openai/gpt-oss-120b", "gpt-oss-120b"), ("llama 4 scout", "llama-4-scout"),
                                       ("black-forest-labs/FLUX.1-dev", "flux.1-dev"), ("qwq", "qwq-32b"),
                                       ("DeepSeek-V3.1-Terminus", "deepseek-v3.1"), ("Qwen/Qwen-Image", "qwen-image"),
                                       ("glm 4.5 air", "glm-4.5-air"), ("llava-hf/llava-1.5-7b-hf", "llava-1.5-7b")])
def test_new_models_resolve_by_their_names(core, name, mid):
    """Hub ids, run names and family names of the new models resolve to their records."""
    assert core.parser.parse(f"serve {name} for my team").slots.model == mid


def test_diffusion_transformers_are_served_whole_on_one_card(core):
    reply, _ = core.turn("serve FLUX.1-dev, 1024px", {})
    top = reply.recommendations[0]
    assert top["gpu_count"] == 1 and reply.memory["per_gpu_gib"] > 22     # 12B in 16-bit, never split by TP
    assert reply.speed["unit"] == "images/s"


def test_a_pick_without_bf16_says_fp16(core):
    """V100 and T4 have no bf16: an answer that picks one says the job runs in fp16 there."""
    reply, _ = core.turn("serve qwen2.5 7b on a V100", {})
    assert reply.recommendations[0]["gpu"].startswith("v100")      # the card the user named
    assert any("no bf16" in n for n in reply.notes), reply.notes
    reply, _ = core.turn("serve qwen2.5 7b on an H100", {})
    assert not any("no bf16" in n for n in reply.notes)
