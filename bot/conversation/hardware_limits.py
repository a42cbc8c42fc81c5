"""The GPUs a user cannot use and the only ones they can, as they say them: "we don't have H100 quota on azure, only
A100 and A10", "没有 H100 的配额，只能用 A100", "H100 sold out", "no H100 or H200". A negation or "only" governs the run of
GPU names it stands before (names joined by and / or / commas / 和 / 跟 / 、); a refusal after a run ('H100 quota is
not available', 'H100 没有配额') governs that run. What is read becomes `gpu_excluded` and `gpu_allowed`, which the
planner keeps to (bot/plan/search.py); the names stop being a comparison or the card of the job."""
from __future__ import annotations

import re
from typing import Any

_JOIN = re.compile(r"\s*(?:,|/|、|and|or|nor|&|和|跟|与|及|或者?|以及)?\s*(?:the\s+|an?\s+)?$")
_NOT_BEFORE = re.compile(
    r"(?:(?<![a-z])(?:no|not|without|except|lack|lacking|excluding|never|neither)"
    r"|(?<![a-z])(?:don't|dont|do not|doesn't|does not|can't|cannot|can not|couldn't|won't)\s+(?:have|get|use|access|rent)"
    r"|(?<![a-z])(?:no|without)\s+access\s+to|(?<![a-z])(?:not|never)\s+(?:allowed|able)\s+to\s+use"
    # (a question's A-not-A form is no refusal: '能不能用 L4', '有没有 H100', '要不要 A100', '可不可以用')
    r"|(?<!有)没有|(?<![有没])没(?!有)|(?<![有])无|(?<![能])不能用|用不了|(?<![用])不用|(?<![要])不要|除了|排除|拿不到|申请不到"
    r"|租不到|买不到|不可用)"
    r"\s*(?:any\s+|an?\s+)?(?:(?:quota|access|capacity)\s+(?:for|to|on)\s+)?$")
_NOT_AFTER = re.compile(
    r"^\s*(?:gpus?|cards?|instances?|nodes?|卡|显卡|实例|机器|的)?\s*(?:quota|capacity|配额|资源|库存|额度)?\s*"
    # 'A100 和 H100 都用不了', 'A100 and H100 are both unavailable': an adverb of the whole run before the refusal
    r"(?:我们|我|咱们|公司)?\s*(?:都|也|均|全都|全|(?:are\s+|is\s+)?(?:both|all|either)(?![a-z]))?\s*"
    r"(?:(?:is|are)\s+(?:not\s+available|unavailable|sold\s+out|out\s+of\s+stock|not\s+an\s+option|off\s+the\s+table)"
    r"|(?:not\s+available|unavailable|sold\s+out|out\s+of\s+stock)"
    r"|没有|没了|不够|用不了|不可用|没货|缺货|售罄|申请不到|拿不到|租不到|不能用|不行)")
_ONLY_BEFORE = re.compile(
    r"(?:(?<![a-z])(?:only|just|solely)(?:\s+(?:have|got|use|get|obtain|buy|rent|procure|source|find|access\s+to))?"
    r"(?:\s+(?:quota|capacity|access)\s+(?:for|to|on))?"
    r"|(?<![a-z])(?:limited|restricted|stuck|constrained)\s+(?:to|with)"
    r"|只有|只能用|只能租|只能买|只能拿到|只拿得到|只租得到|只买得到|只申请得到|只能申请到|只能|仅有|仅能用|仅|就只有|只剩)\s*$")
# 'L20 only', 'L20 is all we can get', 'only L20 available': the limit said after the names
_ONLY_AFTER = re.compile(r"^\s*(?:gpus?|cards?|instances?)?\s*(?:only(?![a-z])|is all (?:we|i) (?:can|could) (?:get|rent|use|buy)"
                         r"|is (?:the only|all) (?:one|thing|card)s? (?:we|i) (?:can|could)|(?:is|are) (?:the )?only (?:option|choice))")
# 'only' alone may say what the user has ('I only have 4090', '只有 A100'): a limit on what to rent only beside a
# GPU ruled out, or with the words of a cloud's quota or use ('only have quota for A100', '只能用 A100')
_ONLY_LIMIT = re.compile(r"quota|capacity|access|available|(?<![a-z])(?:use|rent|get|obtain|buy|procure|source|find)(?![a-z])"
                         r"|(?<![a-z])(?:limited|restricted|stuck|constrained)\s+(?:to|with)"
                         r"|配额|额度|只能用|只能租|只能买|只能拿到|只拿得到|只租得到|只买得到|只申请得到|只能申请到|仅能用|可用|能用|能租|能买|租得到|买得到")

# a question about a card for the job, not a refusal of it: 'A10 不行吗？便宜很多啊', 'L4 不行？', 'why not A10?',
# '为什么不用 A10', 'A10 不可以吗' (bot/conversation/why_turn.py answers it against the plan)
_ASKED_ABOUT = re.compile(r"(?:(?<![a-z])why\s+(?:not|don't\s+we|don't\s+you|wouldn't\s+(?:you|we))(?:\s+(?:just|simply)"
                          r")?(?:\s+(?:use|rent|go\s+with|pick|take|try))?|为什么不|为啥不|怎么不|干嘛不|何不)"
                          r"\s*(?:就|直接)?\s*(?:用|租|选|上)?\s*(?:an?\s+|the\s+)?(?:\d+\s*(?:x|×|张|块)\s*)?$", re.I)
_ASKED_AFTER = re.compile(r"^\s*(?:gpus?|cards?|卡|显卡)?\s*(?:也|就|真的|难道)?\s*(?:不行|不可以|不能用|不够|用不了)\s*"
                          r"(?:吗|么|嘛|呢|啊|\?|？)")


def hardware_limits(text: str, found: list[tuple[str, int, int]]) -> dict[str, list[str]]:
    """`found`: each GPU named as (id, start, end) in `text`, in order. Returns {'gpu_excluded': [...],
    'gpu_allowed': [...]} for what the text limits (either may be absent)."""
    runs: list[list[tuple[str, int, int]]] = []
    for g in sorted(found, key=lambda f: f[1]):
        if runs and _JOIN.fullmatch(text[runs[-1][-1][2]:g[1]]):
            runs[-1].append(g)
        else:
            runs.append([g])
    excluded: list[str] = []
    allowed: list[str] = []
    maybe: list[str] = []        # 'only X' with no word of a limit: one only beside a GPU ruled out
    for run in runs:
        start, end = run[0][1], run[-1][2]
        before = re.split(r"[.;!?。；！？]", text[max(0, start - 40):start])[-1]
        after = re.split(r"[.;!?。；！？,，]", text[end:end + 40])[0]
        ids = [g[0] for g in run]
        if _ASKED_ABOUT.search(before) or _ASKED_AFTER.search(text[end:end + 40]):
            continue             # 'A10 不行吗？', 'why not A10?': a question about the card, no limit
        if _NOT_BEFORE.search(before) or _NOT_AFTER.search(after):
            excluded += [i for i in ids if i not in excluded]
        elif _ONLY_BEFORE.search(before) and (_ONLY_LIMIT.search(before) or _ONLY_LIMIT.search(after)) \
                or _ONLY_AFTER.search(after):
            allowed += [i for i in ids if i not in allowed]
        elif _ONLY_BEFORE.search(before):
            maybe += [i for i in ids if i not in maybe]
    out: dict[str, list[str]] = {}
    if excluded:
        out["gpu_excluded"] = excluded
    allowed += [i for i in maybe if excluded and i not in allowed]
    if allowed:
        out["gpu_allowed"] = [i for i in allowed if i not in excluded]
    return out


def apply_limits(slots: dict[str, Any], limits: dict[str, list[str]]) -> None:
    """The limits as slots: a GPU limited is no longer the job's card nor one side of a comparison."""
    if not limits:
        return
    slots.update(limits)
    named = slots.pop("gpu_models", None) or ([slots.pop("gpu_model")] if slots.get("gpu_model") else [])
    rest = [g for g in named if g not in limits.get("gpu_excluded", []) and g not in limits.get("gpu_allowed", [])]
    if len(rest) >= 2:
        slots["gpu_models"] = rest
    elif rest:
        slots["gpu_model"] = rest[0]
