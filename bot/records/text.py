"""Text normalisation shared by the knowledge base (alias keys) and the parser.

Users type full-width digits (７Ｂ), mixed case, Chinese numerals (十六卡, 70亿) and stray punctuation; everything
downstream sees one canonical form.
"""
from __future__ import annotations

import re
import unicodedata

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9, "壹": 1, "贰": 2, "叁": 3, "肆": 4, "伍": 5, "陆": 6, "柒": 7, "捌": 8, "玖": 9}
_ZH_SMALL_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_ZH_BIG_UNITS = {"万": 10_000, "萬": 10_000, "亿": 100_000_000, "億": 100_000_000}
ZH_NUMERAL_CHARS = "".join([*_ZH_DIGITS, *_ZH_SMALL_UNITS, *_ZH_BIG_UNITS])
_CONTROL = re.compile(r"[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\ufeff]")
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """NFKC (full width -> half width), lower case, control characters removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text or "")
    text = _CONTROL.sub(" ", text)
    text = text.replace("，", ",").replace("。", ".").replace("：", ":").replace("？", "?").replace("！", "!")
    text = text.replace("～", "~").replace("×", "x").replace("＊", "*")
    return _SPACE.sub(" ", text).strip().lower()


def norm_key(name: str) -> str:
    """Key for alias tables: 'Qwen2.5-7B Instruct' and 'qwen2.5 7b instruct' are the same name."""
    return re.sub(r"[\s\-_/()（）]+", "", normalize(name))


def zh_to_number(word: str) -> float | None:
    """'十六' -> 16, '两' -> 2, '七十' -> 70, '一千亿' -> 1e11, '3千' -> 3000; None if not a numeral."""
    if not word:
        return None
    total, section, digit = 0.0, 0.0, None
    seen = False
    i = 0
    while i < len(word):
        ch = word[i]
        m = re.match(r"\d+(?:\.\d+)?", word[i:])
        if m:
            digit = float(m.group())
            i += len(m.group())
            seen = True
            continue
        if ch in _ZH_DIGITS:
            digit = float(_ZH_DIGITS[ch])
            seen = True
        elif ch in _ZH_SMALL_UNITS:
            section += (digit if digit is not None else 1) * _ZH_SMALL_UNITS[ch]
            digit = None
            seen = True
        elif ch in _ZH_BIG_UNITS:
            section += digit or 0
            total = (total + section) * _ZH_BIG_UNITS[ch] if total and total < _ZH_BIG_UNITS[ch] else \
                total + section * _ZH_BIG_UNITS[ch]
            section, digit = 0.0, None
            seen = True
        else:
            return None
        i += 1
    if not seen:
        return None
    return total + section + (digit or 0)


def has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" for ch in text)
