"""Step 3 of the parse: names of models, GPUs and providers as knowledge-base aliases on word boundaries (exact first),
a family and a size or a generation without one kept as ambiguous, misspelt names matched fuzzily; then masked out."""
from __future__ import annotations

import re
from functools import cached_property
from typing import Any, Iterable

from rapidfuzz import fuzz, process

from bot.conversation.parsed import Match, Parse
from bot.knowledge.loader import GPU_FAMILIES
from bot.records.text import norm_key, normalize

MODEL_FUZZY_CUTOFF = 86   # rapidfuzz ratio for a misspelt model name ...
MODEL_FUZZY_MARGIN = 4    # ... that must beat the best other model by this much, or the match is ambiguous
FAMILY_SIZE_TOLERANCE = 0.2
MAX_FUZZY_TOKENS = 12
M_MARK, G_MARK = "\ue000", "\ue001"                               # where a model / GPU name was
_SEPARATORS = " -_/()"


class EntityMatcher:
    """Mixin of Parser: needs self.kb, self.lex and self.ordinals."""

    @cached_property
    def _model_aliases(self) -> list[tuple[str, str]]:
        """(compact alias, model id), longest first so 'gpt2xl' wins over 'gpt2'."""
        pairs = {(k, v) for k, v in self.kb.model_aliases.items() if len(k) >= 3}
        return sorted(pairs, key=lambda p: (-len(p[0]), p[0]))

    @cached_property
    def _model_alias_keys(self) -> list[str]:
        return [a for a, _ in self._model_aliases]

    @cached_property
    def _model_order(self) -> dict[str, int]:
        return {mid: i for i, mid in enumerate(self.kb.models)}

    @cached_property
    def _gpu_aliases(self) -> list[tuple[str, str]]:
        pairs = {(k, v) for k, v in self.kb.gpu_aliases.items() if len(k) >= 2}
        pairs |= {(fam, fam) for fam in GPU_FAMILIES}
        # one alias for a family and a member ('910b'): the family first, whatever the set's order (hash seed), so a
        # memory said before it picks the member ('32G 910B') and the same text always parses the same
        return sorted(pairs, key=lambda p: (-len(p[0]), p[0], p[1] not in GPU_FAMILIES, p[1]))

    @cached_property
    def _gpu_family_of(self) -> dict[str, str]:
        return {gid: fam for fam, ids in GPU_FAMILIES.items() for gid in ids} | {fam: fam for fam in GPU_FAMILIES}

    @cached_property
    def _provider_aliases(self) -> list[tuple[str, str]]:
        return sorted(self.kb.provider_aliases.items(), key=lambda p: (-len(p[0]), p[0]))

    @cached_property
    def _families(self) -> dict[str, list[str]]:
        """Bare family word ('llama', 'qwen', also 千问) -> model ids, for 'llama 70b'-style mentions."""
        out: dict[str, list[str]] = {}
        for m in self.kb.models.values():
            word = re.match(r"[a-z]+", m.family.lower())
            if word and len(word.group()) >= 3:
                out.setdefault(word.group(), []).append(m.id)
        for word, fam in (self.lex.get("model_family_words") or {}).items():
            if fam in out:
                out[str(word)] = out[fam]
        return out

    @cached_property
    def _family_words(self) -> list[str]:
        return sorted(w for w in self._families if w.isascii())

    @cached_property
    def _family_size_rx(self) -> re.Pattern:
        words = "|".join(re.escape(w) for w in sorted(self._families, key=len, reverse=True))
        return re.compile(rf"(?<![a-z0-9])({words})[\s\-_:]*(?:(?:chat|instruct|base|it)[\s\-_]*)?"
                          r"(\d+(?:\.\d+)?)\s*([bm])(?![a-z0-9])")

    @cached_property
    def _nominal_sizes(self) -> dict[str, float]:
        """The size a model's name states ('Qwen2.5-7B' -> 7, though it has 7.6B parameters)."""
        out = {}
        for m in self.kb.models.values():
            size = re.search(r"(?<![\dx.])(\d+(?:\.\d+)?)\s*([bm])\)?$", normalize(m.name))
            if size:
                out[m.id] = float(size.group(1)) / (1000 if size.group(2) == "m" else 1)
        return out

    def _size_fits(self, mid: str, size: float) -> bool:
        nominal = self._nominal_sizes.get(mid)
        if nominal is not None:
            return abs(nominal - size) <= 0.01 * size
        return abs(self.kb.models[mid].params_b - size) / size <= FAMILY_SIZE_TOLERANCE

    @cached_property
    def _generations(self) -> list[tuple[str, list[str]]]:
        """Compact name without its size ('qwen2.5', 'llama3.1') -> the models of that generation, for a generation
        named without a size. Only generations with several models whose key is not an alias of one model."""
        gens: dict[str, list[str]] = {}
        for m in self.kb.models.values():
            tokens = [t for t in re.split(r"[\s\-_]+", normalize(m.name)) if t]
            if len(tokens) >= 2 and re.fullmatch(r"\d+(?:\.\d+)?[bm]", tokens[-1]):
                key = norm_key("".join(tokens[:-1]))
                if len(key) >= 4:
                    gens.setdefault(key, []).append(m.id)
        return sorted(((k, v) for k, v in gens.items() if len(v) >= 2 and k not in self.kb.model_aliases),
                      key=lambda p: (-len(p[0]), p[0]))

    @cached_property
    def _candidate_keys(self) -> dict[str, list[str]]:
        """Model id -> the keys a reply to 'which one do you mean' may use: prefixes of its name's tokens
        ('llama', 'llama3.3', 'llama3.370b'), its aliases, and its version alone ('3.3', '2.5')."""
        out: dict[str, list[str]] = {}
        for m in self.kb.models.values():
            keys: set[str] = set()
            for name in (m.name, m.id):
                tokens = [t for t in re.split(r"[\s\-_]+", normalize(name)) if t]
                for i in range(1, len(tokens) + 1):
                    keys.add(norm_key("".join(tokens[:i])))
                head = re.match(r"([a-z]+)[\s\-_]*(\d+\.\d+)(?![\d])", normalize(name))
                if head:
                    keys.add(head.group(2))   # a version alone: '3.3', '2.5' (not '2': too easily a count)
            keys |= {k for k, v in self.kb.model_aliases.items() if v == m.id}
            out[m.id] = sorted(k for k in keys if k)
        return out

    @staticmethod
    def _compact(text: str) -> tuple[str, list[int]]:
        chars, pos = [], []
        for i, ch in enumerate(text):
            if ch in _SEPARATORS:
                continue
            chars.append(ch)
            pos.append(i)
        return "".join(chars), pos

    @staticmethod
    def _boundary_ok(text: str, start: int, end: int) -> bool:
        before = text[start - 1] if start > 0 else " "
        after = text[end] if end < len(text) else " "
        if before.isascii() and before.isalnum():
            # '8xa100' counts as '8x a100'
            if not (before in "x×*" and start >= 2 and text[start - 2].isdigit()):
                return False
        if before == "." and start >= 2 and text[start - 2].isdigit():
            return False
        if after.isascii() and after.isalnum():
            return False
        if after == "." and end + 1 < len(text) and text[end + 1].isdigit():
            return False             # 'llama3' is not a name inside 'llama3.1'
        return True

    def _find_alias(self, text: str, aliases: list[tuple[str, Any]], plural: bool = False
                    ) -> list[tuple[Any, int, int, str]]:
        compact, pos = self._compact(text)
        found: list[tuple[Any, int, int, str]] = []
        taken: list[tuple[int, int]] = []
        for key, rid in aliases:
            start = compact.find(key)
            while start != -1:
                s, e = pos[start], pos[start + len(key) - 1] + 1
                ok = self._boundary_ok(text, s, e) and not _glued_count(text, s, e)
                if not ok and plural and e < len(text) and text[e] == "s" and self._boundary_ok(text, s, e + 1):
                    ok, e = True, e + 1
                if ok and not any(s < te and ts < e for ts, te in taken):
                    found.append((rid, s, e, text[s:e]))
                    taken.append((s, e))
                start = compact.find(key, start + 1)
        return sorted(found, key=lambda f: f[1])

    @staticmethod
    def _mask(text: str, spans: Iterable[tuple[int, int]], mark: str) -> str:
        for s, e in sorted(spans, reverse=True):
            text = text[:s] + f" {mark} " + text[e:]
        return text

    def _find_model(self, text: str, matches: list[Match], ambiguous: dict[str, list[str]]) -> tuple[str, str | None]:
        found = self._find_alias(text, self._model_aliases)
        if found:
            # the last model named wins ("actually the 72b one"); other mentions are kept as runners-up
            rid, _s, _e, span = found[-1]
            others = sorted({f[0] for f in found if f[0] != rid})
            matches.append(Match("model", rid, span, 100.0, [(o, 100.0) for o in others]))
            return self._mask(text, [(f[1], f[2]) for f in found], M_MARK), rid
        # a family word and a size: "llama 70b", "qwen 7b", "deepseek 7b". Not an alias, so the generation is
        # missing: ambiguous even when the knowledge base holds one candidate (confirm rather than guess)
        for fam in self._family_size_rx.finditer(text):
            size = float(fam.group(2)) / (1000 if fam.group(3) == "m" else 1)
            if size <= 0:
                continue
            cands = [mid for mid in self._families[fam.group(1)] if self._size_fits(mid, size)]
            if cands:
                cands.sort(key=lambda c: self._model_order[c])
                ambiguous["model"] = cands
                score = 100.0 / len(cands)
                matches.append(Match("model", None, fam.group(), round(score, 1), [(c, round(score, 1)) for c in cands]))
                return self._mask(text, [fam.span()], M_MARK), None
        # a generation without a size: "qwen2.5", "llama 3.1"
        found = []
        for f in self._find_alias(text, self._generations):
            rest = text[f[2]:]
            if re.match(r"[\-_]?(?!(?:chat|instruct|base|it|model)(?![a-z]))[a-z]{2,}", rest):
                continue                  # 'qwen2.5-vl-7b' is another model, not a Qwen2.5 of unknown size
            size = re.match(r"[\s\-_]*(\d+(?:\.\d+)?)\s*([bm])(?![a-z0-9])", rest)
            if size and not any(self._size_fits(c, float(size.group(1)) / (1000 if size.group(2) == "m" else 1))
                                for c in f[0]):
                continue                  # 'llama 3.2 11b vision': a size this generation does not have
            found.append(f)
        if found:
            cands, s, e, span = found[-1]
            # the size before the generation: '70b llama2', 'full training 70B Llama2'
            size = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bm])[\s\-_]*$", text[max(0, s - 12):s])
            fits = [c for c in cands if size and self._size_fits(
                c, float(size.group(1)) / (1000 if size.group(2) == "m" else 1))]
            if len(fits) == 1:
                start = max(0, s - 12) + size.start()
                matches.append(Match("model", fits[0], text[start:e], 100.0))
                return self._mask(text, [(start, e)], M_MARK), fits[0]
            ambiguous["model"] = list(cands)
            score = round(100.0 / len(cands), 1)
            matches.append(Match("model", None, span, score, [(c, score) for c in cands]))
            return self._mask(text, [(s, e)], M_MARK), None
        return self._family_default(text, matches)

    @cached_property
    def _family_defaults(self) -> dict[str, str]:
        return {w: mid for w, mid in (self.lex.get("model_family_default") or {}).items() if mid in self.kb.models}

    def _family_default(self, text: str, matches: list[Match]) -> tuple[str, str | None]:
        """A family named alone ('bge embeddings') whose members cost the same: its default member, the match
        kept under the family word (the parser says it back). 'bge-small', 'bge_base', 'bge.' + digit are not it."""
        for word, mid in self._family_defaults.items():
            m = re.search(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9]|[\-_.][a-z0-9])", text, re.I)
            if m:
                matches.append(Match("model", mid, m.group(), 100.0))
                return self._mask(text, [m.span()], M_MARK), mid
        return text, None

    def family_named(self, matches: list[Match], model: str | None) -> str | None:
        """The family word a model was taken from, when it was named that way ('bge'), else None."""
        return next((m.text.lower() for m in matches if m.slot == "model" and m.value == model
                     and m.text.lower() in self._family_defaults), None)

    def _fuzzy_model(self, text: str, matches: list[Match], ambiguous: dict[str, list[str]]) -> tuple[str, str | None]:
        """Misspelt names that the token corrector could not fix ('deepseek-r1-distil-qwen-7b')."""
        tried = 0
        for m in re.finditer(r"(?<![a-z0-9])[a-z][a-z0-9.\-]*\d[a-z0-9.\-]*(?:\s+\d+(?:\.\d+)?[bm](?![a-z0-9]))?", text):
            token = m.group().strip(".-")
            if re.fullmatch(r"(?:fp|bf|int|nf|q|w|a|h|v|l|t|p|b|rtx|gtx|zero|stage|x|k|v|e|top|ue|c)\d.*|"
                            r"\d.*|[a-z]+\d+(?:gb?|bit|ms|k|x)|.*\d{3,}[a-z]?s?", token):
                continue
            key = norm_key(token)
            if len(key) < 5:
                continue
            tried += 1
            if tried > MAX_FUZZY_TOKENS:
                break
            found = process.extract(key, self._model_alias_keys, scorer=fuzz.ratio, limit=10,
                                    score_cutoff=MODEL_FUZZY_CUTOFF)
            if not found:
                continue
            best: dict[str, float] = {}
            for alias, score, _ in found:
                if not _same_shape(token, alias):
                    continue
                rid = self.kb.model_aliases[alias]
                best[rid] = max(best.get(rid, 0.0), score)
            if not best:
                continue
            ranked = sorted(best.items(), key=lambda kv: (-kv[1], self._model_order[kv[0]]))
            top_id, top = ranked[0]
            runners = [(r, round(s, 1)) for r, s in ranked[1:4]]
            masked = text[:m.start()] + f" {M_MARK} " + text[m.end():]
            if len(ranked) == 1 or top - ranked[1][1] >= MODEL_FUZZY_MARGIN:
                matches.append(Match("model", top_id, m.group(), round(top, 1), runners))
                return masked, top_id
            cands = [r for r, s in ranked if top - s < MODEL_FUZZY_MARGIN]
            ambiguous["model"] = sorted(cands, key=lambda c: self._model_order[c])
            matches.append(Match("model", None, m.group(), round(top, 1), [(r, round(s, 1)) for r, s in ranked[:4]]))
            return masked, None
        return text, None

    def _find_gpus(self, text: str, matches: list[Match], where: list[tuple[str, int, int]] | None = None
                   ) -> tuple[str, list[str]]:
        """The GPUs named, in order, and the text with them masked; `where` (when given) gets each as (id, start,
        end) in `text`, for what is said around them (hardware_limits.py)."""
        found = [self._memory_before(text, f) for f in self._find_alias(text, self._gpu_aliases, plural=True)]
        # "A100 40GB vs 80GB", "H100 PCIe 跟 SXM 版": a bare variant after a connector is the same family's sibling
        for rid, s, e, _span in list(found):
            fam = self._gpu_family_of.get(rid)
            if not fam:
                continue
            v = re.match(r"\s*(?:vs\.?|versus|or|还是|和|跟|与|/|,)\s*(\d{2,3}\s*g(?:b|ib)?|sxm\d?|pcie|nvl)(?![a-z0-9])",
                         text[e:])
            if v:
                sib = self.kb.gpu_aliases.get(norm_key(fam + v.group(1)))
                if sib:
                    vs, ve = e + v.start(1), e + v.end(1)
                    if not any(vs < fe and fs < ve for _, fs, fe, _ in found):
                        found.append((sib, vs, ve, text[vs:ve]))
        # "pcie and sxm h100": two variants before a bare family name are two members of it
        for rid, s, e, _span in list(found):
            if rid not in GPU_FAMILIES:
                continue
            v = re.search(r"(\d{2,3}\s*g(?:b|ib)?|sxm\d?|pcie|nvl)\s*(?:and|or|vs\.?|versus|和|跟|还是|与|/|,)\s*"
                          r"(\d{2,3}\s*g(?:b|ib)?|sxm\d?|pcie|nvl)\s*(?:版|版本)?\s*$", text[max(0, s - 30):s])
            sibs = [self.kb.gpu_aliases.get(norm_key(rid + v.group(i))) for i in (1, 2)] if v else []
            if sibs and all(sibs):
                base = max(0, s - 30)
                found.remove((rid, s, e, _span))
                found += [(sibs[0], base + v.start(1), base + v.end(1), v.group(1)),
                          (sibs[1], base + v.start(2), e, text[base + v.start(2):e])]
        found.sort(key=lambda f: f[1])
        if where is not None:
            where += [(rid, s, e) for rid, s, e, _span in found]
        out: list[str] = []
        for rid, _s, _e, span in found:
            if rid not in out:
                out.append(rid)
                matches.append(Match("gpu_model", rid, span, 100.0))
        # a family and one of its members named: keep the member
        out = [g for g in out if not (g in GPU_FAMILIES and any(x in GPU_FAMILIES[g] for x in out))]
        return self._mask(text, [(f[1], f[2]) for f in found], G_MARK), out

    def _memory_before(self, text: str, found: tuple[str, int, int, str]) -> tuple[str, int, int, str]:
        """'80GB A100', '两张32G的V100': a memory size before a family name picks the member with that memory, and
        the size becomes part of the name's span (so '4x 80GB A100' still reads as four cards)."""
        rid, s, e, span = found
        if rid not in GPU_FAMILIES:
            return found
        m = re.search(r"(?<![\w.])(\d{2,3})\s*g(?:b|ib)?\s*(?:的)?\s*$", text[max(0, s - 12):s])
        sib = self.kb.gpu_aliases.get(norm_key(f"{rid}{m.group(1)}gb")) if m else None
        if not sib:
            return found
        start = max(0, s - 12) + m.start()
        return sib, start, e, text[start:e]

    # a GPU's name of a line the knowledge base may not hold ('rtx 3060', 'gtx 1080 ti', 'rtx a4000', 'radeon rx 7900
    # xtx', 'tesla p40'), with the memory said next to it ('rtx 3060 12gb', '12g 的 3060' is not read: a bare number)
    _GPU_NAME = re.compile(
        r"(?<![a-z0-9])(?:(\d{1,3})\s*(?:gb|gib|g)\s*(?:的\s*)?)?((?:nvidia\s+)?(?:geforce\s+)?(?:rtx|gtx|titan|quadro|tesla|"
        r"radeon(?:\s+rx|\s+pro)?|instinct|arc)\s*-?\s*(?:pro\s*|a\s*)?[a-z]?\d{2,4}(?:\s*(?:ti|super|xtx|xt|ada))?|titan\s*(?:rtx|xp|x|v))"
        r"(?![a-z0-9])(?:\s*[(（]?\s*(\d{1,3})\s*(?:gb|gib|g)(?![a-z0-9])\s*[)）]?)?")

    def unknown_gpu(self, text: str) -> tuple[str, float | None, tuple[int, int]] | None:
        """A GPU named that the knowledge base does not have (known names are masked before): its name, the memory
        said with it (GB) or None, and its span."""
        m = self._GPU_NAME.search(text)
        if not m:
            return None
        mem = m.group(1) or m.group(3)
        return m.group(2), (float(mem) if mem and 2 <= float(mem) <= 512 else None), m.span()

    def _find_provider(self, text: str) -> str | None:
        found = self._find_alias(text, self._provider_aliases)
        return found[-1][0] if found else None

    def cloud_named(self, text: str) -> str | None:
        """A cloud named by a name of rules/lexicon.yaml `clouds` (the longest name first): its id, whether or not the
        knowledge base has a provider of that id (the caller tells covered from not covered)."""
        best: tuple[int, str] | None = None
        for cloud, names in self.clouds.items():
            hit = names.first(text)
            if hit and (best is None or len(hit) > best[0]):
                best = (len(hit), cloud)
        return best[1] if best else None

    @cached_property
    def _cloud_company_rx(self) -> list[tuple[str, re.Pattern]]:
        """rules/lexicon.yaml cloud_companies: (cloud id, pattern of its company after a hosting word or before 上)."""
        hosting = self.lex.get("cloud_hosting_words") or {}

        def alt(words: Iterable[str]) -> str:
            return "|".join(re.escape(normalize(str(w))) for w in sorted(words, key=len, reverse=True))
        before, after = alt(hosting.get("before") or []), alt(hosting.get("after") or [])
        makers = alt(self.lex.get("model_makers") or [])
        out: list[tuple[str, re.Pattern]] = []
        for cloud, names in (self.lex.get("cloud_companies") or {}).items():
            name = alt(names)
            out.append((cloud, re.compile(
                rf"(?:(?<![a-z])(?:{before})\s*(?:the\s+)?(?:{name})|(?<![a-z])(?:{name})\s*(?:{after}))"
                rf"(?![a-z])(?!\s*(?:'s|’s|的)?\s*(?:{makers}))")))
        return out

    def cloud_company(self, text: str) -> str | None:
        """A cloud named by its company after a hosting word ('on alibaba', '在阿里上', '用腾讯的卡'): its id; never the
        company alone ('Alibaba's Qwen', '阿里的千问' name a model's maker)."""
        if not self._company_hint.search(text):
            return None
        for cloud, rx in self._cloud_company_rx:
            m = rx.search(text)
            if m and not _SEARCHED.search(text[max(0, m.start() - 14):m.end() + 8]):
                return cloud
        return None

    @cached_property
    def _company_hint(self) -> re.Pattern:
        words = sorted({normalize(str(w)) for v in (self.lex.get("cloud_companies") or {}).values() for w in v},
                       key=len, reverse=True)
        return re.compile("|".join(re.escape(w) for w in words) or "(?!)")

    _NAME_LIKE = re.compile(r"(?<![\w.\-/])([a-z][a-z0-9]*(?:[\-_.][a-z0-9]+)+)(?![\w\-/])")

    @cached_property
    def _not_names(self) -> set[str]:
        """Hyphenated words of the lexicon's own phrases ('text-to-image', 'speech-to-text', 'sherpa-onnx') and its
        `not_model_heads` ('real-time', 'multi-gpu'): never a model's name."""
        out: set[str] = set()
        # the names of models of a modality not on file ('xtts-v2', 'fish-speech') are names, said back
        stack: list[Any] = [{k: v for k, v in self.lex.items() if k != "uncovered_modalities"}]
        while stack:
            x = stack.pop()
            if isinstance(x, dict):
                stack.extend(x.values())
            elif isinstance(x, list):
                stack.extend(x)
            elif isinstance(x, str) and not x.startswith("re:"):
                out.update(w for w in re.findall(r"[a-z0-9][a-z0-9.\-_]*", normalize(x)) if "-" in w or "_" in w)
        return out

    def unknown_kind_model(self, text: str) -> str | None:
        """A name-like word ('rt-detr-l', 'sensevoice-small', 'canary-qwen') in an image, audio or vision job with no
        model of the knowledge base named: a model not on file, said as such (never silently the kind's default)."""
        heads = set(self.lex.get("not_model_heads") or [])
        for m in self._NAME_LIKE.finditer(text):
            word = m.group(1)
            if word in self._not_names or word.split("-")[0].split("_")[0] in heads or _LOG_WORD.match(word) or re.search(r"\d+(?:gb|g|k|m|b)$|[\-_](?:style|like|based|sized|class|grade|level|ready|only|free|aware|"
                                         r"friendly|scale|time|wise|ish)$", word):
                continue
            return word
        return None

    def _unknown_model_word(self, text: str) -> str | None:
        m = re.search(r"(?<![a-z0-9])([a-z][a-z0-9.\-]*[a-z.\-]\d+(?:\.\d+)?[bm])(?![a-z0-9])", text)
        return m.group(1) if m else self._unknown_family_size(text)

    def _unknown_family_size(self, text: str) -> str | None:
        """A size of a family on file that is not on file itself ('bge-small', 'e5 base', 'whisper-tiny'): a model
        named, whose size is to be asked, never a question out of scope."""
        if not hasattr(self, "_rx_family_size"):
            fams = sorted({re.sub(r"\s+", "[ -]?", re.escape(m.family.lower()).replace("\\ ", " "))
                           for m in self.kb.models.values() if m.family}, key=len, reverse=True)
            self._rx_family_size = re.compile(r"(?<![a-z0-9])((?:" + "|".join(fams) + r")(?:[ _-]?v?\d+(?:\.\d+)?)?"
                                              r"[ _-](?:small|base|mini|tiny|medium|large|xl|xxl)(?:[ _-]v?\d+(?:\.\d+)?)?"
                                              r"(?:[ _-](?:en|zh))?)(?![a-z0-9])")
        m = self._rx_family_size.search(text)
        return m.group(1) if m else None

    def pick_candidate(self, parse: Parse, candidates: list[str]) -> str | None:
        """The candidate a reply to 'which one do you mean' names: a model among the candidates, a narrower set of
        candidates, a generation or version ('qwen2.5 的那个', 'llama 3.3', '3.1'), or a position ('the second')."""
        cands = [c for c in candidates if c in self.kb.models]
        if not cands:
            return None
        if parse.slots.model in cands:
            return parse.slots.model
        narrowed = [c for c in parse.ambiguous.get("model", []) if c in cands]
        if len(narrowed) == 1:
            return narrowed[0]
        text = parse.text
        best_len, best = 0, set()
        compact, pos = self._compact(text)
        for c in cands:
            for key in self._candidate_keys.get(c, []):
                start = compact.find(key)
                while start != -1:
                    s, e = pos[start], pos[start + len(key) - 1] + 1
                    if self._boundary_ok(text, s, e):
                        if len(key) > best_len:
                            best_len, best = len(key), {c}
                        elif len(key) == best_len:
                            best.add(c)
                        break
                    start = compact.find(key, start + 1)
        if len(best) == 1:
            return best.pop()
        for cue, index in self.ordinals:
            if cue.hit(text):
                i = index - 1 if index > 0 else len(cands) + index
                return cands[i] if 0 <= i < len(cands) else None
        return None


# an environment variable or log word ('nccl_debug', 'cuda_visible_devices', 'nccl_ib_hca'): never a model's name
_LOG_WORD = re.compile(r"(?:nccl|cuda|torch|pytorch|hf|omp|nvidia|ld|tf|xla|vllm|hccl|mkl|gloo|fi)_")


def _segments(name: str) -> tuple[list[str], list[str]]:
    parts = re.findall(r"[a-z]+|\d+(?:\.\d+)?", name.lower())
    return [p for p in parts if p[0].isalpha()], [p for p in parts if p[0].isdigit()]


def _same_shape(token: str, alias_key: str) -> bool:
    """A misspelling keeps the numbers and every word of the name: 'deepseek-r1-distil-qwen-7b' is
    DeepSeek-R1-Distill-Qwen-7B, but 'qwen2.5-vl-7b' (an extra word) and 'llama-3.1-7b' (another size) are not."""
    words, numbers = _segments(token)
    awords, anumbers = _segments(alias_key)
    if "".join(numbers).replace(".", "") != "".join(anumbers).replace(".", ""):
        return False
    return all(any(fuzz.ratio(w, a) >= 75 for a in awords) for w in words if len(w) >= 2)


# 'I searched on google', '在百度上搜了一下': a search engine, not a cloud
_SEARCHED = re.compile(r"(?<![a-z])(?:search(?:ed|ing)?|googled|googling|found|read|saw|looked|look it up|says?|said)(?![a-z])"
                       r"|搜|查|看到|看了|说")
_GLUE_BREAK = re.compile(r"[,，、;；]")
_COUNT_AFTER = re.compile(r"\s*(?:台|张|个|块|卡|节点|机|nodes?|machines?|servers?|boxes|cards?|gpus?|x(?![a-z]))")


def _glued_count(text: str, s: int, e: int) -> bool:
    """A name matched across a bracket or comma, or whose last piece is a count of something else: '910B（4 台' and
    '910B 4 台' are 910B cards and 4 machines, not a 910B4 (the spaced text is compacted before matching)."""
    if _GLUE_BREAK.search(text[s:e]):
        return True
    last = re.search(r"[\s(（\[【](\d+)$", text[s:e])
    return bool(last and _COUNT_AFTER.match(text, e))
