"""A GPU named with no cloud ('部署 Qwen2.5-14B 在 A10 上', 'lora on an L40S') is what was asked for; the default cloud
was only assumed. When it rents no such card, the plans on that card elsewhere come first and the answer says why
(the pick had been an H100 on the default cloud under a verdict on the A10)."""
from __future__ import annotations

import pytest

ASKS = [("zh", "部署 Qwen2.5-14B 在 {gpu} 上，30 个并发"), ("zh", "用 {gpu} 做 Qwen2.5-7B 的 LoRA 微调，2 万条样本每条 2k token"),
        ("en", "serve llama 3.1 8b on {gpu} for 40 users"), ("en", "lora qwen2.5-7b on an {gpu}, 20k samples x 2k tokens")]


def _not_on_default(core) -> list[str]:
    kb, default = core.kb, core.advisor.default_provider
    on_default = {f.gpu for f in kb.flavors_of(default)}
    names = {"a10": "A10", "l40s": "L40S", "l20": "L20", "rtx4090": "4090"}
    return [names[g] for g in names if g in kb.gpus and g not in on_default and kb.flavors_with_gpu(g)]


@pytest.mark.parametrize("lang, template", ASKS)
def test_the_named_gpu_leads(core, lang, template):
    gpus = _not_on_default(core)
    assert gpus, "every card in the table is on the default cloud: the property tests nothing"
    for gpu in gpus:
        reply, _ = core.turn(template.format(gpu=gpu), {})
        pick = reply.recommendations[0]
        named = core.parser.parse(template.format(gpu=gpu)).slots.gpu_model
        assert pick["gpu"] in core.advisor._gpu_ids(named), (gpu, pick["flavor"], reply.text[:600])
        assert ("默认的" in reply.text) if lang == "zh" else ("assumed: no cloud was named" in reply.text)


def test_a_named_cloud_is_kept(core):
    reply, _ = core.turn("在华为云上部署 Qwen2.5-14B，用 A10，30 个并发", {})
    assert "默认的" not in reply.text
