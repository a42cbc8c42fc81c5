"""Critic invariant kind-speed: a speech, vision or diffusion job is never sized with an LLM's token speed (per-token
decode / first-token times). Unit cases on the check itself (it can fail), and a property over generated non-LLM jobs
(zh/en) that no plan offered carries LLM token timings and every row has its own kind's speed or none."""
from __future__ import annotations

import functools
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.plan.critic import Critic, JobView, check_invariants

RULES = Path(__file__).resolve().parents[1] / "rules"


def _critic() -> Critic:
    inv, problems = check_invariants(RULES)
    assert not problems, problems
    return Critic(inv)


def _row(**kw):
    return {"flavor": SimpleNamespace(flavor="x.large", gpu_memory_gib=80), "gpu": "h100", "estimate": None, "ruled_out": None,
            "capacity": None, **kw}


@pytest.mark.parametrize("kind", ["speech", "vision", "diffusion"])
def test_a_non_llm_row_with_token_timings_is_ruled_out(kind):
    broken = _critic().first_broken(_row(tpot_ms=25.0), JobView(training=False, kind=kind), {}, "en")
    assert broken and broken[0] == "kind-speed", broken


@pytest.mark.parametrize("kind", ["llm", "multimodal", None])
def test_an_llm_row_with_token_timings_is_kept(kind):
    assert _critic().first_broken(_row(tpot_ms=25.0), JobView(training=False, kind=kind), {}, "en") is None


def test_a_non_llm_row_without_token_timings_is_kept():
    assert _critic().first_broken(_row(), JobView(training=False, kind="speech"), {}, "en") is None


@functools.lru_cache(maxsize=1)
def _core():
    from bot.conversation.turn import Core
    return Core.load()


JOBS = {"en": ["transcribe {n} hours of call recordings with whisper large-v3",
               "serve whisper large-v3 for {n} concurrent users",
               "run yolov8s on {n} rtsp cameras at 15 fps",
               "generate {n} images with SDXL on aws",
               "run SAM ViT-H automatic mask generation on {n} images",
               "{n} 路实时语音识别，用 paraformer 流式"],
        "zh": ["用 whisper large-v3 转写 {n} 小时录音", "用 SDXL 生成 {n} 张图", "{n} 路摄像头用 yolov8n 检测",
               "用 SAM 对 {n} 张图片做全图分割"]}


@given(lang=st.sampled_from(["en", "zh"]), i=st.integers(0, 5), n=st.integers(50, 200_000))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
def test_no_non_llm_plan_carries_llm_token_timings(lang, i, n):
    text = JOBS[lang][i % len(JOBS[lang])].format(n=n)
    r = _core().turn(text, {})[0]
    for rec in r.recommendations:
        assert all(rec.get(k) is None for k in ("tpot_ms", "load_tpot_ms", "ttft_ms")), (text, rec.get("tpot_ms"))
    assert "tokens/s" not in r.text and "token/s" not in r.text, (text, r.text)
