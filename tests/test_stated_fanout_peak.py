"""The amount of work and the load as said: a per-request fan-out times the request rate, the peak over an average,
a count of items (not a batch size), each said in Chinese or English.

The defect class (fresh reviews, 'the amount of work or the load read wrong'): 'average 5 QPS, peak 20' sized at
5 x 3 = 15 (the peak said was dropped for the assumed busy-hour factor; in Chinese at 5), 'each request has 64
sentences' sized at 5 requests/s (the texts per request dropped), 'a batch of 2M summaries' answered as a service
('summaries' was corrected to 'summarise' and no item was counted), '1k input 300 output' read as a 300-token prompt.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.plan.load import serving_load

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _slots(core, text: str) -> dict:
    return core.parser.parse(text).slots.filled()


def _sized(core, text: str) -> float:
    load = serving_load(_slots(core, text))
    assert load is not None, (text, _slots(core, text))
    return load.amount


# ----- fan-out: requests a second x texts (or documents) per request ------------------------------------------------
FANOUT = {
    "en": ["serve bge-m3 embeddings, {r} queries per second, each request embeds {n} texts of {L} tokens",
           "bge-m3 embedding service at {r} requests per second, each request has {n} sentences of {L} tokens",
           "serve bge-reranker-v2-m3, {r} qps, each query reranks {n} docs of {L} tokens",
           "rerank service with bge-reranker-v2-m3: {r} qps, each query has {n} candidate passages of {L} tokens"],
    "zh": ["部署 bge-m3 做向量化，每秒 {r} 个请求，每个请求 {n} 条文本，每条 {L} token",
           "bge-m3 向量服务，每秒 {r} 次请求，每次请求 {n} 个句子，每条 {L} token",
           "重排服务 bge-reranker-v2-m3，每秒 {r} 个查询，每个查询重排 {n} 篇文档，每篇 {L} token"],
}


@st.composite
def fanout_jobs(draw):
    lang = draw(st.sampled_from(["en", "zh"]))
    return (lang, draw(st.sampled_from(FANOUT[lang])), draw(st.integers(1, 60)), draw(st.integers(2, 200)),
            draw(st.sampled_from([64, 128, 256, 300, 512])))


@given(job=fanout_jobs())
@SETTINGS
def test_the_sized_load_is_the_rate_times_the_fanout(core, job):
    """'2 queries per second, each embeds 100 texts' is 200 texts a second, whatever the noun or language."""
    lang, template, rate, fanout, length = job
    text = template.format(r=rate, n=fanout, L=length)
    slots = _slots(core, text)
    assert slots.get("fanout") == fanout and slots.get("request_tokens") == length, (text, slots)
    assert _sized(core, text) == pytest.approx(rate * fanout), (text, slots)


@pytest.mark.parametrize("text, product, lang", [
    ("serve bge-m3 embeddings, 2 queries per second, each request embeds 100 texts of 128 tokens",
     "2 requests/s; x 100 texts per request = 200 texts/s", "en"),
    ("部署 bge-m3 做向量化，每秒 2 个请求，每个请求 100 条文本，每条 128 token", "每秒 2 次请求；每个请求 100 条文本 = 每秒 200 条", "zh"),
    ("serve bge-reranker-v2-m3, 10 queries per second, each query reranks 50 docs of 300 tokens",
     "x 50 documents per query = 500 (query, document) pairs/s", "en"),
])
def test_the_answer_shows_the_multiplication(core, text, product, lang):
    reply = core.turn(text, {})[0]
    assert product in reply.text, reply.text


# ----- containers a period x the items each holds; users x each one's rate --------------------------------------------
CONTAINERS = {
    "en": [("SDXL service: {c} sessions per hour, each session generates {e} images", 3600),
           ("we get {c} orders a day, each order has {e} product images to caption with qwen2.5-vl 7b", 86400 / 3),
           ("serve llama 3 8b: {c} users online, each sends {e} requests per minute", 60),
           ("llama 3 8b chatbot, {c} users, each user sends {e} requests per minute", 60)],
    "zh": [("每小时 {c} 个会话，每个会话生成 {e} 张图，SDXL", 3600),
           ("每天 {c} 个订单，每个订单 {e} 张图，用 qwen2.5-vl 7b 生成描述", 86400 / 3),
           ("qwen2.5 7b 客服：{c} 个用户同时在线，每人每分钟发 {e} 次请求，输入 1k 输出 300", 60)],
}


@st.composite
def container_jobs(draw):
    lang = draw(st.sampled_from(["en", "zh"]))
    template, seconds = draw(st.sampled_from(CONTAINERS[lang]))
    return lang, template, seconds, draw(st.integers(10, 5000)), draw(st.integers(2, 60))


@given(job=container_jobs())
@SETTINGS
def test_the_load_is_the_containers_times_what_each_holds(core, job):
    """'1,000 orders a day, each with 50 images' is 50,000 images a day; '300 users, each 2 requests a minute' is
    10 requests a second (one order's 50 images, one user's 2 a minute, had been read as the load)."""
    lang, template, seconds, count, each = job
    text = template.format(c=count, e=each)
    assert _sized(core, text) == pytest.approx(count * each / seconds, rel=1e-3), (text, _slots(core, text))


@pytest.mark.parametrize("text, product", [
    ("we get 1000 orders a day, each order has 50 product images to caption with qwen2.5-vl 7b",
     "1,000 orders per day x 50 images each = 50,000 images a day"),
    ("每天 1000 个订单，每个订单 50 张图，用 qwen2.5-vl 7b 生成描述", "每天 1,000 个订单 × 每个 50 张图 = 每天 50,000 张图"),
    ("serve llama 3 8b: 300 users online, each sends a request every 30 seconds, 1k input 300 output",
     "300 users x 1 request(s) every 30 s each = 10.0 requests/s"),
    ("qwen2.5 7b 客服：300 个用户同时在线，每人每分钟发 2 次请求，输入 1k 输出 300", "300 个用户 × 每人每 60 秒 2 次请求 = 每秒 10.0 次请求"),
])
def test_the_answer_shows_the_containers_product(core, text, product):
    reply = core.turn(text, {})[0]
    assert product in reply.text, reply.text


# ----- the peak over the average -----------------------------------------------------------------------------------
PEAK = {
    "en": ["serve llama 3 8b, average {a} qps, peak {p} qps, 1k input 300 output",
           "serve llama 3 8b chat, average {a} QPS, peak {p}, prompts 1k tokens",
           "llama 3 8b, {a} requests per second on average, peaks at {p}",
           "qwen2.5 7b api, avg {a} req/s, peak of {p} requests per second"],
    "zh": ["部署 llama 3 8b，平均每秒 {a} 个请求，峰值每秒 {p} 个，输入 1k 输出 300",
           "qwen2.5 7b 在线服务，平均 {a} qps，峰值 {p} qps",
           "部署 qwen2.5 7b，平均每秒 {a} 次请求，高峰 {p}"],
}


@st.composite
def peak_jobs(draw):
    lang = draw(st.sampled_from(["en", "zh"]))
    avg = draw(st.integers(1, 50))
    return lang, draw(st.sampled_from(PEAK[lang])), avg, avg + draw(st.integers(1, 200))


@given(job=peak_jobs())
@SETTINGS
def test_a_peak_said_beside_an_average_is_the_load_sized(core, job):
    """'average 5 QPS, peak 20' is sized at 20 a second: not the average, nor the average x the assumed factor."""
    lang, template, avg, peak = job
    text = template.format(a=avg, p=peak)
    slots = _slots(core, text)
    assert slots.get("qps_basis") == "peak" and slots.get("qps_average") == avg, (text, slots)
    assert _sized(core, text) == pytest.approx(peak), (text, slots)


@pytest.mark.parametrize("text, peak, average, lang", [
    ("serve llama 3 8b chat, average 5 QPS, peak 20, 1k input 300 output", "20.0 requests/s at peak", "average 5/s",
     "en"),
    ("部署 llama 3 8b，平均每秒 5 个请求，峰值每秒 20 个，输入 1k 输出 300", "峰值每秒 20.0 次请求", "平均每秒 5", "zh"),
])
def test_the_answer_says_the_peak_sized_and_the_average(core, text, peak, average, lang):
    reply = core.turn(text, {})[0]
    assert peak in reply.text and average in reply.text, reply.text


# ----- a count of items is the work, not a batch size --------------------------------------------------------------
ITEMS = {
    "en": ["run llama 3 8b over a batch of {n} summaries, 1k input 200 output tokens each, within 3 days",
           "generate {n} captions with qwen2.5 7b offline, 500 input 100 output tokens each",
           "batch job: {n} translations with qwen2.5 7b, each 800 tokens in, 800 out"],
    "zh": ["用 qwen2.5 7b 批量生成 {n} 条摘要，每条输入 1k 输出 200，3 天内跑完",
           "离线用 qwen2.5 7b 跑 {n} 条分类，每条输入 500 输出 20"],
}
SCALE = {"en": [("k", 1e3), ("M", 1e6), ("", 1)], "zh": [("万", 1e4), ("", 1)]}


@st.composite
def item_jobs(draw):
    lang = draw(st.sampled_from(["en", "zh"]))
    suffix, mult = draw(st.sampled_from(SCALE[lang]))
    n = draw(st.integers(1, 900)) if suffix else draw(st.integers(200, 900_000))
    return lang, draw(st.sampled_from(ITEMS[lang])), f"{n}{suffix}", n * mult


@given(job=item_jobs())
@SETTINGS
def test_a_count_of_items_is_the_batch_jobs_work(core, job):
    """'a batch of 2M summaries' is 2,000,000 items of an offline job (not a batch size of 2, nor a service)."""
    lang, template, said, n = job
    text = template.format(n=said)
    slots = _slots(core, text)
    assert slots.get("offline") and slots.get("items") == pytest.approx(n), (text, slots)
    assert slots.get("batch_size") in (None,) or slots["batch_size"] != int(said.rstrip("kM万") or 0), (text, slots)


LENGTHS = {
    "en": ["embed {n} docs x {L} tokens each with bge-m3 in 10 hours", "nightly re-embed of {n} docs x {L} tokens with "
           "e5-large-v2", "embed {n} docs of {L} tokens with bge-m3 in 10 hours", "embed {n} {L}-token docs with bge-m3"],
    "zh": ["用 bge-m3 离线给 {n} 篇文档 × {L} token 算向量", "用 bge-m3 给 {n} 篇文档算向量，每篇 {L} token，10 小时内完成"],
}


@st.composite
def sized_items(draw):
    lang = draw(st.sampled_from(["en", "zh"]))
    suffix, mult = draw(st.sampled_from(SCALE[lang][:2]))
    n = draw(st.integers(1, 900)) if suffix else draw(st.integers(100, 900_000))
    return lang, draw(st.sampled_from(LENGTHS[lang])), f"{n}{suffix}", n * mult, draw(st.integers(16, 8000))


@given(job=sized_items())
@SETTINGS
def test_each_items_length_is_the_length_said(core, job):
    """'5M docs x 400 tokens' is 5,000,000 items of 400 tokens each (the length was replaced by a 512 default)."""
    lang, template, said, n, length = job
    text = template.format(n=said, L=length)
    slots = _slots(core, text)
    assert slots.get("items") == pytest.approx(n) and slots.get("item_input_tokens") == length, (text, slots)


# ----- a table of phrasings, both languages: what each says is read as said -----------------------------------------
TABLE = [
    # (text, slots expected)
    ("serve bge-m3, 5 requests per second, each request has 64 sentences of 256 tokens",
     {"qps": 5.0, "fanout": 64, "fanout_unit": "texts", "request_tokens": 256}),
    ("bge-m3 向量服务，峰值每秒 10 次请求，每次请求 32 条文本，每条 200 token",
     {"qps": 10.0, "fanout": 32, "fanout_unit": "texts", "request_tokens": 200}),
    ("embedding api on bge-m3: 20 qps, batches of 16 texts, 512 tokens each",
     {"qps": 20.0, "fanout": 16, "request_tokens": 512}),
    ("bge-reranker-v2-m3, 20 qps, each query has 100 candidate passages of 256 tokens",
     {"qps": 20.0, "fanout": 100, "request_tokens": 256}),
    ("重排服务 bge-reranker-v2-m3，每秒 20 个查询，每个查询重排 100 篇文档，每篇 256 token",
     {"qps": 20.0, "fanout": 100, "request_tokens": 256}),
    ("reranker bge-reranker-v2-m3 at 8 qps, top-k 40, 384 tokens each",
     {"qps": 8.0, "fanout": 40}),
    ("serve llama 3 8b chat, average 5 QPS, peak 20, 1k input 300 output",
     {"qps": 20.0, "qps_basis": "peak", "qps_average": 5.0, "request_tokens": 1024, "output_tokens": 300}),
    ("serve llama 3 8b, avg 5 qps, peak 20 qps, prompts 1k tokens, outputs 300 tokens",
     {"qps": 20.0, "qps_basis": "peak", "qps_average": 5.0}),
    ("部署 llama 3 8b，平均每秒 5 个请求，峰值每秒 20 个，输入 1k 输出 300",
     {"qps": 20.0, "qps_basis": "peak", "qps_average": 5.0, "request_tokens": 1024, "output_tokens": 300}),
    ("llama 3 8b, 10 requests per second on average, peaks at 40",
     {"qps": 40.0, "qps_basis": "peak", "qps_average": 10.0}),
    ("日均 10 万次请求，峰值每秒 20 次，qwen2.5 7b", {"qps": 20.0, "qps_basis": "peak"}),
    ("qwen2.5 7b 在线服务，平均 3 qps，高峰期 12 qps", {"qps": 12.0, "qps_basis": "peak", "qps_average": 3.0}),
    ("qwen2.5 7b, 2 million requests per day", {"qps_basis": "average"}),
    ("serve llama 3 8b for 10k daily active users, 1k input 300 output",
     {"daily_users": 10000, "request_tokens": 1024, "output_tokens": 300}),
    ("我们日活 1 万，部署 qwen2.5 14b 做客服，输入 1k 输出 300",
     {"daily_users": 10000, "request_tokens": 1024, "output_tokens": 300}),
    ("run llama 3 8b over a batch of 2M summaries, 1k input 200 output tokens each, within 3 days",
     {"offline": True, "items": 2_000_000, "item_input_tokens": 1000, "item_output_tokens": 200}),
    ("用 qwen2.5 7b 批量生成 200 万条摘要，每条输入 1k 输出 200，3 天内跑完",
     {"offline": True, "items": 2_000_000, "item_input_tokens": 1000, "item_output_tokens": 200}),
    ("embed 5M docs x 400 tokens each with bge-m3 in 10 hours",
     {"offline": True, "items": 5_000_000, "item_input_tokens": 400}),
    ("用 bge-m3 给 500 万篇文档算向量，每篇 400 token，10 小时内完成",
     {"offline": True, "items": 5_000_000, "item_input_tokens": 400}),
    ("each customer order of 2k images must be done within 4 hours, caption with qwen2.5-vl 7b",
     {"offline": True, "items": 2000}),
    ("每个客户订单 2000 张图片，要在 4 小时内用 qwen2.5-vl 7b 生成描述", {"offline": True, "items": 2000}),
    ("we need to summarize 2M articles with llama 3 8b, each 1k tokens in, 200 out, done in 3 days",
     {"offline": True, "items": 2_000_000, "item_output_tokens": 200}),
    ("generate 1M captions with qwen2.5 7b offline", {"offline": True, "items": 1_000_000}),
    ("离线用 qwen2.5 7b 跑 50 万条分类，每条输入 500 输出 20", {"offline": True, "items": 500_000}),
    ("bge-reranker-v2-m3: 30 searches per second, rerank top-100 of 256 tokens",
     {"qps": 30.0, "fanout": 100, "request_tokens": 256}),
    ("embed 5M 400-token docs with bge-m3 in 10 hours", {"items": 5_000_000, "item_input_tokens": 400}),
    ("SDXL service: 500 sessions per hour, each session generates 20 images", {"qps": 2.7778}),
    ("embedding service bge-m3: peak 50 requests per second, each with 20 chunks of 512 tokens",
     {"qps": 50.0, "fanout": 20, "fanout_unit": "texts", "request_tokens": 512}),
    ("bge-m3 向量服务，每秒 10 个请求，每个请求 20 个文档片段，每个 512 token", {"qps": 10.0, "fanout": 20, "fanout_unit": "texts"}),
]


@pytest.mark.parametrize("text, want", TABLE)
def test_loads_and_work_are_read_as_said(core, text, want):
    slots = _slots(core, text)
    got = {k: slots.get(k) for k in want}
    assert got == want, (text, slots)


# ----- two workloads in one message: both sized, none dropped ------------------------------------------------------
TWO = [
    ("serve qwen2.5 7b for 30 users during the day and run a nightly batch of 500k classifications",
     ["The live service:", "The batch job:", "30 concurrent users", "500,000 items", "night window of 8 hours"]),
    ("we serve llama 3 8b at 10 qps; we also run an offline batch of 1M summaries each night, 1k input 200 output "
     "tokens each", ["The live service:", "The batch job:", "10.0 requests/s", "1,000,000 items x (1,000 prompt + 200"]),
    ("run an offline batch of 200k translations with qwen2.5 7b within 2 days, and serve it at 4 qps for our app",
     ["The live service:", "The batch job:", "200,000 items", "Work: 4 requests/s"]),
    ("白天给 30 个人用 qwen2.5 7b 聊天，晚上再跑 50 万条文本分类",
     ["在线服务：", "批处理任务：", "30 个并发用户", "500,000 条", "8 小时的夜间窗口"]),
    ("部署 qwen2.5 7b 在线客服，每秒 5 个请求，另外每晚要离线跑 100 万条摘要，每条输入 1k 输出 200",
     ["在线服务：", "批处理任务：", "每秒 5 次请求", "1,000,000 条 × （提示 1,000 + 输出 200"]),
]


@pytest.mark.parametrize("text, said", TWO)
def test_two_workloads_in_one_message_are_both_sized(core, text, said):
    """A service and a batch job in one message: each sized on its own (one of them was dropped)."""
    reply = core.turn(text, {})[0]
    missing = [s for s in said if s not in reply.text]
    assert not missing, (missing, reply.text)


@pytest.mark.parametrize("text", [
    "serve llama 3 8b at 10 qps, 1k input 300 output",
    "run a batch of 2M summaries with llama 3 8b within 3 days",
    "部署 qwen2.5 7b，每秒 5 个请求；输入 1k 输出 300",
    "离线跑 100 万条摘要，qwen2.5 7b，每条输入 1k 输出 200，3 天内",
])
def test_one_workload_is_not_split(core, text):
    reply = core.turn(text, {})[0]
    assert "Two workloads" not in reply.text and "两个任务" not in reply.text, reply.text
