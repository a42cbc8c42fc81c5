"""Step 1 and 2 of the parse: normalise the text (NFKC, lower case, Chinese variants and typos) and correct misspelt
English words against the lexicon's vocabulary (optimal-string-alignment distance, a tie is no correction)."""
from __future__ import annotations

import re
from functools import cached_property, lru_cache
from typing import Any

from rapidfuzz import process
from rapidfuzz.distance import OSA

from bot.conversation.parsed import Match
from bot.conversation.restated import restate
from bot.records.text import has_cjk, normalize

MAX_CHARS = 4000          # longer input is cut: no question needs more, and matching stays fast


class Normaliser:
    """Mixin of Parser: needs self.lex, self.kb, self.zh_map(_rx), self.en_typos and self._family_words."""

    @cached_property
    def _typo_vocab(self) -> list[str]:
        words = {str(w).lower() for w in self.lex.get("typo_vocabulary", [])}
        words |= set(self._family_words)
        return sorted(words)

    @cached_property
    def _known_words(self) -> frozenset[str]:
        known = {str(w).lower() for w in self.lex.get("known_words", [])}
        known |= set(self._typo_vocab)
        # every word of the lexicon's own phrases is known
        for section in ("intents", "recommend_cues", "domain_cues", "out_of_scope_cues", "unsure", "methods",
                        "precisions", "budget", "duration", "latency", "topics", "regions", "number_words", "reset",
                        "help_words", "ordinals", "sharding", "offload", "job_kinds", "algorithms",
                        "uncovered_modalities"):
            stack: list[Any] = [self.lex.get(section)]
            while stack:
                x = stack.pop()
                if isinstance(x, dict):
                    stack.extend(x.keys())
                    stack.extend(v for v in x.values() if isinstance(v, (dict, list)))
                elif isinstance(x, list):
                    stack.extend(x)
                elif isinstance(x, str) and not x.startswith("re:"):
                    known.update(re.findall(r"[a-z]+", x.lower()))
        for table in (self.kb.model_aliases, self.kb.gpu_aliases, self.kb.provider_aliases):
            for key in table:
                known.update(w for w in re.findall(r"[a-z]+", key) if len(w) >= 4 and w == key)
        for m in self.kb.models.values():
            for name in (m.name, *getattr(m, "aliases", [])):
                known.update(re.findall(r"[a-z]+", normalize(name)))
        return frozenset(known)

    @cached_property
    def _lang_neutral(self) -> frozenset[str]:
        """Words that say nothing about the language of a reply: method and precision names, units."""
        words = {"b", "m", "k", "gb", "g", "x", "ms", "bit", "fp", "bf", "int", "nf"}
        for section in ("methods", "precisions"):
            for phrases in self.lex[section].values():
                for p in phrases:
                    if not str(p).startswith("re:"):
                        words.update(re.findall(r"[a-z]{2,}", str(p).lower()))
        return frozenset(words)

    rx_thousands = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,]|\.\d)")
    rx_scientific = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)e([+-]?\d{1,3})(?![\w.])")

    @staticmethod
    def _plain_number(m: re.Match) -> str:
        """'1e3' -> '1000' (the count checks then judge '1e12 users'); past a float's range, the largest float."""
        exponent = int(m.group(2))
        value = float(m.group(1)) * 10.0 ** exponent if exponent <= 308 else float("inf")
        if value == float("inf"):
            return "1" + "0" * 308
        return f"{value:.0f}" if value >= 1 and value == int(value) else m.group()

    def normalise(self, raw: str) -> str:
        # '10,000 users' (an ASCII comma as typed: '64，640' is a list in Chinese, and NFKC would make it '64,640')
        text = self.rx_thousands.sub(lambda m: m.group().replace(",", ""), (raw or "")[:MAX_CHARS])
        text = normalize(text)[:MAX_CHARS]
        text = self.rx_scientific.sub(self._plain_number, text)                      # '1e3 users'
        text = text.replace("、", ",").replace("“", '"').replace("”", '"').replace("‘", "'").replace("’", "'")
        text = text.replace("（", "(").replace("）", ")").replace("；", ";")
        if self.zh_map_rx is not None and has_cjk(text):
            text = self.zh_map_rx.sub(lambda m: self.zh_map[m.group()], text)
        return restate(text)          # '并发变成200', 'users go up to 500', '40k hours, not 12k': the new value by its thing

    def _fix_typos(self, text: str, matches: list[Match]) -> str:
        def fix(m: re.Match) -> str:
            word = m.group()
            better = self._correct(word)
            if better != word:
                matches.append(Match("typo", better, word, 100.0 - 10 * OSA.distance(word, better)))
            return better
        return re.sub(r"(?<![a-z])[a-z]{3,}(?:'[a-z]+)?(?![a-z])", fix, text)

    @lru_cache(maxsize=4096)
    def _correct(self, word: str) -> str:
        if word in self.en_typos:
            return self.en_typos[word]
        if len(word) < 4 or word in self._known_words or "'" in word:
            return word
        limits = {int(k): int(v) for k, v in (self.lex.get("typo_max_edits") or {4: 1, 5: 1, 8: 2}).items()}
        allowed = max((v for k, v in limits.items() if len(word) >= k), default=0)
        if not allowed:
            return word
        vocab = self._typo_vocab if len(word) > 4 else \
            [w for w in self._typo_vocab if w in set(self.lex.get("typo_short_targets") or [])]
        found = process.extract(word, vocab, scorer=OSA.distance, score_cutoff=allowed, limit=3)
        if not found:
            return word
        best = found[0][1]
        top = sorted({w for w, d, _ in found if d == best})
        if len(top) > 1:
            return word            # a tie is ambiguous: leave the word as typed
        return top[0]
