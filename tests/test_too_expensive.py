"""'Too expensive' after a plan asks for a cheaper one ('太贵了', '有点贵', "that's too expensive"): it was out of scope
('I only answer questions about GPU instances'). Now it is the cheaper path: each concession priced."""
from __future__ import annotations

import itertools

import pytest

JOBS = {"zh": ["LoRA 微调 Qwen2.5-14B，数据3万条每条2k，3个epoch", "部署 Qwen2.5-32B，30个并发"],
        "en": ["serve llama 3.1 70b for 50 users on aws", "full fine-tune llama 3.1 8b on 200k samples of 1k tokens"]}
SAID = {"zh": ["太贵了", "有点贵", "好贵啊，能便宜点吗", "成本太高了"],
        "en": ["that's too expensive", "too pricey", "this costs too much"]}
CASES = [(lang, job, said) for lang in JOBS for job, said in itertools.product(JOBS[lang], SAID[lang])]


@pytest.mark.parametrize("lang, job, said", CASES)
def test_too_expensive_gets_the_cheaper_path(core, lang, job, said):
    _, state = core.turn(job, {})
    reply, _ = core.turn(said, state)
    assert reply.status == "answer" and reply.lang == lang, reply.text[:200]
    first = reply.text.split("\n")[0]
    assert first.startswith(("更便宜的方案", "Cheaper")), first
