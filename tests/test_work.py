"""The amount of work in the user's own units (issue 30): samples x tokens x epochs, pairs, prompts x completions,
read by one quantity grammar in both languages, shown as the multiplication it is, timed and priced.

Every expected figure below is my own arithmetic, written before the code ran; a row's comment shows it."""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.records.models import Work

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
ANSWER_SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                           suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def ask(core, text):
    reply, _ = core.turn(text, {})
    return reply


def timed_and_priced(reply) -> bool:
    """A time (the LLM compute line or the job's own speed model) and a cost on the pick."""
    pick = reply.recommendations[0] if reply.recommendations else {}
    hours = (reply.compute or {}).get("hours") or (reply.speed or {}).get("hours") or pick.get("job_hours")
    return bool(hours) and pick.get("job_cost") is not None


# ----- the work of an answer: (question, work unit, amount, tokens, derivation text) ---------------------------
@pytest.mark.parametrize("text, unit, amount, tokens, shown", [
    # 50,000 x 1,024 x 3 = 153,600,000 tokens: '154M' in three figures (the issue's own example)
    ("lora finetune qwen2.5 7b on 50k samples of 1024 tokens, 3 epochs, tight budget", "tokens", 153_600_000,
     153_600_000, "50,000 samples x 1,024 tokens x 3 epochs = 154M tokens"),
    # 5万 = 50,000; 50,000 x 2,000 x 3 = 300,000,000 = 3 亿
    ("用 LoRA 微调 Qwen2.5-7B，5万条样本，每条约2000 token，训练3个epoch", "tokens", 300_000_000, 300_000_000,
     "50,000 条样本 × 2,000 token × 3 个 epoch = 3 亿 token"),
    # 200,000 x 800 x 2 = 320,000,000
    ("full sft of llama 3.1 8b on 200k conversations averaging 800 tokens, 2 epochs", "tokens", 320_000_000, 320_000_000,
     "200,000 samples x 800 tokens x 2 epochs = 320M tokens"),
    # 1,200,000 x 512 x 1 = 614,400,000
    ("full fine-tune qwen2.5-14b on 1.2M rows, avg 512 tokens each, 1 epoch", "tokens", 614_400_000, 614_400_000,
     "1,200,000 samples x 512 tokens x 1 epoch = 614M tokens"),
    # 3千 = 3,000; 3,000 x 1,500 x 5 = 22,500,000 = 2,250 万
    ("lora 微调 qwen2.5-7b，3千条数据，平均长度1500 token，训5轮", "tokens", 22_500_000, 22_500_000,
     "3,000 条样本 × 1,500 token × 5 个 epoch = 2,250 万 token"),
    # a length in k is 1,024 each, as '8k context' is: 20,000 x 2,048 x 2 = 81,920,000
    ("lora qwen2.5-7b, 20k samples of 2k tokens each, 2 epochs", "tokens", 81_920_000, 81_920_000,
     "20,000 samples x 2,048 tokens x 2 epochs = 81.9M tokens"),
    # a range counts at its upper end: 80,000 x 1,024 x 3 = 245,760,000
    ("lora qwen2.5-7b on 50-80k samples of 1k tokens, 3 epochs", "tokens", 245_760_000, 245_760_000,
     "80,000 samples x 1,024 tokens x 3 epochs = 246M tokens"),
    # DPO: 60,000 pairs x 2 sequences x (300 + 500) tokens x 1 epoch = 96,000,000 tokens; timed in pairs
    ("full DPO on qwen2.5-7b with 60k preference pairs, prompts 300 tokens and responses 500 tokens", "pairs", 60_000,
     96_000_000, "60,000 pairs x 2 sequences (chosen + rejected) x 800 tokens x 1 epoch = 96M tokens"),
    # GRPO: 10,000 prompts x 8 x 1,024 = 81,920,000 generated; trained 10,000 x 8 x (1,024 prompt + 1,024) = 163.84M
    ("grpo qwen2.5-7b lora, 10k prompts, 8 samples per prompt, 1024 generation tokens", "prompts", 10_000,
     163_840_000, "10,000 prompts x 8 completions x 1,024 tokens x 1 epoch = 81.9M generated tokens; 164M tokens"),
    # stated tokens, stated epochs: 500M x 2 = 1B
    ("full fine-tune qwen2.5-1.5b on 500M tokens for 2 epochs", "tokens", 1e9, 1e9,
     "500,000,000 tokens x 2 epochs = 1B tokens"),
])
def test_the_work_is_the_multiplication_timed_and_priced(core, text, unit, amount, tokens, shown):
    reply = ask(core, text)
    assert reply.status == "answer", reply.text
    work = Work(**{k: v for k, v in reply.work.items() if k != "derivation"})
    assert work.unit == unit and work.amount == pytest.approx(amount) and work.tokens == pytest.approx(tokens)
    assert shown in reply.work["derivation"], reply.work["derivation"]
    assert shown.split(" = ")[0] in reply.text          # the text shows the multiplication too
    assert timed_and_priced(reply), reply.text
    if work.timed_as == "tokens":                      # the LLM speed model times exactly these tokens
        assert reply.compute["tokens"] == pytest.approx(tokens)


@pytest.mark.parametrize("text, assumed, said_back", [
    # no epochs: one pass, said; 100,000 x 512 x 1 = 51,200,000
    ("full finetune llama-3.1-8b on 100k samples of 512 tokens", ["epochs"], "one pass over the data"),
    # no length: the 1,024-token sequence the memory estimate assumes, said; 30,000 x 1,024 x 2 = 61,440,000
    ("lora finetune qwen2.5-7b on 30k samples, 2 epochs", ["tokens"], "1,024 tokens a sample"),
    # GRPO with neither completions nor their length: TRL's defaults (8, 256), said
    ("grpo qwen2.5-7b lora on 5k prompts", ["completions", "tokens", "epochs"], "completions per prompt"),
])
def test_an_assumed_factor_is_marked_and_said(core, text, assumed, said_back):
    reply = ask(core, text)
    assert reply.work is not None and sorted(reply.work["assumed"]) == sorted(assumed)
    assert any(said_back in a for a in reply.assumptions), reply.assumptions
    assert timed_and_priced(reply)


def test_a_maximum_length_is_an_upper_bound(core):
    # 10,000 samples at the 4,096 cutoff: 40,960,000 tokens at most, said
    reply = ask(core, "lora qwen2.5-7b, 10k samples, cutoff_len 4096, 1 epoch")
    assert reply.work["amount"] == pytest.approx(40_960_000)
    assert "4,096 tokens at most" in reply.work["derivation"]
    assert any("upper bound" in a for a in reply.assumptions)


def test_no_packing_said_makes_the_time_a_lower_bound(core):
    reply = ask(core, "lora qwen2.5-7b on 50k samples of 1024 tokens, 2 epochs, no packing")
    assert reply.work["packing"] is False and "padding" in reply.work["derivation"]


def test_without_an_amount_the_pick_stands_and_the_size_is_asked_for_in_the_answer(core):
    reply = ask(core, "lora finetune qwen2.5 7b")
    assert reply.status == "answer" and reply.work is None
    assert "Tell me the dataset size" in reply.text


@pytest.mark.parametrize("text", [
    "serve llama 3 8b, 2M requests a day, 1500 input tokens and 300 output tokens per request",
    "部署 qwen2.5-7b，每天约 20 万次请求，峰值 200 qps",
])
def test_a_serving_question_has_no_training_work(core, text):
    assert "dataset_items" not in core.parser.parse(text).slots.filled()


@pytest.mark.parametrize("text, reply_has", [
    ("lora finetune qwen2.5 7b on -5000 samples of 1024 tokens", "-5,000 samples cannot be right"),
    ("用 LoRA 微调 Qwen2.5-7B，-3万条样本，每条2000 token", "-30,000 条样本不是有效的数据量"),
    ("lora finetune qwen2.5 7b on 0 samples", "0 samples cannot be right"),
    ("lora finetune qwen2.5 7b on 1e12 samples of 1024 tokens", "far beyond any dataset"),
])
def test_impossible_amounts_are_named_not_sized(core, text, reply_has):
    reply = ask(core, text)
    assert reply.status in ("follow_up", "info") and reply_has in reply.text, reply.text


# ----- the grammar ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def grammar(core):
    return core.parser.quantities


def found(core, grammar, text):
    return grammar.find(core.parser.normalise(text))


@pytest.mark.parametrize("text, want", [
    # (value, unit, rate, each, peak, average): real phrasings from the issue and the review
    ("每天约 20 万次请求，峰值 200 qps", [(200_000, "requests", "day", None, False, False),
                                     (200, "requests", "second", None, True, False)]),
    ("每分钟大概 30 张图", [(30, "images", "minute", None, False, False)]),
    ("reranker: 50 documents per query, 256 tokens each, 100 qps",
     [(50, "documents", None, "query", False, False), (256, "tokens", None, "item", False, False),
      (100, "requests", "second", None, False, False)]),
    ("日均 5万次调用", [(50_000, "requests", "day", None, False, True)]),
    ("we get about 1,000 requests per minute at peak", [(1000, "requests", "minute", None, True, False)]),
    ("2M requests a day, 1500 input tokens and 300 output tokens per request",
     [(2e6, "requests", "day", None, False, False), (1500, "tokens", None, "request", False, False),
      (300, "tokens", None, "request", False, False)]),
    ("10 billion images per second", [(1e10, "images", "second", None, False, False)]),
    ("500 hours of audio", [(500, "audio_hours", None, None, False, False)]),
    ("1-2万条样本", [(20_000, "samples", None, None, False, False)]),
])
def test_real_phrasings(core, grammar, text, want):
    got = [(q.value, q.unit, q.rate, q.each, q.peak, q.average) for q in found(core, grammar, text)]
    assert got == [(pytest.approx(v), u, r, e, p, a) for v, u, r, e, p, a in want]


MULT_EN = [("", 1), ("k", 1_000), ("K", 1_000), ("M", 1_000_000)]
MULT_ZH = [("", 1), ("千", 1_000), ("万", 10_000)]
HEDGE_EN = ["", "about ", "~", "around ", "roughly "]
HEDGE_ZH = ["", "约", "大约", "大概", "差不多"]


def _full_width(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in s)


@st.composite
def counts(draw, table):
    mult, factor = draw(st.sampled_from(table))
    base = draw(st.integers(min_value=1, max_value=999))
    return f"{base}{mult}", base * factor


@SETTINGS
@given(count=counts(MULT_EN), length=st.integers(16, 32_768), epochs=st.integers(1, 20),
       hedge=st.sampled_from(HEDGE_EN), noun=st.sampled_from(["samples", "examples", "rows", "conversations"]),
       form=st.integers(0, 3), wide=st.booleans())
def test_english_samples_tokens_epochs_are_read_in_any_phrasing(core, count, length, epochs, hedge, noun, form,
                                                                 wide):
    said, n = count
    size = [f"{said} {noun} of {hedge}{length} tokens", f"{said} {noun}, {hedge}{length} tokens each",
            f"{said} {noun} averaging {length} tokens", f"{said} {noun} ({hedge}{length} tokens per sample)"][form]
    text = f"lora finetune qwen2.5-7b on {size}, {epochs} epochs"
    slots = core.parser.parse(_full_width(text) if wide else text).slots.filled()
    assert slots.get("dataset_items") == n and slots.get("sample_tokens") == length and slots.get("epochs") == epochs, \
        (text, slots)


@SETTINGS
@given(count=counts(MULT_ZH), length=st.integers(16, 32_768), epochs=st.integers(1, 20),
       hedge=st.sampled_from(HEDGE_ZH), noun=st.sampled_from(["条样本", "条数据", "条对话", "条"]),
       form=st.integers(0, 2), wide=st.booleans())
def test_chinese_samples_tokens_epochs_are_read_in_any_phrasing(core, count, length, epochs, hedge, noun, form,
                                                                 wide):
    said, n = count
    size = [f"{said}{noun}，每条{hedge}{length} token", f"{said}{noun}，平均长度{hedge}{length} token",
            f"{said}{noun}，每条样本{hedge}{length}个token"][form]
    text = f"用 LoRA 微调 Qwen2.5-7B，{size}，训练{epochs}个epoch"
    slots = core.parser.parse(_full_width(text) if wide else text).slots.filled()
    assert slots.get("dataset_items") == n and slots.get("sample_tokens") == length and slots.get("epochs") == epochs, \
        (text, slots)


RATE_WORDS = {"second": (["per second", "/s", "a second"], ["每秒"]),
              "minute": (["per minute", "/min", "a minute"], ["每分钟"]),
              "hour": (["per hour", "an hour", "/h"], ["每小时"]),
              "day": (["per day", "a day", "/day", "daily"], ["每天", "日均"])}


@SETTINGS
@given(rate=st.sampled_from(sorted(RATE_WORDS)), n=st.integers(1, 999), mult=st.sampled_from(MULT_EN[:2]),
       hedge=st.sampled_from(HEDGE_EN), data=st.data())
def test_english_rates_keep_their_time_unit(grammar, core, rate, n, mult, hedge, data):
    word = data.draw(st.sampled_from(RATE_WORDS[rate][0]))
    unit = data.draw(st.sampled_from(["requests", "queries", "images", "calls"]))
    text = f"{word} {hedge}{n}{mult[0]} {unit}" if word == "daily" else f"{hedge}{n}{mult[0]} {unit} {word}"
    qs = found(core, grammar, text)
    assert len(qs) == 1 and qs[0].rate == rate and qs[0].value == n * mult[1], (text, qs)
    assert qs[0].per_second() == pytest.approx(n * mult[1] / {"second": 1, "minute": 60, "hour": 3600,
                                                               "day": 86400}[rate])


@SETTINGS
@given(rate=st.sampled_from(sorted(RATE_WORDS)), n=st.integers(1, 999), mult=st.sampled_from(MULT_ZH),
       hedge=st.sampled_from(HEDGE_ZH), unit=st.sampled_from(["次请求", "个请求", "次调用", "张图"]), data=st.data())
def test_chinese_rates_keep_their_time_unit(grammar, core, rate, n, mult, hedge, unit, data):
    word = data.draw(st.sampled_from(RATE_WORDS[rate][1]))
    qs = found(core, grammar, f"{word}{hedge}{n}{mult[0]}{unit}")
    assert len(qs) == 1 and qs[0].rate == rate and qs[0].value == n * mult[1], qs


def test_a_negative_count_is_kept_negative(core, grammar):
    (q,) = found(core, grammar, "-5 samples")
    assert q.negative and q.value == 5


# ----- the property the critic checks: stated work -> the multiplication, a time and a cost ---------------------
@ANSWER_SETTINGS
@given(n=st.sampled_from([2_000, 30_000, 50_000, 200_000]), length=st.sampled_from([256, 1024, 2000, 4096]),
       epochs=st.integers(1, 4), zh=st.booleans(), model=st.sampled_from(["qwen2.5-7b", "llama-3.1-8b",
                                                                          "qwen2.5-1.5b"]),
       method=st.sampled_from(["lora", "full", "qlora"]))
def test_every_stated_amount_of_work_shows_the_multiplication_a_time_and_a_cost(core, n, length, epochs, zh, model,
                                                                               method):
    if zh:
        method_zh = {"lora": "LoRA", "full": "全参", "qlora": "QLoRA"}[method]
        text = f"{method_zh}微调 {model}，{n // 10_000 or n}{'万' if n >= 10_000 else ''}条样本，每条约{length} token，训练{epochs}个epoch"
    else:
        text = f"{method} finetune {model} on {n:,} samples of {length} tokens, {epochs} epochs"
    reply = ask(core, text)
    expected = n * length * epochs
    assert reply.work is not None and reply.work["amount"] == pytest.approx(expected), (text, reply.work)
    shown = reply.work["derivation"]
    assert re.search(r"[x×].*[x×].*=", shown) and f"{n:,}" in shown and f"{length:,}" in shown, shown
    assert timed_and_priced(reply), (text, reply.text)


@pytest.mark.parametrize("text, tokens", [
    # C11: the passages' stated average, not the encoder's 512-token default
    ("Need to embed 100M passages (avg 256 tokens) with bge-large-en (335M params). How many GPUs for 3 days and "
     "cost on GCP?", 256),
    ("用 Qwen2.5-7B 离线给 100 万条评论打标签，每条平均 300 token", 300),
])
def test_a_batch_items_stated_size_is_never_replaced_by_the_default(core, text, tokens):
    reply = ask(core, text)
    assert reply.batch["prompt_tokens"] == tokens and "prompt" not in reply.batch["assumed"], reply.batch
