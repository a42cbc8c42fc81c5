"""A quantity restated in a follow-up, in the order people say a change rather than a first question: the thing, a
verb of change, then the new value ('并发变成200', '用户涨到500人', '数据量变成4万小时', 'users go up to 500'), often
with the old value beside it ('40k hours of audio, not 12k', 'from 12k to 40k hours', '从1.2万小时变成4万小时',
'3M images instead of 1M'). The slot readers read a value that stands next to its thing ('并发200', '500 users'), so
the verb between them is taken out, and the old value is dropped (it would be read as a second quantity: '1M' as a
model of a million parameters). Run on the normalised text, before any slot is read."""
from __future__ import annotations

import re

_NUM = r"(?:\d+(?:\.\d+)?|[一两二三四五六七八九十百千万]+)"
_MULT = r"(?:\s*(?:k|m|b|bn|w|thousand|million|billion|千万|百万|千|万|亿))?"
# the units a restated amount may carry (kept with it when it moves)
_UNIT = (r"(?:\s*(?:hours?|hrs?|h|days?|images?|pictures?|photos?|samples?|examples?|clips?|tokens?|users?|"
         r"requests?|qps|rps|usd|cny|rmb|gpus?|cards?|epochs?|小时|天|张|条|个|人|token|美元|元|块|张卡|卡|轮)(?![a-z]))?")

# the old value beside the new one: 'not 12k', 'instead of 1M', 'rather than 12k hours', '而不是1.2万', '不是12k'
_OLD_AFTER = re.compile(rf"[,，]?\s*(?:(?<![a-z])(?:instead\s+of|rather\s+than|not)|而不是|而非|不是)\s*"
                        rf"{_NUM}{_MULT}{_UNIT}(?:\s+of\s+[a-z]+)?(?=$|[\s,，.。;；!?！？)])")
# the old value before the change: 'from 12k to 40k', '从1.2万小时变成4万小时', 'went from 200 to 600 users'
_OLD_FROM = re.compile(rf"(?<![a-z])from\s+{_NUM}{_MULT}{_UNIT}\s+(?=to\s+\d)|从\s*{_NUM}{_MULT}{_UNIT}\s*(?=(?:变成|改成|"
                       rf"变为|改为|涨到|增加到|增长到|提高到|提升到|上升到|降到|降低到|减少到|减到|扩大到|到)\s*\d)")
# zh: the verb of change between a thing and its new value ('并发变成200' -> '并发200')
_ZH_VERB = re.compile(r"(?:(?<=[\u4e00-\u9fffa-z])|^)\s*(?:要|会|将|可能|大概)?\s*(?:变成了?|改成了?|变为|改为|涨到了?|增加到|"
                      r"增长到|提高到|提升到|上升到|上涨到|升到|加到|扩大到|扩到|达到|降到|降低到|下降到|减少到|减到|"
                      r"缩减到|缩小到|调整到|调整为|调到|改到|变到)\s*(?:了)?\s*(?=\d+(?:\.\d+)?(?![\d.]*[a-z])|[一两二三四五六七八九十]+\s*(?:万|千|百|亿|个|人|张|条|小时|天))")
# en: 'users go up to 500', 'concurrency increases to 200', 'qps will be 100', 'the dataset is now 3M images'
_EN_THING = (r"(?:concurrent\s+users|concurrency|users|user\s+count|qps|rps|requests\s+per\s+second|request\s+rate|"
             r"traffic|tokens|token\s+count|images|samples|examples|audio|hours\s+of\s+audio|dataset|data)")
_EN_VERB = re.compile(rf"(?<![a-z])({_EN_THING})\s+(?:(?:will|would|could|might|should)\s+)?(?:now\s+)?"
                      r"(?:go(?:es)?|went|grows?|grew|rises?|rose|increases?|increased|jumps?|jumped|climbs?|climbed|"
                      r"drops?|dropped|falls?|fell|decreases?|decreased|changes?|changed|is|are|be|becomes?|became|gets?|"
                      r"got)\s+(?:now\s+)?(?:(?:up|down)\s+)?(?:to\s+)?"
                      rf"((?:about\s+|around\s+|~)?\d+(?:\.\d+)?{_MULT})(?![\d.])(\s*[a-z/]+(?:\s+of\s+audio)?)?")
_EN_MOVE = {"concurrent users": "concurrent users", "concurrency": "concurrent requests", "users": "users",
            "user count": "users", "qps": "qps", "rps": "requests/s", "requests per second": "requests/s",
            "request rate": "requests/s", "traffic": "requests/s", "tokens": "tokens", "token count": "tokens",
            "images": "images", "samples": "samples", "examples": "samples", "hours of audio": "hours of audio"}


# zh: a modal between a thing and its value ('上下文要 32k', '预算需要 5 万', '并发至少 200'): the thing next to its value
_ZH_THING = r"(?:上下文长度|上下文窗口|上下文|序列长度|context|输入长度|输出长度|输入|输出|用户数|用户量|用户|并发数|并发|qps|预算|数据量|样本数?|工期)"
_ZH_MODAL = re.compile(rf"({_ZH_THING})\s*(?:要求|需要支持|需要达到|需要|要支持|需支持|要达到|得|要|会有|会是|有|是|至少要?|大概|大约|约)\s*(?=\d(?![\d.]*\s*(?:倍|%|成|x(?![a-z])|times)))")
# zh: users said thing first ('用户 200', '用户数 500', '用户变成 200' once its verb is out) as the readers read them ('200
# 个用户'); a daily or monthly count ('日活用户 1 万') is another load and stays
_ZH_USERS_FIRST = re.compile(r"(?<!日活)(?<!月活)(?<!每天)(?<!每日)(?:在线)?(?:用户数|用户量|用户)\s*(\d+(?:\.\d+)?\s*(?:万|千)?)"
                             r"(?!\s*(?:\d|\.|个|人|名|位|万|千|/|每|天|日|月|小时|token|条|张|倍|%|成|x(?![a-z])|times))")


def restate(text: str) -> str:
    """`text` (normalised, lower case) with each change said in the order the slot readers read."""
    if not any(c.isdigit() for c in text) and not re.search(r"[一两二三四五六七八九十]", text):
        return text
    # the old value goes only after a new one ('40k hours, not 12k'); 'not 2 usd' alone says nothing new
    text = _OLD_AFTER.sub(lambda m: "" if any(c.isdigit() for c in m.string[:m.start()]) else m.group(0), text)
    text = _OLD_FROM.sub("", text)
    text = _ZH_VERB.sub("", text)
    text = _ZH_MODAL.sub(r"\1", text)
    text = _ZH_USERS_FIRST.sub(lambda m: f"{m.group(1).strip()}个用户", text)
    return _EN_VERB.sub(_en_number_first, text)


def _en_number_first(m: re.Match) -> str:
    """'users go up to 500' -> '500 users'; a value that says its own unit ('the dataset is now 3M images', 'traffic
    goes to 40 qps') keeps it, the verb goes; a factor ('traffic goes up 3x') is left to relative.load_scale."""
    thing, value, after = re.sub(r"\s+", " ", m.group(1)), m.group(2), m.group(3) or ""
    if re.match(r"\s*(?:%|percent|x|times)(?![a-z])", after) or re.match(r"x(?![a-z])", after.strip()):
        return m.group(0)
    if after.strip() and after.strip() not in ("users", "user", "people"):
        return f"{thing} {value}{after}"
    unit = _EN_MOVE.get(thing)
    return f"{value} {unit}" if unit else f"{thing} {value}{after}"
