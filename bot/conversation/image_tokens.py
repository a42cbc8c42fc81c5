"""The vision tokens each request of a vision-language service carries, said by the user: 'each image is about 4000
vision tokens', 'each request has 2 images of ~1000 tokens', '每张图大约 4000 个视觉 token', '每个请求带 3 张图，每张
1k token'. They are part of the prompt the plan is sized for (the KV cache each request holds and the prefill it
runs), so the dialogue adds them to the request's text prompt (dialogue._with_image_tokens); a model on file with
its own image size (knowledge/models.yaml `image_tokens`) is then not counted twice (plan/workload.py)."""
from __future__ import annotations

import re

_MULT = {"k": 1024, "千": 1000, "": 1}      # 1k tokens is 1,024, as the parser reads it
_N = r"(\d+(?:\.\d+)?)\s*(k|千)?"
_TOK = r"(?:vision|visual|image|img|patch)?\s*-?\s*tokens?"
_ZH_TOK = r"(?:个)?\s*(?:视觉|图像|图片|vision|visual|image)?\s*token"
_IMAGE = r"(?:image|picture|photo|frame|screenshot|img)"
# tokens of one image
_PER_IMAGE = [
    re.compile(rf"(?<![a-z])(?:each|every|per|one|an?|the)\s+{_IMAGE}s?\s+(?:is|are|=|≈|costs?|takes?|becomes?|adds?|"
               rf"counts?\s+as|comes?\s+to|turns?\s+into|encodes?\s+(?:to|into)|uses?|needs?|has|is\s+worth)?\s*"
               rf"(?:about|around|roughly|approximately|approx\.?|~|≈)?\s*{_N}\s*{_TOK}(?![a-z])"),
    re.compile(rf"(?<![\d.]){_N}\s*{_TOK}\s*(?:per|each|an?|for\s+each|for\s+every|every)\s+{_IMAGE}(?![a-z])"),
    re.compile(rf"{_IMAGE}s?\s+(?:of|at|with)\s+(?:about|around|roughly|~)?\s*{_N}\s*{_TOK}(?![a-z])"),
    re.compile(rf"(?:每|一)\s*(?:张|幅|帧|个)\s*(?:图|图片|图像|照片|截图)?\s*(?:大约|大概|约|差不多|就)?\s*(?:是|有|占|算|会|要|编码成|变成)?"
               rf"\s*(?:大约|大概|约)?\s*{_N}\s*{_ZH_TOK}"),
    re.compile(rf"(?:图|图片|图像)\s*(?:大约|大概|约)?\s*{_N}\s*{_ZH_TOK}\s*(?:一张|每张)"),
]
# images in one request
_IMAGES = [
    re.compile(rf"(?<![\d.])(\d+)\s+{_IMAGE}s?\s+(?:per|each|an?|in\s+each|in\s+every|with\s+each)\s+(?:request|query|prompt|call|message|turn)"),
    re.compile(rf"(?:each|every|per|one|a)\s+(?:request|query|prompt|call|message|turn)\s+(?:has|have|carries|includes|"
               rf"contains|with|sends|brings|comes\s+with)\s+(\d+)\s+{_IMAGE}s?"),
    re.compile(r"(?:每个|每次|一个|每条)\s*(?:请求|调用|查询|对话|消息)\s*(?:有|带|带上|包含|含|传|上传)?\s*(\d+)\s*(?:张|幅|帧)"),
    re.compile(r"(?<![\d.])(\d+)\s*(?:张|幅)\s*(?:图|图片|图像)?\s*(?:/|每)\s*(?:请求|次)"),
]


def said_image_tokens(text: str) -> tuple[int, int] | None:
    """(images a request, vision tokens an image) said in the text, or None when no image's tokens are said; the
    images a request default to one."""
    t = text.lower()
    per = None
    for rx in _PER_IMAGE:
        m = rx.search(t)
        if m:
            per = float(m.group(1)) * _MULT[m.group(2) or ""]
            break
    if per is None or not 16 <= per <= 100_000:
        return None
    count = 1
    for rx in _IMAGES:
        m = rx.search(t)
        if m:
            count = int(m.group(1))
            break
    if not 1 <= count <= 64:
        return None
    return count, int(per)
