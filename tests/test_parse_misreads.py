"""A stated word or number misread by the parser (set7/set8 helpers): a zh cue word inside a longer known word
('量化' in '向量化'), a weekday computed from today over the span the user said ('by Friday (4 days)'), a usage period
said first ('every week for 10 hours'), cards on a named cloud read as the user's own, and documents of N pages each
counted as documents instead of pages. Each row is a phrasing; the properties generate the numbers."""
from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.conversation.usage import HOURS_MONTH, WEEKS_MONTH

TODAY = dt.date(2026, 12, 6)      # a Sunday: 'by Friday' is 5 days on the calendar

# (text, slot, expected); expected None means the slot must be unset (or falsy)
ROWS = [
    # 1. a zh cue inside a longer known word is no cue
    ("用 bge-m3 把 100 万篇文档向量化，要多少卡", "topic", None),
    ("把 500 万条商品描述向量化，用 bge-large-zh，一天内跑完", "topic", None),
    ("200 万条评论要矢量化，用 bge-m3，多少钱", "topic", None),
    ("我们是量化交易公司，想部署 qwen2.5-7b 做研报摘要", "topic", None),
    ("qwen2.5-72b 量化到 int4 能放进两张 4090 吗", "topic", "quantization"),
    ("用 awq 量化 qwen2.5-14b 部署，需要什么卡", "topic", "quantization"),
    ("为 50 个租户各训一个 LoRA，基于 qwen2.5-7b", "renting", None),
    # 2. an explicit span beside a weekday is the deadline
    ("lora finetune qwen2.5-7b on 50k samples, need it by Friday (4 days)", "deadline_days", 4.0),
    ("lora finetune qwen2.5-7b on 50k samples by friday, i.e. 3 days", "deadline_days", 3.0),
    ("lora finetune qwen2.5-7b on 50k samples, 2 epochs, by next monday (~9 days)", "deadline_days", 9.0),
    ("lora finetune qwen2.5-7b on 50k samples, due thursday (in 2 days)", "deadline_days", 2.0),
    ("lora 微调 qwen2.5-7b，5 万条样本，下周五前（8 天）", "deadline_days", 8.0),
    ("微调 qwen2.5-7b，5 万条样本，周五前（还有 4 天）", "deadline_days", 4.0),
    ("微调 qwen2.5-7b，5 万条样本，周三之前（约 2 天）", "deadline_days", 2.0),
    ("lora finetune qwen2.5-7b on 50k samples by friday", "deadline_days", 5.0),
    # 3. usage per week / day / month, the period said first or after
    ("serve llama-3-8b every week for 10 hours, reserved or on demand?", "usage_hours_month", 10 * WEEKS_MONTH),
    ("serve llama-3-8b 10 hours every week, reserved or on demand?", "usage_hours_month", 10 * WEEKS_MONTH),
    ("serve llama-3-8b, weekly about 10 hours, reserved or on demand?", "usage_hours_month", 10 * WEEKS_MONTH),
    ("serve llama-3-8b 10h/wk, reserved or on demand?", "usage_hours_month", 10 * WEEKS_MONTH),
    ("serve llama-3-8b each month for 40 hours, reserved or on demand?", "usage_hours_month", 40.0),
    ("部署 qwen2.5-7b 每周用 10 小时，包月还是按需", "usage_hours_month", 10 * WEEKS_MONTH),
    ("部署 qwen2.5-7b 10 小时每周，包月还是按需", "usage_hours_month", 10 * WEEKS_MONTH),
    ("部署 qwen2.5-7b 每个月只跑 40 个小时，包月还是按需", "usage_hours_month", 40.0),
    # 4. cards on a named cloud are rented unless said to be the user's
    ("在腾讯云上用 8 张 H100 训练 llama 3 8b 要多久", "renting", True),
    ("use 8 H100 on AWS to finetune llama-3-8b on 1B tokens", "renting", True),
    ("on gcp with 4x A100, how long to finetune qwen2.5-7b on 200M tokens", "renting", True),
    ("阿里云上 4 张 A10 部署 qwen2.5-7b 够吗", "renting", True),
    ("我们有 8 张 H100，在腾讯云上，训练 llama 3 8b 要多久", "renting", None),
    ("we have our own 8 H100 on AWS, how long to finetune llama-3-8b on 1B tokens", "renting", None),
    # 5. a hypothetical alternative is cards to rent, weighed against the plan, not the user's own
    ("wouldn't 8x A10 be cheaper?", "renting", True),
    ("what if we used 4 L40S instead?", "renting", True),
    ("how about 2 x H100, would that be faster?", "renting", True),
    ("用 4 张 A10 会不会更便宜？", "renting", True),
    ("换成 8 张 4090 呢？", "renting", True),
    ("如果用 2 张 H100 是不是更快", "renting", True),
    ("we have 8 A10s, would that be cheaper?", "renting", None),
    ("我们手上有 4 张 A10，会不会更便宜", "renting", None),
    # 6. documents of N pages each: the pages are the items
    ("OCR 10k PDFs of 20 pages each with qwen2-vl-7b", "items", 200_000),
    ("summarize 5,000 documents, each 30 pages, with qwen2.5-7b", "items", 150_000),
    ("extract tables from 2000 PDFs (~50 pages each) with qwen2-vl-7b", "items", 100_000),
    ("用 qwen2-vl-7b 识别 1 万份 PDF，每份 20 页", "items", 200_000),
    ("用 qwen2.5-7b 总结 5000 份合同，每份约 30 页", "items", 150_000),
    ("用 qwen2-vl-7b 解析 2 万个文档，平均每个 15 页", "items", 300_000),
    ("summarize 10k documents with qwen2.5-7b", "items", 10_000),
]


@pytest.mark.parametrize("text,slot,expected", ROWS)
def test_a_stated_word_or_number_is_read_as_said(core, text, slot, expected):
    got = getattr(core.parser.parse(text, today=TODAY).slots, slot)
    if expected is None:
        assert not got, (text, slot, got)
    elif isinstance(expected, float):
        assert got is not None and abs(got - expected) < 0.06, (text, slot, got)
    else:
        assert got == expected, (text, slot, got)


_PERIODS = {"day": 30.4, "week": WEEKS_MONTH, "month": 1.0}
_EN_FORMS = ["every {p} for {n} hours", "{n} hours every {p}", "{n} hours per {p}", "each {p}, about {n} hours",
             "{n} hours a {p}"]
_ZH_FORMS = {"day": ["每天用 {n} 小时", "{n} 小时每天", "一天大概用 {n} 个小时"],
             "week": ["每周用 {n} 小时", "{n} 小时每周", "一周跑 {n} 个小时"],
             "month": ["每月用 {n} 小时", "{n} 小时每月", "每个月跑 {n} 个小时"]}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(period=st.sampled_from(sorted(_PERIODS)), n=st.integers(2, 20), zh=st.booleans(), data=st.data())
def test_usage_hours_said_per_period_are_converted_to_a_month(core, period, n, zh, data):
    form = data.draw(st.sampled_from(_ZH_FORMS[period] if zh else _EN_FORMS))
    said = form.format(p=period, n=n)
    text = f"部署 qwen2.5-7b，{said}，包月还是按需？" if zh else f"serve llama-3-8b {said}, reserved or on demand?"
    got = core.parser.parse(text, today=TODAY).slots.usage_hours_month
    want = min(HOURS_MONTH, n * _PERIODS[period])
    assert got is not None and abs(got - want) <= 0.02 * want + 0.5, (text, got, want)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(count=st.sampled_from([500, 2000, 10_000, 50_000]), pages=st.integers(2, 300),
       form=st.sampled_from(["summarize {c:,} documents of {p} pages each with qwen2.5-7b",
                             "summarize {c} PDFs, each {p} pages, with qwen2.5-7b",
                             "summarize {c} documents (~{p} pages each) with qwen2.5-7b",
                             "用 qwen2.5-7b 总结 {c} 份文档，每份 {p} 页",
                             "用 qwen2.5-7b 总结 {c} 份 PDF，平均每份 {p} 页"]))
def test_documents_of_n_pages_each_are_count_times_pages(core, count, pages, form):
    text = form.format(c=count, p=pages)
    s = core.parser.parse(text, today=TODAY).slots
    assert s.items == count * pages and s.item_unit == "page", (text, s.items, s.item_unit)
    assert s.items_each and s.items_each["count"] == count and s.items_each["per"] == pages


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(days=st.integers(1, 12), weekday=st.sampled_from(["monday", "tuesday", "wednesday", "thursday", "friday"]),
       form=st.sampled_from(["by {w} ({d} days)", "by {w} (~{d} days)", "by {w}, i.e. {d} days", "by next {w} ({d} days)"]),
       zh=st.sampled_from([None, "周五前（{d} 天）", "下周三前（约 {d} 天）", "周二之前（还有 {d} 天）"]))
def test_a_span_said_beside_a_weekday_wins(core, days, weekday, form, zh):
    said = zh.format(d=days) if zh else form.format(w=weekday, d=days)
    text = f"lora finetune qwen2.5-7b on 50k samples, need it {said}"
    assert core.parser.parse(text, today=TODAY).slots.deadline_days == days, text


def test_pages_are_shown_as_the_multiplication(core):
    for text, words in (("summarize 5,000 documents of 30 pages each with qwen2.5-7b, by tomorrow",
                         "5,000 documents x 30 pages each = 150,000 pages"),
                        ("用 qwen2.5-7b 总结 5000 份合同，每份约 30 页，明天之前", "5,000 份 × 每份 30 页 = 150,000 页")):
        reply, _ = core.turn(text, {})
        assert words in reply.text, reply.text[:800]


@pytest.mark.parametrize("first,follow", [
    ("serve qwen2.5-7b for 200 concurrent users on aws", "wouldn't 8x A10 be cheaper?"),
    ("在阿里云部署 qwen2.5-14b，100 个并发用户", "用 4 张 A10 会不会更便宜？"),
])
def test_a_hypothetical_alternative_is_not_the_users_own_cards(core, first, follow):
    _, state = core.turn(first, {})
    reply, _ = core.turn(follow, state)
    assert "Yours:" not in reply.text and "你的硬件" not in reply.text, reply.text[:900]
    assert not any(r.get("label") == "yours" for r in reply.recommendations), reply.text[:900]
