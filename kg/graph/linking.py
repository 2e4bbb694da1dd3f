"""Auto-linking and near-duplicate detection.

Two halves. The pure half decides: keywords of a text (`terms`), how similar two texts are (`similarity`:
rarity-weighted keyword overlap blended with a rapidfuzz ratio), whether they contradict (`contradiction`:
a keyword one text wants is refused by the other, "use pnpm instead of npm" against "use npm, not pnpm"),
which edge a pair gets and which way it points (`decide_link`, from the `[[typing]]` rules), and whether an
event repeats an earlier one (`duplicate`). Everything it needs comes from `rules/linking.toml` as a frozen
`LinkRules`.

The I/O half works on an open `Store`: it asks the full-text index for candidates with the new node's rarest
terms (a per-term document-frequency table, migration 0004, says which are rare), re-ranks them with the
pure functions and writes auto edges that carry their score and their reason. It never scans the graph.
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

from kg.core.errors import NotFound
from kg.core.policy import RuleReader, packaged
from kg.core.text import has_cjk, stem, words
from kg.graph.term_counts import counting
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
        )


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
_CLAUSE = re.compile(r"[,.;:!?()\[\]\n，。；：！？、（）]+|\s+(?:but|however|although)\s+|但是|但|不过|然而")


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


def _terms(text: str, rules: LinkRules) -> list[str]:
    out = []
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
class Stance:
    """What a text wants (keywords outside any refusal) and refuses (each refusal's scope of keywords)."""

    wants: frozenset[str]
    refuses: tuple[frozenset[str], ...]
    marked: bool  # the text takes a stance (a scope cue or a bare cue)


def stance(text: str, rules: LinkRules, *, negation: bool = True) -> Stance:
    """`negation`: whether plain negation ("not") counts as a stance for this text's kind."""
    return _memo(rules, ("stance", text, negation), lambda: _stance(text, rules, negation))


def _stance(text: str, rules: LinkRules, negation: bool) -> Stance:
    normal = _norm(text)
    cues = rules.stance_cues + (rules.negation_cues if negation else ())
    wants: set[str] = set()
    refuses: list[frozenset[str]] = []
    marked = any(_find(c, normal) for c in rules.bare_cues)
    for clause in _CLAUSE.split(normal):
        rest = clause
        while rest.strip():
            cut = _scope_start(rest, cues)
            if cut is None:
                wants.update(terms(rest, rules))
                break
            marked = True
            wants.update(terms(rest[: cut[0]], rules))
            scope, rest = _scope(rest[cut[1]:], rules)
            if scope:
                refuses.append(frozenset(scope))
    return Stance(frozenset(wants), tuple(refuses), marked)


_WORD = re.compile(r"[\w'-]+|[^\w\s]", re.UNICODE)


def _scope(text: str, rules: LinkRules) -> tuple[list[str], str]:
    """The keywords a cue refuses (up to a break word or `scope_terms` keywords) and the text after them."""
    found: list[str] = []
    for m in _WORD.finditer(text):
        token = m.group(0)
        if token in rules.scope_breaks and found:
            return found, text[m.start():]
        found.extend(t for t in terms(token, rules) if t not in found)
        if len(found) >= rules.scope_terms:
            return found[: rules.scope_terms], text[m.end():]
    return found, ""


def _scope_start(clause: str, cues: Sequence[str]) -> tuple[int, int] | None:
    """Where the earliest scope cue of a clause starts and ends."""
    best: tuple[int, int] | None = None
    for cue in cues:
        if "..." in cue:  # "prefer…over" (NFKC turns the ellipsis into three dots)
            opener, closer = cue.split("...", 1)
            m = _find(opener, clause)
            if m is None:
                continue
            m = _find(closer, clause, m.end())
        else:
            m = _find(cue, clause)
        if m is not None and (best is None or m.start() < best[0]):
            best = (m.start(), m.end())
    return best


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


def _negation_counts(doc: Doc, rules: LinkRules) -> bool:
    return not (doc.kind == "event" and doc.entry_type in rules.descriptive_types)


def contradiction(a: Doc, b: Doc, rules: LinkRules) -> str | None:
    """Why two texts contradict (most of what one refuses, the other wants), or None."""
    sa = stance(a.text, rules, negation=_negation_counts(a, rules))
    sb = stance(b.text, rules, negation=_negation_counts(b, rules))
    for refused, wanted in ((sa.refuses, sb.wants), (sb.refuses, sa.wants)):
        for scope in refused:
            clash = scope & wanted
            if clash and len(clash) / len(scope) > rules.min_cover:
                return "one refuses what the other wants: " + ", ".join(sorted(clash))
    return None


def opposed(a: Doc, b: Doc, rules: LinkRules) -> str | None:
    """Why two texts must never be merged: they contradict, or only one of them takes a stance
    ("use exec instead" against "use exec")."""
    why = contradiction(a, b, rules)
    if why:
        return why
    sa = stance(a.text, rules, negation=_negation_counts(a, rules))
    sb = stance(b.text, rules, negation=_negation_counts(b, rules))
    if sa.marked != sb.marked:
        return "only one of them refuses something or says 'instead'"
    return None


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
    sim = sim or similarity(terms(new.text, rules), terms(old.text, rules), rules, weights)
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


def duplicate(new: Doc, old: Doc, rules: LinkRules, weights: Mapping[str, float] | None = None, *,
              sim: Similarity | None = None) -> Duplicate | None:
    """Whether a logged event repeats an earlier one: same entry type and area, similar enough, and not
    opposed. Returns why, or None."""
    if new.id == old.id or new.kind != "event" or old.kind != "event":
        return None
    if not new.entry_type or new.entry_type != old.entry_type or (new.area or "") != (old.area or ""):
        return None
    sim = sim or similarity(terms(new.text, rules), terms(old.text, rules), rules, weights)
    if len(sim.shared) < rules.dedup_min_shared or sim.score < rules.dedup_min_score:
        return None
    if opposed(new, old, rules):
        return None
    return Duplicate(sim.score, f"near-duplicate of {old.id}: shared {', '.join(sim.shared[:5])}; "
                                f"score {sim.score:.2f}")


def derived_key(rules: LinkRules, entry_type: str, area: str | None, text: str) -> str:
    """A stable pattern key for events that never named one: auto.<area>.<hash of the first text>."""
    area_slug = re.sub(r"[^a-z0-9]+", "-", (area or "general").lower()).strip("-") or "general"
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


# -- I/O: the term table ------------------------------------------------------------------------------------


def _raw_map(text: str, rules: LinkRules) -> dict[str, str]:
    """keyword → a surface form of it, to query the full-text index (which stems by itself)."""
    out: dict[str, str] = {}
    for w in words(text):
        k = terms(w, rules)
        if k:
            out.setdefault(k[0], w)
    return out


def node_terms(text: str, rules: LinkRules) -> list[str]:
    return sorted(set(terms(text, rules)))


def prefetch_terms(st: Any, texts: Iterable[str], rules: LinkRules) -> None:
    """Inside `counting(st)`: read the counts of every keyword of these texts (a batch about to be applied)
    at once, with the document count."""
    counts = getattr(st, "_term_counts", None)
    if counts is not None:
        counts.prefetch([DOCS_KEY, *(t for text in texts for t in node_terms(text or "", rules))])


def index_terms(st: Any, text: str, rules: LinkRules, *, found: Candidates | None = None) -> None:
    """Count a new node (already created) in the document-frequency table. On a graph whose table was never
    filled (made before migration 0004), the whole table is counted instead, once. `found` (the node's
    candidates, fetched just before) says whether the table is known to be ready, saving a query."""
    if found is not None and found.table == "counted":
        return
    with counting(st) as counts:
        if (found is None or found.table != "ready") and counts.get(DOCS_KEY) is None:
            rebuild_terms(st, rules)
            return
        for term in [*node_terms(text, rules), DOCS_KEY]:
            counts.add(term)


def rebuild_terms(st: Any, rules: LinkRules, *, batch: int = 5000) -> int:
    """Recount the document-frequency table from every node (after a bulk load that bypassed the write
    path). Returns the number of nodes counted."""
    from kg.store.bulk import iter_rows

    counts: dict[str, int] = {}
    n = 0
    for (text,) in iter_rows(st, "link_all_texts"):  # streamed: a million texts never sit in memory at once
        n += 1
        for t in node_terms(text or "", rules):
            counts[t] = counts.get(t, 0) + 1
    counts[DOCS_KEY] = n
    pending = getattr(st, "_term_counts", None)
    if pending is not None:  # a batch's counts in memory: the recount includes its nodes already
        pending.base.clear()
        pending.delta.clear()
    with st.transaction():
        st.run("link_terms_clear")
        rows = [{"term": t, "df": c} for t, c in counts.items()]
        for i in range(0, len(rows), batch):
            st.run("link_terms_load", rows=rows[i : i + batch])
    return n


def _df(st: Any, keys: Sequence[str]) -> tuple[dict[str, int], int]:
    found = {}
    with counting(st) as counts:
        for term in [*keys, DOCS_KEY]:
            value = counts.get(term)
            if value is not None:
                found[term] = value
    return found, found.get(DOCS_KEY, 0)


def _df_take(st: Any, keys: Sequence[str]) -> tuple[dict[str, int], int]:
    """Like `_df`, counting the node in as it reads (the counts before it)."""
    with counting(st) as counts:
        found = {term: counts.add(term) for term in [*keys, DOCS_KEY]}
    return found, found.get(DOCS_KEY, 0)


# -- I/O: candidates and edges ------------------------------------------------------------------------------


@dataclass
class Candidates:
    docs: list[Doc]
    weights: dict[str, float]
    query: list[str] = field(default_factory=list)
    table: str = "unknown"  # the keyword table: "ready", or "counted" (recounted with the new node in it)
    sims: dict[tuple[str, str], Similarity] = field(default_factory=dict)

    def similarity(self, a: Doc, b: Doc, rules: LinkRules) -> Similarity:
        """Scored once per pair, however many decisions ask."""
        key = (a.id, b.id)
        if key not in self.sims:
            self.sims[key] = similarity(terms(a.text, rules), terms(b.text, rules), rules, self.weights)
        return self.sims[key]


def _doc(row: Mapping[str, Any]) -> Doc:
    return Doc(id=row["id"], kind=row["kind"], text=row["text"] or "", entry_type=row.get("entry_type"),
               category=row.get("category"), area=row.get("area"), created_at=row.get("created_at"),
               pattern_key=row.get("pattern_key") if row["kind"] == "event" else None)


def load_doc(st: Any, node_id: str) -> Doc:
    rows = st.run("link_node", id=node_id)
    if not rows:
        raise NotFound(f"no node {node_id!r}: `kg list` shows the ids")
    return _doc(rows[0])


def candidates(st: Any, doc: Doc, rules: LinkRules, *, count: bool = False) -> Candidates:
    """Nodes that share the new node's rarest terms, from the full-text index (never a scan).

    With `count`, the node (created, not yet counted) is counted in the keyword table by the same statements
    that read the frequencies before it, and the result says so (`table == "counted"`)."""
    keys = node_terms(doc.text, rules)
    if not keys:
        return Candidates([], {})
    table = "ready"
    with counting(st) as counts:
        ready = counts.get(DOCS_KEY) is not None
    if count and ready:
        df, n_docs = _df_take(st, keys)
        table = "counted"
    else:
        df, n_docs = _df(st, keys)
    if n_docs == 0 and DOCS_KEY not in df:  # never counted (a graph older than the table): count it now
        rebuild_terms(st, rules)
        df, n_docs = _df(st, keys)
        table = "counted"
    weights = {t: idf(df.get(t, 0), n_docs) for t in keys}
    query = pick_query_terms(keys, _raw_map(doc.text, rules), df, n_docs, rules)
    if not query:
        return Candidates([], weights, [], table)
    rows = st.run("link_candidates", q=" ".join(query), k=rules.top)
    seen: dict[str, Doc] = {}
    for row in rows:
        if row["id"] == doc.id or row["kind"] == "pattern":
            continue
        if row["id"] not in seen:
            seen[row["id"]] = _doc(row)
    return Candidates(list(seen.values()), weights, query, table)


def _earlier(a: Doc, b: Doc) -> bool:
    """Whether b was recorded before a (ties broken by id, so a batch applies in order)."""
    if a.created_at is None or b.created_at is None:
        return b.id < a.id
    return (b.created_at, b.id) < (a.created_at, a.id)


def plan_links(doc: Doc, found: Candidates, existing: set[str], rules: LinkRules) -> list[LinkDecision]:
    """The auto edges to create for a node: best first (contradictions first of all), at most `max_links`,
    none to a node it is already joined to (in either direction, by any edge), none to members of its own
    pattern, and one at most to the members of any other pattern."""
    decisions = []
    for other in found.docs:
        if other.id in existing or other.id == doc.id:
            continue
        if doc.pattern_key and other.pattern_key == doc.pattern_key:
            continue
        decision = decide_link(doc, other, rules, sim=found.similarity(doc, other, rules))
        if decision is not None:
            decisions.append(decision)
    decisions.sort(key=lambda d: (d.type != "contradicts", -d.score, d.other))
    # One edge per recurring pattern is enough: its other members are one derived_from hop away.
    pattern_of = {d.id: d.pattern_key for d in found.docs if d.pattern_key}
    seen = {pattern_of[d] for d in existing if d in pattern_of}  # a pattern it is linked to already
    kept = []
    for d in decisions:
        group = pattern_of.get(d.other)
        if group is not None:
            if group in seen:
                continue
            seen.add(group)
        kept.append(d)
    return kept[: rules.max_links]


def link_node(st: Any, node_id: str, rules: LinkRules, *, now: datetime, dry_run: bool = False,
              doc: Doc | None = None, found: Candidates | None = None,
              existing: set[str] | None = None) -> list[dict[str, Any]]:
    """Create the auto edges of one node; returns them (as they would be, with `dry_run`). `existing` are
    the nodes it is joined to already (looked up when not given; a node just created has none)."""
    doc = doc or load_doc(st, node_id)
    if doc.kind == "pattern":
        return []
    found = found or candidates(st, doc, rules)
    if not found.docs:
        return []
    if existing is None:
        existing = {r["other"] for r in st.run("link_neighbours", id=doc.id)}
    plan = plan_links(doc, found, existing, rules)
    out = [{"from": d.src, "to": d.dst, "type": d.type, "score": d.score, "reason": d.reason,
            "other": d.other} for d in plan]
    if dry_run or not plan:
        return out
    with st.transaction():
        for d in plan:
            st.run(f"link_add_{d.type}", src=d.src, dst=d.dst, score=d.score, reason=d.reason, at=now)
    return out


def link_new(st: Any, doc: Doc, rules: LinkRules, *, now: datetime, link: bool = True) -> list[dict[str, Any]]:
    """For a node just created: count its keywords and (unless `link` is false) create its auto edges."""
    if not link or doc.kind == "pattern":
        index_terms(st, doc.text, rules)
        return []
    found = candidates(st, doc, rules, count=True)
    index_terms(st, doc.text, rules, found=found)
    return link_node(st, doc.id, rules, now=now, doc=doc, found=found, existing=set())


@dataclass(frozen=True)
class PatternMatch:
    """Where a new event without a Pattern-Key belongs: the existing pattern `key` (its member `via` finds
    it), or a new pattern (`new`) with a derived `key`, made of `members` (earlier events) and the event."""

    key: str
    new: bool
    via: str
    members: tuple[str, ...]
    score: float
    reason: str
    text: str = ""  # for a new pattern: the text of its first event


def match_pattern(doc: Doc, found: Candidates, rules: LinkRules) -> PatternMatch | None:
    """Pure: the pattern a new event joins, from its scored candidates, or None. An earlier event already in
    a pattern wins over loose ones (best score first); loose near-duplicates make a new pattern together."""
    best: dict[str, tuple[float, str, str]] = {}  # pattern key -> (score, member id, reason)
    loose: list[tuple[float, Doc, str]] = []
    for other in found.docs:
        if not (other.kind == "event" and other.entry_type == doc.entry_type) or not _earlier(doc, other):
            continue
        dup = duplicate(doc, other, rules, sim=found.similarity(doc, other, rules))
        if dup is None:
            continue
        if other.pattern_key:
            if other.pattern_key not in best or dup.score > best[other.pattern_key][0]:
                best[other.pattern_key] = (dup.score, other.id, dup.reason)
        else:
            loose.append((dup.score, other, dup.reason))
    if best:
        key, (score, via, reason) = max(best.items(), key=lambda kv: (kv[1][0], kv[0]))
        return PatternMatch(key, False, via, (), score, reason)
    if not loose:
        return None
    loose.sort(key=lambda x: (-x[0], x[1].id))
    first = min((d for _, d, _ in loose), key=lambda d: (d.created_at or datetime.min, d.id))
    key = derived_key(rules, doc.entry_type or "", doc.area, first.text)
    score, via, reason = loose[0][0], loose[0][1].id, loose[0][2]
    members = tuple(sorted(d.id for _, d, _ in loose))
    return PatternMatch(key, True, via, members, score, reason, first.text)
