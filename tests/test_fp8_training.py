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
