"""The patterns of step 4 of the parse (numbers with their units), compiled once per Parser. Each group is a table of
regular expressions, one per phrasing seen in questions, so the builders are long lists rather than logic."""
from __future__ import annotations

import re

from bot.conversation.entities import G_MARK
from bot.records.text import ZH_NUMERAL_CHARS

_ZH_NUM = f"[{ZH_NUMERAL_CHARS}]+"
_DIGITS = r"(?<![\d.])\d+(?:\.\d+)?"
_ZH_RUN = f"(?<![{ZH_NUMERAL_CHARS}]){_ZH_NUM}"


class NumberPatterns:
    """Mixin of Parser: needs self.NUM and self.NUM_A (a number in digits, numerals or words)."""

    def _compile_numbers(self) -> None:
        self._compile_counts()
        self._compile_sizes()
        self._compile_load()
        self._compile_request_sizes()
        self._compile_money_and_time()

    def _compile_counts(self) -> None:
        """GPUs and machines: '两台 8 卡', '8x A100', '2 nodes x 8 GPUs', '单卡'."""
        N = self.NUM
        G = G_MARK
        card = r"(?:卡|显卡|gpus?|cards?|accelerators?|npus?)"
        self.rx_nodes = re.compile(rf"(单|{N[1:-1]})\s*(?:(?:different|separate|physical|gpu)\s+)?(?:台机器|台服务器|台主机|台|机(?!器|房|构)|个节点|节点|nodes?|"
                                   r"machines?|servers?|boxes|hosts?|instances?|vms?|个实例|台实例)(?![a-z])")
        self.rx_gpu_counts = [
            re.compile(rf"{N}\s*-?\s*(?:张|块|个|枚)?\s*{card}(?![a-z])"),
            # a family word the card's matched name left out ('4x RTX 3090 (24GB each)': the name matched is '3090 (24gb')
            re.compile(rf"{N}\s*(?:[x×*]\s*)?(?:张|块|个)?\s*(?:(?:nvidia|geforce|rtx|tesla|quadro|amd|instinct|radeon)\s+){{0,3}}{G}"),
            re.compile(rf"{G}\s*\)?\s*(?:\(\s*\d{{2,3}}\s*g(?:b|ib)?\s*\)\s*)?[x×*]\s*(\d+)(?![\d.])"),
            # a count and each card's memory: '4*80G', '8 x 48GB GPUs', '2张24G', '一张48G的显卡'
            re.compile(rf"{N}\s*(?:[x×*]|张|块|个)\s*(\d{{1,3}})\s*g(?:b|ib)?(?![a-z0-9])"),
            # a launcher's flags: '--nproc_per_node 8', '--num_gpus=4', '--tensor-parallel-size 4'
            re.compile(r"(?:nproc[_-]per[_-]node|num[_-]gpus|n[_-]gpus|gpus[_-]per[_-]node)\s*[= ]\s*(\d+)(?![\d.])"),
        ]
        self.rx_single = re.compile(r"单卡|单张(?!\s*(?:图|出图|图片|照片|生成|推理|耗时|延迟|出))|单块|一张卡|一块卡|(?<![a-z])(?:a )?(?:single|one) (?:gpu|card)(?![a-z])")
        self.rx_per_node_between = re.compile(r"^\s*[,(]?\s*(?:[x×*]|each having|each has|each with|each|with|of|每台机器|每台|每机|每个节点|"
                                              r"每节点|per node)?\s*[(]?\s*$")
        # '需要几台8卡机器', 'how many 8-GPU machines': a count that is a machine's size, asked how many of them
        self.rx_machine_size_after = re.compile(r"^\s*(?:的)?\s*(?:机器|服务器|节点|主机|实例)|^\s*-?\s*(?:gpus?\s+)?"
                                                r"(?:machines?|nodes?|servers?|boxes|hosts?|instances?)(?![a-z])")
        self.rx_how_many_machines = re.compile(r"几台|多少台|多少个节点|几个节点|(?<![a-z])how many\s+(?:\S+\s+){0,2}"
                                               r"(?:machines?|nodes?|servers?|boxes|hosts?|instances?)(?![a-z])")
        self.rx_per_node_after = re.compile(r"^\s*(?:each|per node|per machine|per server|/node|apiece|每台|每机|"
                                            r"的?\s*(?:机器|服务器|节点|主机))")

    def _compile_sizes(self) -> None:
        """Training tokens, parameter counts, sequence length and batch size."""
        N = self.NUM
        self.rx_tokens = re.compile(rf"{N}\s*(t|b|m|k|trillion|billion|million|万亿|千亿|百亿|亿|万)?\s*(?:个)?\s*"
                                    r"(?:(?:input|prompt)\s+)?(?:tokens?|词元)(?![a-z])(?!\s*(?:/|per)\s*(?:s(?:ec)?|second)\b)")
        self.rx_tokens_after = re.compile(rf"(?:tokens?|词元)\s*(?:数|量)?\s*(?:大概|大约|约|~|:|=|of|about)?\s*{N}\s*"
                                          r"(t|b|m|k|trillion|billion|million|万亿|千亿|百亿|亿|万)(?![a-z])")
        self.rx_params = [
            re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*(b|bn|billion|m|million)(?![a-z0-9])"
                       r"(?!\s*(?:tokens?|docs?|documents?|samples?|images?|rows?|examples?|requests?|users?|"
                       r"hours?|条|张|图|样本|token|小时))"),
            re.compile(rf"{N}\s*(亿|千亿|百亿|万亿)(?!\s*(?:tokens?|条|张|次|请求|元|块|美元|人|用户))"),
        ]
        self.rx_seq = [
            re.compile(r"(?:上下文|context(?:\s+(?:length|window|len))?|ctx|seq(?:uence)?(?:[ _-]?len(?:gth)?)?|"
                       r"序列长度|序列|max[_ -]?(?:model[_ -]?|seq(?:uence)?[_ -]?)?len(?:gth)?|cutoff[_ ]len|model[_ ]max[_ ]length|窗口|长度)\s*(?:of|is|为|是|=|:|长度)?\s*(\d+(?:\.\d+)?)"
                       r"\s*(k|m)?(?![a-z0-9])"),
            re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(k|m)?\s*(?:tokens?\s*(?:of\s*)?)?(?:上下文|context|ctx|"
                       r"seq(?:uence)?(?:[ _-]?len(?:gth)?)?(?![a-z])|序列长度|的上下文|长上下文|的长上下文|长文本|长度的)"),
            re.compile(r"(?:sequences? of|seqs? of)\s*(\d+)\s*(k)?"),
            # a refinement that names only a length: 'what if 8k instead?', 'how about 32k', '换成 8k 呢'
            re.compile(r"(?:what if|how about|what about|try|with|换成|改成|改为|用)\s*(\d+(?:\.\d+)?)\s*(k)(?![a-z0-9])"
                       r"(?!\s*(?:users?|requests?|qps|rps|samples?|images?|steps?|rows?|examples?|documents?|docs?|"
                       r"并发|用户|条|张|\$|元|usd|dollars?|budget))"),
        ]
        self.rx_batch = re.compile(r"(?<![a-z])(?:batch[ _-]?size|batch|bs|mbs|micro[ -]?batch(?:[ _-]?size)?|批大小|"
                                   r"批次大小|批量大小)\s*(?:of|is|为|是|=|:|只能开到|只能设到|只能设为|开到|设为|设成|最多|最大|只有|才)*\s*(\d+)(?![\d.])")

    def _compile_load(self) -> None:
        """Concurrent users and requests per second."""
        N = self.NUM
        K = r"\s*(k|千|万)?"              # '2k users', '1万并发'
        self.rx_concurrency = [
            # the peak concurrency said beside a population online ('200 人同时在线，高峰并发 30 个请求'): the load
            re.compile(rf"(?:高峰|峰值|peak|at peak|busiest)\s*(?:期|时|时段)?\s*(?:的)?\s*(?:并发|concurrency|concurrent"
                       rf"(?:\s+(?:requests?|users?))?)\s*(?:数|量|请求数)?\s*(?:of|is|为|是|=|:|约|大概|大约|在|~)?\s*{N}{K}"),
            re.compile(rf"{N}{K}\s*(?:个)?\s*(?:concurrent\s+requests?|并发请求)\s*(?:at peak|在高峰|高峰时)"),
            re.compile(rf"{N}{K}\s*(?:requests?|users?|queries|people|calls|streams?|sessions?)\s+(?:concurrently|"
                       r"simultaneously|at once|at the same time|in parallel)(?![a-z])"),
            re.compile(rf"{N}{K}\s*(?:个)?\s*(?:concurrent|simultaneous|parallel)(?:\s+(?:users?|requests?|sequences?|"
                       r"streams?|sessions?|connections?|people|ppl|clients?))?(?![a-z])"),
            re.compile(rf"{N}{K}\s*(?:个)?\s*(?:video |camera |audio |rtsp |ip |chat )?(?:users?|streams?|ppl|people|clients?|"
                       r"sessions?|cams?|cameras?)(?![a-z])"),
            re.compile(rf"{N}{K}\s*个?\s*(?:人|用户)\s*(?:同时|在线|并发|用|使用)"),
            re.compile(rf"{N}{K}\s*(?:个|路)?\s*(?:用户|并发)"),
            re.compile(rf"(?:并发|concurrency|concurrent users|simultaneous users)\s*(?:数|量)?\s*"
                       rf"(?:of|is|为|是|=|:|约|大概|大约|在|~)?\s*{N}{K}"),
            re.compile(rf"{N}{K}\s*路\s*(?:并发|摄像头|相机|视频|流|监控|通话|直播|电话|客服|语音|音频|会议|呼叫|坐席|实时|同时|通道)"),
            # live meetings, calls or broadcasts ('300 场会议', '同时 300 路', '2000 通电话'): each one a live stream
            re.compile(rf"{N}{K}\s*(?:场|通)\s*(?:会议|在线会议|直播|通话|电话|课|网课)"),
            re.compile(rf"(?:同时|并发)\s*(?:在线)?\s*{N}{K}\s*(?:场|路|通)"),
            re.compile(rf"{N}{K}\s*个?人(?=\s*(?:[,.;!?]|$|同时|在线|使用|用|左右|呢|吧|啊|了|的话|怎么|要|会))"),      # '大概 500 人'
            re.compile(rf"(?:team of|group of)\s*{N}(?![\d.])|{N}\s*-?\s*(?:person|people|人)\s*(?:team|团队)"),
        ]
        # a request rate per minute, hour or day ('1000 requests per minute', '每分钟 600 个请求', '2M requests a
        # day'): read as requests per second (the unit group says which)
        self.rx_rate_per = [
            re.compile(rf"{N}{K}\s*(?:requests?|reqs?|queries|calls|api calls|个?请求|次请求|次调用)\s*"
                       r"(?:/|per|an?|every|each|每)\s*(min(?:ute)?|h(?:ou)?r|day|分钟|小时|天)"),
            re.compile(rf"(?:每|一)(分钟|小时|天)\s*(?:约|大概|大约|峰值|有)?\s*{N}{K}\s*(?:个|次)?\s*(?:请求|调用|次)"),
            re.compile(rf"{N}{K}\s*(rpm|rph|rpd)(?![a-z])"),
        ]
        # latency targets with a number: time to first token, time per output token, a whole response
        ms = r"(\d+(?:\.\d+)?)\s*(ms|milliseconds?|毫秒|s|secs?|seconds?|秒)(?![a-z])"
        under = (r"(?:under|below|<=?|≤|less than|within|at most|of|is|为|是|在|不超过|小于|低于|控制在|:|=|~)?\s*"
                 r"(?:(?:~|≈|about|around|roughly|approximately|约|大约|大概)\s*)?")
        # 'TTFT must be under 200 ms', '首token要200ms以内': a target said with a modal before its number
        modal = r"(?:(?:must|should|needs? to|has to|have to)\s+be\s+|要求?|需要|必须|得|应该)?\s*"
        # a target changed in a follow-up: '首字延迟放宽到 5 秒', 'TTFT relaxed to 3s', 'ttft can be 3 s'
        relax = (r"(?:(?:可以|能)?\s*(?:放宽|放松|调整|改|变|提高|延长|降低|缩短|放)(?:了)?(?:到|至|成|为)\s*|"
                 r"(?:(?:can|could|may|might)\s+be|(?:is|are|gets?|got|was)?\s*(?:relaxed|loosened|raised|moved|changed|"
                 r"increased|lowered|reduced|tightened)|goes|go|went)\s+(?:up\s+|down\s+)?(?:to\s+)?)?")
        first = (r"(?:ttft|time to first token|first[- ]token(?: latency)?|首\s*token(?:\s*延迟|\s*时间)?|"
                 r"首字(?:延迟|时间)?|首包(?:延迟|时间)?)")
        # ... or the number first: 'we could live with 3s TTFT', '3 秒首字'
        self.rx_ttft = re.compile(rf"{first}\s*(?:p\d+\s*)?{relax}{modal}{under}{ms}|"
                                  rf"(?<![\d.]){ms}\s*(?:p\d+\s*)?(?:的\s*)?{first}")
        self.rx_tpot = re.compile(rf"(?<![*×] )(?<![*×])(?:tpot|itl|inter[- ]token latency|time per (?:output )?token|per[- ]token latency|"
                                  rf"每个?\s*token\s*(?:延迟|时间)?|token\s*间隔)\s*{modal}{under}{ms}|"
                                  rf"{ms}\s*(?:per|/|每个?)\s*(?:output\s*)?token")
        budget = r"(?:(?:budget|target|goal|sla|slo|预算|目标|要求)\s*)?(?:(?:要|需要|必须|得)\s*)?"
        # a whole answer within a time: 'end-to-end latency budget ~3s', 'answer within 3 s', '3 秒内返回'
        self.rx_e2e = re.compile(rf"(?:end[- ]to[- ]end|e2e|whole response|full response|complete response|"
                                 rf"整个响应|完整响应|完整回复|端到端)\s*(?:latency|time|延迟|时延|时间)?\s*(?:p\d+\s*)?"
                                 rf"{budget}{under}{ms}|"
                                 rf"(?<![a-z])(?:answers?|respond|replies|reply|return|returns|results?|responses?)"
                                 rf"\s+(?:in|within|under|below|in\s+under|in\s+less\s+than)\s+~?\s*{ms}|"
                                 rf"{ms}\s*(?:内|以内|之内)\s*(?:要|需要|必须|得)?\s*(?:返回|回复|回答|出结果|给出(?:结果|答案|回答)?"
                                 rf"|答完|回完|返回结果)|"
                                 rf"(?:返回|回复|回答|出结果)\s*(?:时间)?\s*(?:要|需要|必须|得)?\s*(?:在|控制在)?\s*{ms}\s*(?:内|以内|之内)")
        # one item's time (an image, a clip): '单张出图要 8 秒内', '每张图 8 秒以内出', '8 秒内出图', 'each image within
        # 8 s', '8 s per image', 'per-image latency under 8s': the wait for one item, the request latency
        item_zh = r"(?:单张|每张|一张)\s*(?:图|图片|图像|照片)?\s*(?:的)?\s*(?:出图|生成|推理)?\s*(?:时间|耗时|延迟|时延)?"
        item_en = (r"(?:(?:each|every|one|a|single|per)[- ]image|images?)\s*(?:generation|latency|time)?\s*"
                   r"(?:must|should|has to|needs? to)?\s*(?:be\s+)?(?:done|ready|finish(?:ed)?|generated|returned|complete[d]?)?\s*")
        self.rx_item_latency = re.compile(
            rf"{item_zh}\s*{modal}{under}{ms}\s*(?:内|以内|之内)?|"
            rf"{ms}\s*(?:内|以内|之内)\s*(?:要|需要|必须|得)?\s*(?:出图|出一张|生成一张|出结果)|"
            rf"(?<![a-z]){item_en}(?:in|within|under|below|in\s+under|in\s+less\s+than|<=?|≤|at most)\s*~?\s*{ms}|"
            rf"{ms}\s*(?:per|/|an?|each)\s*image")
        # a bare percentile is a latency: 'p99 要在 300ms 以内', 'p95 under 2s'
        self.rx_latency = re.compile(rf"(?:(?:p\d+|response|request)\s*)?(?:latency|response time|延迟|时延|响应时间|响应)"
                                     rf"\s*(?:p\d+\s*)?{budget}{under}{ms}|"
                                     rf"(?<![a-z])p\d{{2}}(?:\.\d+)?\s*{budget}{under}{ms}")
        self.rx_qps = [
            re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:qps|rps|requests?\s*(?:/|per)\s*s(?:ec(?:ond)?)?|req/s|"
                       r"个?请求\s*(?:/|每)\s*秒)"),
            re.compile(r"(?<![a-z])(?:qps|rps)\s*(?:约|大概|大约|of|在|target|峰值)?[\s:=>~≈]*(\d+(?:\.\d+)?)"),
            # a rate changed in a follow-up: 'QPS 涨到 50', 'if qps goes up to 50', 'rps increases to 200'
            re.compile(r"(?<![a-z])(?:qps|rps)\s*(?:(?:再|又)?(?:涨|增加|增长|提高|提升|升|变|翻|降|降低|减少|减)(?:到|至|成|为)"
                       r"|(?:goes|went|go|rises?|grows?|increases?|jumps?|climbs?|drops?|falls?|is raised|gets?)\s+"
                       r"(?:up\s+|down\s+)?to|becomes?|of|=)\s*(?:约|大概|about|~)?\s*(\d+(?:\.\d+)?)(?!\s*(?:倍|x\b|%))"),
            re.compile(rf"每秒\s*(?:约|大概)?\s*{N}\s*个?\s*(?:请求|次|queries|query|requests?)"),
            # a rate of images (a text-to-image API): the planner reads it as the kind's target rate
            re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:images?|pictures?|imgs?)\s*(?:/|per|a|every)\s*s(?:ec(?:ond)?)?\b"),
            re.compile(rf"每秒\s*(?:约|大概|生成|出)?\s*{N}\s*(?:张|幅)\s*(?:图片?|图像)?"),
            re.compile(rf"{N}\s*(?:张|幅)\s*(?:图片?|图像)?\s*(?:/|每)\s*秒"),
        ]

    # what a request is: a chat, a document, a prompt ('80% short chats', '30k-token documents', '长文档')
    _REQUEST_NOUN = (r"(?:documents?|docs?|conversations?|chats?|prompts?|requests?|queries|messages?|inputs?|"
                     r"文档|对话|聊天|请求|提示词?|输入|问题)")
    _SIZE = r"(\d+(?:\.\d+)?)(?:\s*(?:-|–|~|to|到)\s*(\d+(?:\.\d+)?))?\s*(k|千|万)?"

    def _compile_request_sizes(self) -> None:
        """Serving request sizes: a share of the requests ('80%', '20 %', '80% 是') and a size in tokens, alone
        ('~500 tokens', '3 万 token') or with what the request is ('1-2k-token conversations', '文档 3 万 token')."""
        S, noun = self._SIZE, self._REQUEST_NOUN
        approx = r"(?:~|≈|about|around|roughly|approx\.?|约|大约|大概|平均|average|avg)?"
        self.rx_share = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d+)?)\s*(?:%|％|percent)")
        self.rx_bucket_size = re.compile(rf"{approx}\s*{S}\s*-?\s*(?:个)?\s*(?:tokens?|词元)(?![a-z])")
        self.rx_request_size = [
            re.compile(rf"{approx}\s*{S}\s*-?\s*(?:个)?\s*(?:tokens?|词元)\s*(?:左右|以内)?\s*的?\s*"
                       rf"(?:long\s+|short\s+|长|短)?{noun}"),
            re.compile(rf"{noun}(?:\s*(?:are|is|of|with|averag(?:e|ing)|around|about|大概|大约|约|平均|长度|都|是|:|~|≈))*"
                       rf"\s*{S}\s*(?:个)?\s*(?:tokens?|词元)(?![a-z])"),
        ]
        self.rx_chat_cue = re.compile(r"chat|conversation|短|对话|聊天|问答|short")

    def _compile_money_and_time(self) -> None:
        """Budget amounts with their currency and period, deadlines, and durations."""
        N, NA = self.NUM, self.NUM_A
        G = G_MARK
        cur = r"(?P<cur>\$|¥|€|usd|rmb|cny|eur|us\$)"
        mult = r"(?P<mult>k|w|万|千|million|mn|m|billion|bn)?"
        self.rx_budget = [
            re.compile(rf"{cur}\s*(?P<num>\d+(?:\.\d+)?)\s*{mult}(?![a-z0-9])"),
            re.compile(rf"(?P<num>{_DIGITS}|{_ZH_RUN})\s*{mult}\s*"
                       r"(?P<cur>元|块钱|块|rmb|人民币|dollars?|usd|美元|美金|刀|bucks|€|eur|euros?|欧元)"
                       rf"(?!\s*(?:{G_MARK}|卡|显卡|gpu|a\d|h\d|v\d))"),
            re.compile(rf"(?:预算|budget)\s*(?:(?:是|为|大概|约|大约|最多|不超过|around|about|of|is|up to|under|below|"
                       rf"max|within|~|:)\s*)*"
                       rf"(?P<per>每个?(?:月|天|年|小时|周))?\s*"
                       rf"(?P<num>\d+(?:\.\d+)?|{_ZH_NUM}(?=\s*(?:万|千|k|元|块)))\s*{mult}(?![a-z0-9])"),
        ]
        self.rx_period_before = re.compile(r"(月预算|每个月|每月|monthly|per month|每天|每日|daily|日预算|每年|年预算|yearly|"
                                           r"每小时|hourly|每周|weekly)[^\d$¥]{0,6}$")
        self.rx_period_after = re.compile(r"^\s*(?:以内|左右|以下|上下)?\s*(?:/|per|an?|each|每个?|一个?)\s*"
                                          r"(hours?|hrs?|h|小时|days?|天|日|months?|mo|月|years?|yr|年|weeks?|周)(?![a-z])"
                                          r"|^\s*(total|in total|overall|总共|总计|总)")
        # minutes too: 'FLUX LoRA within 10 minutes', '30 分钟内转写完' are deadlines a plan meets or misses
        unit = r"(minutes?|mins?|hours?|hrs?|h|days?|weeks?|months?|years?|yrs?)(?![a-z0-9])"
        zh_unit = r"(分钟|小时|天|周|星期|个月|月|年)"
        # 'we have 3 months of logs' is data and '4 hours a day' a schedule, not the time the job has
        not_data = r"(?!\s*(?:of|worth|a day|a week|per|each|every)(?![a-z]))"
        self.rx_deadline = [
            re.compile(rf"(?:within|in|under|before|by)\s*(?:~|about|around|roughly|approximately|the next)?\s*"
                       rf"{NA}\s*-?\s*{unit}{not_data}"),
            re.compile(rf"{N}\s*-?\s*{unit}\s*(?:max|at most|or less|tops)(?![a-z])"),
            # a bound said with a comparison: 'in <= 60 days', '≤ 8 weeks', 'no more than 45 days', '不超过 60 天'
            re.compile(rf"(?:(?:within|in|under|by)\s*)?(?:<=|=<|≤|<|(?<![a-z])(?:at most|no more than|not more than|"
                       rf"less than|no longer than|under)(?![a-z]))\s*(?:~|about|around|roughly)?\s*{NA}\s*-?\s*{unit}{not_data}"),
            re.compile(rf"(?:不超过|不超出|最多|最长|少于|不到|<=|≤|<)\s*{N}\s*(?:个)?\s*{zh_unit}(?!\s*(?:的)?\s*(?:数据|音频|录音|日志))"),
            re.compile(rf"{N}\s*(?:个)?\s*{zh_unit}\s*(?:(?:内|之内|以内)(?!\s*的)|(?:能|可以|就)(?:搞定|跑完|完成|训完))"),
            re.compile(rf"(?:deadline|due)\s*(?:is|in|of)?\s*~?\s*{N}\s*(days?|weeks?|months?|天|周|个月|月)"),
            # 'a deadline of 48 hours', 'deadline: 36h': hours and minutes too
            re.compile(rf"(?:deadline|due|time limit)\s*(?:is|in|of|:)?\s*(?:only\s+|just\s+|about\s+|~\s*)?{N}\s*-?\s*{unit}"),
            # '时间只有两天', '时间就3天', '工期只剩一周'
            re.compile(rf"(?:时间|工期|期限)\s*(?:只有|只剩|就|仅|仅有|还剩|剩|有|是|为)\s*{N}\s*(?:个)?\s*{zh_unit}"),
            # the time the user has: 'we have one year', "we've got two months", 'timeline is 3 weeks'
            re.compile(rf"(?:(?:we|i|they)\s*(?:'ve|have|has)?\s*(?:only\s+)?(?:got|have)|there(?:'s| is)|time(?:line| ?frame|"
                       rf" budget)?\s*(?:is|of|:))\s+(?:only\s+|just\s+|about\s+|roughly\s+|around\s+|~\s*)?"
                       rf"{NA}\s*-?\s*{unit}{not_data}(?!\s*(?:ago|old|later)(?![a-z]))"),
            # 有一年时间 / 给我们两个月时间 / 工期三周 / 期限一个月
            re.compile(rf"(?:有|给(?:我们|我|你)?|只有|还有|剩)\s*{N}\s*(?:个)?\s*{zh_unit}\s*(?:的)?\s*(?:时间|工期)"),
            re.compile(rf"(?:工期|期限|截止时间|deadline)\s*(?:只有|是|为|:|大概|约|就)?\s*{N}\s*(?:个)?\s*{zh_unit}"),
        ]
        # a clause that is only a time, once the job's size is known ('1T tokens，两个月', '300B tokens, 3 weeks'):
        # the time the job must fit in, not a rental period ('跑 3 天', 'for 24 hours' name a verb or 'for')
        self.rx_bare_time = re.compile(rf"(?:^|[,;，；。])\s*(?:about|around|~|约|大概|大约)?\s*{NA}\s*-?\s*(?:个)?\s*"
                                       rf"(hours?|days?|weeks?|months?|years?|小时|天|周|星期|个月|月|年)"
                                       rf"\s*(?=$|[,;.!?，；。！？])")
        self.rx_duration = re.compile(rf"{NA}\s*-?\s*(?:个)?\s*(hours?|hrs?|days?|weeks?|months?|years?|小时|天|周|星期|月|年)"
                                      r"(?![a-z])")
        self.rx_duration_skip_before = re.compile(r"(?:数据|语料|data|of|每|per)\s*$")
        self.rx_duration_skip_after = re.compile(r"^\s*(?:of\s+(?:audio|speech|data|video|recordings?|footage)|"
                                                 r"的(?:音频|语音|数据|视频)|内|之内|以内)")
        day = r"(?P<day>monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun)"
        self.rx_by_weekday = re.compile(rf"(?:by|before|until|due|deadline(?: is)?)\s+(?:this\s+)?(?P<next>next\s+)?"
                                        rf"{day}(?![a-z])")
        self.rx_zh_weekday = re.compile(r"(?:这|本)?(?P<next>下)?(?:个)?(?:周|星期|礼拜)(?P<day>[一二三四五六日天])\s*"
                                        r"(?:之前|以前|前|交|上线|完成|搞定|出结果|要)")
        self.rx_by_iso_date = re.compile(r"(?:by|before|until|due|deadline(?: is)?)\s+(?P<year>20\d\d)[-/.]"
                                         r"(?P<month>\d{1,2})[-/.](?P<dom>\d{1,2})(?!\d)")
        self.rx_zh_date = re.compile(r"(?:(?P<year>20\d\d)年)?(?P<month>\d{1,2})月(?P<dom>\d{1,2})[日号]\s*"
                                     r"(?:之前|以前|前|交|上线|完成|搞定)")
        self.rx_by_relative_day = re.compile(
            r"(?:by|before|until|till|due|deadline\s*(?:is|:)?|no later than)\s+(?:the\s+)?"
            r"(?P<rel>tomorrow|end of (?:the |this |next )?(?:week|month|year)|eow|eom|eoy)(?![a-z])"
            r"|(?P<rel2>明天(?:早上|上午|中午|下午|晚上|一早)?|后天|(?:这个|本|下个?)?月底|(?:这|本)?周末|下周末|(?:今|本)?年底|下周)"
            r"(?P<suffix>之前|以前|前|交|上线|完成|搞定|要|内|之内|以内)"
            # said bare as what will do: 'end of the week is fine', 'eow works', 'end of next month ok'
            r"|(?P<rel3>end of (?:the |this |next )?(?:week|month)|eow|eom)(?=\s*(?:is|would be|works|'s|ok|okay|"
            r"then|fine|should|too|also|at the latest)(?![a-z]))")
        # an explicit span said with a day word: 'by tomorrow morning (~12h)', '明天早上（约 12 小时）': the hours win
        # and a span in days or weeks: 'by Friday (4 days)', '下周五前（5 天）' (the user's count, not today's calendar)
        self.rx_explicit_hours = re.compile(r"^[^\d]{0,24}?[(（]?\s*(?:~|约|大约|大概|about|approx\.?|roughly|in|"
                                            r"i\.e\.,?|that'?s|so|还有|只剩|剩|也就是|即)?\s*"
                                            r"(\d{1,3}(?:\.\d)?)\s*(?:个)?\s*(h|hrs?|hours?|小时|个小时|days?|天|"
                                            r"weeks?|周|星期)(?![a-z])(?!\s*(?:a|per|each|every)\s)")
        self.rx_around_the_clock = re.compile(r"24\s*/\s*7|7\s*[x×*]\s*24|24\s*(?:hours?|hrs?|h)\s*(?:a|per|each|every)\s*day")

    # the memory of a card the user has or means, in four word orders: '24GB card' / '48G 的卡', '显存只有 12G',
    # '16G显存' / '12 GB of VRAM', and the card first with a verb: '我的显卡是 16G', 'my GPU has 12 GB', 'a card
    # with 24 GB' (group 4: only its number is blanked, so that a count before the card word stays readable)
    rx_card_memory = re.compile(
        r"(?<![\w.])(\d{1,3})\s*(?:gb|gib|g)\s*(?:of\s+)?(?:vram\s+|显存\s*(?:的)?\s*)?"
        r"(?:(?:consumer|nvidia|single|gaming)\s+)?(?:cards?|gpus?|graphics cards?|显卡|的卡|卡)(?![a-z])"
        r"|(?:显存|vram)\s*(?:只有|有|is|of|=|:)?\s*(\d{1,3})\s*(?:gb|gib|g)(?![a-z0-9])"
        r"|(?<![\w.])(\d{1,3})\s*(?:gb|gib|g)\s*(?:of\s+)?(?:vram|显存)(?![a-z])"
        r"|(?:显卡|(?<![a-z])gpu|graphics card|(?<![a-z])card)(?:\s*的?\s*显存)?\s*"
        r"(?:只有|是|有|为|:|=|is|has|with|of)\s*(?:only\s+|just\s+)?(?:an?\s+)?(\d{1,3})\s*(?:gb|gib|g)(?![a-z0-9])")
