"""Properties of understanding: any unicode input gets a reply, never an exception; the same input always gives
the same parse. Example counts are kept modest so the file runs in well under 20 s."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.records.models import Reply

# derandomized: the same examples on every run and every machine (no flaky CI); the explicit @examples carry the
# extremes (empty, 40 000 characters, emoji, control characters)
SETTINGS = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# words of the domain, so that random messages also reach numbers, names, the dialogue and the advisor.
DOMAIN = ["lora", "qlora", "全参", "微调", "finetune", "train", "训练", "serve", "部署", "推理", "render", "渲染",
          "vs", "还是", "what is", "为什么", "spot", "按需", "help", "你好", "reset", "重新开始", "qwen2.5-7b",
          "llama 70b", "llama 3.1 8b", "deepseek r1", "qwen 7b", "mistral-7b", "7b", "70亿", "千亿", "1.5B", "124M",
          "4k", "128k context", "两张", "两机", "十六卡", "8卡", "8x", "A100", "H100", "4090", "T4", "l4", "a100 80g",
          "$3/hr", "预算每月5万块", "两周内", "within 3 weeks", "24/7", "50个人同时用", "20 qps", "batch 8",
          "fp8", "int4", "bf16", "华为云", "北京四", "aws", "cheap", "不差钱", "not sure", "你看着办", "the second",
          "0", "99999999999999999999", "1e9", ",", "。", "？", "\u200b", "\x00", "🚀"]

phrases = st.lists(st.one_of(st.sampled_from(DOMAIN), st.text(max_size=12)), max_size=12).map(" ".join)
any_text = st.one_of(st.text(max_size=300), phrases,
                     st.text(alphabet=st.characters(codec="utf-8", categories=["Cc", "Cf", "Zs", "So", "Mn"]),
                             max_size=200))


@SETTINGS
@given(text=any_text)
@example(text="")
@example(text=" " * 10)
@example(text="a" * 40_000)
@example(text="7" * 40_000)
@example(text="十六卡" * 13_000)
@example(text="🤖🔥💸" * 13_000)
@example(text="\x00\x01\x07\x1b[31m\u202e\ufeff")
@example(text="llama 70b 8x " * 3_000)
def test_any_input_gets_a_reply(core, text):
    reply, state = core.turn(text, {})
    assert isinstance(reply, Reply) and reply.status in ("answer", "follow_up", "info", "out_of_scope")
    assert reply.lang in ("zh", "en") and reply.text
    # and a second turn on the state it left
    reply2, _ = core.turn(text[:200], state)
    assert isinstance(reply2, Reply)


@SETTINGS
@given(first=phrases, second=any_text)
def test_any_reply_to_a_follow_up_gets_a_reply(core, first, second):
    """Mid-conversation (a question pending, candidates kept) any reply is handled."""
    _reply, state = core.turn("finetune llama 70b", {})
    _reply, state = core.turn(first, state)
    reply, state = core.turn(second, state)
    assert isinstance(reply, Reply)
    assert isinstance(state, dict)


@SETTINGS
@given(text=any_text)
@example(text="微调 qwen 7b，两机十六卡，预算每月5万块")
def test_the_same_input_gives_the_same_parse(core, text):
    first = core.parser.parse(text).as_dict()
    second = core.parser.parse(text).as_dict()
    assert first == second


def test_serving_on_several_machines_gets_a_reply(core):
    """Serving with nodes and no GPU count assumes 8 GPUs per node (was a crash: nodes > gpus)."""
    reply, _ = core.turn("serve deepseek-v3 on 2 machines", {})
    assert reply.status == "answer"


@pytest.mark.parametrize("said, gpu, cards, nodes", [
    ("32 张 910B（4 台 Atlas 800T A2）", "910b", 32, 4), ("32 张 910B (4 台)", "910b", 32, 4),
    ("32 张 910B 4 台", "910b", 32, 4), ("16 x A100 (2 nodes)", "a100", 16, 2), ("4 张 910B4", "ascend-910b4", 4, None),
    ("8x H100 (SXM)", "h100-sxm", 8, None), ("A100 (80GB)", "a100-80gb", None, None)])
def test_a_count_after_a_card_is_not_its_variant(core, said, gpu, cards, nodes):
    """'910B（4 台' is 910B cards and 4 machines: the compacted text had read it as the 32 GB 910B4."""
    s = core.parser.parse("继续预训练 Qwen2.5-14B，" + said).slots
    assert (s.gpu_model, s.gpus, s.nodes) == (gpu, cards, nodes)
