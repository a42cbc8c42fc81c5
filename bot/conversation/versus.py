"""What a comparison question sets against each other when it is not two GPUs: two precisions ('FP8 还是 INT4
(AWQ)'), two methods ('LoRA or full fine-tuning'), two clouds ('lambda vs aws') or two flavors or families ('g6e.xlarge
or g6.xlarge', 'AWS p5 or GCP a3-highgpu-8g'). The planner compares the job along that axis
(bot/plan/compare.py compare_on); this module only reads the text.

A side is named when its cue is heard on its own (a cue inside a longer one of another value is that value: 'lora'
in 'qlora', '4bit' in '4bit lora'); an axis is compared when the question asks for a comparison (the compare cues of
rules/lexicon.yaml, 'or'/'还是' included) and is not the user leaving the choice to the bot ('还没想好').
"""
from __future__ import annotations

import re
from typing import Any

from bot.conversation import info

# the order in which axes are read: the most specific name wins ('AWS p5 or GCP a3' is two flavor families, not
# two clouds)
AXES = ("flavor", "provider", "method", "precision")
PRECISION_LABEL = {"bf16": "BF16", "fp16": "FP16", "fp32": "FP32", "fp8": "FP8", "int8": "INT8", "int4": "INT4",
                   "nf4": "NF4"}
METHOD_LABEL = {"full": {"en": "full fine-tuning", "zh": "全参微调"}, "lora": {"en": "LoRA", "zh": "LoRA"},
                "qlora": {"en": "QLoRA", "zh": "QLoRA"}, "freeze": {"en": "freeze tuning", "zh": "冻结微调"}}
FLAVOR_SIDES_MAX = 8          # a family's sizes, the smallest first: enough to size any job one instance holds


def said_in_order(cuesets: dict[str, Any], text: str, order: tuple[str, ...]) -> list[str]:
    """The values whose cue is heard on its own, in the order they are said."""
    spans = {k: [sp for c in cuesets[k].cues for sp in c.spans(text)] for k in order if k in cuesets}
    own = {k: [s for s in sp if not any(o != k and os <= s[0] and s[1] <= oe and (oe - os) > (s[1] - s[0])
                                        for o, osp in spans.items() for os, oe in osp)]
           for k, sp in spans.items()}
    heard = [(min(s[0] for s in sp), k) for k, sp in own.items() if sp]
    return [k for _, k in sorted(heard)]


_CLOUD_RX: dict[str, list[tuple[re.Pattern, str]]] = {}
# a company's bare name heard as its cloud only where two clouds are set against each other ('Alibaba or Tencent for
# this?'): elsewhere 'Alibaba' is Qwen's maker and 'Tencent' Hunyuan's, so these are not provider aliases
_COMPANY_CLOUD = {"alibaba": "aliyun", "tencent": "tencentcloud", "amazon": "aws", "google": "gcp",
                  "microsoft": "azure", "volcano": "volcengine", "bytedance": "volcengine", "字节": "volcengine",
                  "阿里": "aliyun", "腾讯": "tencentcloud", "谷歌": "gcp", "微软": "azure", "亚马逊": "aws"}


def _cloud_patterns(kb) -> list[tuple[re.Pattern, str]]:
    """The provider aliases (normalised keys: 'googlecloud') as patterns that allow the spaces, hyphens and
    underscores people write between their letters ('google cloud', 'huawei-cloud'), longest first."""
    if kb.version not in _CLOUD_RX:
        out = []
        for alias, pid in sorted(kb.provider_aliases.items(), key=lambda a: (-len(str(a[0])), str(a[0]))):
            a = str(alias).lower()
            if not a:
                continue
            body = r"[\s_-]?".join(re.escape(ch) for ch in a)
            out.append((re.compile(rf"(?<![a-z0-9]){body}(?![a-z0-9])" if a.isascii() else body), pid))
        out += [(re.compile(rf"(?<![a-z0-9]){re.escape(a)}(?![a-z0-9])" if a.isascii() else re.escape(a)), pid)
                for a, pid in _COMPANY_CLOUD.items() if pid in kb.providers]
        _CLOUD_RX[kb.version] = out
    return _CLOUD_RX[kb.version]


def providers_said(kb, text: str) -> list[str]:
    """Every cloud the text names, in order (the knowledge base's provider aliases on word boundaries)."""
    hits: list[tuple[int, str]] = []
    for rx, pid in _cloud_patterns(kb):
        m = rx.search(text)
        if m:
            hits.append((m.start(), pid))
    out: list[str] = []
    for _, pid in sorted(hits):
        if pid not in out:
            out.append(pid)
    return out


def read_versus(parser, kb, parse, default_provider: str) -> dict[str, Any] | None:
    """{axis, values, labels} when the question compares two of a kind other than GPUs, else None."""
    if len(parse.slots.gpu_models or []) >= 2 or parse.unsure or parse.reset:
        return None
    if not parse.intent_scores.get("compare"):
        return None
    text = parse.text
    lang = parse.lang
    named = info.flavors_named(kb, text, parse.slots.provider or default_provider)
    groups = [g[:FLAVOR_SIDES_MAX] for g in named["groups"] if g]
    groups = [g for i, g in enumerate(groups) if g not in groups[:i]]
    if len(groups) >= 2:
        labels = [_flavor_label(kb, g) for g in groups[:2]]
        if labels[0] != labels[1]:
            return {"axis": "flavor", "values": groups[:2], "labels": labels}
    clouds = providers_said(kb, text)
    if len(clouds) >= 2:
        return {"axis": "provider", "values": clouds[:2],
                "labels": [kb.providers[p].display_name(lang) if p in kb.providers else p for p in clouds[:2]]}
    methods = said_in_order(parser.methods, text, ("qlora", "lora", "full", "freeze"))
    if len(methods) >= 2:
        return {"axis": "method", "values": methods[:2], "labels": [METHOD_LABEL[m][lang] for m in methods[:2]]}
    precisions = said_in_order(parser.precisions, text, ("nf4", "int4", "int8", "fp8", "bf16", "fp16", "fp32"))
    sixteen = {"bf16", "fp16"}
    if len(precisions) >= 2 and not set(precisions[:2]) <= sixteen:
        labels = [PRECISION_LABEL[p] + (" (AWQ)" if p == "int4" and "awq" in text else
                                        " (GPTQ)" if p == "int4" and "gptq" in text else "") for p in precisions[:2]]
        return {"axis": "precision", "values": precisions[:2], "labels": labels}
    return None


def _flavor_label(kb, ids: list[str]) -> str:
    """A flavor's own name, or its family's when several sizes are meant."""
    f = kb.flavors[ids[0]]
    return f.flavor if len(ids) == 1 else (f.family or f.flavor)


# 'what about just lambda?', 'how about azure', '那 AWS 呢', '换成 GCP 呢': a side added to the comparison just made
_ADDS = re.compile(r"what about|how about|and (?:on )?|compared (?:to|with)|vs\.?|versus|呢|对比|比一下|比比")


def versus_follow_up(kb, parse, kept: dict[str, Any] | None, default_provider: str) -> dict[str, Any] | None:
    """The comparison kept from the turn before, with the one cloud or flavor this turn adds as a further side, when
    the turn names one and no new job."""
    if not kept or parse.slots.model or parse.slots.params_b or parse.reset or not _ADDS.search(parse.text):
        return None
    if kept["axis"] not in ("provider", "flavor"):
        return None
    named = info.flavors_named(kb, parse.text, parse.slots.provider or default_provider)["groups"]
    clouds = providers_said(kb, parse.text)
    lang = parse.lang
    if len(named) == 1 and kept["axis"] == "flavor":
        value, label = named[0][:FLAVOR_SIDES_MAX], _flavor_label(kb, named[0])
    elif len(clouds) == 1 and (kept["axis"] == "provider" or kept.get("rental_hours")):
        value = clouds[0]
        label = kb.providers[value].display_name(lang) if value in kb.providers else value
    else:
        return None
    if value in kept["values"]:
        return None
    return {"axis": kept["axis"], "values": [*kept["values"], value], "labels": [*kept["labels"], label],
            "slots": kept.get("slots") or {}, "rental_hours": kept.get("rental_hours"), "follow_up": True}
