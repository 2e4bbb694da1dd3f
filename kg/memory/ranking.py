"""The pure parts of memory search's ranking: query terms, word coverage, recency, importance, the score."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from rapidfuzz import fuzz, process

from kg.core.text import CJK, clean, has_cjk, joined, joined_pattern, stem_prefix, stopwords, words
from kg.memory.rules import SearchRules


def query_terms(query: str) -> list[str]:
    """The query's content terms, in order, without repeats or stopwords; then its versions and ids, each as
    its pieces in a row ("2 4 1": `kg.core.text.joined`), which the text must hold as written."""
    seen: dict[str, None] = {}
    for w in words(query):
        if w not in stopwords() and (len(w) > 1 or has_cjk(w)):  # rules/words.toml: the one list
            seen.setdefault(w, None)
    for phrase in joined(query):
        seen.setdefault(phrase, None)
    return list(seen)


def is_phrase(term: str) -> bool:
    """A version or id term (`query_terms`): matched as written, never fuzzily (2.4.0 is not 2.4.1). Pure."""
    return " " in term


def coverage(terms: list[str], weights: dict[str, float], text_words: set[str], fuzzy_min: float) -> float:
    """Weighted share of the query terms present in the text, exactly or fuzzily. 0..1."""
    if not terms:
        return 0.0
    total = found = 0.0
    pool = [x for x in text_words if not is_phrase(x)]
    for t in terms:
        w = weights.get(t, 1.0)
        total += w
        if t in text_words or (len(t) == 1 and has_cjk(t) and any(t in x for x in text_words)):
            found += w  # a lone CJK character: in any bigram holding it (the index holds CJK as bigrams)
        elif pool and not has_cjk(t) and len(t) >= 4 and not is_phrase(t):
            match = process.extractOne(t, pool, scorer=fuzz.ratio, score_cutoff=fuzzy_min)
            if match is not None:
                found += w * match[1] / 100.0
    return found / total if total else 0.0


def recency(at: datetime | None, now: datetime, half_life_days: float) -> float:
    if at is None:
        return 0.0
    age = max(0.0, (now - at).total_seconds() / 86400.0)
    return 0.5 ** (age / half_life_days)


def snippet(text: str, terms: list[str], width: int) -> str:
    """`width` characters around the first query term found, with … where cut."""
    flat = clean(text, one_line=True)
    if len(flat) <= width:
        return flat
    low = flat.lower()
    positions = [(m.start() if (m := re.search(joined_pattern(t), low)) else -1) if is_phrase(t)
                 else low.find(stem_prefix(t)) for t in terms]
    positions = [p for p in positions if p >= 0]
    start = max(0, min(positions, default=0) - width // 3)
    start = min(start, len(flat) - width)
    out = flat[start : start + width]
    return ("…" if start > 0 else "") + out + ("…" if start + width < len(flat) else "")


def combine(parts: dict[str, float], rules: SearchRules, w_date: float = 0.0) -> float:
    """A hit's score, 0..1: its parts (each 0..1) weighed by rules/memory.toml. When the weights in play sum to
    more than 1 (a query naming a time adds `w_date`, 0.35, to the others' 0.97; a workspace's own weights) the
    sum is divided by theirs, so a score never passes 1 and the order is the same. Pure."""
    w_date = w_date if "date" in parts else 0.0  # (only a query naming a time gives a hit a date part)
    total = rules.w_text + rules.w_fuzzy + rules.w_graph + rules.w_recency + rules.w_importance + w_date
    score = (rules.w_text * parts.get("text", 0.0) + rules.w_fuzzy * parts.get("fuzzy", 0.0)
             + rules.w_graph * parts.get("graph", 0.0) + rules.w_recency * parts.get("recency", 0.0)
             + rules.w_importance * parts.get("importance", 0.0) + w_date * parts.get("date", 0.0))
    return score / total if total > 1.0 else score


def only_near_the_date(parts: dict[str, float]) -> bool:
    """A hit whose one reason is a time near, not in, the window the query names ("on December 1" and an entry
    of December 2 that matches nothing else): not a match, only a relaxation once the window itself is
    empty. Pure."""
    return parts.get("date", 0.0) < 1.0 and not any(parts.get(k, 0.0) for k in ("text", "fuzzy", "graph"))


def importance(row: dict[str, Any], rules: SearchRules) -> float:
    kind = rules.kind_weight.get(row.get("kind") or "event", 0.5)
    prio = rules.priority_weight.get(row.get("priority") or "", 0.5)
    return 1.0 if row.get("pinned") else (kind + prio) / 2


def session_share(sessions: list[str | None], session: str | None, own: bool) -> float:
    """The share of the best hits held in `session` (not counting the node itself). Pure."""
    if not session or not sessions:
        return 0.0
    n = sum(1 for s in sessions if s == session) - (1 if own else 0)
    return max(0, n) / len(sessions)


_TOKEN = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def inner_words(texts: Iterable[str]) -> set[str]:
    """The words inside the camel-case names of these texts, lower-cased (`useFetchHook` → use, fetch, hook;
    `parseJSONConfig` → parse, json, config): the index holds each name as one word. Pure."""
    out: set[str] = set()
    for text in texts:
        for token in _TOKEN.findall(text or ""):
            parts = _CAMEL.findall(token) if not token.islower() else []
            if len(parts) > 1:
                out.update(p.lower() for p in parts)
    return out


def cjk_spans(query: str, names: list[str]) -> list[str]:
    """`names` (words no memory holds, in query order) with the CJK character pairs among them named as the user
    wrote them: the pairs of one run of characters that follow each other as one span of it ("火箭发射" gives 火箭,
    箭发, 发射: named "火箭发射", not three pairs of which 箭发 is no word), each span once, where its first pair was;
    a span's edge pair that reaches into a held word is left out ("依赖发射" with 依赖 held names "发射"). Pure."""
    pairs = {n for n in names if len(n) == 2 and has_cjk(n)}
    if not pairs:
        return names
    span_of: dict[str, str] = {}
    for run in re.findall(rf"[{CJK}]+", unicodedata.normalize("NFKC", query).lower()):
        k = 0
        while k < len(run) - 1:
            if run[k:k + 2] not in pairs:
                k += 1
                continue
            end = k
            while end + 1 < len(run) - 1 and run[end + 1:end + 3] in pairs:
                end += 1
            first, last = k, end  # a pair across a held word's edge is no part of the span ("依赖发射": 发射)
            if last > first and first > 0:
                first += 1
            if last > first and last + 2 < len(run):
                last -= 1
            span = run[first:last + 2]
            for i in range(k, end + 1):
                span_of.setdefault(run[i:i + 2], span)
            k = end + 1
    out: dict[str, None] = {}
    for n in names:
        out.setdefault(span_of.get(n, n), None)
    return list(out)


def unmatched(terms: list[str], absent: list[str]) -> list[str]:
    """The query's words no memory holds, as a person would name them: a CJK bigram that only spans two words
    ("编辑失败" gives 辑失) is not one when both its characters are in bigrams that are found. Empty when every
    word is absent (nothing matched: said otherwise). Pure."""
    found = [t for t in terms if t not in absent]
    if not found:
        return []
    return [t for t in absent if not (has_cjk(t) and all(any(c in f for f in found) for c in t))]
