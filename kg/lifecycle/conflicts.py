"""Conflict scoring and contradiction detection between rules. Pure.

Score = base priority (100/60/30/10) + 10 × recurrence + recency (30 − days since last seen, ≥ 0) + area
weight (≤ 50), all from `rules/lifecycle.toml`. The higher score wins and only the winner is rendered; a tie
has no winner and waits for `kg conflicts resolve`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kg.core.text import stem, stopwords, words
from kg.lifecycle.policy import LifecyclePolicy


@dataclass(frozen=True)
class Score:
    total: int
    base: int
    recurrence: int
    recency: int
    area: int

    def parts(self) -> str:
        return f"base {self.base} + recurrence {self.recurrence} + recency {self.recency} + area {self.area}"


def score(priority: str | None, recurrence: int, days_since_seen: int, area: str | None,
          policy: LifecyclePolicy) -> Score:
    c = policy.conflicts
    base = c.base_priority.get(priority or "", c.base_priority[c.default_priority])
    rec = c.recurrence_weight * max(0, recurrence)
    recency = max(0, c.recency_max - max(0, days_since_seen))
    area_w = c.area_weight.get((area or "").lower(), 0)
    return Score(base + rec + recency + area_w, base, rec, recency, area_w)


def winner(a: str, score_a: int, b: str, score_b: int) -> str:
    """The id of the higher score, or '' for a tie."""
    if score_a == score_b:
        return ""
    return a if score_a > score_b else b


def _contains(tokens: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return n > 0 and any(tokens[i:i + n] == phrase for i in range(len(tokens) - n + 1))


def _content(tokens: Iterable[str], skip: set[str]) -> set[str]:
    return {t for t in tokens if t not in skip and (len(t) > 3 or (len(t) == 2 and not t.isascii()))}


def _topic(tokens: Iterable[str], policy: LifecyclePolicy) -> set[str]:
    """What a rule is about: its words stemmed, without stopwords (rules/words.toml) and without the direction
    words themselves (every word of `opposite_pairs` and `negations`), which say which way, not about what."""
    c = policy.conflicts
    direction = {w for pair in c.opposite_pairs for side in pair for w in words(side)} | \
                {w for n in c.negations for w in words(n)}
    common = stopwords()
    return {stem(t) for t in tokens if t not in direction and t not in common and not t.isdigit() and
            (len(t) > 1 or not t.isascii())}


def detect(a: str, b: str, policy: LifecyclePolicy) -> str | None:
    """Why two rules contradict, or None. Opposite pairs in either direction about one subject (at least
    `opposite_min_shared` topic words in common: "always use pnpm" and "never indent with tabs" go different
    ways about different things; or one rule says nothing but its side of the pair); or one negated rule that
    shares `min_shared_words` content words with an un-negated one."""
    c = policy.conflicts
    ta, tb = words(a), words(b)
    for x, y in c.opposite_pairs:
        px, py = words(x), words(y)
        if (_contains(ta, px) and _contains(tb, py) and not _contains(ta, py)) or \
           (_contains(ta, py) and _contains(tb, px) and not _contains(ta, px)):
            topic_a, topic_b = _topic(ta, policy), _topic(tb, policy)
            shared = topic_a & topic_b
            if len(shared) >= c.opposite_min_shared:
                return f"'{x}' vs '{y}' — opposite directions (shared: {', '.join(sorted(shared)[:5])})"
            if not topic_a or not topic_b:  # "Use tabs" vs "Indent with spaces": the pair is the subject itself
                return f"'{x}' vs '{y}' — opposite directions"
    negs = [words(n) for n in c.negations]
    neg_a = any(_contains(ta, n) for n in negs)
    neg_b = any(_contains(tb, n) for n in negs)
    if neg_a != neg_b:
        skip = {w for n in negs for w in n}
        shared = _content(ta, skip) & _content(tb, skip)
        if len(shared) >= c.min_shared_words:
            return (f"'{a[:50]}' vs '{b[:50]}' — direct contradiction (shared: "
                    f"{', '.join(sorted(shared)[:5])})")
    return None


@dataclass(frozen=True)
class DecisionView:
    a: str
    b: str
    winner: str
    override: bool


def suppressed(decisions: Iterable[DecisionView], active: set[str], on_tie: str) -> set[str]:
    """Ids not to render: the loser of each decision whose winner is still active, and both sides of an
    unresolved tie when the rules say hold_both."""
    out: set[str] = set()
    for d in decisions:
        if d.a not in active or d.b not in active:
            continue
        if d.winner:
            out.add(d.b if d.winner == d.a else d.a)
        elif on_tie == "hold_both":
            out.update((d.a, d.b))
    return out


def find_all(rules: list[tuple[str, str]], policy: LifecyclePolicy) -> list[tuple[str, str, str]]:
    """Every contradicting pair among `rules` ((id, text), ids sorted → pairs (a, b) with a < b), the same
    verdicts as `detect` without comparing every pair: only rules that share an opposite-pair phrase or a
    content word are compared."""
    c = policy.conflicts
    toks = {i: words(t) for i, t in rules}
    candidates: set[tuple[str, str]] = set()
    for x, y in c.opposite_pairs:
        px, py = words(x), words(y)
        has_x = [i for i, t in toks.items() if _contains(t, px)]
        has_y = [i for i, t in toks.items() if _contains(t, py)]
        candidates.update((min(a, b), max(a, b)) for a in has_x for b in has_y if a != b)
    negs = [words(n) for n in c.negations]
    skip = {w for n in negs for w in n}
    index: dict[str, list[str]] = {}
    for i, t in toks.items():
        for w in _content(t, skip):
            index.setdefault(w, []).append(i)
    for ids in index.values():
        if len(ids) > 1:
            negated = [i for i in ids if any(_contains(toks[i], n) for n in negs)]
            plain = [i for i in ids if i not in set(negated)]
            candidates.update((min(a, b), max(a, b)) for a in negated for b in plain)
    text = dict(rules)
    out = []
    for a, b in sorted(candidates):
        reason = detect(text[a], text[b], policy)
        if reason:
            out.append((a, b, reason))
    return out
