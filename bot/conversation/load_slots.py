"""A service's load as the user states it, read with the quantity grammar (quantities.py): a rate of requests,
images or documents per second, minute, hour, day or month ('2 million requests per day', '每分钟大概 30 张图',
'日均 5 万次调用', 'peak 200 qps'), each request's input and output tokens ('avg 500 input + 300 output tokens',
'平均 3000 token 输出'), and a reranker's fan-out ('50 documents per query, 256 tokens each').

A count per day, week or month is an average ('qps_basis': average): the planner applies the peak factor and says
so. A count per second or minute, or one said at peak, is the rate to sustain. The numbers read are blanked, so
that '每分钟 30 张图' is not read as a training set of 30 images, nor '2 million' as a parameter count; the words
stay, as cues of what the job is.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from bot.conversation.quantities import Quantity, QuantityGrammar, either_words

RATE_UNITS = ("requests", "images", "documents", "samples", "prompts", "audio_hours")
AVERAGE_PERIODS = ("day", "week", "month")
MAX_RATE_PER_S = 1e7           # beyond any single service (the slot's own bound, slots.py _qps)
MAX_REQUEST_TOKENS = 10_000_000
MAX_FANOUT = 100_000
# 'each query reranks 20 passages': a verb between the query said per and its documents
PER_QUERY = re.compile(r"(?:(?<![a-z])(?:each|every|per|a)\s+(?:query|request|search|question|call)(?![a-z])[^.,;:!?]{0,25}"
                       r"|(?<![a-z])(?:batch(?:es)?|requests?) of\s*(?:~|about|up to)?\s*"
                       r"|每批\s*(?:约|大概)?\s*"
                       r"|每(?:个|次|条)?\s*(?:查询|请求|问题|检索|query|request|search)[^，。；,.;]{0,8})$")


# the busy hours over the average, said ('高峰大约是平均的3倍', 'peak is ~3x the average', 'peaks at 2.5x average'):
# the factor a daily or monthly count is raised by, instead of the planner's assumed one
PEAK_FACTOR = re.compile(r"(?:高峰|峰值)[^，。；,.;\d]{0,8}?(?:是|为)?\s*(?:平均|均值|日均)(?:值)?的?\s*(?:约|大约|大概)?\s*"
                         r"(\d+(?:\.\d+)?)\s*倍|"
                         r"(?<![a-z])peak(?:s|ing)?\s*(?:is|are|at|of|=|~|around|about|roughly)?\s*(?:~|about|around|roughly)?\s*"
                         r"(\d+(?:\.\d+)?)\s*(?:x|×|times)\s*(?:the\s+)?(?:average|avg|mean)")
MAX_PEAK_FACTOR = 50
# a peak said with its number and no unit beside a rate said with one ('average 5 QPS, peak 20', '平均每秒 5 个请求，峰值
# 每秒 20 个', 'peaks at 20/s', '高峰 20'): the same unit, at its own period when it says one, else the rate's
PEAK_BARE = re.compile(r"(?:(?<![a-z])(?:peak(?:s|ing)?|at\s+(?:the\s+)?peak|busiest(?:\s+hour)?)(?![a-z])|峰值|高峰(?:期|时)?)"
                       r"\s*(?:of|is|at|=|:|~|around|about|up\s+to|约|大约|大概|是|为|能到|会到|达到|到|可达)?\s*"
                       r"(?P<pre>每秒钟?|每分钟|每小时|一秒钟?|一分钟)?\s*(?:约|大约|大概|能到|会到|达到|到)?\s*"
                       r"(?P<num>\d+(?:\.\d+)?)\s*(?P<k>k|千|万)?(?![\d.])\s*(?:个|次)?\s*"
                       r"(?P<post>/\s*s(?:ec)?|/\s*min|per\s+second|per\s+minute|a\s+second|a\s+minute|/秒|每秒|qps|rps|rpm)?"
                       r"(?!\s*(?:x|×|times|倍|%|users?|people|人|用户|并发|concurren|gb|ms|tokens?|token|images?|张|s(?![a-z])))")
PEAK_PERIOD = {"每秒": "second", "每秒钟": "second", "一秒": "second", "一秒钟": "second", "每分钟": "minute",
               "一分钟": "minute", "每小时": "hour", "/s": "second", "/sec": "second", "/min": "minute",
               "per second": "second", "per minute": "minute", "a second": "second", "a minute": "minute",
               "/秒": "second", "qps": "second", "rps": "second", "rpm": "minute"}
# daily active users ('日活 1 万用户', '50k daily active users', 'DAU 20万'): people a day, not at once
_N = r"(\d+(?:\.\d+)?)\s*(k|m|千|万|百万|亿)?"
DAILY_USERS = re.compile(rf"(?:日活(?:跃)?(?:用户)?(?:数)?|dau)\s*(?:约|大概|大约|有|是|为|:|=|~)?\s*{_N}\s*(?:个|名|人)?\s*(?:用户|人)?|"
                         rf"{_N}\s*(?:个|名)?\s*(?:(?:daily active users|dau|daily users|日活(?:跃)?用户|日活))")
# a request's lengths by their role with no unit ('输入 2k 输出 500', 'input 1500, output 300', '输入约2000，输出500左右'):
# tokens, in a serving question (a 'k' is 1,024, as for a context)
BARE_LENGTH = re.compile(r"(?:(?<![a-z])(?P<en>input|output|prompt|completion)s?|(?P<zh>输入|输出|提示词|回复|回答))"
                         r"\s*(?:长度|length|len)?\s*(?:约|大概|大约|平均|为|是|:|=|~|about|around|of)?\s*"
                         r"(?P<num>\d+(?:\.\d+)?)\s*(?P<k>k|千)?(?![\d.])"
                         r"(?!\s*(?:张|条|个|次|秒|分钟|小时|天|ms|s\b|sec|min|x|×|images?|samples?|steps?|qps|rps|req|%|gb|gib))")
# a population and the share of it at once ('5000 名员工使用，高峰时大约 10% 同时在线', '2,000 employees, about 5% online
# at once'): that many people at once, not the population
POPULATION = re.compile(rf"{_N}\s*(?:名|个|位)?\s*(?:员工|同事|坐席|用户|客户|人)|"
                        rf"{_N}\s*(?:employees|staff|users|people|agents|customers|members)(?![a-z])")
SHARE_AT_ONCE = re.compile(r"(\d+(?:\.\d+)?)\s*%\s*(?:的人|的用户|的员工|左右)?\s*(?:会|是)?\s*(?:同时在线|同时使用|同时用|在线|并发)|"
                           r"(\d+(?:\.\d+)?)\s*%\s*(?:of them\s*)?(?:are\s*)?(?:online|active|concurrent|using it)"
                           r"(?:\s*(?:at once|at the same time|simultaneously|concurrently|at peak))?")
MULT = {"k": 1e3, "m": 1e6, "千": 1e3, "万": 1e4, "百万": 1e6, "亿": 1e8, "thousand": 1e3, "million": 1e6}
# a rate of things that each hold a number of items ('1,000 orders a day, each order has 50 images', '每小时 500 个会话，
# 每个会话生成 20 张图'): the load is their product, items per period (it was one order's 50 images, a training set)
_CONTAINERS_EN = (r"orders?|sessions?|searches|search(?:es)?|jobs?|tasks?|customers?|conversations?|uploads?|tickets?|"
                  r"visits?|submissions?|cases?|albums?|listings?|batches")
_CONTAINERS_ZH = r"订单|会话|次搜索|搜索|任务|客户|对话|工单|次上传|批次|单"
_PERIOD_EN = {"second": "second", "sec": "second", "s": "second", "minute": "minute", "min": "minute", "hour": "hour",
              "hr": "hour", "h": "hour", "day": "day", "d": "day", "week": "week", "month": "month"}
_PERIOD_ZH = {"秒": "second", "秒钟": "second", "分钟": "minute", "小时": "hour", "个小时": "hour", "天": "day", "日": "day",
              "周": "week", "星期": "week", "月": "month", "个月": "month"}
CONTAINER_RATE = re.compile(
    rf"(?<![\d.]){_N.replace('k|m|', 'k|m|thousand|million|')}\s+(?:[a-z-]+\s+)?(?P<noun>{_CONTAINERS_EN})\s*(?:/|(?<![a-z])(?:per|a|an|each|every)\s+)"
    r"(?P<p>second|sec|minute|min|hour|hr|h|day|d|week|month)(?![a-z])"
    rf"|(?:每|一)\s*(?P<zp>秒钟?|分钟|个小时|小时|天|日|周|星期|个月|月)\s*(?:有|约|大概|大约|要处理|处理|来|进来|产生|会有)?\s*"
    rf"(?P<zn>\d+(?:\.\d+)?)\s*(?P<zm>千|万|百万)?\s*(?:个|笔|次|单|位)?\s*(?P<znoun>{_CONTAINERS_ZH})")
# what each holds, said after: 'each order has 50 images', 'per session', '每个订单 50 张图', '每个会话生成 20 张图'
EACH_CONTAINER = re.compile(rf"(?:(?<![a-z])(?:each|every|per)\s+(?:{_CONTAINERS_EN})(?![a-z])|每(?:个|笔|次|单|位)?\s*(?:{_CONTAINERS_ZH}))"
                            r"[^.;。；!?！？\d]{0,24}$")
# each user's own rate beside the users (a count of requests, never '每个用户每秒 20 个 token', a speed: _per_user_speed)
# ('300 users online, each sends a request every 30 seconds', '300 个用户同时在线，
# 每人每分钟发 2 次请求'): users x each one's rate, not one user's rate as the service's
USERS = re.compile(rf"{_N}\s*(?:个|名|位)?\s*(?:active\s+|online\s+|concurrent\s+)?(?P<who>users|people|agents|clients|用户|人)(?![a-z])")
PER_USER = re.compile(r"(?:(?<![a-z])(?:each(?:\s+(?:user|one|of\s+them))?|every\s+user|per\s+user)(?![a-z])|每人|每个用户|每位用户|每个人|人均)"
                      r"[^.;。；\d]{0,20}?"
                      r"(?:(?P<k>a|an|one|\d+)\s*(?:requests?|queries|query|calls?|messages?|questions?)\s+every\s+(?P<n>\d+(?:\.\d+)?)\s*"
                      r"(?P<u>seconds?|secs?|s|minutes?|mins?|hours?)(?![a-z])"
                      r"|(?P<ek>a|an|one|\d+)\s*(?:requests?|queries|query|calls?|messages?|questions?)\s*(?:/|(?<![a-z])(?:per|a|an|every)\s+)"
                      r"(?P<eu>second|sec|minute|min|hour)(?![a-z])"
                      r"|每\s*(?P<zn>\d+(?:\.\d+)?)\s*(?P<zu>秒钟?|分钟|小时)\s*(?:发|问|请求|提问|调用)?\s*(?P<zk>一|1|\d+)?\s*(?:次|个)(?!\s*(?:tokens?|tok|词|字|汉字))"
                      r"|每\s*(?P<zu2>秒钟?|分钟|小时)\s*(?:发|问|请求|提问|调用)?\s*(?P<zk2>一|两|\d+)\s*(?:次|个)(?!\s*(?:tokens?|tok|词|字|汉字)))")
# the user says the documents are reranked or scored against the query: (query, document) pairs, whatever the encoder
RERANKS = re.compile(r"re-?rank|重排|精排|打分|(?<![a-z])scor(?:e|es|ing)(?![a-z])")
# a reranker's candidates said as its top-N ('rerank top-100', '重排 top50'): the documents each query scores
TOP_N = re.compile(r"(?:rerank\w*|re-rank\w*|score|重排|精排)\s*(?:the\s+)?top[-_\s]?(\d{1,5})(?![\d.])")
# video streams ('200 个摄像头', '200 camera streams', '500 路视频'): with a frame rate each ('每路 25fps', 'at 25 fps'),
# the frames a second the service must keep up with is their product, not one stream's rate
STREAMS = re.compile(rf"{_N}\s*(?:个|路|台|部)?\s*(?:监控)?(?:摄像头|摄像机|相机|路视频|路监控|路视频流|路流|路)|"
                     rf"{_N}\s*(?:ip\s+|cctv\s+|security\s+|live\s+)?(?:camera|video|rtsp|cctv)?\s*"
                     r"(?:cameras|camera streams|camera feeds|video streams|video feeds|streams|feeds)(?![a-z])")
MAX_FPS = 240
MAX_STREAMS = 1e6
MAX_DAILY_USERS = 5e9
# a generation speed said of one user or stream ('each user should get 25 tokens/s', '每个用户每秒 20 个 token',
# '生成速度 30 token/s', 'decode speed of 40 tok/s'): the time per output token each must get; not a throughput
PER_USER_SPEED = re.compile(r"(?:(?<![a-z])(?:each|every|per|a|single)\s+(?:user|stream|request|session|client)|"
                            r"(?:generation|output|decode|decoding|streaming|token|typing)\s+(?:speed|rate)|speed|"
                            r"每个?用户|单用户|每路|每个请求|单个请求|(?:生成|输出|解码|吐字)?速度)[^.;!?。；]{0,24}$")
# a period said apart from its count ('每天要用 bge-m3 给 1 亿条文本算向量', 'every day we need to embed 100M documents'):
# the count, in the same clause, is that period's amount
PERIOD_APART = re.compile(r"(?P<day>每天|每日|天天|(?<![a-z])(?:every|each|per|a) day(?![a-z])|(?<![a-z])daily(?![a-z]))|"
                          r"(?P<hour>每小时|每个小时|(?<![a-z])(?:every|each|per|an) hour(?![a-z])|(?<![a-z])hourly(?![a-z]))|"
                          r"(?P<week>每周|每星期|(?<![a-z])(?:every|each|per|a) week(?![a-z])|(?<![a-z])weekly(?![a-z]))|"
                          r"(?P<month>每月|每个月|(?<![a-z])(?:every|each|per|a) month(?![a-z])|(?<![a-z])monthly(?![a-z]))")
CLAUSE_END = re.compile(r"[.,;!?。，；！？\n]")
MIN_APART_COUNT = 100          # '4 images every day' is not a service's load; '10k images every day' is
# a rate of images said with the bare measure word ('白天高峰每分钟大概 120 张', '每小时 3000 张'): 张 after a rate said
# before its count, with no card word after it ('每分钟 2 张卡' is not a load), is images; read as '张图'
BARE_IMAGE_RATE = re.compile(r"(每\s*(?:秒钟?|分钟|分|小时|个小时|天|日)[^，。；,;!?\d]{0,8}?(?:\d+(?:\.\d+)?|[一二两三四五六七八九十百千万]+)"
                             r"\s*(?:万|千|k)?\s*(?:多|余)?\s*)张(?!\s*(?:卡|显卡|gpu|[a-z]|\d|图|照片|图片|图像))")
# a reranker's top-k changed or said by its name ('top-k 降到 20', 'what if top-k is 20', 'topk=30'), and each
# document's length cut ('长度截到 256', '截断到 256', 'length 256', 'truncate to 256 tokens'): the fan-out and the pair length
TOP_K = re.compile(r"(?<![a-z])top[-_\s]?k\s*(?:再|又)?(?:降到|降至|减到|减少到|改成|改为|变成|设为|提到|升到|涨到|到|为|是|=|:|is|of|to|"
                   r"becomes?|goes\s+(?:down|up)\s+to|drops?\s+to|of\s+just|at)?\s*(?:约|only|just)?\s*(\d{1,5})(?![\d.])")
CUT_LENGTH = re.compile(r"(?:长度|截断|截)\s*(?:再|又)?(?:降到|降至|截到|截断到|截成|改成|改为|到|为|成|在)\s*(\d{2,6})\s*(?:个)?\s*(?:token|tokens|词元)?|"
                        r"(?<![a-z])(?:length|truncat\w*|cut)\s*(?:to|is|of|=|at|down\s+to)?\s*(\d{2,6})\s*(?:tokens?)?(?![\d.a-z])")
CONTROLNET = re.compile(r"control\s*-?\s*net")
THROUGHPUT = re.compile(r"(?<![a-z])(?:throughput|total|aggregate|overall|in all|cluster)(?![a-z])|吞吐|总|整体|合计")


class LoadReader:
    """Mixin of Parser: needs self.quantities (a QuantityGrammar) and self._blank."""

    quantities: QuantityGrammar

    def _compile_service_cues(self, cues: dict[str, list[str]]) -> None:
        """A live service said in words ('in production', 'customer-facing', '线上服务', '客服机器人'), and a user who
        says one copy is enough ('single replica', 'no HA', '测试用', 'just a demo'): the planner's minimum replicas
        (bot/plan/load.py min_replicas). Words: rules/lexicon.yaml `service_cues`."""
        self.rx_production = re.compile(either_words(cues["production"]))
        self.rx_one_copy = re.compile(either_words(cues["one_copy"]))

    def _serving_load(self, t: str, slots: dict[str, Any]) -> str:
        """The load of a service: its rate, each request's lengths and fan-out. Nothing in a training question."""
        if CONTROLNET.search(t):
            slots["controlnet"] = True
        if slots.get("dataset_items") or self.rx_train_words.search(t):
            return t
        if (m := TOP_K.search(t) or TOP_N.search(t)) and 1 <= int(m.group(1)) <= MAX_FANOUT:
            slots["fanout"] = int(m.group(1))
            if RERANKS.search(m.group(0)):
                slots["fanout_unit"] = "documents"      # reranked: (query, document) pairs, whatever the encoder
            t = self._blank(t, m.span())
            if (c := CUT_LENGTH.search(t)) and "context" not in t and "上下文" not in t:
                slots["seq_len"] = slots["request_tokens"] = int(c.group(1) or c.group(2))
                t = self._blank(t, c.span())
        # same length: '120 张' -> '120 帧' (frames: the lexicon's images), so that spans still line up
        t = BARE_IMAGE_RATE.sub(lambda m: m.group(1) + "帧", t)
        t = self._daily_users(t, slots)
        t = self._containers(t, slots)
        t = self._per_user_rate(t, slots)
        t = self._share_at_once(t, slots)
        m = PEAK_FACTOR.search(t)
        if m and 1 <= float(m.group(1) or m.group(2)) <= MAX_PEAK_FACTOR:
            slots["peak_factor"] = float(m.group(1) or m.group(2))
            t = self._blank(t, m.span())
        t = self._video_streams(t, slots)
        if self.rx_one_copy.search(t):
            slots["production"] = False
        elif self.rx_production.search(t):
            slots["production"] = True
        qs = self.quantities.find(t)
        taken = []
        steps = next((q for q in qs if q.unit == "steps" and not q.rate), None)
        if steps is not None and not steps.negative and 1 <= steps.value <= 1000:
            slots["sampling_steps"] = int(steps.value)    # 'SDXL (1024x1024, 30 steps)': denoising steps per image
            taken.append(steps)
        if slots.get("_batch") and not any(q.rate and q.unit == "requests" for q in qs):
            return self._blank_taken(t, taken)    # a batch job's items and sizes are batch_slots.py's (a request
            # rate beside texts is a service: 'each request embeds 32 texts' is its fan-out)
        taken += [q for q in (self._load_rate(qs, slots, t), self._fanout(qs, slots, t)) if q is not None]
        if slots.get("fanout") and not slots.get("fanout_unit") and self._embedder(slots.get("model")) \
                and not RERANKS.search(t):
            # an embedder's '20 chunks per request' are texts, not (query, doc) pairs; 'each query reranks 10 docs'
            # scores pairs whatever encoder the user named (a cross-encoder fine-tuned from it)
            slots["fanout_unit"] = "texts"
        if slots.get("qps_average"):       # the average said beside the peak sized: read, so blanked too
            taken += [q for q in qs if q.rate and q.unit in RATE_UNITS and not q.peak and q not in taken]
        # '500 input + 300 output tokens' names the unit once; '640输入' with no token anywhere is an image's side
        said_tokens = "token" in t or "词元" in t or _role_pair(qs)
        taken += self._request_lengths([q for q in qs if said_tokens or q.unit != "tokens"], slots)
        t = self._bare_lengths(t, slots)
        if slots.get("fanout") and not slots.get("request_tokens") and slots.get("item_input_tokens"):
            slots["request_tokens"] = slots.pop("item_input_tokens")     # '32 texts of 256 tokens': each text's
        speed = self._user_speed(qs, slots, t)
        if speed is not None:
            taken.append(speed)
        if (tokens := self._token_rate([q for q in qs if q is not speed], slots, t)) is not None:
            taken.append(tokens)
        return self._blank_taken(t, taken)

    def _embedder(self, model: str | None) -> bool:
        """An encoder that embeds (not a cross-encoder reranker, whose documents each pair with the query)."""
        kb = getattr(self, "kb", None)
        m = kb.models.get(model or "") if kb is not None else None
        return m is not None and m.kind == "encoder" and "rerank" not in f"{m.id} {m.name}".lower()

    def _containers(self, t: str, slots: dict[str, Any]) -> str:
        """'1,000 orders a day, each order has 50 images', '每小时 500 个会话，每个会话生成 20 张图': containers a period
        times the items each holds is the load, items a period (shown as that product)."""
        m = CONTAINER_RATE.search(t)
        if m is None:
            return t
        num, mult = (m.group(1), m.group(2)) if m.group(1) else (m.group("zn"), m.group("zm"))
        period = _PERIOD_EN[m.group("p")] if m.group("p") else _PERIOD_ZH[m.group("zp")]
        count = float(num) * MULT.get((mult or "").lower(), 1)
        each = next((q for q in self.quantities.find(t) if q.span[0] >= m.end() - 2 and q.unit in RATE_UNITS
                     and q.unit != "audio_hours" and not q.rate and not q.negative and 1 <= q.value <= MAX_FANOUT
                     and (EACH_CONTAINER.search(t[max(0, q.number_start - 40):q.number_start])
                          or (q.each and q.each not in ("item",)))), None)
        if each is None or not 1 <= count <= MAX_DAILY_USERS:
            return t
        total = count * each.value
        per_s = total / {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400,
                         "month": 30 * 86400}[period]
        if per_s > MAX_RATE_PER_S:
            return t
        slots["qps"] = float(f"{per_s:.5g}")
        slots["load"] = {"count": total, "unit": each.unit, "period": period, "containers": count,
                         "container": (m.group("noun") or m.group("znoun")), "per_container": each.value}
        if period in AVERAGE_PERIODS:
            slots["qps_basis"] = "average"
        t = self._blank(t, (each.number_start, each.unit_span[1]))
        return self._blank(t, m.span())

    def _per_user_rate(self, t: str, slots: dict[str, Any]) -> str:
        """'300 users online, each sends a request every 30 seconds', '300 个用户同时在线，每人每分钟发 2 次请求': the
        users times each one's rate is the service's rate (one user's 2 a minute was read as the service's)."""
        users, per = USERS.search(t), PER_USER.search(t)
        if users is None or per is None or users.start() > per.start():
            return t
        n = float(users.group(1)) * MULT.get((users.group(2) or "").lower(), 1)
        if per.group("n"):
            k = per.group("k")
            times = 1.0 if k in ("a", "an", "one") else float(k)
            every = float(per.group("n")) * {"s": 1, "m": 60, "h": 3600}[per.group("u")[0]]
        elif per.group("eu"):
            k = per.group("ek")
            times = 1.0 if k in ("a", "an", "one") else float(k)
            every = {"s": 1, "m": 60, "h": 3600}[per.group("eu")[0]]
        elif per.group("zu2"):
            k = per.group("zk2")
            times = {"一": 1.0, "两": 2.0}.get(k) or float(k)
            every = {"秒": 1, "分": 60, "小": 3600}[per.group("zu2")[0]]
        else:
            k = per.group("zk")
            times = 1.0 if k in (None, "一") else float(k)
            every = float(per.group("zn")) * {"秒": 1, "分": 60, "小": 3600}[per.group("zu")[0]]
        if not 1 <= n <= MAX_DAILY_USERS or every <= 0:
            return t
        per_s = n * times / every
        slots["qps"] = float(f"{per_s:.5g}")
        slots["load"] = {"count": per_s, "unit": "requests", "period": "second", "containers": n,
                         "container": users.group("who"), "per_container": times, "every_s": every}
        return self._blank(self._blank(t, per.span()), users.span())

    def _video_streams(self, t: str, slots: dict[str, Any]) -> str:
        """Video streams and each one's frame rate ('200 个摄像头，每路 25fps', '200 camera streams at 25 fps'): streams
        live at once, each at that rate, so the service's load is streams x fps frames a second (it was one stream's
        25 frames a second, and one T4 for 200 cameras). Both are blanked, so that neither is read again."""
        m = STREAMS.search(t)
        if m is None:
            return t
        num, mult = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        streams = float(num) * MULT.get(mult or "", 1)
        fps = next((q for q in self.quantities.find(t) if q.unit == "images" and q.rate == "second"
                    and 0 < q.value <= MAX_FPS and not q.negative), None)
        rate = fps.value if fps is not None else slots.get("fps")       # the frame rate read already (nlu.FPS)
        if not rate or not 1 <= streams <= MAX_STREAMS or rate > MAX_FPS:
            return t
        # the streams are live all at once (the concurrency slot), each at its frame rate (the fps slot): the
        # planner sizes streams x fps frames a second (plan/capacity.py), and a follow-up can change either
        slots["concurrency"], slots["fps"] = int(streams), rate
        return self._blank(self._blank(t, fps.span) if fps is not None else t, m.span())

    def _share_at_once(self, t: str, slots: dict[str, Any]) -> str:
        """'5000 名员工使用，高峰时大约 10% 同时在线': 500 people at once (users, who read between answers)."""
        share, pop = SHARE_AT_ONCE.search(t), POPULATION.search(t)
        if not share or not pop or pop.start() > share.start():
            return t
        pct = float(share.group(1) or share.group(2))
        num, mult = (pop.group(1), pop.group(2)) if pop.group(1) else (pop.group(3), pop.group(4))
        people = float(num) * MULT.get((mult or "").lower(), 1)
        if not 0 < pct <= 100 or not 1 <= people <= MAX_DAILY_USERS:
            return t
        slots["concurrency"], slots["concurrency_users"] = max(1, round(people * pct / 100)), True
        return self._blank(self._blank(t, share.span()), pop.span())

    def _daily_users(self, t: str, slots: dict[str, Any]) -> str:
        """'日活 1 万用户', '50k daily active users': a day's users (the planner turns them into requests a day at an
        assumed rate per user, plan/load.py), blanked so that they are not read as users at once."""
        m = DAILY_USERS.search(t)
        if not m:
            return t
        num, mult = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        value = float(num) * MULT.get((mult or "").lower(), 1)
        if 1 <= value <= MAX_DAILY_USERS:
            slots["daily_users"] = int(value)
        return self._blank(t, m.span())

    def _bare_lengths(self, t: str, slots: dict[str, Any]) -> str:
        """'输入 2k 输出 500', 'input 1500, output 300': a served request's prompt and output tokens said by their role
        alone, when no length was read with its unit."""
        for m in BARE_LENGTH.finditer(t):
            role = "output" if (m.group("en") or m.group("zh")) in ("output", "completion", "输出", "回复", "回答") \
                else "input"
            slot = "output_tokens" if role == "output" else "request_tokens"
            value = float(m.group("num")) * (1024 if m.group("k") else 1)
            if slots.get(slot) or not 1 <= value <= MAX_REQUEST_TOKENS:
                continue
            slots[slot] = int(round(value))
            t = self._blank(t, (m.start("num"), m.end()))
        return t

    def _blank_taken(self, t: str, taken: list[Quantity]) -> str:
        for q in taken:         # the number and the rate; the words ('转写', '录音', 'images') say what the job is
            t = self._blank(self._blank(t, (q.number_start, q.unit_span[0])), (q.unit_span[1], q.span[1]))
        return t

    @staticmethod
    def _load_rate(qs: list[Quantity], slots: dict[str, Any], t: str = "") -> Quantity | None:
        rates = [q for q in qs if q.rate and q.unit in RATE_UNITS and not q.each]
        # the peak said beside an average ('avg 5 qps, peak 20 qps', '日均 10 万次，峰值每秒 50 次') is what the
        # service must carry: the peak wins wherever it stands, the average is said back with it
        q = next((q for q in rates if q.peak and not q.negative), None) or (rates[0] if rates else None)
        if q is not None and not q.peak and not q.negative:
            bare = LoadReader._bare_peak(q, t)
            if bare is not None:
                slots["qps_average"] = float(f"{q.per_second():.5g}")
                q = bare
        elif q is not None and q.peak:
            avg = next((a for a in rates if a is not q and not a.peak and not a.negative and a.unit == q.unit
                        and (a.per_second() or 0) < (q.per_second() or 0)), None)
            if avg is not None:
                slots["qps_average"] = float(f"{avg.per_second():.5g}")
        if q is None:
            q = LoadReader._period_apart(qs, t)
        if q is None:
            return None
        per_s = q.per_second() or 0.0
        if q.negative or per_s <= 0:
            slots.setdefault("_bad", {})["qps"] = -q.value if q.negative else 0
            return q
        if per_s > MAX_RATE_PER_S:
            slots.setdefault("_absurd", {})["qps"] = per_s
            return q
        slots["load"] = {"count": q.value, "unit": q.unit, "period": q.rate}
        if q.unit == "audio_hours":
            # hours of audio per second of wall clock: the real-time factor to keep up with (a throughput over the
            # day, not a peak, and not requests/s)
            slots["audio_rate"] = float(f"{per_s * 3600:.5g}")
            return q
        slots["qps"] = float(f"{per_s:.5g}")
        if q.peak:
            slots["qps_basis"] = "peak"
        elif q.average or q.rate in AVERAGE_PERIODS:
            slots["qps_basis"] = "average"        # a day's count spread over the day: not the busiest hour
        return q

    @staticmethod
    def _bare_peak(rate: Quantity, t: str) -> Quantity | None:
        """'average 5 QPS, peak 20': a peak whose number has no unit of its own, beside a rate said with one (per
        second, minute or hour: a day's count beside 'peak 20' leaves the peak's period unsaid). It is that rate's
        unit, at its own period when it says one; a peak below the rate is no peak of it."""
        for m in PEAK_BARE.finditer(t):
            if rate.span[0] <= m.start() < rate.span[1]:
                continue
            said = (m.group("pre") or m.group("post") or "").strip()
            period = PEAK_PERIOD.get(re.sub(r"\s+", " ", said)) if said else None
            if period is None and rate.rate not in ("second", "minute", "hour"):
                continue
            value = float(m.group("num")) * MULT.get(m.group("k") or "", 1)
            peak = replace(rate, value=value, rate=period or rate.rate, span=m.span(), peak=True, average=False,
                           low=None, hedged=False, text=m.group(), unit_span=(m.end(), m.end()),
                           number_start=m.start("num"))
            if (peak.per_second() or 0) > (rate.per_second() or 0):
                return peak
        return None

    @staticmethod
    def _period_apart(qs: list[Quantity], t: str) -> Quantity | None:
        """A count of requests, images or texts whose period is said elsewhere in its clause (one period word, one
        such count): that period's amount, an average as a count per day is."""
        periods = list(PERIOD_APART.finditer(t))
        if len(periods) != 1:
            return None
        p = periods[0]
        counts = [q for q in qs if not q.rate and not q.each and not q.negative and q.unit in RATE_UNITS
                  and q.value >= MIN_APART_COUNT]
        if len(counts) != 1:
            return None
        q = counts[0]
        lo, hi = min(p.start(), q.span[0]), max(p.end(), q.span[1])
        if CLAUSE_END.search(t[lo:hi]):
            return None
        return replace(q, rate=p.lastgroup)

    @staticmethod
    def _fanout(qs: list[Quantity], slots: dict[str, Any], t: str = "") -> Quantity | None:
        """'50 documents per query', 'each query reranks 20 passages', '每个查询重排 20 篇文档': every query scores that
        many (query, document) pairs; 'each request embeds 32 texts', 'batches of 64 sentences', '每批 32 条': an
        embedder's texts per request. A generating model's documents per query go into its prompt (RAG:
        plan/load.with_retrieved_prompt)."""
        rated = any(r.rate and r.unit == "requests" for r in qs)      # '1,000 requests/s, each with 16 texts'
        q = next((q for q in qs if q.unit in ("documents", "samples") and not q.rate
                  and ((q.each and (q.unit == "documents" or rated)) or q.each in ("query", "request")
                       or PER_QUERY.search(t[max(0, q.number_start - 40):q.number_start]))), None)
        if q is None or q.negative or not 1 <= q.value <= MAX_FANOUT:
            return None
        slots["fanout"] = int(q.value)
        if q.unit == "samples":
            slots["fanout_unit"] = "texts"        # 'each request embeds 32 texts': an embedder's batch
        return q

    @staticmethod
    def _user_speed(qs: list[Quantity], slots: dict[str, Any], t: str = "") -> Quantity | None:
        """'30 tokens/s per user', '每个用户 20 token/s', '生成速度 30 token/s': the time per output token each user
        needs (1 / the rate); a throughput ('total 5,000 tokens/s', '总吞吐') is not one user's."""
        q = next((q for q in qs if q.unit == "tokens" and q.rate == "second"
                  and (q.each or _per_user_speed(t[max(0, q.span[0] - 30):q.span[0]]))), None)
        if q is None or q.negative or not 1 <= q.value <= 10_000 or slots.get("tpot_ms"):
            return None
        slots["tpot_ms"] = round(1000 / q.value, 2)
        return q

    @staticmethod
    def _token_rate(qs: list[Quantity], slots: dict[str, Any], t: str = "") -> Quantity | None:
        """A service's load said in tokens ('a total throughput of 5,000 output tokens/s', '总吞吐每秒 1 万 token',
        '1M tokens per minute', '20 亿 token 每天'): tokens a second, and whose (generated, or all); the planner turns
        them into requests at the request's lengths (plan/load.py). A request rate said beside it wins."""
        q = next((q for q in qs if q.unit == "tokens" and q.rate and not q.each and not q.negative
                  and not _per_user_speed(t[max(0, q.span[0] - 30):q.span[0]])), None)
        if q is None or slots.get("qps"):
            return None
        per_s = q.per_second() or 0.0
        if not 1 <= per_s <= MAX_RATE_PER_S * 100:
            return None
        slots["token_rate"] = float(f"{per_s:.5g}")
        slots["token_role"] = q.role
        slots["load"] = {"count": q.value, "unit": "tokens", "period": q.rate}
        if q.peak:
            slots["qps_basis"] = "peak"
        elif q.average or q.rate in AVERAGE_PERIODS:
            slots["qps_basis"] = "average"
        return q

    @staticmethod
    def _request_lengths(qs: list[Quantity], slots: dict[str, Any]) -> list[Quantity]:
        """Each request's prompt and generated tokens ('1500 input tokens and 300 output tokens per request'); a
        size each document has, beside a fan-out, is the document's."""
        taken = []
        sizes = [q for q in qs if q.unit == "tokens" and not q.rate and not q.negative
                 and 1 <= q.value <= MAX_REQUEST_TOKENS and (q.role or q.each or q.average)]
        prompt = next((q for q in sizes if q.role == "input"), None) or \
            next((q for q in sizes if q.role is None and (slots.get("fanout") or q.each in ("request", "query"))), None)
        output = next((q for q in sizes if q.role == "output"), None)
        if prompt is not None:
            slots["request_tokens"] = prompt.as_length()
            taken.append(prompt)
        if output is not None:
            slots["output_tokens"] = output.as_length()
            taken.append(output)
        return taken


def _role_pair(qs: list[Quantity]) -> bool:
    """'1k input 300 output', '输入 1k 输出 300': a prompt and an output length said together by their roles are a
    request's tokens, with no unit said (one role alone, '640输入', may be an image's side)."""
    roles = {q.role for q in qs if q.unit == "tokens" and not q.rate and not q.negative}
    return {"input", "output"} <= roles


def _per_user_speed(before: str) -> bool:
    """A tokens-a-second figure whose words before it say it is one user's (or one stream's) speed."""
    return bool(PER_USER_SPEED.search(before)) and not THROUGHPUT.search(before)
