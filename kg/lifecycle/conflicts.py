"""Conflict scoring and contradiction detection between rules. Pure.

Score = base priority (100/60/30/10) + 10 × recurrence + recency (30 − days since last seen, ≥ 0) + area
weight (≤ 50), all from `rules/lifecycle.toml`. The higher score wins and only the winner is rendered; a tie
has no winner and waits for `kg conflicts resolve`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from kg.core.text import cjk_stop_chars, has_cjk, stem, stopwords, words
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


@lru_cache(maxsize=16384)
def _words(text: str) -> tuple[str, ...]:
    """`words`, kept (as a tuple: every token list here is one, `_contains` compares slices): `detect` tokenised the
    policy's phrases and both texts again for every pair it compared, 35k calls for 400 pairs, the most of a read's
    conflict check (`kg inject`, `kg status`: kg/lifecycle/settling.py `kept_out`)."""
    return tuple(words(text))


def _contains(tokens: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return n > 0 and any(tokens[i:i + n] == phrase for i in range(len(tokens) - n + 1))


@lru_cache(maxsize=16384)
def _holds(text: str, phrases: tuple[str, ...]) -> frozenset[str]:
    """Which of `phrases` `text` holds (`_contains`): once per text, not once per opposite pair and rule compared
    (the Chinese groups make a phrase a side of many pairs)."""
    tokens = _words(text)
    return frozenset(p for p in phrases if _contains(tokens, _words(p)))


def _sides(policy: LifecyclePolicy) -> tuple[str, ...]:
    """Every side of every opposite pair, each once, in order."""
    return _sides_of(policy.conflicts.opposite_pairs)


@lru_cache(maxsize=64)
def _sides_of(pairs: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(x for pair in pairs for x in pair))


def _content(text: str, policy: LifecyclePolicy) -> set[str]:
    """The words a negated rule and another must share. Not stopwords: "Never use sudo in this repo" contradicted
    "Always use pnpm in this repo" on "repo, this". Not the negations, nor in CJK text its function words
    (`_cjk_plain`: 以后, 都用). An ASCII word past three letters, or in a CJK rule from `cjk_latin_min_chars` (a
    name there: tab, npm); a CJK character pair."""
    c = policy.conflicts
    return set(_content_of(text, c.negations, c.cjk_function_words, c.cjk_latin_min_chars))


@lru_cache(maxsize=16384)
def _content_of(text: str, negations: tuple[str, ...], function_words: tuple[str, ...],
                latin_min: int) -> frozenset[str]:
    skip = {w for n in negations for w in _words(n)}
    latin = latin_min if has_cjk(text) else 4
    common = stopwords()
    return frozenset(t for t in _words(_cjk_plain(text, negations, function_words))
                     if t not in skip and t not in common and
                     ((not has_cjk(t) and len(t) >= latin) or (len(t) == 2 and has_cjk(t) and not _grammar(t))))


@lru_cache(maxsize=16384)
def _cjk_plain(text: str, *phrases: tuple[str, ...]) -> str:
    """`text` with each CJK one of `phrases` (lists of words) taken out, the longest first, before the text is cut
    into character pairs: no pair across one is left (以后提交 gives 提交, not 后提)."""
    if not has_cjk(text):
        return text
    for phrase in sorted({p for group in phrases for p in group if has_cjk(p)}, key=len, reverse=True):
        text = text.replace(phrase, " ")
    return text


def _grammar(pair: str) -> bool:
    """A CJK character pair holding a function character (rules/words.toml `cjk_stop_chars`: 都用, 要跑)."""
    stop = cjk_stop_chars()
    return any(ch in stop for ch in pair)


def _topic(text: str, policy: LifecyclePolicy) -> set[str]:
    """What a rule is about: its words stemmed, without stopwords (rules/words.toml) and without the direction
    words themselves (every word of `opposite_pairs` and `negations`), which say which way, not about what.
    In CJK text a direction word is taken out before the text is cut into character pairs: "要详细" read as
    要详 + 详细 kept 要详, a pair across the direction word, as its topic, so "要详细" and "要简洁" had a topic
    each and none in common."""
    c = policy.conflicts
    return set(_topic_of(text, _sides(policy) + c.negations, c.cjk_function_words))


@lru_cache(maxsize=16384)
def _topic_of(text: str, phrases: tuple[str, ...], function_words: tuple[str, ...]) -> frozenset[str]:
    text = _cjk_plain(text, phrases, function_words)
    direction = {w for p in phrases for w in _words(p)}
    common = stopwords()
    return frozenset(stem(t) for t in _words(text) if t not in direction and t not in common and not t.isdigit()
                     and (len(t) > 1 or not t.isascii()) and not (len(t) == 2 and not t.isascii() and _grammar(t)))


def _one_subject(x: str, y: str, a: str, b: str, policy: LifecyclePolicy) -> str | None:
    """Whether two rules on opposite sides of (x, y) are about one thing, and the topic words they share. They
    are when the pair names its own subject (`own_subject_pairs`: verbose/concise is the answers' length
    whatever else the rules say); when they share `opposite_min_shared` topic words not on `topic_stoplist`
    ("run", "commit", "repo" are in half the rules: "always run pytest" and "never run migrations" are about
    different things); when what they share is all one of them is about ("Always commit" vs "Never commit the
    .env file"); or when one says nothing but its side of the pair ("Use tabs" vs "Indent with spaces")."""
    c = policy.conflicts
    topic_a, topic_b = _topic(a, policy), _topic(b, policy)
    shared = topic_a & topic_b
    if ((x, y) in c.own_subject_pairs or len(shared - c.topic_stoplist) >= c.opposite_min_shared or
            (shared and shared in (topic_a, topic_b)) or not topic_a or not topic_b):
        return ", ".join(sorted(shared)[:5])
    return None


def _negated_side_acts(x: str, y: str, a: str, b: str, policy: LifecyclePolicy) -> bool:
    """For a pair one side of which is a negation (always / never), whether the other rule does what the "never"
    rule forbids: "Always check the config file" and "Never edit the config file by hand" are about one file,
    but checking it is no editing (`_does_what_is_forbidden`)."""
    negs = policy.conflicts.negations
    if x not in negs and y not in negs:
        return True
    neg = x if x in negs else y
    negated, other = (a, b) if _contains(_words(a), _words(neg)) else (b, a)
    return _does_what_is_forbidden(negated, other, policy)


def detect(a: str, b: str, policy: LifecyclePolicy) -> str | None:
    """Why two rules contradict, or None. Opposite pairs in either direction about one subject (`_one_subject`:
    "always use pnpm" and "never indent with tabs" go different ways about different things); or one negated
    rule that shares `min_shared_words` content words with an un-negated one. Either way a rule that forbids
    (never, don't, 不要) contradicts only a rule that does what it forbids (`_does_what_is_forbidden`)."""
    c = policy.conflicts
    sides = _sides(policy)
    ha, hb = _holds(a, sides), _holds(b, sides)
    for x, y in c.opposite_pairs:
        if (x in ha and y in hb and y not in ha) or (y in ha and x in hb and x not in ha):
            shared = _one_subject(x, y, a, b, policy)
            if shared is not None and _negated_side_acts(x, y, a, b, policy):
                return f"'{x}' vs '{y}' — opposite directions" + (f" (shared: {shared})" if shared else "")
    neg_a, neg_b = bool(_holds(a, c.negations)), bool(_holds(b, c.negations))
    if neg_a != neg_b:
        content_a, content_b = _content(a, policy), _content(b, policy)
        shared = content_a & content_b
        # generic words alone ("commit, file": "Always commit the lock file" vs "Never commit the .env file") are
        # no subject, unless they are all both rules say ("Don't commit to the repo" vs "Commit to the repo")
        specific = {w for w in shared if stem(w) not in c.topic_stoplist}
        negated, other = (a, b) if neg_a else (b, a)
        if (len(shared) >= c.min_shared_words and (specific or shared == content_a == content_b)
                and _does_what_is_forbidden(negated, other, policy)):
            return (f"'{a[:50]}' vs '{b[:50]}' — direct contradiction (shared: "
                    f"{', '.join(sorted(shared)[:5])})")
    return None


def _forbidden(text: str, policy: LifecyclePolicy) -> set[str]:
    """The words a negated rule's negations apply to, stemmed: the first word after each past `negation_skip`
    (and the word after it when that one is an adverb, `negation_adverb_suffix`: "Don't manually edit"); after a
    CJK negation the character pairs of the next `negation_cjk_window` characters ("不要在生产环境" → 在生, 生产,
    产环; "不要用 sudo" → 用): the verb there is often behind a preposition or an adverb (在, 直接, 手动)."""
    c = policy.conflicts
    out: set[str] = set()
    low = text.lower()
    for neg in c.negations:
        if has_cjk(neg):
            at = low.find(neg)
            while at >= 0:
                rest = low[at + len(neg):].lstrip()
                if rest and has_cjk(rest[0]):
                    out.update(_cjk_pairs(rest[:c.negation_cjk_window]))
                    past = next((rest[len(s):].lstrip() for s in c.negation_cjk_skip if rest.startswith(s)), "")
                    if past and not has_cjk(past[0]):  # 不要用 npm, 禁止使用 moment: the name it forbids
                        out.update(stem(w) for w in _words(past)[:1])
                elif rest:
                    out.update(stem(w) for w in _words(rest)[:1])
                at = low.find(neg, at + 1)
            continue
        n, toks = _words(neg), _words(low)
        for i in range(len(toks) - len(n) + 1):
            if toks[i:i + len(n)] == n:
                after = [t for t in toks[i + len(n):] if t not in c.negation_skip]
                take = 2 if after and c.negation_adverb_suffix and after[0].endswith(c.negation_adverb_suffix) else 1
                out.update(w for t in after[:take] for w in _forms(t))
    return out


def _cjk_pairs(text: str) -> set[str]:
    """The CJK character pairs of `text`'s CJK runs, and a run of one character itself."""
    out: set[str] = set()
    run = ""
    for ch in text + " ":
        if has_cjk(ch):
            run += ch
            continue
        if len(run) == 1:
            out.add(run)
        out.update(run[k:k + 2] for k in range(len(run) - 1))
        run = ""
    return out


def _forms(word: str) -> set[str]:
    """A word's stem, and for an -ing form the verb's ("Stop using print" forbids what "Use print" does: the
    stemmer keeps "using")."""
    out = {stem(word)}
    if word.endswith("ing") and len(word) > 4:
        out.update((word[:-3], word[:-3] + "e", word[:-4] if word[-4] == word[-5] else word[:-3]))
    return out


def _does_what_is_forbidden(negated: str, other: str, policy: LifecyclePolicy) -> bool:
    """Whether `other` does what `negated` forbids: a word a negation applies to is one of its words (stemmed), or,
    CJK, in its text."""
    forbidden = _forbidden(negated, policy)
    stems = {stem(t) for t in _words(other.lower())}
    return any(w in stems or (has_cjk(w) and w in other) for w in forbidden)


COMPATIBLE = "compatible"  # a decision's status once a person said its two rules do not conflict


@dataclass(frozen=True)
class DecisionView:
    a: str
    b: str
    winner: str
    override: bool


def suppressed(decisions: Iterable[DecisionView], active: set[str], on_tie: str) -> set[str]:
    """Ids not to render: the loser of each decision whose winner is still active, and both sides of an
    unresolved tie when the rules say hold_both. A person's override with no winner (`kg conflicts resolve
    --compatible`: the two do not conflict) keeps both."""
    out: set[str] = set()
    for d in decisions:
        if d.a not in active or d.b not in active or (d.override and not d.winner):
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
    text = dict(rules)
    candidates: set[tuple[str, str]] = set()
    sides = _sides(policy)
    having: dict[str, list[str]] = {p: [] for p in sides}  # each phrase once: a group makes it a side of many pairs
    for i, t in rules:
        for p in _holds(t, sides):
            having[p].append(i)
    for x, y in c.opposite_pairs:
        candidates.update((min(a, b), max(a, b)) for a in having[x] for b in having[y] if a != b)
    index: dict[str, list[str]] = {}
    for i, t in rules:
        for w in _content(t, policy):
            index.setdefault(w, []).append(i)
    for ids in index.values():
        if len(ids) > 1:
            negated = [i for i in ids if _holds(text[i], c.negations)]
            plain = [i for i in ids if i not in set(negated)]
            candidates.update((min(a, b), max(a, b)) for a in negated for b in plain)
    out = []
    for a, b in sorted(candidates):
        reason = detect(text[a], text[b], policy)
        if reason:
            out.append((a, b, reason))
    return out
