"""FP8 training speed (issue 31 item 2): the FP8 share comes from GEMMs measured on an H200, only the linear layers'
GEMMs run in FP8, and each FP8 GEMM pays its casts. Properties over generated jobs plus the constant's derivation."""
from __future__ import annotations

import statistics
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from bot.estimate.speed import training_speed
from bot.estimate.speed_hw import FP8_RELATIVE
from bot.knowledge.loader import default_knowledge
from bot.records.models import Workload

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "tests" / "data" / "gpu_measure" / "h200-kernels-2026-12-04.yaml"
KB = default_knowledge()
FP8_GPUS = [g for g in ("h100-sxm", "h200", "b200", "l40s") if g in KB.gpus]
MODELS = ["llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b", "llama-3.2-1b"]


def job(model: str, precision: str, seq: int, batch: int, gpus: int = 8, ckpt: str = "none") -> Workload:
    m = KB.models[model]
    return Workload(model=model, params_b=m.params_b, task="train", method="full", precision=precision,
                    batch_size=batch, seq_len=seq, gpus=gpus, sharding="fsdp", checkpointing=ckpt,
                    grad_checkpointing=ckpt == "full")


def tps(w: Workload, gpu: str) -> float:
    return training_speed(w, KB.models[w.model], KB.gpus[gpu]).tokens_per_s_per_gpu


def test_fp8_share_is_the_measured_gemm_ratio():
    """1/3 fast accumulation (forward) + 2/3 exact (the two backward GEMMs), medians over the measured shapes."""
    rows = {r["id"]: r for r in yaml.safe_load(KERNELS.read_text(encoding="utf-8"))["rows"]}
    bf16 = {k[:-len("-bf16")]: r["tflops"] for k, r in rows.items() if r["kind"] == "gemm" and r["dtype"] == "bf16"}
    h200 = KB.gpus["h200"]
    def ratio(suffix: str) -> float:
        return statistics.median(rows[f"{name}-{suffix}"]["tflops"] / h200.fp8_tflops / (t / h200.bf16_tflops)
                                 for name, t in bf16.items())
    assert len(bf16) >= 8
    assert FP8_RELATIVE == pytest.approx(ratio("fp8-fast-accum") / 3 + 2 * ratio("fp8") / 3, abs=0.01)


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(MODELS), gpu=st.sampled_from(FP8_GPUS), seq=st.sampled_from([1024, 4096, 16384]),
       batch=st.sampled_from([1, 2, 4]), ckpt=st.sampled_from(["none", "full"]))
def test_fp8_is_faster_than_bf16_but_never_the_peaks_2x(model, gpu, seq, batch, ckpt):
    """FP8 GEMMs, 16-bit attention and the casts: a real speed-up, below the ratio of the two peaks."""
    bf16, fp8 = tps(job(model, "bf16", seq, batch, ckpt=ckpt), gpu), tps(job(model, "fp8", seq, batch, ckpt=ckpt), gpu)
    g = KB.gpus[gpu]
    assert bf16 < fp8 < bf16 * g.fp8_tflops / g.bf16_tflops * FP8_RELATIVE


@pytest.mark.parametrize("model", MODELS)
def test_long_sequences_gain_less_from_fp8(model):
    """Attention's s^2 term stays 16-bit: the longer the sequence, the smaller FP8's gain."""
    short = tps(job(model, "fp8", 2048, 4), "h100-sxm") / tps(job(model, "bf16", 2048, 4), "h100-sxm")
    long = tps(job(model, "fp8", 32768, 1), "h100-sxm") / tps(job(model, "bf16", 32768, 1), "h100-sxm")
    assert long < short


@pytest.mark.parametrize("model", MODELS)
def test_a_gpu_without_fp8_times_fp8_as_16_bit(model):
    a100 = KB.gpus["a100-80gb"]
    assert not a100.fp8_tflops
    assert tps(job(model, "fp8", 4096, 2), "a100-80gb") == pytest.approx(tps(job(model, "bf16", 4096, 2), "a100-80gb"))


def test_casts_are_named_with_their_arithmetic():
    sp = training_speed(job("llama-3.1-8b", "fp8", 4096, 2), KB.models["llama-3.1-8b"], KB.gpus["h100-sxm"])
    cast = next(t for t in sp.terms if t.name == "FP8 casts per micro-batch")
    assert cast.value > 0 and "cast" in cast.formula
    bf16 = training_speed(job("llama-3.1-8b", "bf16", 4096, 2), KB.models["llama-3.1-8b"], KB.gpus["h100-sxm"])
    assert not any(t.name == "FP8 casts per micro-batch" for t in bf16.terms)


# ----- FP8 training asked for in a question: FP8 GEMMs over bf16 mixed precision, never silently bf16 ------------
@pytest.mark.parametrize("q, said", [
    ("pre-train a 7B model on 1T tokens in fp8 on 256 H100s", "FP8 training as Megatron-LM and NeMo run it"),
    ("用 FP8 在 256 张 H100 上预训练 7B 模型，1T tokens", "FP8 训练"),
])
def test_fp8_pretraining_is_timed_in_fp8_and_said(core, q, said):
    r = core.turn(q, {})[0].model_dump()
    bf16 = core.turn(q.replace("in fp8 ", "").replace("用 FP8 ", ""), {})[0].model_dump()
    text = r["text"] + str(r.get("details") or "")
    assert said in text
    hours = lambda reply: next(x for x in reply["recommendations"])["job_hours"]   # noqa: E731
    assert hours(r) < hours(bf16) / 1.2          # FP8 GEMMs: a real speed-up on H100s


@settings(max_examples=15, deadline=None)
@given(model=st.sampled_from(MODELS), gpu=st.sampled_from(FP8_GPUS + ["a100-80gb"]))
def test_fp8_compute_keeps_bf16_states_and_adds_the_fp8_copies(model, gpu):
    """Memory: the bf16 mixed-precision states plus one layer's FP8 weights and transposes in flight, never less."""
    from bot.estimate.kinds import job_memory
    m = KB.models[model]
    base = Workload(model=model, params_b=m.params_b, task="train", method="full", batch_size=1, seq_len=2048,
                    gpus=8, sharding="zero3", grad_checkpointing=True)
    fp8 = base.model_copy(update={"fp8_compute": True})
    extra = job_memory(fp8, m).per_gpu_gib - job_memory(base, m).per_gpu_gib
    assert extra > 0
    speed_fp8 = training_speed(fp8, m, KB.gpus[gpu]).tokens_per_s_per_gpu
    speed_bf16 = training_speed(base, m, KB.gpus[gpu]).tokens_per_s_per_gpu
    assert speed_fp8 > speed_bf16 if KB.gpus[gpu].fp8_tflops else speed_fp8 == pytest.approx(speed_bf16)


@pytest.mark.parametrize("q", ["we have 2048 H800 GPUs, how long to pretrain deepseek-v3 on 14.8T tokens in fp8?",
                               "我们有 2048 张 H800，用 FP8 预训练 deepseek-v3，14.8T tokens 要多久？"])
def test_fp8_moe_pretraining_keeps_its_expert_parallel_layout(core, q):
    """FP8 must not cost the layout: an FP8 copy of every weight held for the step pushed DeepSeek-V3's EP x PP
    layout over 80 GB and left ZeRO-3 over 2,048 cards at 1 % MFU (1,239 days); TE casts a layer's weights as it
    runs, so one layer's copies are in flight, and FP8 is faster than the bf16 plan."""
    fp8 = core.turn(q, {})[0].model_dump()
    bf16 = core.turn(q.replace(" in fp8", "").replace("用 FP8 ", ""), {})[0].model_dump()
    mine, base = fp8["recommendations"][0], bf16["recommendations"][0]
    assert mine["mfu"] >= 0.05 and mine["job_hours"] < base["job_hours"]
