"""'Spot?' after a batch job (transcription hours, items, an offline flag) gets the spot verdict first, with how a
batch job resumes (results written per shard, replicas reclaimed apart): it got the monthly-vs-pay-per-use text."""
from __future__ import annotations

import pytest

CASES = [("zh", "用whisper large-v3转写1.2万小时的音频，怎么配", "用抢占式行吗"),
         ("en", "embed 50M documents with bge-m3 on aws", "spot ok?"),
         ("en", "transcribe 20,000 hours of audio with whisper large-v3 on aws", "can we use spot instances for this?")]


@pytest.mark.parametrize("lang, job, ask", CASES)
def test_spot_after_a_batch_job_is_a_verdict(core, lang, job, ask):
    _, state = core.turn(job, {})
    reply, _ = core.turn(ask, state)
    first = reply.text.split("\n")[0]
    no_spot_price = "spot price" in first or first.startswith("知识库中没有") and "竞价价格" in first
    assert first.startswith(("可以", "不建议", "Yes", "No")) or no_spot_price, first
    # a verdict says how a batch resumes; a pick with no spot price on file says that, in the question's language
    assert "分片" in reply.text or "shard" in reply.text or no_spot_price, reply.text[:400]
