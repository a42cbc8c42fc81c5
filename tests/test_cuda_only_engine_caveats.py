"""Whisper's speed on file is faster-whisper's (CTranslate2: CUDA and CPU backends, no Ascend one; AMD only by a 2026
source build). On an Ascend or AMD card, named or picked, the answer says so first, with what runs there instead, and
never a bare 'yes' or an LLM serving stack (set5 s5-07 T2: 'we have 910B vouchers, can we just run whisper on 910B?'
got a bare yes, 'served with vLLM-Ascend or MindIE'). Table over zh/en phrasings, cards, first turns and follow-ups."""
from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=1)
def _core():
    from bot.conversation.turn import Core
    return Core.load()


def _run(turns: list[str]):
    state: dict = {}
    r = None
    for t in turns:
        r, state = _core().turn(t, state)
    return r


ASCEND = [
    ["can we run whisper large-v3 on 910B to transcribe 3000 hours of calls?"],
    ["能不能用 910B 跑 whisper large-v3 转写 3000 小时录音？"],
    ["用昇腾 910B 跑 whisper-large-v3 转写 2 万小时的会议录音，要多久"],
    ["transcribe 8000 hours of podcasts with whisper large v3 on Ascend 910B, deadline 10 days"],
    ["有 5 万小时的客服录音要用 whisper-large-v3 转写，两周内完成，预算 3 万人民币，只能用华为云，怎么安排？",
     "我们有昇腾 910B 的代金券，能不能直接用 910B 跑？"],
    ["transcribe 20000 hours of audio with whisper large-v3 on huawei cloud", "what about on 910B instead?"],
]


@pytest.mark.parametrize("turns", ASCEND)
def test_whisper_on_ascend_says_ctranslate2_has_no_ascend_backend(turns):
    r = _run(turns)
    assert "CTranslate2" in r.text, r.text
    assert "torch_npu" in r.text, r.text
    assert "Yes:" not in r.text and "能：" not in r.text, r.text
    assert "vLLM-Ascend or MindIE" not in r.text.split("\n")[0] and "vLLM-Ascend 或 MindIE" not in r.text.split("\n")[0]


@pytest.mark.parametrize("text", [
    "transcribe 5000 hours of audio with whisper large-v3 on an H100, how long?",
    "用 A10 跑 whisper large-v3 转写 3000 小时录音",
    "transcribe 20000 hours of podcasts with whisper large v3 on aws, deadline 5 days",
])
def test_whisper_on_nvidia_has_no_port_caveat(text):
    r = _run([text])
    assert "no Ascend (CANN) backend" not in r.text and "没有昇腾（CANN）后端" not in r.text, r.text


def test_an_llm_on_ascend_keeps_its_serving_stack_and_no_whisper_caveat():
    r = _run(["can a 910B serve qwen2.5-72b?"])
    assert "vLLM-Ascend" in r.text and "CTranslate2" not in r.text, r.text
