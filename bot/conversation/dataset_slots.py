"""The training set of an image, audio or denoiser job: a well-known dataset by name ('coco', 'imagenet'), its size
as said ('11.8 万张', '1.2M images', '50k samples', '500 小时语音', '500 hours of audio') and the passes over it
('100 epochs', '100 个 epoch', '训 50 轮'). Together they make the job's size (items x epochs), which the planner
times as it times an LLM's tokens."""
from __future__ import annotations

import re
from typing import Any

from bot.conversation.entities import G_MARK
from bot.records.text import normalize

# what a count's unit word multiplies it by ('118k', '11.8 万', '1.2M', '1.2 million')
_MULT = {"k": 1e3, "thousand": 1e3, "千": 1e3, "w": 1e4, "万": 1e4, "m": 1e6, "million": 1e6, "百万": 1e6,
         "千万": 1e7, "亿": 1e8}
_UNIT = r"(k|thousand|千万|千|w|万|m|million|百万|亿)?"
MAX_ITEMS = 1e11            # more images or samples than any public training set by far: a typo, not a job
MAX_AUDIO_HOURS = 1e8
MAX_EPOCHS = 10_000


class DatasetReader:
    """Mixin of Parser: needs self.NUM, self.kb and SlotReader's _num / _blank."""

    def _compile_datasets(self) -> None:
        N = self.NUM
        card = rf"(?!\s*(?:卡|显卡|{G_MARK}|gpu|card|h100|a100))"
        self.rx_images = [
            # up to two words or an aside may stand between ('200k (20万张) 1024x1024 images', '50k product photos')
            re.compile(rf"{N}\s*{_UNIT}\s*(?:\+|多|余)?\s*(?:[(（][^()（）]{{0,20}}[)）]\s*)?"
                       r"(?:(?!(?:of|per|a|an|each|every|for|and|or|x)\s)[a-z][a-z-]*\s+){0,2}?"
                       r"(?:images?|imgs?|pictures?|photos?)(?![a-z])"),
            # '3000 张', '5万张图': a bare 张 only at the end of a clause ('2张24G', '一张4090D' are cards)
            re.compile(rf"{N}\s*{_UNIT}\s*(?:多|余)?\s*(?:张|幅){card}\s*(?:[^\d，。,;；!?！？()（）]{{0,8}}?(?:图片|图像|照片|图)|"
                       r"(?=\s*(?:[,，。.;；)）!?！？]|$|的?数据|左右)))"),
            re.compile(rf"{N}\s*{_UNIT}\s*(?:多|余)?\s*(?:个)?\s*(?:标注)?(?:图片|图像)"),
        ]
        self.rx_samples = [
            re.compile(rf"{N}\s*{_UNIT}\s*(?:\+|多|余)?\s*(?:training |train )?"
                       r"(?:samples?|examples?|clips?|utterances?)(?![a-z])"),
            re.compile(rf"{N}\s*{_UNIT}\s*(?:多|余)?\s*(?:条|个)\s*(?:训练)?(?:样本|数据|音频|语音|录音)"),
        ]
        # the audio nouns are the lexicon's (rules/lexicon.yaml audio_nouns: podcasts, meetings, 访谈, 会议...), the
        # same list the load reader uses, so that '20000 hours of podcasts' is an amount of audio wherever it is read
        nouns = (self.lex.get("quantities") or {}).get("audio_nouns") or {}
        en = sorted({w for w in nouns.get("en") or []} | {"audio", "speech", "recordings", "recording", "calls",
                                                          "call"}, key=len, reverse=True)
        zh = sorted({w for w in nouns.get("zh") or []} | {"语音", "音频", "录音", "语料", "通话", "播客"},
                    key=len, reverse=True)
        en_alt = "|".join(re.escape(w) + ("s?" if not w.endswith("s") else "") for w in en)
        zh_alt = "|".join(re.escape(w) for w in zh)
        self.rx_audio_hours = re.compile(
            rf"{N}\s*{_UNIT}\s*(?:多|余)?\s*(?:个)?\s*(?:小时|h|hours?|hrs?)\s*(?:的)?\s*(?:训练)?"
            # '3万小时的中文录音': a few characters saying what the audio is may stand before the noun
            rf"(?:[\u4e00-\u9fff]{{0,6}}?(?:{zh_alt})|(?:of\s+)?(?:[a-z-]+\s+){{0,2}}(?:{en_alt})(?![a-z]))")
        # the amount named first ('数据量4万小时', 'dataset 40k hours', '音频有 4 万小时'): a follow-up restating the amount
        self.rx_audio_hours_after = re.compile(
            rf"(?:数据量?|数据集|语料|音频|录音|语音|(?<![a-z])(?:dataset|data|corpus|audio))\s*(?:(?:其实|实际上|实际|现在|目前|一共|总共|共|有|是|为|大概|约)+|(?:is|of|now|:)(?:\s+(?:now|actually))?)?"
            rf"\s*(?:about\s+|约|大概)?{N}\s*{_UNIT}\s*(?:多|余)?\s*(?:个)?\s*(?:小时|h|hours?|hrs?)(?![a-z])")
        self.rx_epochs = [
            re.compile(rf"{N}\s*(?:个)?\s*(?:epochs?|轮|遍)(?![a-z])"),
            re.compile(rf"(?:epochs?|轮数)\s*(?:=|:|：|of)?\s*{N}(?![\d.])"),
        ]
        names = {}
        for alias, did in self.kb.dataset_aliases.items():
            names[alias] = did
        for d in self.kb.datasets.values():
            for name in (d.id, d.name, *d.aliases):
                names[normalize(name)] = d.id
        words = sorted((n for n in names if len(n) >= 4), key=len, reverse=True)
        self.dataset_of = names
        # 'imagenet-21k' is another dataset than ImageNet-1k: a name followed by a variant's size is not it
        self.rx_dataset = re.compile(r"(?<![a-z0-9])(" + "|".join(re.escape(w) for w in words) +
                                     r")(?![a-z0-9])(?!-\d|\s*-?\s*(?:21|22|12)k)") \
            if words else None

    def _dataset_slots(self, t: str, slots: dict[str, Any]) -> str:
        """Dataset name, size and epochs into the slots; what was read is blanked so that no later pattern reads
        '500 小时' as a deadline or '118k' as a parameter count."""
        t = self._image_size(t, slots)
        if self.rx_dataset is not None:
            m = self.rx_dataset.search(t)
            if m:
                ds = self.kb.datasets[self.dataset_of[m.group(1)]]
                slots.update(dataset=ds.id, dataset_items=ds.train_items, dataset_unit=ds.unit)
                t = self._blank(t, m.span())
        for unit, rxs, cap in (("audio_hours", [self.rx_audio_hours, self.rx_audio_hours_after], MAX_AUDIO_HOURS),
                               ("images", self.rx_images, MAX_ITEMS), ("samples", self.rx_samples, MAX_ITEMS)):
            t, found = self._dataset_count(t, slots, unit, rxs, cap)
            if found:
                break
        for rx in self.rx_epochs:
            m = rx.search(t)
            n = self._num(m.group(1)) if m else None
            if n is not None and 0 < n <= MAX_EPOCHS:
                slots["epochs"] = float(n)
                t = self._blank(t, m.span(1))      # the word stays: 'epochs' is a cue of a training job
                break
        return t

    def _image_size(self, t: str, slots: dict[str, Any]) -> str:
        """The image side a vision or diffusion job runs at ('at 1280px', 'imgsz=1280', '1024x1024', '1024 分辨率'):
        its FLOPs and activations grow with the square of it (bot/estimate/vision.py, activations.py)."""
        for rx in _IMAGE_SIDE:
            m = rx.search(t)
            if m is None:
                continue
            side = max(int(g) for g in m.groups() if g)
            if MIN_SIDE <= side <= MAX_SIDE:
                slots["image_size"] = side
                return self._blank(t, m.span())
        return t

    def _dataset_count(self, t: str, slots: dict[str, Any], unit: str, rxs: list[re.Pattern], cap: float
                       ) -> tuple[str, bool]:
        """A stated size wins over the named dataset's ('COCO 的一半，6 万张' is 60,000)."""
        for rx in rxs:
            m = next((m for m in rx.finditer(t) if not _a_rate(t, m)), None)
            n = self._num(m.group(1)) if m else None
            if n is None or n <= 0:
                continue
            value = n * _MULT.get(m.group(2) or "", 1)
            if value > cap:
                slots.setdefault("_absurd", {})["dataset_items"] = value
                return self._blank(t, m.span()), True
            slots.update(dataset_items=float(value), dataset_unit=unit)
            return self._blank(t, m.span()), True
        return t, False


_RATE_BEFORE = re.compile(r"(?:每秒|每分钟|每小时|每天|一秒|1秒)\s*(?:钟)?\s*(?:能|要|需要|处理|生成|出)?\s*$")
_RATE_AFTER = re.compile(r"\s*(?:/|per|a|an|every|each)\s*(?:s|sec|second|min|minute|h|hr|hour|day)s?(?![a-z])|"
                         r"\s*(?:每秒|/秒|每分钟|每小时)")


_IMAGE_SIDE = [
    re.compile(r"(?<![\d.])(\d{2,5})\s*[x×*]\s*(\d{2,5})(?![\d.])(?!\s*(?:gpus?|cards?|卡|张卡|h100|a100))"),   # '1024x1024'
    re.compile(r"(?<![\d.])(\d{2,5})\s*(?:px|pixels?|像素)(?![a-z])"),                         # 'at 1280px', '1280 像素'
    re.compile(r"(?:imgsz|img_size|image[_ ]size|resolution|分辨率|尺寸)\s*(?:of|is|=|:|为|是)?\s*(\d{2,5})(?![\d.])"),
    re.compile(r"(?<![\d.])(\d{2,5})\s*(?:的)?\s*(?:分辨率|resolution)"),                     # '1024 分辨率'
]
MIN_SIDE, MAX_SIDE = 32, 8192


def _a_rate(text: str, m: re.Match) -> bool:
    """'5 images per second', '每秒 2 张图': a rate to serve, not a training set."""
    return bool(_RATE_BEFORE.search(text[max(0, m.start() - 8):m.start()]) or _RATE_AFTER.match(text, m.end()))
