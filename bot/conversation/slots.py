"""Steps 4 and 5 of the parse: numbers with their units (7B, 70亿, 8k context, 两机十六卡, $3/hr, 两周内) and keyword
cues for the other slots, written into a dict of slot values; what was read is blanked out of the text."""
from __future__ import annotations

import calendar
import datetime as dt
import re
from typing import Any

from bot.conversation.quantities import read_number
from bot.records.text import has_cjk

# beyond these a number is not a job any cloud can take: the reply says so instead of sizing it
MAX_GPUS = 100_000          # more GPUs than any cloud region rents to one customer
MAX_NODES = 10_000
MAX_CONCURRENCY = 100_000
MAX_BUDGET = 1e12


# a concurrency said as people (who read between answers) or as requests, sequences or live streams (always in flight)
PEOPLE = re.compile(r"(?<![a-z])(?:users?|people|ppl|persons?|clients?|customers?|employees?|staff|team|"
                    r"sessions?)(?![a-z])|人|用户|员工|坐席|客户|在线")
IN_FLIGHT = re.compile(r"(?<![a-z])(?:requests?|queries|sequences?|streams?|calls?|connections?|in flight)(?![a-z])|"
                       r"请求|路|序列")

class SlotReader:
    """Mixin of Parser: needs the compiled patterns of NumberPatterns and the cue sets of Parser._compile_cues."""

    def _card_memory(self, t: str, slots: dict[str, Any]) -> str:
        """'a 24GB card', '16g 显存的卡', '显存只有 12G', '我的显卡是 16G', 'my GPU has 12 GB VRAM': the memory of a GPU
        the user has or means; 'two 24GB cards' also says how many."""
        m = self.rx_card_memory.search(t)
        if not m:
            return t
        val = float(next(g for g in m.groups() if g))
        if not 4 <= val <= 512:
            return t
        slots["gpu_memory_gib"] = val
        before = t[:m.start()]
        if re.search(r"[\d一二两三四五六七八九十]\s*(?:[x×*]|张|块|个)\s*$", before):
            return t                              # '8 x 48GB GPUs' stays for the count
        count = re.search(rf"{self.NUM}\s+$", before) if m.group(1) else None
        n = self._num(count.group(1)) if count else None
        if n and n == int(n) and 1 <= n <= MAX_GPUS:
            slots["gpus"] = int(n)                # 'two 24GB cards', 'we have 4 48GB cards'
        return self._blank(t, (m.start(4), m.end()) if m.group(4) else m.span())

    _RENT = re.compile(r"(?<![a-z])(?:rent|renting|rental|lease|leasing|hire)(?![a-z])|租(?!户)")
    _MINE = re.compile(r"(?<![a-z])(?:we|i)\s*(?:have|'ve got|own|already have)(?![a-z])|(?<![a-z])(?:our|my) own"
                       r"|in-house|on-prem|我们有|我有|手上|手里|实验室|现有|现成|自己的|自有|只有|就一张|就两张|公司的|我们的|我的|自家|家里")

    # 'I have a 4090', 'I have one 24GB 4090', 'my 3090', 'i own an rtx 3090': one card of the GPU named, theirs
    _ONE_OF_MINE = re.compile(r"(?:(?<![a-z])(?:i|we)\s*(?:have|own|'ve got|got)\s+(?:a|an|one|1)|(?<![a-z])my)"
                              r"\s+(?:[\w.-]+\s+){0,2}?\ue001")

    def _one_of_mine(self, t: str, slots: dict[str, Any]) -> None:
        """A GPU the user says they have one of, with no count said: one card, judged as theirs."""
        if slots.get("gpu_model") and not slots.get("gpus") and not slots.get("renting") and self._ONE_OF_MINE.search(t):
            slots["gpus"] = 1

    # 'how many extra A800s would we rent', '还需要在阿里云上再租多少卡': cards rented beside the user's own, which stay theirs
    _MORE = re.compile(r"(?<![a-z])(?:extra|additional|more|another|add|adding|the rest|remaining)(?![a-z])"
                       r"|再|额外|另外|追加|增加|扩容|加租|多租|剩下|其余|不够的|还(?:需要?|要|得)")

    # a hypothetical alternative ('wouldn't 8x A10 be cheaper?', 'what if we used 4 L40S', '用 4 张 A10 会不会更便宜'):
    # cards weighed against the plan, to rent as it does, not cards the user has
    _WHAT_IF = re.compile(r"(?<![a-z])(?:would(?:n't|nt| not)?|could|what if|what about|how about|instead|rather|"
                          r"cheaper|faster|better|compare[ds]?|vs\.?|versus)(?![a-z])|"
                          r"会不会|会更|是不是|如果|要是|假如|换成|换用|改用|改成|换到|更便宜|更快|更省|更划算|对比|相比|比较")

    def _renting(self, t: str, slots: dict[str, Any]) -> None:
        """'rent 8 x H100 ...', '租 8 张 A100': the GPUs named are to be rented, not the user's own; a question that
        also says they have cards ('实验室就一张3090 ... 不行的话租什么') is about their cards first. Renting more
        ('how many extra A800s would we rent', '还要再租多少卡') keeps the cards said as theirs (`rent_more`)."""
        if self._RENT.search(t) and self._MORE.search(t):
            slots["rent_more"] = True
        elif self._RENT.search(t) and not self._MINE.search(t):
            slots["renting"] = True
        elif (slots.get("provider") or slots.get("provider_uncovered")) and \
                (slots.get("gpu_model") or slots.get("gpu_models")) and not self._MINE.search(t):
            # '在腾讯云上用 8 张 H100', 'use 8 H100 on AWS': cards on a named cloud are that cloud's, rented, unless the
            # user says they are theirs ('我们有', 'our own', 'we have')
            slots["renting"] = True
        elif (slots.get("gpu_model") or slots.get("gpu_models")) and self._WHAT_IF.search(t) and not self._MINE.search(t):
            # 'wouldn't 8x A10 be cheaper?': a what-if on rented cards, not the user's own 8 A10s
            slots["renting"] = True
        elif (slots.get("gpu_model") or slots.get("gpu_models")) and self._MINE.search(t):
            # '那公司现成的8张3090能跑吗' after a rental on a named cloud: these cards are theirs (said, so it replaces
            # the rental the conversation had)
            slots["renting"] = False

    # ----- numbers ---------------------------------------------------------------------------------------------
    def _num(self, word: str | None) -> float | None:
        return read_number(word, self.words)

    @staticmethod
    def _blank(text: str, span: tuple[int, int]) -> str:
        return text[:span[0]] + " " * (span[1] - span[0]) + text[span[1]:]

    _NET_RATE = r"(\d+(?:\.\d+)?)\s*(?:g|gb|gbit|gbps|gb/s|gbit/s|gigabit|g\s*bps)?\s*"
    # a network the user says they have between their machines; a question about one ('is RoCE enough?', '需要 RDMA
    # 吗') says nothing, so only statements count: a rate with its kind, or have/over/with/no before it
    _NET_RDMA = re.compile(_NET_RATE + r"(?:infiniband|ib|roce(?:\s*v2)?)(?![a-z])"
                           r"|(?<![a-z])(?:with|over|have|has|using|via|use|on)\s+(?:an?\s+)?(?:infiniband|ib|roce)(?![a-z])"
                           r"|(?<![a-z])(?:infiniband|ib|roce)\s*(?:network|fabric|interconnect|网络|组网|互联)"
                           r"|(?:有|走|用|配了?|配备)\s*(?:infiniband|ib|roce|rdma)(?![a-z])(?!\s*吗)")
    _NET_TCP = re.compile(_NET_RATE + r"(?:gbe|ethernet|以太网|网卡|网络|tcp)(?![a-z])"
                          r"|(?<![a-z])(?:\d+\s*)?gbe(?![a-z])|(?<![a-z])(?:plain |regular |normal |just )?ethernet(?![a-z])"
                          r"|普通以太网|以太网|(?<![a-z])over tcp(?![a-z])"
                          r"|(?<![a-z])(?:no|without|not|don't have|do not have|lack)\s+(?:any\s+)?(?:infiniband|ib|rdma|roce)(?![a-z])"
                          r"|(?:没有|没|无|不支持|不带)\s*(?:infiniband|ib|rdma|roce)(?![a-z])")

    def _network(self, t: str, slots: dict[str, Any]) -> str:
        """The network between the user's own machines when they state it: '4 nodes over 100GbE, no InfiniBand',
        '200G IB', '我们走 RoCE', '只有 25G 以太网，没有 RDMA'. A missing RDMA wins over the word for it ('no
        InfiniBand' says Ethernet). What was read is blanked so that '100G' is not taken for a card's memory."""
        tcp, rdma = list(self._NET_TCP.finditer(t)), list(self._NET_RDMA.finditer(t))
        said = tcp or rdma
        if not said:
            return t
        slots["network"] = "tcp" if tcp else "rdma"
        rate = next((float(m.group(1)) for m in said if m.group(1)), None)
        if rate and 1 <= rate <= 3200:
            slots["network_gbps"] = rate
        for m in tcp + rdma:
            t = self._blank(t, m.span())
        return t

    def _numbers(self, t: str, slots: dict[str, Any], have_model: bool, today: dt.date) -> str:
        t = self._network(t, slots)
        if self.rx_around_the_clock.search(t):
            slots["duration"] = "long"
            t = self.rx_around_the_clock.sub(lambda m: " " * len(m.group()), t)
        self._gpus_and_nodes(t, slots)
        t = self._budget_amount(t, slots)
        t = self._training_work(t, slots)
        t = self._batch_job(t, slots)
        t = self._serving_load(t, slots)
        t = self._request_sizes(t, slots)
        t = self._dataset_slots(t, slots)
        t, per_sample = self._training_tokens(t, slots)
        self._batch_decide(slots)
        if not have_model:
            t = self._param_count(t, slots)
        t = self._seq_len(t, slots, per_sample)
        if "seq_len" not in slots and slots.get("sample_tokens"):
            slots["seq_len"] = slots["sample_tokens"]     # a sample of that length is what one sequence holds
        m = self.rx_batch.search(t)
        if m and 1 <= int(m.group(1)) <= 4096:
            slots["batch_size"] = int(m.group(1))
        t = self._qps(t, slots)
        t = self._latency_targets(t, slots)
        self._concurrency(t, slots)
        t = self._deadline(t, slots)
        if "deadline_days" not in slots:
            t = self._deadline_date(t, slots, today)
        period = slots.pop("_period_days", None)
        if period and "deadline_days" not in slots and slots.get("offline"):
            slots["deadline_days"] = period      # '~1M pages per month': that month's pages are due within it
        self._duration_numbers(t, slots)
        return t

    def _training_tokens(self, t: str, slots: dict[str, Any]) -> tuple[str, tuple[int, tuple[int, int]] | None]:
        """Training tokens before sizes: "2T tokens", "1000亿 token"; a count under a million is a sample's length
        ("batch 4, 4096 tokens", "8k tokens"), returned to be taken when nothing else names the sequence length."""
        per_sample = None
        for m in [*self.rx_tokens.finditer(t), *self.rx_tokens_after.finditer(t)]:
            n = self._num(m.group(1))
            if n is None:
                continue
            unit = m.group(2) or ""
            mult = {"t": 1e12, "trillion": 1e12, "万亿": 1e12, "b": 1e9, "billion": 1e9, "千亿": 1e11, "百亿": 1e10,
                    "亿": 1e8, "m": 1e6, "million": 1e6, "万": 1e4, "k": 1e3}.get(unit, 1)
            if n * mult >= 1e6:
                slots["tokens"] = n * mult
                t = self._blank(t, m.span())
                break
            length = n * (1024 if unit == "k" else 1)
            if per_sample is None and unit in ("", "k") and 16 <= length <= 1_000_000:
                per_sample = (int(length), m.span())
        return t, per_sample

    def _tokens_of(self, m: re.Match) -> int | None:
        """A request size in tokens from a rx_bucket_size / rx_request_size match: a range counts at its upper
        end ('1-2k' is 2,048), k as 1,024 (as '32k context'), 万 as 10,000."""
        n = self._num(m.group(2) or m.group(1))
        if n is None:
            return None
        val = int(n * {"k": 1024, "千": 1000, "万": 10000}.get(m.group(3) or "", 1))
        return val if 16 <= val <= 10_000_000 else None

    def _request_sizes(self, t: str, slots: dict[str, Any]) -> str:
        """A serving load's request sizes. Shares with sizes ('80% short chats (~500 tokens), 20% 30k-token
        documents') are a mix, its counts blanked so that no bucket is read as the context; a share without a count
        is a chat of the default size when it says chat. One stated size ('~2k-token conversations') is kept
        whole: the context reads it too."""
        shares = list(self.rx_share.finditer(t))
        buckets: list[dict[str, Any]] = []
        spans = []
        for i, m in enumerate(shares):
            end = shares[i + 1].start() if i + 1 < len(shares) else len(t)
            seg = t[m.end():end]
            size = self.rx_bucket_size.search(seg)
            tokens = self._tokens_of(size) if size else None
            if tokens is None and not self.rx_chat_cue.search(seg):
                continue
            buckets.append({"share": float(m.group(1)) / 100, "tokens": tokens})
            spans.append(m.span())
            if size:
                spans.append((m.end() + size.start(), m.end() + size.end()))
        total = sum(b["share"] for b in buckets)
        if len(buckets) >= 2 and 0 < total <= 1.005 and any(b["tokens"] for b in buckets):
            slots["request_mix"] = [{"share": round(b["share"] / total, 4), "tokens": b["tokens"]} for b in buckets]
            for span in spans:
                t = self._blank(t, span)
            return t
        for rx in self.rx_request_size:
            m = rx.search(t)
            tokens = self._tokens_of(m) if m else None
            if tokens:
                slots["request_tokens"] = tokens
                break
        return t

    def _param_count(self, t: str, slots: dict[str, Any]) -> str:
        """Parameter count when no model is named: "30b", "1.5B", "124m", "70亿参数", "千亿参数"."""
        hits = []
        for rx in self.rx_params:
            m = rx.search(t)
            if m:
                hits.append(m)
        if hits:
            m = min(hits, key=lambda x: x.start())
            n = self._num(m.group(1))
            unit = m.group(2)
            if n is not None:
                val = n * {"b": 1, "bn": 1, "billion": 1, "m": 1e-3, "million": 1e-3, "亿": 0.1, "百亿": 10,
                           "千亿": 100, "万亿": 1000}[unit]
                if 0.001 <= val <= 5000:
                    slots["params_b"] = round(val, 4)
                    t = self._blank(t, m.span())
        return t

    def _seq_len(self, t: str, slots: dict[str, Any], per_sample: tuple[int, tuple[int, int]] | None) -> str:
        for rx in self.rx_seq:
            m = rx.search(t)
            if m:
                val = float(m.group(1)) * {"k": 1024, "m": 1024 * 1024}.get(m.group(2) or "", 1)
                if 16 <= val <= 10_000_000:
                    slots["seq_len"] = int(val)
                    t = self._blank(t, m.span())
                    break
        if "seq_len" not in slots and per_sample is not None:
            slots["seq_len"] = per_sample[0]
            t = self._blank(t, per_sample[1])
        return t

    RATE_SECONDS = {"min": 60, "minute": 60, "分钟": 60, "rpm": 60, "hr": 3600, "hour": 3600, "小时": 3600,
                    "rph": 3600, "day": 86400, "天": 86400, "rpd": 86400}

    def _rate_per(self, t: str, slots: dict[str, Any]) -> str:
        """'1000 requests per minute', '每分钟 600 个请求', '2万 requests a day', '300 rpm' as requests per second."""
        for rx in self.rx_rate_per:
            m = rx.search(t)
            if not m:
                continue
            unit = next((g for g in m.groups() if g and g.lower() in self.RATE_SECONDS), None)
            nums = [g for g in m.groups() if g and g.lower() not in self.RATE_SECONDS]
            val = self._num(nums[0]) if nums else None
            mult = {"k": 1e3, "千": 1e3, "万": 1e4}.get(nums[1].lower(), 1) if len(nums) > 1 else 1
            if unit and val and 0 < val * mult <= 1e9:
                slots["qps"] = round(val * mult / self.RATE_SECONDS[unit.lower()], 3)
                return self._blank(t, m.span())
        return t

    def _latency_targets(self, t: str, slots: dict[str, Any]) -> str:
        """Latency with a number: 'TTFT under 500 ms' (first token), '30 ms per token' (each output token),
        'end-to-end under 5 s' (a whole response), and a bare 'p95 latency under 2s' (read as the first token: a
        chat reply streams); each blanked so its number is not read as something else."""
        for slot, rx in (("ttft_ms", self.rx_ttft), ("tpot_ms", self.rx_tpot), ("e2e_ms", self.rx_e2e),
                         ("latency_ms", self.rx_latency)):
            if slot == "latency_ms" and ("ttft_ms" in slots or "e2e_ms" in slots):
                break
            m = rx.search(t)
            if not m:
                continue
            num, unit = [g for g in m.groups() if g][:2]
            val = self._num(num)
            if not val:
                continue
            ms = val if unit.lower().startswith(("ms", "milli")) or unit == "毫秒" else val * 1000
            if 1 <= ms <= 600_000:
                slots[slot] = ms
                t = self._blank(t, m.span())
        m = self.rx_item_latency.search(t) if not slots.get("latency_ms") else None
        if m:                               # one image's wait: the request latency of an image service
            num, unit = [g for g in m.groups() if g][:2]
            val = self._num(num)
            ms = (val if unit.lower().startswith(("ms", "milli")) or unit == "毫秒" else val * 1000) if val else 0
            if 1 <= ms <= 600_000:
                slots["latency_ms"] = ms
                t = self._blank(t, m.span())
        # a first token within a second, or a token every 50 ms, is what 'low latency' means elsewhere
        if slots.get("ttft_ms", 1e9) <= 1000 or slots.get("tpot_ms", 1e9) <= 50 or slots.get("latency_ms", 1e9) <= 1000:
            slots.setdefault("latency", "low")
        return t

    def _qps(self, t: str, slots: dict[str, Any]) -> str:
        t = self._rate_per(t, slots)
        if "qps" in slots:
            return t
        for rx in self.rx_qps:
            m = rx.search(t)
            if m:
                val = self._num(m.group(1))
                if val and 0 < val <= 1e7:
                    slots["qps"] = float(val)
                    t = self._blank(t, m.span())
                    break
        return t

    @staticmethod
    def _sane(slot: str, value: float | None, start: int, t: str, limit: float, slots: dict[str, Any]) -> bool:
        """A count as the user wrote it. Negative or zero ('-8 gpus', '0 users') is kept in slots['_bad'] to be asked
        back; more than any cloud region or service handles ('1e12 users') in slots['_absurd'], to be answered with
        that fact. True when the value can be used."""
        if value is None:
            return False
        negative = start > 0 and t[start - 1] == "-" and (start < 2 or not t[start - 2].isalnum())
        if negative or value == 0:
            slots.setdefault("_bad", {})[slot] = -value if negative else 0
            return False
        if value > limit:
            slots.setdefault("_absurd", {})[slot] = value
            return False
        return True

    def _concurrency(self, t: str, slots: dict[str, Any]) -> None:
        """Concurrency as said: people ('200 concurrent users', '50 人同时在线': `concurrency_users`) or requests in
        flight ('50 并发', '30 concurrent requests', '300 streams')."""
        for rx in self.rx_concurrency:
            m = rx.search(t)
            if m:
                val = self._num(m.group(1))
                if val and m.lastindex and m.lastindex >= 2 and m.group(2):
                    val *= {"k": 1000, "千": 1000, "万": 10000}[m.group(2)]
                if self._sane("concurrency", val, m.start(1), t, MAX_CONCURRENCY, slots) and val == int(val):
                    slots["concurrency"] = int(val)
                    if PEOPLE.search(m.group(0)) and not IN_FLIGHT.search(m.group(0)):
                        slots["concurrency_users"] = True     # people, who read between answers: not all in flight
                break

    def _nodes(self, t: str, slots: dict[str, Any]) -> tuple[float | None, re.Match | None]:
        """Machines: '两台', '2 nodes', '4 different nodes', '单机'."""
        nodes_m = self.rx_nodes.search(t)
        if not nodes_m or ("gpu" in nodes_m.group(0) and self.rx_how_many_machines.search(t)):
            return None, None     # 'how many 8 gpu nodes': the nodes' size, not their number
        nodes = 1 if nodes_m.group(1) == "单" else self._num(nodes_m.group(1))
        if self._sane("nodes", nodes, nodes_m.start(1), t, MAX_NODES, slots) and nodes == int(nodes):
            slots["nodes"] = int(nodes)
            return nodes, nodes_m
        return None, None

    # '4x8 H100', '4 x 8 A800', '4*8 张 H100': machines x cards a machine, before the card's name (a card's own
    # memory, '4*80G', is read by the GPU counts)
    _GRID = re.compile(r"(?<![\d.])(\d{1,3})\s*[x×*]\s*(1|2|4|8|16)\s*(?:张|块|卡|gpus?|cards?)?\s*(?:(?:nvidia|rtx)\s*)?\ue001")

    def _gpus_and_nodes(self, t: str, slots: dict[str, Any]) -> None:
        grid = self._GRID.search(t)
        if grid and 2 <= int(grid.group(1)) <= MAX_NODES and int(grid.group(1)) * int(grid.group(2)) <= MAX_GPUS:
            slots["nodes"], slots["gpus"] = int(grid.group(1)), int(grid.group(1)) * int(grid.group(2))
            return
        nodes, nodes_m = self._nodes(t, slots)
        counts = []
        for rx in self.rx_gpu_counts:
            for m in rx.finditer(t):
                if nodes_m and m.start() < nodes_m.end() and nodes_m.start() < m.end():
                    continue              # '两台' is machines, not cards
                counts.append(m)
        gpus = None
        if counts:
            m = min(counts, key=lambda x: x.start())
            n = self._num(m.group(1))
            if m.re is self.rx_gpu_counts[3] and 4 <= float(m.group(2)) <= 512:
                slots.setdefault("gpu_memory_gib", float(m.group(2)))     # '4*80G': four cards of 80 GB
            if not nodes_m and self.rx_machine_size_after.match(t[m.end():m.end() + 16]) \
                    and self.rx_how_many_machines.search(t):
                return            # '需要几台8卡机器': the machines' size, and how many of them is the question
            if self._sane("gpus", n, m.start(1), t, MAX_GPUS, slots) and n == int(n):
                gpus = int(n)
                if nodes and nodes > 1 and nodes_m is not None:
                    # "两台 8 卡", "2 nodes x 8 GPUs": a count right after the machines is per machine;
                    # "两机十六卡" keeps the total (a count after 机 that the machines divide is the total)
                    right_after = m.start() >= nodes_m.end() and self.rx_per_node_between.match(
                        t[nodes_m.end():m.start()])
                    total_form = right_after and nodes_m.group(0).endswith("机") and n % nodes == 0 and n > 8
                    per_node = (right_after and not total_form and ("台" in nodes_m.group(0) or n <= 8)) \
                        or self.rx_per_node_after.match(t[m.end():m.end() + 16])
                    if per_node and n * nodes <= 100_000:
                        gpus = int(n * nodes)
        elif self.rx_single.search(t):
            gpus = 1
        if not nodes_m and re.search(r"(?<![a-z])(?:single|one|a)\s+(?:\S+\s+){0,2}(?:node|machine|server|box)(?![a-z])",
                                     t):
            slots.setdefault("nodes", 1)
        if gpus:
            slots["gpus"] = gpus

    def _budget_amount(self, t: str, slots: dict[str, Any]) -> str:
        """'5000 元/月', '$3/hr', '预算每月5万块', 'budget $20k', '1 million dollars'."""
        for rx in self.rx_budget:
            m = rx.search(t)
            if not m:
                continue
            g = m.groupdict()
            cur = g.get("cur")
            end = m.end()
            if not cur:
                after = re.match(r"\s*(元|块|rmb|cny|yuan|人民币|dollars?|usd|美元|美金|刀|\$|€|eur|euros?|欧元)", t[m.end():])
                cur = after.group(1) if after else ("元" if has_cjk(t) else "$")
                end += after.end() if after else 0        # "100 CNY per hour": the period follows the currency
            amount = self._num(g["num"])
            if amount is None or amount <= 0:
                continue
            if amount > MAX_BUDGET:
                slots.setdefault("_absurd", {})["budget_amount"] = amount
                return self._blank(t, m.span())
            amount *= {"k": 1e3, "w": 1e4, "万": 1e4, "千": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "bn": 1e9,
                       "billion": 1e9}.get(g.get("mult") or "", 1)
            currency = "USD" if re.search(r"\$|usd|dollar|美元|美金|刀|bucks", cur) else \
                "EUR" if re.search(r"€|eur|欧元", cur) else "CNY"
            before = self.rx_period_before.search(t[max(0, m.start() - 12):m.start()])
            after_m = self.rx_period_after.match(t[end:end + 16])
            word = g.get("per") or ((after_m.group(1) or after_m.group(2)) if after_m else None) \
                or (before.group(1) if before else None)
            period = _period(word) if word else "total"
            if period == "week":          # the contract has no weekly period: the same money per day
                amount, period = amount / 7, "day"
            slots["budget_amount"] = round(float(amount), 2)
            slots["budget_currency"] = currency
            slots["budget_period"] = period
            return self._blank(t, m.span())
        return t

    def _deadline_date(self, t: str, slots: dict[str, Any], today: dt.date) -> str:
        """A deadline as a day: 'by Friday', 'by next monday', '周五前', '下周一之前', 'by 2026-12-20', '12月20日前',
        'by tomorrow', '月底前'; counted in days from `today` (a day already past this year is next year's)."""
        for rx, when in ((self.rx_by_weekday, self._weekday_date), (self.rx_zh_weekday, self._weekday_date),
                         (self.rx_by_iso_date, self._calendar_date), (self.rx_zh_date, self._calendar_date),
                         (self.rx_by_relative_day, self._relative_date)):
            m = rx.search(t)
            day = when(m, today) if m else None
            if day is not None:
                slots["deadline_days"] = float(max(1, (day - today).days))
                said = self.rx_explicit_hours.match(t[m.end():])
                unit = said.group(2) if said else ""
                days = None if not said else float(said.group(1)) / 24 if unit[:1] in ("h", "小") else \
                    float(said.group(1)) * (7 if unit[:1] in ("w", "周", "星") else 1)
                if days and (0 < days <= slots["deadline_days"] if unit[:1] in ("h", "小")
                             else 0 < days <= max(14.0, 2 * slots["deadline_days"])):
                    # 'by tomorrow morning (~12h)', 'by Friday (4 days)', '下周五前（5 天）': the span said is the
                    # deadline, not the day word's whole day or the calendar's count from today
                    slots["deadline_days"] = round(days, 4)
                    return self._blank(self._blank(t, (m.end(), m.end() + said.end())), m.span())
                return self._blank(t, m.span())
        return t

    _WEEKDAYS = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6,
                 "一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}

    def _weekday_date(self, m: re.Match, today: dt.date) -> dt.date:
        target = self._WEEKDAYS[m.group("day")[:3] if m.group("day").isascii() else m.group("day")]
        ahead = (target - today.weekday()) % 7 or 7
        # 'next Friday' on a Monday is the Friday after this one; 'next Monday' on a Thursday is the coming Monday
        return today + dt.timedelta(days=ahead + (7 if m.group("next") and target > today.weekday() else 0))

    @staticmethod
    def _calendar_date(m: re.Match, today: dt.date) -> dt.date | None:
        year = int(m.group("year")) if m.groupdict().get("year") else today.year
        try:
            day = dt.date(year, int(m.group("month")), int(m.group("dom")))
        except ValueError:
            return None
        if day < today and not m.groupdict().get("year"):
            day = day.replace(year=today.year + 1)
        return day if day >= today else None

    _FRIDAY = 4                   # a week's work ends on Friday: 'end of next week', '下周末前'

    def _relative_date(self, m: re.Match, today: dt.date) -> dt.date:
        """'tomorrow', 'end of next week', 'end of the month', 'by EOY', '后天', '下周内' (within next week),
        '下周前' (before next week starts), '月底前', '下个月底前', '年底前'."""
        word = (m.group("rel") or m.group("rel2") or m.group("rel3")).replace("the ", "").replace("this ", "")
        word = {"eow": "end of week", "eom": "end of month", "eoy": "end of year"}.get(word, word)
        word = re.sub(r"^明天(?:早上|上午|中午|下午|晚上|一早)$", "明天", word)
        if word in ("tomorrow", "明天", "后天"):
            return today + dt.timedelta(days=2 if word == "后天" else 1)
        if word == "下周" and m.group("suffix") in ("前", "之前", "以前"):
            return today + dt.timedelta(days=7 - today.weekday() - 1)        # the Sunday before next week
        nxt = "next" in word or word.startswith("下")
        if "week" in word or "周" in word:
            return today + dt.timedelta(days=(self._FRIDAY - today.weekday()) % 7 + (7 if nxt else 0))
        if "year" in word or "年" in word:
            return dt.date(today.year, 12, 31)
        year, month = (today.year + today.month // 12, today.month % 12 + 1) if nxt else (today.year, today.month)
        return dt.date(year, month, calendar.monthrange(year, month)[1])      # 'end of the month', '月底'

    def _deadline(self, t: str, slots: dict[str, Any]) -> str:
        """'within 3 weeks', '两周内', 'we have one year', and a bare '两个月' clause once the tokens are known."""
        for rx in self.rx_deadline + ([self.rx_bare_time] if slots.get("tokens") else []):
            m = rx.search(t)
            if not m:
                continue
            n = self._num(m.group(1)) if m.group(1) else 1
            if not n or n <= 0:
                continue
            days = n * self._days_per_unit(m.group(2))
            if days <= 3650:
                slots["deadline_days"] = round(float(days), 3 if days >= 0.1 else 6)     # '10 minutes' kept whole
                return self._blank(t, m.span())
        return t

    @staticmethod
    def _days_per_unit(unit: str) -> float:
        """Days in one deadline unit: '24 hours' is a day, 'a year' 365 days, '两个月' 60."""
        if re.match(r"min|分钟", unit):
            return 1 / 1440
        if re.match(r"h|小时", unit):
            return 1 / 24
        return 7 if re.match(r"week|周|星期", unit) else 30 if re.match(r"month|个月|月", unit) else \
            365 if re.match(r"y|年", unit) else 1

    def _duration_numbers(self, t: str, slots: dict[str, Any]) -> None:
        for m in self.rx_duration.finditer(t):
            if self.rx_duration_skip_before.search(t[max(0, m.start() - 4):m.start()]) or \
                    self.rx_duration_skip_after.match(t[m.end():m.end() + 24]):
                continue
            n = self._num(m.group(1))
            unit = m.group(2)
            if not n or (unit == "年" and n >= 1000):
                continue                  # '2024年' is a date
            days = n * (1 / 24 if unit[0] in "h小" else 7 if unit[0] in "w周星" else 30 if unit[0] in "m月" else
                        365 if unit[0] in "y年" else 1)
            if days <= self.short_days:
                slots.setdefault("duration", "short")
                return
            if days >= self.long_days:
                slots.setdefault("duration", "long")
                return

    # ----- keyword slots ----------------------------------------------------------------------------------------
    rx_not_method = re.compile(r"(?:(?<![a-z])not|rather than|instead of|而不是|不是|不用|不要)\s*\(?\s*"
                               r"(?:q-?lora|lora|full(?:[ -]?(?:fine-?tuning|parameters?|params?))?|全参|全量)")
    rx_no_offload = re.compile(r"no[_ -]?offload(?:ing)?|without (?:cpu )?offload(?:ing)?|不\s*offload")

    def _keywords(self, text: str, slots: dict[str, Any]) -> None:
        for prec in ("nf4", "int4", "int8", "fp8", "bf16", "fp16", "fp32"):
            if self.precisions[prec].any(text):
                slots["precision"] = prec
                break
        self._method(self.rx_not_method.sub(lambda m: " " * len(m.group()), text), slots)
        self._sharding(text, slots)
        self._other_keywords(text, slots)

    def _sharding(self, text: str, slots: dict[str, Any]) -> None:
        """'deepspeed zero3', 'FSDP', 'zero3 offload', 'offload_optimizer' (an offload the user rules out is none)."""
        for level in ("hsdp", "zero3", "zero2", "zero1", "fsdp", "ddp"):
            if level in self.sharding and self.sharding[level].any(text):
                slots["sharding"] = level
                break
        said = self.rx_no_offload.sub(" ", text)
        for kind in ("optimizer", "full"):
            if kind in self.offload and self.offload[kind].any(said):
                slots["offload"] = kind
                break

    def _method(self, text: str, slots: dict[str, Any]) -> None:
        """Full, freeze, LoRA or QLoRA, when exactly one is said ('lora (not qlora)' says LoRA)."""
        spans = {m: [sp for c in self.methods[m].cues for sp in c.spans(text)] for m in ("qlora", "full", "freeze", "lora")}
        # a method only inside another's phrase ('lora' in '4bit lora') was not said on its own
        said = [m for m, sp in spans.items() if sp and not all(
            any(o != m and os <= s and e <= oe for o, osp in spans.items() for os, oe in osp) for s, e in sp)]
        if said == ["lora"] and slots.get("precision") in self.qlora_precisions:
            said = ["qlora"]              # LoRA on a 4-bit base is QLoRA
        if len(said) == 1:
            slots["method"] = said[0]     # two methods named: the user has not chosen ("全参还是lora还没想好")

    def _other_keywords(self, text: str, slots: dict[str, Any]) -> None:
        for level in ("high", "medium", "low"):
            if self.budget[level].any(text):
                slots["budget"] = level
                break
        if "duration" not in slots:
            for level in ("long", "short"):
                if self.duration[level].any(text):
                    slots["duration"] = level
                    break
        for level in ("normal", "low"):
            if self.latency[level].any(text):
                slots["latency"] = level
                break
        for region, names in self.regions.items():
            if names.any(text):
                slots["region"] = region
                break
        for topic, words in self.topics.items():
            if words.any(text):
                slots["topic"] = topic
                break
        self._job_kind(text, slots)

    def _job_kind(self, text: str, slots: dict[str, Any]) -> None:
        """The kind of job (rendering, vision, diffusion, speech, multimodal) and a post-training algorithm, from
        the lexicon's job_kinds / algorithms (first listed wins: GRPO before the RLHF that would mean PPO)."""
        named = self.kb.models.get(slots.get("model") or "")
        text_model = named is not None and named.kind in ("llm", "encoder", "encoder-decoder")
        for kind, words in self.job_kinds.items():
            if words.any(text) and not (text_model and kind == "vision"):    # BERT classification is text
                if kind == "speech" and named is not None and named.kind in ("multimodal", "llm", "vision-transformer",
                                                                           "cnn", "detector", "diffusion"):
                    continue     # 'caption 2M images with Qwen2.5-VL': image captions, not speech captioning
                slots["kind"] = kind
                break
        if named is None and self.modality_hint.search(text):
            # a text-to-speech, video or music job with no model of the knowledge base named: a modality with no
            # estimator, never a language model's job (rules/lexicon.yaml uncovered_modalities)
            for mod, words in self.modalities.items():
                if words.any(text):
                    slots["modality"] = mod
                    break
        for alg, words in self.algorithms.items():
            if words.any(text):
                slots["algorithm"] = self.algorithm_of.get(alg, alg)
                break

    def _scope_slots(self, intent: str | None, slots: dict[str, Any]) -> None:
        """Slots that only mean something for some intents (DESIGN.md: method for train/finetune; training tokens)."""
        if intent not in (None, "train", "finetune", "compare"):      # a comparison may carry its training job
            for key in ("method", "tokens", "sharding", "offload", "epochs"):
                slots.pop(key, None)
        if intent not in (None, "inference"):      # a batch job is inference; words of another job drop it
            for key in ("offline", "items", "item_unit", "items_each", "item_input_tokens", "item_output_tokens",
                        "batch_tokens", "batch_task"):
                slots.pop(key, None)
        if intent == "explain":
            slots.pop("precision", None)  # 'what is fp8' asks about the format, it does not choose it


def _period(word: str) -> str:
    w = word.lower()
    for key, period in (("total", "total"), ("overall", "total"), ("总", "total"), ("月", "month"),
                        ("month", "month"), ("mo", "month"), ("小时", "hour"), ("hour", "hour"), ("hr", "hour"),
                        ("每天", "day"), ("每日", "day"), ("日", "day"), ("day", "day"), ("daily", "day"),
                        ("天", "day"), ("年", "year"), ("year", "year"), ("yr", "year"), ("week", "week"),
                        ("周", "week")):
        if key in w:
            return period
    return {"h": "hour", "d": "day", "y": "year"}.get(w, "total")
