"""Batch (offline) jobs in the question: 'caption 2 million images', 'translate 50M tokens of documents by Friday',
'用 Qwen2.5-72B 离线跑 100 万条数据打标签，每条约 1k 输入 200 输出，三天内跑完'.

A question is a batch job when it says so ('batch', 'offline', '离线', '批量', 'over 2M images') or names a batch task
(caption, translate, label, summarise, classify, embed, generate; 打标签, 翻译, 摘要 ...) together with an amount of
work (a count of items or of tokens), and does not ask to train or fine-tune. The vocabulary is the lexicon's
`batch` section (strong words, tasks, item nouns); per-item token sizes are read only in a batch question, so a
serving question's request sizes keep their own reading (slots.py _request_sizes).
"""
from __future__ import annotations

import re
from typing import Any

from bot.conversation.cues import CueSet

# '500 images/s', '2,000 frames per second', '50k images a day': a rate, the service's load (load_slots.py), not a
# count of items to work through
RATE_AFTER = re.compile(r"\s*(?:/\s*(?:s|sec|second|min|minute|h|hr|hour|d|day)(?![a-z])|fps(?![a-z])|"
                        r"(?:per|a|an|every|each)\s+(?:second|sec|minute|min|hour|day|week|month)(?![a-z])|"
                        r"每(?:秒|分钟|小时|天|日|周|月))")
AT_ONCE = re.compile(r"(?<![a-z])(?:simultaneous|concurrent|parallel|live|active)(?![a-z])")
# 'each query reranks 200 docs', '每个 query 重排 200 篇': a count said per query / per request is a service's fan-out
# (load_slots._fanout), never an amount of work to get through
PER_EACH_BEFORE = re.compile(r"(?:(?<![a-z])(?:each|per|every)\s+(?:search\s+|user\s+|incoming\s+)?(?:query|queries|request|"
                             r"requests|search|searches|question|call|lookup)\s+(?:[a-z-]+\s+){0,2}|"
                             r"每(?:个|条|次|一个|一次)?\s*(?:用户)?\s*(?:query|查询|请求|搜索|问题|提问)\s*\S{0,6}\s*)$")
PER_QUERY_COUNT = re.compile(PER_EACH_BEFORE.pattern[:-1] + r"(?:only\s+|just\s+|只|仅)?\s*(?:[a-z-]+\s+)?(?:top[- ]?)?\d"
                             r"|(?:top[- ]?)?\d+\s*(?:[a-z-]+\s+)?(?:docs?|documents?|passages?|candidates?|results?|chunks?)"
                             r"\s+(?:per|each|a|for\s+each)\s+(?:query|request|search)")
# '~1M pages per month', '每月 100 万页': a volume per month or week is an amount of work with that period as its
# deadline (a batch job sized to keep up), not a service's request rate
PERIOD_AFTER = re.compile(r"\s*(?:(?:per|a|an|every|each)\s+(?P<en>month|week)(?![a-z])|/\s*(?P<sl>mo|month|wk|week)(?![a-z])|"
                          r"每(?P<zh>月|周))")
PERIOD_BEFORE = re.compile(r"(?:(?:per|a|every|each)\s+(?P<en>month|week)|每(?P<zh>月|周|个月)|(?P<mo>monthly)|(?P<wk>weekly))"
                           r"\s*(?:of\s+|处理|要处理|大约|约|大概|~)*\s*$")
PERIOD_DAYS = {"month": 30.0, "mo": 30.0, "月": 30.0, "个月": 30.0, "monthly": 30.0,
               "week": 7.0, "wk": 7.0, "周": 7.0, "weekly": 7.0}
MIN_ITEMS = 100           # '4 images' is a request, not a batch job; '10k images' is
MAX_ITEMS = 1e12


# tasks whose items are read, not written: a length said without a role is the input's ('summarise 3000-字 documents')
INPUT_LENGTH_TASKS = ("summarise", "translate", "classify", "embed")


# the pages each document holds, said right after the count ('10k PDFs of 20 pages each', '10k PDFs, each 20 pages',
# '(~20 pages each)', 'averaging 20 pages', '1 万份 PDF，每份约 20 页', '每个文件平均 20 页'): the pages are the work
MAX_PAGES = 5000
PAGES_EACH = re.compile(
    r"\s*[,(（，]?\s*(?:(?:of|with|at|averaging|avg\.?|each(?:\s+(?:is|has|with|of))?|each\s+one|that\s+are|about|around|"
    r"roughly|approx\.?|~|on\s+average)\s*)*(?P<n>\d+(?:\.\d+)?)\s*(?:pages?|pp\.?)(?![a-z])"
    r"(?=\s*(?:each|apiece|per\s+\w+|on\s+average|avg|long|[),.;)）]|$))(?:\s*(?:each|apiece|per\s+\w+|on\s+average|long))?"
    r"|(?:\s*[a-z]+|[^\d\s，。,;；（(每平]{1,6})?\s*[,，(（]?\s*(?:每(?:份|个|篇|本|个文件|份文件|个文档|篇文档|个\s*pdf|份\s*pdf)?|平均每(?:份|个|篇|本)?|平均)\s*"
    r"(?:约|大约|大概|平均|有|是)?\s*(?P<zn>\d+|[一二两三四五六七八九十百千]+)\s*页")


class BatchReader:
    """Mixin of Parser: needs self.NUM (a number's pattern), self._num, self._blank and the lexicon."""

    def _compile_batch(self) -> None:
        lx = self.lex.get("batch") or {}
        self.batch_strong = CueSet(lx.get("strong") or [])
        self.batch_tasks = {task: CueSet(words) for task, words in (lx.get("tasks") or {}).items()}
        self.batch_no = CueSet(lx.get("not_batch") or [])
        nouns = lx.get("item_nouns") or {}
        en = {unit: "|".join(sorted((re.escape(w) for w in words if w.isascii()), key=len, reverse=True))
              for unit, words in nouns.items()}
        zh = {unit: "|".join(sorted((re.escape(w) for w in words if not w.isascii()), key=len, reverse=True))
              for unit, words in nouns.items()}
        num, mult = self.NUM, r"(k|m|mn|million|thousand|b|bn|billion|万|亿|千|百万|千万)?"
        # '2 million images', '200k support tickets', '10,000 product descriptions' (one adjective word allowed)
        # ('5M 400-token docs': the size before the noun is no adjective word, but it is one)
        self.rx_items_en = [(unit, re.compile(rf"{num}\s*{mult}\+?\s+(?:[a-z-]+\s+|\([^()]{{1,30}}\)\s*|\d+(?:\.\d+)?k?\s*-\s*(?:tokens?|words?)\s+)?"
                                              rf"(?:{words})(?![a-z])"))
                            for unit, words in en.items() if words]
        # '100 万条数据', '200万张图片', '10 万篇文档', '一百万条'
        self.rx_items_zh = [(unit, re.compile(rf"{num}\s*{mult}\s*多?\s*(?:{words})"))
                            for unit, words in zh.items() if words]
        k = r"(k|千|万)?"
        tok = r"(?:\s*(?:tokens?|个\s*token))?"
        about = r"(?:~|about|around|approx\.?|roughly|avg\.?|average|约|大约|大概|平均)?\s*"
        self.rx_item_in = [re.compile(rf"{about}{num}\s*{k}{tok}\s*(?:of\s+)?(?:input|in|prompt)(?![a-z])"),
                           re.compile(rf"{about}{num}\s*{k}{tok}\s*(?:的)?输入"),
                           re.compile(rf"(?:input|prompt)s?\s*(?:of|:|=)?\s*{about}{num}\s*{k}{tok}"),
                           re.compile(rf"输入\s*{about}{num}\s*{k}{tok}")]
        self.rx_item_out = [re.compile(rf"{about}{num}\s*{k}{tok}\s*(?:of\s+)?(?:output|out|generated|completion)"
                                       rf"(?![a-z])"),
                            re.compile(rf"{about}{num}\s*{k}{tok}\s*(?:的)?输出"),
                            re.compile(rf"(?:output|completion)s?\s*(?:of|:|=)?\s*{about}{num}\s*{k}{tok}"),
                            re.compile(rf"输出\s*{about}{num}\s*{k}{tok}")]
        # '~2k tokens each', '800 tokens per document', '每条约 1k token', '平均 2k token' : the item's prompt
        self.rx_item_size = [re.compile(rf"{about}{num}\s*{k}\s*tokens?\s*(?:each|apiece|per\s+\w+)"),
                             re.compile(rf"(?:each|every\s+\w+)\s*(?:is|has)?\s*{about}{num}\s*{k}\s*tokens?"),
                             re.compile(rf"每(?:条|篇|个|份|张)\s*{about}{num}\s*{k}\s*(?:tokens?|个\s*token)"),
                             # '5M docs x 400 tokens', '500 万篇 × 400 token': the count times each one's length
                             re.compile(rf"(?:[a-z\u4e00-\u9fff]\s*)(?:x|×|\*)\s*{about}{num}\s*{k}\s*(?:tokens?|个\s*token|词元)")]
        self.rx_train_words = re.compile(r"fine-?\s?tun|finetun|(?<![a-z])(?:pre-?)?train|(?<![a-z])(?:q?lora|sft|epochs?)"
                                         r"(?![a-z])|微调|训练|预训练")

    def _batch_job(self, t: str, slots: dict[str, Any]) -> str:
        """The item count, and, in a batch question, each item's prompt and output tokens; what was read is blanked.
        The offline flag itself is decided by _batch_decide once the tokens are read."""
        if self.rx_train_words.search(t):
            return t
        t = self._period_items(t, slots)
        if self.batch_no.any(t):
            return t
        task = next((name for name, words in self.batch_tasks.items() if words.any(t)), None)
        strong = self.batch_strong.any(t)
        said = t                 # before the count is blanked: '5M docs of 400 tokens' links the size to the docs
        t = self._item_count(t, slots)
        if not (strong or task or slots.get("items")):
            return t
        if not (strong or slots.get("items")) and PER_QUERY_COUNT.search(said):
            return t         # 'each query reranks 20 docs', '每个查询只重排 20 篇文档': a service's fan-out, no batch
        # a count alone ('it's 3 million rows, 500 tokens in and 50 out each') refines a batch job already asked
        # about: its sizes are read, and the session's offline flag makes it one (the planner ignores them otherwise)
        slots["_batch"] = {"strong": strong, "task": task}
        t = self._item_tokens(t, slots, said)
        return t

    def _period_items(self, t: str, slots: dict[str, Any]) -> str:
        """'~1M pages per month', '每月约 100 万页': a count of items per month or week with a batch task named is a
        batch job of that many items due in that period (a deadline said elsewhere wins, slots._numbers); the
        period is blanked so that the count reads as no service's rate."""
        if not any(words.any(t) for words in self.batch_tasks.values()) and not self.batch_strong.any(t):
            return t
        for _unit, rx in (*self.rx_items_en, *self.rx_items_zh):
            for m in rx.finditer(t):
                after = PERIOD_AFTER.match(t, m.end())
                before = None if after else PERIOD_BEFORE.search(t[max(0, m.start() - 24):m.start()])
                if not (after or before):
                    continue
                g = after or before
                word = next(v for v in g.groupdict().values() if v)
                found: dict[str, Any] = {}
                rest = self._item_count(t[:m.end()] + " " * (len(t) - m.end()), found) if after else \
                    self._item_count(" " * m.start() + t[m.start():m.end()] + " " * (len(t) - m.end()), found)
                if not found.get("items"):
                    continue
                slots.update(found)
                slots["_period_days"] = PERIOD_DAYS[word]
                span = (m.start(), after.end()) if after else (m.start() - len(t[max(0, m.start() - 24):m.start()]) + before.start(), m.end())
                del rest
                return self._blank(t, span)
        return t

    def _item_count(self, t: str, slots: dict[str, Any]) -> str:
        if slots.get("items"):
            return t
        # '300 simultaneous calls', '50 concurrent requests': a load at once (the concurrency slot), not a count of
        # items to work through
        hits = [(unit, m) for unit, rx in (*self.rx_items_en, *self.rx_items_zh) for m in [rx.search(t)]
                if m and not AT_ONCE.search(m.group(0)) and not RATE_AFTER.match(t, m.end())
                and not PER_EACH_BEFORE.search(t[max(0, m.start() - 30):m.start()])]
        if not hits:
            return t
        unit, m = min(hits, key=lambda h: h[1].start())
        n = self._num(m.group(1))
        mult = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9,
                "billion": 1e9, "万": 1e4, "亿": 1e8, "千": 1e3, "百万": 1e6, "千万": 1e7}.get(m.group(2) or "", 1)
        if n is None or not MIN_ITEMS <= n * mult <= MAX_ITEMS:
            return t
        slots["items"] = int(round(n * mult))
        slots["item_unit"] = unit
        pages = PAGES_EACH.match(t, m.end())
        per = self._num(pages.group("n") or pages.group("zn")) if pages else None
        if per and per == int(per) and 2 <= per <= MAX_PAGES and MIN_ITEMS <= n * mult * per <= MAX_ITEMS:
            # '10k PDFs of 20 pages each', '1 万份 PDF，每份 20 页': the pages are the items (their product, shown so)
            slots["items_each"] = {"count": slots["items"], "container": m.group(0)[m.end(2) - m.start() if m.group(2) else len(m.group(1)):]
                                   .strip(" +多"),
                                   "per": int(per), "unit": "page"}
            slots["items"], slots["item_unit"] = int(slots["items"] * per), "page"
            t = self._blank(t, pages.span())
        if size := re.search(r"(\d+(?:\.\d+)?)\s*(k)?\s*-\s*tokens?", m.group(0)[len(m.group(1)):]):
            tokens = float(size.group(1)) * (1000 if size.group(2) else 1)      # '5M 400-token docs'
            if 1 <= tokens <= 1_000_000:
                slots["item_input_tokens"] = int(tokens)
        return self._blank(t, m.span())

    def _item_tokens(self, t: str, slots: dict[str, Any], said: str | None = None) -> str:
        for slot, patterns in (("item_input_tokens", self.rx_item_in), ("item_output_tokens", self.rx_item_out),
                               ("item_input_tokens", self.rx_item_size)):
            if slot in slots:
                continue
            for rx in patterns:
                m = rx.search(t)
                n = self._num(m.group(1)) if m else None
                if n is None:
                    continue
                val = int(n * {"k": 1000, "千": 1000, "万": 10000}.get(m.group(2) or "", 1))
                if 1 <= val <= 1_000_000:
                    slots[slot] = val
                    t = self._blank(t, m.span())
                    break
        if "item_input_tokens" not in slots:
            t = self._item_size_said(t, slots, said)
        if "item_output_tokens" not in slots:
            t = self._output_length_said(t, slots)
        return t

    def _output_length_said(self, t: str, slots: dict[str, Any]) -> str:
        """'每条描述约 100 字', 'captions of about 80 words each', '500-word articles': a generated length asked in
        characters or words (the planner turns it into tokens at a cited ratio). A length that is the input's
        ('每篇文档约 2000 字' to summarise) is said by its role, or is the one a summary, translation or label reads
        from; otherwise it is the output's."""
        q = next((q for q in self.quantities.find(t) if q.unit in ("chars", "words") and not q.rate and not q.negative
                  and q.role != "input" and 1 <= q.value <= 200_000), None)
        if q is None:
            return t
        task = (slots.get("_batch") or {}).get("task")
        side = "output" if q.role == "output" or task not in INPUT_LENGTH_TASKS else "input"
        if side == "input" and "item_input_tokens" in slots:
            return t
        slots[f"item_{side}_{q.unit}"] = int(round(q.value))
        return self._blank(t, q.span)

    def _item_size_said(self, t: str, slots: dict[str, Any], said: str | None = None) -> str:
        """'100M passages (avg 256 tokens)', '每条平均 300 token', '5M docs of 400 tokens', '5M 400-token docs': an
        item's size the phrasings above miss, read by the quantity grammar (an average or a size each) in the text
        as said (the count beside it links it to the items), so that it is never replaced by the default."""
        said = said if said is not None and len(said) == len(t) else t
        q = next((q for q in self.quantities.find(said) if q.unit == "tokens" and not q.rate and not q.negative
                  and (q.average or q.each) and q.role != "output" and 1 <= q.value <= 1_000_000
                  and t[q.number_start:q.unit_span[1]] == said[q.number_start:q.unit_span[1]]), None)
        if q is None:
            return t
        slots["item_input_tokens"] = q.as_length()
        return self._blank(t, q.span)

    def _image_model(self, slots: dict[str, Any]) -> bool:
        kb = getattr(self, "kb", None)
        model = kb.models.get(slots.get("model") or "") if kb is not None else None
        return model is not None and model.kind in ("cnn", "detector", "vision-transformer")

    def _batch_decide(self, slots: dict[str, Any]) -> None:
        """A batch job: a strong word, or a task with an amount of work (items or tokens). Tokens counted in a batch
        job are its input, not training tokens."""
        cue = slots.pop("_batch", None)
        work = slots.get("items") or slots.get("tokens")
        if not (cue and (cue["strong"] or cue["task"])) and slots.get("items") and self._image_model(slots) and not (
                slots.get("concurrency") or slots.get("qps") or slots.get("epochs")):
            # '1.5M product images' through a named image model (SAM, YOLO, CLIP): a count of images to get
            # through is a batch job with a total time and cost, not a service (nor a training set without epochs)
            cue = {"strong": True, "task": None}
        if not cue or not (cue["strong"] or (cue["task"] and work)):
            return
        slots["offline"] = True
        slots["batch_task"] = cue["task"] or "other"
        if slots.get("tokens"):
            slots["batch_tokens"] = slots.pop("tokens")
