"""A sample's length said with no unit beside a count of samples ('数据5万条，每条4k', '50k samples, 4k each',
'平均长度2k') is that many tokens a sample: the work is samples x length x epochs, not samples x a default 1,024
(a 72B LoRA on 50,000 x 4k x 3 was timed as 50,000 x 1,024 x 3, four times too little)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

ZH = ["LoRA 微调 Qwen2.5-7B，数据{n}条，每条{L}，{e}个epoch", "全参微调 Llama 3.1 8B，{n}条样本，平均长度{L}，{e}个epoch",
      "用 QLoRA 训 Qwen2.5-14B，{n}条数据，每条大概{L}，训{e}个 epoch", "微调 Qwen2.5-7B，样本{n}条，样本长度{L}，{e} 个 epoch",
      # the length after the number ('10 万条 4k 长度数据'): a lead's probe timed 4k samples as the default 1k
      "全参微调 Qwen2.5-32B，{n}条 {L} 长度数据，{e} 个 epoch", "LoRA 微调 Qwen2.5-7B，{n}条，{L} 的长度，{e}个epoch"]
EN = ["lora qwen2.5-7b on {n} samples, {L} each, {e} epochs", "full fine-tune llama 3.1 8b: {n} samples, avg length {L}, {e} epochs",
      "qlora qwen2.5-14b with {n} samples of about {L} each, {e} epochs", "fine-tune qwen2.5-7b, {n} rows, average length {L}, {e} epochs"]


def _length(k: int, plain: int, use_k: bool) -> tuple[str, int]:
    return (f"{k}k", k * 1024) if use_k else (str(plain), plain)


@settings(max_examples=60, deadline=None)
@given(template=st.sampled_from(ZH + EN), n=st.sampled_from([20000, 50000, 120000, 300000]),
       k=st.integers(1, 16), plain=st.integers(200, 8000), use_k=st.booleans(), epochs=st.integers(1, 5))
def test_unitless_length_is_tokens_a_sample(core, template, n, k, plain, use_k, epochs):
    said, tokens = _length(k, plain, use_k)
    zh = template in ZH
    count = f"{n // 10000}万" if zh and n % 10000 == 0 else f"{n // 1000}k"
    text = template.format(n=count, L=said, e=epochs)
    slots = core.parser.parse(text).slots
    assert slots.dataset_items == n, text
    assert slots.sample_tokens == tokens, text
    assert slots.epochs == epochs, text


def test_the_answer_shows_the_multiplication(core):
    reply, _ = core.turn("用昇腾910B做Qwen2.5-72B的LoRA微调，数据5万条，每条4k，3个epoch，要几台机器", {})
    assert "50,000 条样本 × 4,096 token × 3 个 epoch" in reply.text, reply.text


def test_counts_of_other_things_are_not_lengths(core):
    for text in ("LoRA 微调 Qwen2.5-7B，5万条样本，每个 epoch 都要评估，3 个 epoch",
                 "GRPO qwen2.5-7b, 1万个prompt，每个prompt采样8条，回复最长4k"):
        s = core.parser.parse(text).slots
        assert s.sample_tokens is None, (text, s.sample_tokens)
