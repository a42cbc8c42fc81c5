"""A service's load in the user's own units (issue 30 item 3): rates per second ... month in both languages, a daily
count as an average raised to its busy hours, per-request lengths as said, a reranker's fan-out, the peak
concurrency over the population online, a reasoning model's output length; impossible rates refused.

Every expected figure is my own arithmetic, written before the code ran; a row's comment shows it."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.plan.load import MIN_PRODUCTION_REPLICAS, PEAK_FACTOR

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
DAY = 86_400


def slots(core, text):
    return core.parser.parse(text).slots.filled()


def ask(core, text):
    reply, _ = core.turn(text, {})
    return reply


@pytest.mark.parametrize("text, want", [
    # C09: 2,000,000 / 86,400 = 23.148 requests/s on average; 500 in, 300 out as said
    ("We need to serve Llama 3.1 8B for a chatbot: 2 million requests per day, avg 500 input + 300 output tokens, "
     "TTFT < 1s. Cheapest AWS option?",
     {"qps": 23.148, "qps_basis": "average", "request_tokens": 500, "output_tokens": 300, "ttft_ms": 1000}),
    # C32: 10,000 / 86,400 = 0.1157/s; 3,000 output tokens; '每 token 延迟 < 50ms' is the time per output token
    ("部署 DeepSeek-R1-Distill-Qwen-32B，推理模型输出很长，平均 3000 token 输出，每天 1 万次请求，要求每 token 延迟 < 50ms",
     {"qps": 0.1157, "qps_basis": "average", "output_tokens": 3000, "tpot_ms": 50}),
    # C39: 10,000,000 images / 86,400 = 115.74 images/s on average
    ("每天 1000 万张图片跑 YOLOv8m 推理（640），用 T4 要几张？", {"qps": 115.74, "qps_basis": "average"}),
    # C12: 2,000 hours of audio a day = 2,000 x 3,600 / 86,400 = 83.3x real time, a throughput (no peak)
    ("每天要转写 2000 小时的电话录音，用 whisper-large-v3，要几张 T4 还是 A10？", {"audio_rate": 83.333}),
    # an image rate per minute with a hedge between the rate and the number: 30 / 60 = 0.5 images/s, no dataset
    ("部署 SDXL 文生图，每分钟大概 30 张图", {"qps": 0.5}),
    # a rate per second at peak is sized as said
    ("serve qwen2.5-7b, peak 200 qps", {"qps": 200, "qps_basis": "peak"}),
    # 1,000 / 60 = 16.67 requests/s
    ("serve llama 3.1 8b, we get about 1,000 requests per minute at peak", {"qps": 16.667, "qps_basis": "peak"}),
    # a month of 30 days: 3,000,000 / 2,592,000 = 1.157/s
    ("serve qwen2.5-14b for 3M requests a month", {"qps": 1.1574, "qps_basis": "average"}),
    # a reranker: 50 (query, document) pairs per query, each document 256 tokens
    ("serve bge-reranker-v2-m3: 50 documents per query, 256 tokens each, 100 qps",
     {"qps": 100, "fanout": 50, "request_tokens": 256, "model": "bge-reranker-v2-m3"}),
    # C08: the stated peak concurrency, not the 200 people online
    ("部署 Qwen2.5-72B-Instruct 给公司内部用，大概 200 人同时在线，高峰并发 30 个请求，上下文 8k，华为云上怎么配？",
     {"concurrency": 30}),
    ("serve qwen2.5-72b for 500 users online, peak concurrency 40", {"concurrency": 40}),
])
def test_loads_are_read_as_said(core, text, want):
    got = slots(core, text)
    for key, value in want.items():
        assert got.get(key) == (pytest.approx(value, rel=1e-3) if isinstance(value, (int, float)) else value), \
            (key, got)


@pytest.mark.parametrize("text, absent", [
    ("部署 SDXL 文生图，每分钟大概 30 张图", "dataset_items"),        # a rate, not a training set of 30 images
    ("serve llama 3 8b, 2M requests a day", "duration"),               # 'a day' is the rate's, not a rental period
    ("serve a chatbot, 2M requests a day", "params_b"),               # nor "2M" a model size
])
def test_a_rate_is_not_read_as_something_else(core, text, absent):
    assert absent not in slots(core, text)


def test_a_daily_count_is_sized_at_its_busy_hours_on_two_replicas(core):
    # 2,000,000 / 86,400 x 3 = 69.44 requests/s sized; the answer says the average, the factor and the replicas
    reply = ask(core, "We need to serve Llama 3.1 8B for a chatbot: 2 million requests per day, avg 500 input + "
                      "300 output tokens, TTFT < 1s. Cheapest AWS option?")
    work = reply.work
    assert work["kind"] == "serving" and work["amount"] == pytest.approx(2e6 / DAY * PEAK_FACTOR, rel=1e-3)
    assert work["average_per_s"] == pytest.approx(23.148, rel=1e-3) and work["peak_factor"] == PEAK_FACTOR
    assert "2,000,000 requests a day = 23.1/s on average; x 3 at the busy hours = 69.4 requests/s" in work["derivation"]
    assert work["input_tokens"] == 500 and work["output_tokens"] == 300
    pick = reply.recommendations[0]
    assert pick["replicas"] >= MIN_PRODUCTION_REPLICAS
    assert any("busy hours" in a for a in reply.assumptions) and any("replicas" in a for a in reply.assumptions)


def test_a_rate_said_per_second_is_not_raised(core):
    reply = ask(core, "serve qwen2.5-7b, peak 200 qps")
    assert reply.work["amount"] == pytest.approx(200) and reply.work["peak_factor"] == 1
    assert not any("busy hours" in a for a in reply.assumptions)


def test_an_image_rate_per_day_sizes_the_cards_for_its_busy_hours(core):
    # 10,000,000 / 86,400 x 3 = 347.2 images/s
    reply = ask(core, "每天 1000 万张图片跑 YOLOv8m 推理（640），用 T4 要几张？")
    assert reply.speed["target"] == pytest.approx(1e7 / DAY * PEAK_FACTOR, rel=1e-3)
    assert reply.speed["gpus_for_target"] >= 2


def test_a_reranker_counts_its_pairs(core):
    # 100 queries/s x 50 documents = 5,000 (query, document) pairs/s
    reply = ask(core, "serve bge-reranker-v2-m3: 50 documents per query, 256 tokens each, 100 qps")
    assert reply.work["amount"] == pytest.approx(5000) and reply.work["fanout"] == 50
    assert "x 50 documents per query = 5,000 (query, document) pairs/s" in reply.work["derivation"]


def test_stated_lengths_are_never_replaced_by_defaults(core):
    # the request's output as said (300), not the chat default (256); the window holds 500 + 300
    reply = ask(core, "serve llama 3.1 8b, 20 qps, 500 input tokens and 300 output tokens per request")
    assert reply.work["input_tokens"] == 500 and reply.work["output_tokens"] == 300
    assert reply.slots["output_tokens"] == 300 and reply.slots["request_tokens"] == 500


@pytest.mark.parametrize("text, output, said", [
    # a reasoning model with no output said: its published typical answer (4,718 tokens), said back
    ("serve deepseek-r1-distill-qwen-32b for 20 users", 4718, True),
    ("serve qwq-32b for 10 users", 4718, True),
    # a stated output wins
    ("部署 DeepSeek-R1-Distill-Qwen-32B，平均 3000 token 输出，20 个并发", 3000, False),
    # not a reasoning model: the chat default stays
    ("serve qwen2.5-32b for 20 users", None, False),
])
def test_a_reasoning_model_generates_what_it_typically_does(core, text, output, said):
    reply = ask(core, text)
    assert any("reasoning model" in a or "推理模型" in a for a in reply.assumptions) == said, reply.assumptions
    if output:
        window = [a for a in reply.assumptions if "concurrent" in a or "并发" in a]
        assert window and str(1024 + output) in window[0].replace(",", "") or not said, window


@pytest.mark.parametrize("text, reply_has", [
    ("serve llama 3 8b with 10 billion requests per second", "beyond any single service"),
    ("部署 SDXL，每秒 100 亿张图", "超出了任何单个服务的规模"),
    ("serve llama 3 8b at -5 requests per second", "cannot be right"),
])
def test_impossible_rates_are_named_not_sized(core, text, reply_has):
    reply = ask(core, text)
    assert reply.status in ("info", "follow_up") and reply_has in reply.text, reply.text


PERIODS = {"second": (1, ["per second", "a second", "/s"], ["每秒"]),
           "minute": (60, ["per minute", "a minute", "/min"], ["每分钟"]),
           "hour": (3600, ["per hour", "an hour", "/h"], ["每小时"]),
           "day": (DAY, ["per day", "a day", "/day"], ["每天", "日均", "一天"])}


@SETTINGS
@given(period=st.sampled_from(sorted(PERIODS)), n=st.integers(1, 999), mult=st.sampled_from([("", 1), ("k", 1000)]),
       hedge=st.sampled_from(["", "about ", "~", "roughly "]), zh=st.booleans(), data=st.data())
def test_any_phrasing_of_a_request_rate_is_read_per_second(core, period, n, mult, hedge, zh, data):
    seconds, en_words, zh_words = PERIODS[period]
    if zh:
        word = data.draw(st.sampled_from(zh_words))
        zmult = data.draw(st.sampled_from([("", 1), ("万", 10_000), ("千", 1000)]))
        text = f"部署 qwen2.5-7b 聊天服务，{word}{data.draw(st.sampled_from(['', '约', '大概']))}{n}{zmult[0]}次请求"
        count = n * zmult[1]
    else:
        word = data.draw(st.sampled_from(en_words))
        text = f"serve qwen2.5-7b for {hedge}{n}{mult[0]} requests {word}"
        count = n * mult[1]
    got = slots(core, text)
    assert got.get("qps") == pytest.approx(count / seconds, rel=1e-3), (text, got)
    assert (got.get("qps_basis") == "average") == (period == "day"), (text, got)


# ----- the work of image and denoiser jobs: steps x batch, the trainer's default steps, the image side ----------
def test_steps_said_are_steps_x_batch_not_one_epoch(core):
    # C16: 3,000 steps x batch 1 = 3,000 images over 300 photos = 10 passes (was one pass of 300 images)
    reply = ask(core, "想训 SDXL 的 LoRA，300 张图，1024 分辨率，大概 3000 步，用什么卡？")
    assert reply.slots["train_steps"] == 3000 and reply.slots["image_size"] == 1024
    assert reply.work["amount"] == pytest.approx(3000) and reply.work["factors"][0]["unit"] == "steps"
    assert reply.speed["items"] == pytest.approx(3000) and reply.speed["epochs"] == pytest.approx(10)


def test_a_diffusion_lora_without_steps_runs_the_trainers_default(core):
    # kohya-ss sd-scripts --max_train_steps default 1600, batch 1: 1,600 images for 30 photos (was 30: 2 minutes)
    reply = ask(core, "flux lora on 30 photos")
    assert reply.work["amount"] == pytest.approx(1600) and reply.work["assumed"] == ["steps", "batch"]
    assert any("max_train_steps" in a for a in reply.assumptions)
    assert reply.recommendations[0]["job_hours"] > 0.5


def _speed_and_activations(core, side):
    from bot.estimate.kinds import job_memory, job_speed
    from bot.records.models import Workload
    kb = core.kb
    model = kb.models["yolov8s"]        # activations measured at 640 x 640 (knowledge/models.yaml)
    w = Workload(model="yolov8s", params_b=model.params_b, kind="vision", task="train", method="full",
                 precision="fp16", batch_size=16, image_size=side, dataset_items=1000, epochs=1)
    speed = job_speed(w, model, kb.gpus["a100-80gb"] if "a100-80gb" in kb.gpus else next(iter(kb.gpus.values())),
                      kb.gpus, list(kb.models.values()))
    return speed.rate, job_memory(w, model).breakdown["activations"]


def test_the_image_side_scales_flops_and_activations_with_its_square(core):
    # 1280 px is (1280 / 640)^2 = 4x the pixels of YOLO's 640: a quarter of the images/s, 4x the activations
    rate_640, act_640 = _speed_and_activations(core, 640)
    rate_1280, act_1280 = _speed_and_activations(core, 1280)
    assert rate_640 / rate_1280 == pytest.approx(4, rel=0.02)
    assert act_1280 / act_640 == pytest.approx(4, rel=0.02)


@pytest.mark.parametrize("text, side", [
    ("Train YOLOv8x on a custom dataset of 120k images at 1280px, 150 epochs", 1280),
    ("yolov8m imgsz=1280 on 5000 images, 100 epochs", 1280),
    ("sdxl 1024x1024 generation, 2 images per second", 1024),
    ("想训 SDXL 的 LoRA，300 张图，1024 分辨率", 1024),
])
def test_the_image_side_is_read(core, text, side):
    got = slots(core, text)
    assert got.get("image_size") == side, got
    assert "dataset_items" in got or "qps" in got, got        # the count beside it is still read


@pytest.mark.parametrize("text, tpot", [
    ("serve llama 3.1 70b for 100 users, 30 tokens/s per user, ttft under 500ms", 1000 / 30),
    ("部署 qwen2.5-72b，每个用户 20 token/s，100 并发", 50.0),
])
def test_a_per_user_speed_is_a_time_per_token(core, text, tpot):
    assert slots(core, text)["tpot_ms"] == pytest.approx(tpot, rel=1e-3)
