"""What a link means, decided without the graph: the pure half of auto-linking (`kg.graph.linking` is the
I/O half, and the module callers use; it re-exports these names).

Keywords of a text (`terms`), how similar two texts are (`similarity`: rarity-weighted keyword overlap blended
with a rapidfuzz ratio), which edge a pair gets and which way it points (`decide_link`, from the `[[typing]]`
rules), and whether an event repeats an earlier one (`duplicate`). Whether two texts contradict is
`kg.graph.stances`.
Everything it needs comes from `rules/linking.toml` as a frozen `LinkRules`.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rapidfuzz import fuzz

from kg.core.policy import RuleReader, packaged
from kg.core.text import has_cjk, joined, slugify, stem, words
from kg.redaction.spans import MARKERS
from kg.store.schema import EDGE_TYPES

SOURCE = "rules/linking.toml"
DOCS_KEY = "#docs"  # the Term row that counts indexed nodes (a term never starts with '#')
CUE_LISTS = ("error", "support", "contradiction")

# -- rules --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TypingRule:
    type: str
    from_: frozenset[str]
    to: frozenset[str]
    cue: str = ""
    cue_in: str = "either"


@dataclass(frozen=True)
class LinkRules:
    query_terms: int
    max_df_share: float
    common_floor: int
    fallback_terms: int
    top: int
    link_min_shared: int
    link_min_score: float
    max_links: int
    dedup_min_score: float
    dedup_min_shared: int
    key_prefix: str
    dice_weight: float
    stopwords: frozenset[str]
    cjk_stop_chars: frozenset[str]
    cues: Mapping[str, tuple[str, ...]]
    stance_cues: tuple[str, ...]
    negation_cues: tuple[str, ...]
    descriptive_types: frozenset[str]
    bare_cues: tuple[str, ...]
    scope_breaks: frozenset[str]
    scope_terms: int
    min_cover: float
    stance_kinds: frozenset[str]
    typing: tuple[TypingRule, ...]
    against_cues: tuple[str, ...] = ()
    order_before: tuple[str, ...] = ()  # "before", "until", "then": what follows comes later
    order_after: tuple[str, ...] = ()  # "after": what follows comes first
    order_refusals: tuple[str, ...] = ()  # cues that refuse an order when an ordering word ends their scope
    location: re.Pattern[str] | None = None  # a path: compared by its file name only (`link_terms`)
    dedup_distinct_ids: bool = False  # a differing version or id is a different fact (never a near-duplicate)
    dedup_first_only: bool = False  # a pattern is joined only by a near-duplicate of its first event
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = SOURCE,
                     words_data: Mapping[str, Any] | None = None) -> LinkRules:
        """`data`: rules/linking.toml; `words_data`: rules/words.toml, the one stopword list (packaged if None)."""
        r = RuleReader(data, source)
        w = RuleReader(packaged("words") if words_data is None else words_data, "rules/words.toml")

        def strings(key: str, reader: RuleReader = r) -> tuple[str, ...]:
            return tuple(_norm(v) for v in reader.strings(key, items="non-blank"))

        typing_rules = []
        for rule in r.tables("typing", empty=False):
            rule.known(("type", "from", "to", "cue", "cue_in"))
            ends = [frozenset(v.strip().lower() for v in rule.strings(end, empty=False)) for end in ("from", "to")]
            typing_rules.append(TypingRule(rule.string("type", tuple(t for t in EDGE_TYPES if t != "derived_from")),
                                           *ends, rule.string("cue", ("", *CUE_LISTS), default=""),
                                           rule.string("cue_in", ("from", "to", "either"), default="either")))
        key_prefix = r.string("dedup.key_prefix")
        if not re.fullmatch(r"[a-z0-9_-]+", key_prefix):
            raise r.fail("dedup.key_prefix", f"must be lower-case letters, digits, '-' or '_', not {key_prefix!r}")
        return cls(
            query_terms=r.whole("candidates.query_terms", 1, 32),
            max_df_share=r.number("candidates.max_df_share", 0.0, 1.0),
            common_floor=r.whole("candidates.common_floor", 0, 10**9),
            fallback_terms=r.whole("candidates.fallback_terms", 0, 32),
            top=r.whole("candidates.top", 1, 1000),
            link_min_shared=r.whole("link.min_shared", 1, 100),
            link_min_score=r.number("link.min_score", 0.0, 1.0),
            max_links=r.whole("link.max_links", 0, 1000),
            dedup_min_score=r.number("dedup.min_score", 0.0, 1.0),
            dedup_min_shared=r.whole("dedup.min_shared", 1, 100),
            key_prefix=key_prefix,
            dice_weight=r.number("score.dice_weight", 0.0, 1.0),
            stopwords=frozenset(strings("stopwords", w)),
            cjk_stop_chars=frozenset(strings("cjk_stop_chars", w)),
            cues={name: strings(f"cues.{name}") for name in CUE_LISTS},
            stance_cues=strings("contradiction.stance_cues"),
            negation_cues=strings("contradiction.negation_cues"),
            descriptive_types=frozenset(strings("contradiction.descriptive_types")),
            bare_cues=strings("contradiction.bare_cues"),
            scope_breaks=frozenset(strings("contradiction.scope_breaks")),
            scope_terms=r.whole("contradiction.scope_terms", 1, 50),
            min_cover=r.number("contradiction.min_cover", 0.0, 1.0),
            stance_kinds=frozenset(strings("contradiction.stance_kinds")),
            typing=tuple(typing_rules),
            against_cues=tuple(_norm(v) for v in r.strings("contradiction.against_cues", (), items="non-blank")),
            location=_location(r),
            dedup_distinct_ids=r.flag("dedup.distinct_ids", False),
            dedup_first_only=r.flag("dedup.first_only", False),
            order_before=tuple(_norm(v) for v in r.strings("contradiction.order_before", (), items="non-blank")),
            order_after=tuple(_norm(v) for v in r.strings("contradiction.order_after", (), items="non-blank")),
            order_refusals=tuple(_norm(v) for v in r.strings("contradiction.order_refusals", (),
                                                               items="non-blank")),
        )


def _location(r: RuleReader) -> re.Pattern[str] | None:
    text = r.get("link.location")
    if text is None:
        return None
    if not isinstance(text, str):
        raise r.fail("link.location", "must be a regex (a string)")
    try:
        return re.compile(text)
    except re.error as exc:
        raise r.fail("link.location", f"is not a valid regex ({exc})") from None


def rules_of(ruleset: Any) -> LinkRules:
    """The linking rules of a workspace's RuleSet (loaded once per RuleSet)."""
    cache = ruleset.__dict__
    if "_linking_rules" not in cache:
        cache["_linking_rules"] = LinkRules.from_mapping(ruleset.raw("linking"), words_data=ruleset.raw("words"))
    return cache["_linking_rules"]


def default_rules() -> LinkRules:
    return LinkRules.from_mapping(packaged("linking"))


# -- text ---------------------------------------------------------------------------------------------------

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'"})


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).lower().strip()


def _memo(rules: LinkRules, key: Any, make: Any) -> Any:
    """Texts are compared with many candidates: keep their keywords and stances for a while."""
    found = rules.memo.get(key)
    if found is None:
        if len(rules.memo) > 20000:
            rules.memo.clear()
        found = rules.memo[key] = make()
    return found


def terms(text: str, rules: LinkRules) -> list[str]:
    """The keywords of a text, in order: stemmed Latin words and CJK bigrams, without stopwords."""
    return _memo(rules, ("terms", text), lambda: _terms(text, rules))


def link_terms(text: str, rules: LinkRules) -> list[str]:
    """The keywords two texts are compared on: `terms`, with a path counted by its file name only (its folders
    say where something happened, not what: two failures in one project share every folder of it)."""
    if rules.location is None:
        return terms(text, rules)
    return _memo(rules, ("link_terms", text),
                 lambda: terms(rules.location.sub(lambda m: " " + re.split(r"[/\\]", m.group(0).rstrip("/\\"))[-1],
                                                  text), rules))


def _terms(text: str, rules: LinkRules) -> list[str]:
    out = []
    # a redaction marker says a secret was here, not what the text is about: "[REDACTED:password_assignment]" in
    # two unrelated corrections made them one pattern (fix.assignment-password-redact) and linked them (QA qa10 F12)
    if "[REDACTED:" in text:
        text = MARKERS.sub(" ", text)
    for w in words(text):
        if has_cjk(w):
            if any(ch in rules.cjk_stop_chars for ch in w):
                continue
            out.append(w)
        elif w in rules.stopwords or len(w) < 2 or w.isdigit():
            continue
        else:
            out.append(stem(w))
    return out


def _cue_regex(cue: str) -> re.Pattern[str]:
    parts = [re.escape(p) for p in cue.split()]
    body = r"\s+".join(parts)
    if has_cjk(cue):
        return re.compile(body)
    return re.compile(rf"(?<![\w']){body}(?![\w'])")


_REGEX_CACHE: dict[str, re.Pattern[str]] = {}


def _find(cue: str, text: str, start: int = 0) -> re.Match[str] | None:
    pattern = _REGEX_CACHE.get(cue)
    if pattern is None:
        pattern = _REGEX_CACHE[cue] = _cue_regex(cue)
    return pattern.search(text, start)


def cues_in(text: str, cue_list: Iterable[str]) -> list[str]:
    """Which cues of a list a text contains. Single Latin words match any inflection."""
    normal = _norm(text)
    stems = {stem(w) for w in words(normal)}
    found = []
    for cue in cue_list:
        if " " not in cue and cue.isalpha() and cue.isascii():
            if stem(cue) in stems or cue in stems:
                found.append(cue)
        elif _find(cue, normal):
            found.append(cue)
    return found


@dataclass(frozen=True)
class Doc:
    """A node as the decisions see it."""

    id: str
    kind: str
    text: str
    entry_type: str | None = None
    category: str | None = None
    area: str | None = None
    created_at: datetime | None = None
    pattern_key: str | None = None  # the pattern an event belongs to (its key names it)

    @property
    def roles(self) -> frozenset[str]:
        return frozenset(r for r in (self.kind, self.entry_type, self.category, "*") if r)


def with_pattern(doc: Doc, key: str) -> Doc:
    return Doc(doc.id, doc.kind, doc.text, doc.entry_type, doc.category, doc.area, doc.created_at, key)


# -- similarity ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Similarity:
    score: float
    dice: float
    fuzzy: float
    shared: tuple[str, ...]


def idf(df: int, n_docs: int) -> float:
    """Weight of a term found in `df` of `n_docs` nodes: rare terms count more."""
    return 1.0 + math.log((n_docs + 1) / (df + 1)) if n_docs > 0 else 1.0


def similarity(a: Sequence[str], b: Sequence[str], rules: LinkRules,
               weights: Mapping[str, float] | None = None) -> Similarity:
    """How alike two keyword lists are, 0..1. Pairs sharing fewer keywords than any rule asks for are not
    scored (score 0)."""
    sa, sb = set(a), set(b)
    shared = sa & sb
    if not sa or not sb or len(shared) < min(rules.link_min_shared, rules.dedup_min_shared):
        return Similarity(0.0, 0.0, 0.0, tuple(sorted(shared)))

    def w(t: str) -> float:
        return weights.get(t, 1.0) if weights else 1.0

    dice = 2 * sum(w(t) for t in shared) / (sum(w(t) for t in sa) + sum(w(t) for t in sb))
    fuzzy = fuzz.token_sort_ratio(" ".join(sorted(sa)), " ".join(sorted(sb))) / 100.0
    score = rules.dice_weight * dice + (1 - rules.dice_weight) * fuzzy
    ranked = sorted(shared, key=lambda t: (-w(t), t))
    return Similarity(round(score, 4), round(dice, 4), round(fuzzy, 4), tuple(ranked))


# -- decisions ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinkDecision:
    type: str
    src: str
    dst: str
    score: float
    reason: str
    other: str  # the end that is not the node being linked


def _rule_matches(rule: TypingRule, src: Doc, dst: Doc, rules: LinkRules) -> str | None:
    """'' or a cue description when the rule applies to src → dst, None when it does not."""
    if not (rule.from_ & src.roles and rule.to & dst.roles):
        return None
    if not rule.cue:
        return ""
    if rule.cue == "contradiction":
        from kg.graph.stances import contradiction

        return contradiction(src, dst, rules)
    ends = {"from": (src,), "to": (dst,), "either": (src, dst)}[rule.cue_in]
    for doc in ends:
        found = cues_in(doc.text, rules.cues[rule.cue])
        if found:
            return f"{rule.cue} cue '{found[0]}' in {doc.id}"
    return None


def decide_link(new: Doc, old: Doc, rules: LinkRules, weights: Mapping[str, float] | None = None, *,
                sim: Similarity | None = None) -> LinkDecision | None:
    """The auto edge between a new node and an existing one, or None when they are not related enough."""
    if new.id == old.id:
        return None
    sim = sim or similarity(link_terms(new.text, rules), link_terms(old.text, rules), rules, weights)
    if len(sim.shared) < rules.link_min_shared or sim.score < rules.link_min_score:
        return None
    for rule in rules.typing:
        for src, dst in ((new, old), (old, new)):
            why = _rule_matches(rule, src, dst, rules)
            if why is None:
                continue
            parts = [f"{rule.type}: {_role(src)} → {_role(dst)}"]
            if why:
                parts.append(why)
            parts.append(f"shared: {', '.join(sim.shared[:5])}")
            parts.append(f"score {sim.score:.2f}")
            return LinkDecision(rule.type, src.id, dst.id, sim.score, "; ".join(parts), old.id)
    return None


def _role(doc: Doc) -> str:
    return f"{doc.entry_type} entry" if doc.kind == "event" and doc.entry_type else doc.kind


@dataclass(frozen=True)
class Duplicate:
    score: float
    reason: str
    shared: tuple[str, ...] = ()

    def seen_from(self, partner: str) -> str:
        """The same pair's reason for the other end: the earlier event is a near-duplicate of `partner` (the new
        one), on the same words. Each member of a new pattern names its own partner (QA3 #2: every member took the
        new event's reason, so the first said it was a near-duplicate of itself, on words it did not hold)."""
        return _dup_reason(partner, self.shared, self.score)


def _dup_reason(partner: str, shared: tuple[str, ...], score: float) -> str:
    return f"near-duplicate of {partner}: shared {', '.join(shared[:5])}; score {score:.2f}"


def duplicate(new: Doc, old: Doc, rules: LinkRules, weights: Mapping[str, float] | None = None, *,
              sim: Similarity | None = None) -> Duplicate | None:
    """Whether a logged event repeats an earlier one: same entry type and area, similar enough, and not
    opposed; not when a fact's entry names another version or id than the earlier one (`distinct_ids`).
    Returns why, or None."""
    if new.id == old.id or new.kind != "event" or old.kind != "event":
        return None
    if not new.entry_type or new.entry_type != old.entry_type or (new.area or "") != (old.area or ""):
        return None
    if rules.dedup_distinct_ids and new.entry_type not in rules.descriptive_types and distinct_ids(new.text, old.text):
        return None  # (an error's ids, a branch or a line, say where the same failure struck this time)
    sim = sim or similarity(link_terms(new.text, rules), link_terms(old.text, rules), rules, weights)
    if len(sim.shared) < rules.dedup_min_shared or sim.score < rules.dedup_min_score:
        return None
    from kg.graph.stances import opposed

    if opposed(new, old, rules):
        return None
    return Duplicate(sim.score, _dup_reason(old.id, tuple(sim.shared), sim.score), tuple(sim.shared))


_CLOCK = re.compile(r"\d+(?:[:-]\d+)+")  # a time or a date (08:00, 2023-10-25): when, not which


def ids_of(text: str) -> frozenset[str]:
    """The versions and ids a text names (`kg.core.text.joined`: release-1.2, v2.4.1 as 2.4.1, c0-D1:3), without
    times and dates. Pure."""
    return frozenset(p for p, spelled in joined(text).items() if not _CLOCK.fullmatch(spelled.lstrip("v")))


def distinct_ids(a: str, b: str) -> bool:
    """Whether two texts name different versions or ids, each naming one ("release-1.2 broke login" and
    "release-1.3 fixed login"): a different fact, whatever words they share (QA4 #10). Pure."""
    ia, ib = ids_of(a), ids_of(b)
    return bool(ia) and bool(ib) and ia != ib


def derived_key(rules: LinkRules, entry_type: str, area: str | None, text: str) -> str:
    """A stable pattern key for events that never named one: auto.<area>.<hash of the first text>."""
    area_slug = slugify(area or "general", cjk=False, limit=None, fallback="general")
    digest = hashlib.sha1(f"{entry_type}\n{_norm(text)}".encode()).hexdigest()[:8]
    return f"{rules.key_prefix}.{area_slug}.{digest}"


def pick_query_terms(keywords: Iterable[str], raw_of: Mapping[str, str], df: Mapping[str, int], n_docs: int,
                     rules: LinkRules) -> list[str]:
    """The rarest few keywords to query the full-text index with.

    Terms found in no node are useless for finding candidates. Terms in more than `max_df_share` of the
    nodes (and more than `common_floor`) narrow nothing down and make the index query slow, so they are left
    out, unless the node has no other terms, in which case its `fallback_terms` rarest ones are used."""
    limit = max(rules.common_floor, rules.max_df_share * n_docs)
    present = sorted((df[t], t) for t in dict.fromkeys(keywords) if df.get(t, 0) > 0)
    usable = [x for x in present if x[0] <= limit][: rules.query_terms]
    if not usable:
        usable = present[: rules.fallback_terms]
    return [raw_of.get(t, t) for _, t in usable]
