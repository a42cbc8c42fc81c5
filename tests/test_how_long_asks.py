"""'How long?' and 'is it enough?' after an answer are about the job just answered, whatever verb they carry
('那要训多久', 'how long to train it?', '跑完要多久'): a verb that names the job's own kind ('训' after a fine-tune)
used to read as a new job with nothing in it, and the reply was 'I only answer questions about GPU instances'."""
from __future__ import annotations

import itertools

import pytest

JOBS = {
    "zh": ["LoRA 微调 Qwen2.5-7B，数据 1 万条，每条 2k token",
           "用 QLoRA 在单张 4090 上微调 Qwen2.5-7B，数据 1 万条，每条 3k token",
           "全参微调 Llama 3.1 8B，50 万条样本，每条 1k token，2 个 epoch"],
    "en": ["LoRA fine-tune qwen2.5-7b on 10k samples of 2k tokens",
           "full fine-tune llama 3.1 8b on 500k samples x 1k tokens, 2 epochs, on our 8x A100",
           "qlora llama 3 70b on 20k samples of 4k tokens"],
}
ASKS = {
    "zh": ["那要训多久", "训完要多久", "那要跑多久", "训练大概要多长时间", "微调要几个小时"],
    "en": ["how long to train it?", "so how long will the fine-tune take", "how many hours to train?",
           "ok, how long would training take"],
}
CASES = [(lang, job, ask) for lang in JOBS for job, ask in itertools.product(JOBS[lang], ASKS[lang])]
TIME = ("小时", "天", " h ", " h)", " h,", " h.", "days", "hours")


@pytest.mark.parametrize("lang, job, ask", CASES)
def test_how_long_after_a_job_is_answered_with_its_time(core, lang, job, ask):
    _, state = core.turn(job, {})
    reply, _ = core.turn(ask, state)
    assert reply.status != "out_of_scope", reply.text
    assert reply.text.strip() != core.templates.say("reply.help", lang).strip()
    assert reply.lang == lang
    first = reply.text.split("\n")[0]
    assert any(w in first for w in TIME), first


ASKED_FOR_WORK = ("give the tokens", "Say how many training tokens", "请给出 token 总数", "告诉我训练 token 数")


@pytest.mark.parametrize("text", ["we have 32 ascend 910b4 cards, continue pretraining qwen2.5-7b on 50B tokens, how long",
                                  "我们有 8 张 910B4，继续预训练 Qwen2.5-7B，50B token，要多久",
                                  "8 张 910B4 LoRA 微调 Qwen2.5-7B，5 万条样本每条 2k，要多久"])
def test_work_said_is_never_asked_for(core, text):
    """A card with no speed on file cannot be timed: the answer says that, not 'give me the tokens' after they were
    given."""
    reply, _ = core.turn(text, {})
    assert reply.work is not None, reply.text
    assert not any(w in reply.text for w in ASKED_FOR_WORK), reply.text
