"""Video streams said with each one's frame rate ('200 个摄像头，每路 25fps', '200 camera streams at 25 fps') load a
vision service with streams x fps frames a second; a rate said in one word ('500 images/s', '300 fps', '每秒处理 300
帧') is the service's rate, not a batch of that many images. Both had been one T4 for 200 cameras."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

ZH = ["我们要给 {n} 个摄像头做实时 {m} 检测，每路 {f}fps，需要几张 T4", "{n} 路视频流跑 {m} 目标检测，每路 {f} fps，怎么配",
      "{n} 路监控视频，每路每秒 {f} 帧，用 {m} 实时检测，用什么卡"]
EN = ["real-time {m} detection on {n} camera streams at {f} fps, how many T4?",
      "we run {m} on {n} cctv cameras, {f} fps each, which gpus?", "{n} video streams at {f} fps through {m}, how many L4s?"]
MODELS = ["YOLOv8s", "YOLOv8m"]


@settings(max_examples=25, deadline=None)
@given(template=st.sampled_from(ZH + EN), n=st.sampled_from([8, 40, 200, 1000]), fps=st.sampled_from([5, 10, 15, 25, 30]),
       model=st.sampled_from(MODELS))
def test_streams_times_fps_is_the_load(core, template, n, fps, model):
    text = template.format(n=n, f=fps, m=model)
    slots = core.parser.parse(text).slots
    assert (slots.concurrency, slots.fps) == (n, fps), (text, slots)
    assert not slots.items, text
    reply, _ = core.turn(text, {})
    load = next(tg for tg in reply.targets if tg["target"] == "streams")
    assert load["asked"] == n and load["sized_for"] == n * fps and load["met"], (text, reply.targets)
    assert load["plan"] >= n * fps, (text, reply.targets)


@given(rate=st.sampled_from([60, 300, 500, 2400]), form=st.sampled_from(
    ["serve yolov8s for {r} images/s", "yolov8m at {r} images per second", "每秒处理 {r} 帧视频，yolov8m", "yolov8s 检测，每秒 {r} 张图"]))
@settings(max_examples=16, deadline=None)
def test_a_rate_is_not_a_batch(core, rate, form):
    slots = core.parser.parse(form.format(r=rate)).slots
    assert slots.qps == rate and not slots.items, (form, slots)
