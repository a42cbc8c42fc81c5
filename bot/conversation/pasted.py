"""A Hugging Face config.json pasted into a question, and a model card named by its "org/name" (issue 17).

People size a model that is not on file by pasting its config.json, in Slack usually inside a code block
(```...```, which keeps the quotes straight), sometimes bare and sometimes with the quotes Slack or a word
processor made curly. The config is cut out of the question before the question is parsed (its numbers are not
the job's), read as JSON, and handed on as the object it is; the estimator (bot/estimate/hfconfig.py) builds the
model from it, as `gpu-advisor estimate --config` does.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.S)
# keys that make a brace block a model config rather than a brace in prose
CONFIG_KEYS = re.compile(r"hidden_size|num_hidden_layers|num_attention_heads|n_embd|model_type|architectures|"
                         r"text_config|intermediate_size|vocab_size")
QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "″": '"', "‘": "'", "’": "'"})
SLACK_ESCAPES = (("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"))
# 'mistralai/Magistral-Small-2509', 'huggingface.co/org/name': a Hugging Face repository id
CARD = re.compile(r"(?<![\w/.:-])(?:https?://)?(?:huggingface\.co/)?([A-Za-z0-9][\w.-]{1,60}/[A-Za-z0-9][\w.-]{1,95})"
                  r"(?![\w/-])")


@dataclass
class Pasted:
    text: str                            # the question without the config
    config: dict[str, Any] | None = None
    error: dict[str, Any] | None = None  # what was wrong: reason, line, column (a template words it)


def _block(text: str) -> tuple[str, tuple[int, int]] | None:
    """The config's text and where it sits: a code block holding an object, or the outermost braces of a bare
    paste that names config keys."""
    for m in FENCE.finditer(text):
        body = m.group(1).strip()
        if body.startswith("{") or CONFIG_KEYS.search(body):
            return body, m.span()
    start, end = text.find("{"), text.rfind("}")
    if start == -1:
        return None
    body = text[start:end + 1] if end > start else text[start:]
    if CONFIG_KEYS.search(body) and re.search(r"[\"“”']\s*:", body):
        return body, (start, start + len(body))
    return None


def find_config(text: str) -> Pasted:
    """The question with any pasted config.json taken out, and the config as an object (or what was wrong)."""
    found = _block(text or "")
    if not found:
        return Pasted(text=text)
    body, (s, e) = found
    rest = (text[:s] + " " + text[e:]).strip()
    for escaped, plain in SLACK_ESCAPES:
        body = body.replace(escaped, plain)
    try:
        cfg = json.loads(body.translate(QUOTES))
    except json.JSONDecodeError as err:
        return Pasted(text=rest, error={"reason": err.msg, "line": err.lineno, "col": err.colno})
    if not isinstance(cfg, dict):
        return Pasted(text=rest, error={"reason": f"a JSON {type(cfg).__name__}, not an object", "line": 1, "col": 1})
    return Pasted(text=rest, config=cfg)


def model_card(text: str) -> str | None:
    """The 'org/name' a question names, if any (a path like 'data/train.jsonl' has a file extension; skipped)."""
    for m in CARD.finditer(text or ""):
        name = m.group(1)
        if re.search(r"\.(?:jsonl?|csv|txt|parquet|py|ya?ml|md|bin|safetensors|gguf)$", name, re.I) or not_a_card(name):
            continue
        return name.rstrip(".,;:!?")          # 'Qwen/Qwen2.5-7B-Instruct.': the sentence's full stop is not the name's
    return None


# a unit ('GB/s', 'tok/s', 'Gbit/s', 'TFLOPS/GPU'), a log word ('NET/Socket', 'NET/IB'), an env var ('NCCL_DEBUG=INFO',
# 'CUDA_VISIBLE_DEVICES=0,1') or a word closing a sentence ('GB/s.'): never a model card
_UNIT_HEAD = re.compile(r"(?i)^(?:[kmgtp]i?b(?:it|yte)?s?|[kmgt]bps|t?flops?|tflops|pflops|tok(?:en)?s?|req(?:uest)?s?|"
                        r"it|iters?|samples?|images?|img|pages?|ms|us|sec|s|usd|cny|rmb|\$|¥|words?|chars?|frames?|"
                        r"steps?|epochs?|qps|rps|hrs?|hours?|days?|months?|gpus?|cards?|nodes?|w|kw|kwh)$")
_UNIT_TAIL = re.compile(r"(?i)^(?:s|sec|second|seconds|ms|h|hr|hrs|hour|hours|day|days|d|mo|month|months|week|weeks|"
                        r"gpu|gpus|card|cards|node|nodes|user|users|req|request|query|queries|token|tokens|tok|"
                        r"image|images|page|pages|step|steps|iter|it|sample|samples|w|watt|dollar|usd)$")
_LOG_HEAD = re.compile(r"^(?:NET|NCCL|CUDA|NVLS|P2P|SHM|IB|COLL|INIT|ENV|GRAPH|TUNING|PROXY|TCP|RDMA|HCCL)$")


def not_a_card(name: str) -> bool:
    """'GB/s', 'tok/s', 'NET/Socket', 'NET/IB.', 'NCCL_DEBUG=INFO/...': a unit, a log or env word, not 'org/name'."""
    org, _, tail = name.partition("/")
    bare = tail.rstrip(".,;:!?")
    return bool(_UNIT_HEAD.match(org) or _UNIT_TAIL.match(bare) or _LOG_HEAD.match(org) or len(bare) < 2
                or "_" in org and org.isupper() or (tail != bare and org.isupper() and not re.search(r"[\d-]", bare)))
