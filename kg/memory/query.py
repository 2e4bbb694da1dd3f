"""Query understanding for memory search, without an LLM: which terms to ask the index, how much each counts,
and how to relax a query that finds nothing.

Document frequencies come from the keyword table auto-linking keeps up to date on every log (`Term`, one key
lookup per term), so a term found in no node is known to be absent, not mistaken for a rare one; a graph
whose table was never filled falls back to the common-term list (`kg index build`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz, process

from kg.core.policy import RuleReader
from kg.core.text import has_cjk
from kg.memory.rules import SearchRules

UNKNOWN = -1  # a document frequency the keyword table cannot say (numbers, a graph without the table)


@dataclass
class Plan:
    """What a query asks of the index: `ask` goes to the full-text index; `weights` say how much each term
    counts in the fuzzy re-rank (0 for a term found nowhere); `replaced` maps a term found nowhere to the
    known term that stands in for it."""
    terms: list[str]
    ask: list[str]
    weights: dict[str, float]
    df: dict[str, int]
    nodes: int
    absent: list[str] = field(default_factory=list)
    replaced: dict[str, str] = field(default_factory=dict)
    mode: str = ""  # how the full-text step asked (kg/memory/search_side.py): ranked | bounded | relaxed | index


@dataclass(frozen=True)
class FtsRules:
    """How much the full-text index may be asked (`rules/search.toml` [fts])."""
    postings_max: int  # the asked rare terms' document frequencies add up to at most this (0: no cap)
    bounded_candidates: int = 200  # past it: the newest entries holding the two rarest terms, this many
    relax_below: int = 20          # ... and the rarest term's newest too when those are fewer than this

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> FtsRules:
        r = RuleReader(data, "rules/search.toml").table("fts").known(
            ("postings_max", "bounded_candidates", "relax_below"))
        return cls(postings_max=r.whole("postings_max", 0, 10**9),
                   bounded_candidates=r.whole("bounded_candidates", 1, 100000, default=200),
                   relax_below=r.whole("relax_below", 0, 100000, default=20))


def fts_rules(ws: Any) -> FtsRules:
    cache = ws.__dict__.setdefault("_memory_rules", {})
    if "fts" not in cache:
        cache["fts"] = FtsRules.from_mapping(ws.rules.raw("search"))
    return cache["fts"]


def keyword(term: str, link_rules: Any) -> str | None:
    """The keyword-table key of a query term (linking's stem), or None when the table does not count it (a
    version or id, "2 4 1": the table counts single words; the side index counts the phrase)."""
    from kg.graph import linking

    if " " in term:
        return None

    found = linking.terms(term, link_rules)
    return found[0] if found else None


def pick_index_terms(terms: list[str], df: dict[str, int], nodes: int, rules: SearchRules,
                     postings_max: int = 0) -> list[str]:
    """The terms sent to the full-text index. Terms found nowhere are left out (they find nothing); terms in
    more than `common_fraction` of the nodes and more than `common_floor` nodes are left out too (their
    posting lists make the index slow, and they say little), unless nothing else is left, when the two
    rarest present ones are kept. At most `max_terms`, rarest first. With `postings_max`, a rare term is
    asked only while the asked terms hold at most that many postings together (Kùzu's index scores every
    document holding any asked term): the rarest is always asked, the others left out still count in the
    re-rank (word coverage). A term of unknown frequency costs nothing here. Pure."""
    limit = max(rules.common_floor, rules.common_fraction * nodes) if nodes else math.inf
    present = [t for t in terms if df.get(t, UNKNOWN) != 0]
    rank = sorted(present, key=lambda t: (max(df.get(t, UNKNOWN), 0), -len(t), t))
    rare = [t for t in rank if df.get(t, UNKNOWN) <= limit][: rules.max_terms]
    if not rare:  # common terms only: the two rarest, whatever the budget (asking one alone lost too much)
        return rank[:2]
    if not postings_max:
        return rare
    kept, total = rare[:1], max(df.get(rare[0], UNKNOWN), 0)
    for t in rare[1:]:
        total += max(df.get(t, UNKNOWN), 0)
        if total > postings_max:
            break
        kept.append(t)
    return kept


def term_weights(terms: list[str], df: dict[str, int], nodes: int) -> dict[str, float]:
    """How much each term counts in the re-rank: its inverse document frequency, scaled so the rarest term is
    1; a term found nowhere counts 0 (every text misses it alike), an unknown one 1. Pure."""
    if not nodes:
        return {t: 1.0 for t in terms}
    idf = {t: math.log(1 + nodes / max(df[t], 1)) for t in terms if df.get(t, UNKNOWN) > 0}
    top = max(idf.values(), default=1.0) or 1.0
    return {t: (0.0 if df.get(t, UNKNOWN) == 0 else idf.get(t, top) / top) for t in terms}


def _table_df(st: Any, terms: list[str], link_rules: Any,
              memo: dict[str, int | None]) -> tuple[dict[str, int], int] | None:
    """Exact document frequencies from the keyword table, or None when the table was never filled. `memo`
    keeps the lookups of a graph that has not changed since (the in-process cache's)."""
    from kg.graph.linking import DOCS_KEY

    def df(key: str) -> int | None:
        if key not in memo:
            rows = st.run("link_terms_df", term=key)
            memo[key] = int(rows[0]["df"] or 0) if rows else None
        return memo[key]

    docs = df(DOCS_KEY)
    if docs is None:
        return None
    out: dict[str, int] = {}
    for t in terms:
        key = keyword(t, link_rules)
        out[t] = UNKNOWN if key is None else (df(key) or 0)
    return out, docs


def plan_query(st: Any, terms: list[str], rules: SearchRules, link_rules: Any,
               common: Callable[[], tuple[int, dict[str, int]]], memo: dict[str, int | None] | None = None,
               postings_max: int = 0) -> Plan:
    """The index query for `terms`. `common()` gives the common-term list, used when the keyword table is
    empty (there, a term missing from the list is of unknown frequency, not absent). `postings_max`: see
    `pick_index_terms`."""
    found = _table_df(st, terms, link_rules, {} if memo is None else memo)
    if found is None:
        nodes, listed = common()
        df = {t: listed.get(t, UNKNOWN) for t in terms}
    else:
        df, nodes = found
    absent = [t for t in terms if df.get(t) == 0]
    return Plan(terms, pick_index_terms(terms, df, nodes, rules, postings_max), term_weights(terms, df, nodes),
                df, nodes, absent)


def with_counted(plan: Plan, count: Callable[[str], int | None], rules: SearchRules,
                 postings_max: int = 0, found: Callable[[str], bool] | None = None) -> Plan:
    """The plan with the frequencies the keyword table cannot say counted by `count` (the side index, which
    indexes every text field of an entry): numbers ("5k", "18th"), so such a term found nowhere is not taken
    for the rarest, and one found weighs by its rarity; and the terms the table counts 0, since it counts
    summaries alone (a QA pass: a word only in an entry's --details, --error or --action was taken for absent
    and never asked). Without a side index (`count` says None), such a term is asked when `found` says the
    graph's own index holds it, else it stays absent. Unchanged when nothing needs counting. Pure given
    `count` and `found`."""
    counted: dict[str, int] = {}
    for t in plan.terms:
        if plan.df.get(t, UNKNOWN) > 0:
            continue
        n = count(t)
        if n is None and plan.df.get(t, UNKNOWN) == 0 and found is not None and found(t):
            n = UNKNOWN
        if n is not None:
            counted[t] = n
    if not counted:
        return plan
    df = {**plan.df, **counted}
    return Plan(plan.terms, pick_index_terms(plan.terms, df, plan.nodes, rules, postings_max),
                term_weights(plan.terms, df, plan.nodes), df, plan.nodes,
                [t for t in plan.terms if df.get(t) == 0], dict(plan.replaced), plan.mode)


def with_lone_cjk(plan: Plan, known: Callable[[str], list[tuple[str, int]]], per_char: int = 8) -> Plan:
    """A lone CJK character (`中`) is in no index: they hold CJK text as bigrams. Ask the known bigrams that
    start or end with it instead (`known(c)`: keyword-table terms holding it and their frequencies), the
    `per_char` most frequent; the character itself is not absent, and counts in the re-rank as found in any
    word holding it (`ranking.coverage`), the bigrams not at all. Pure given `known`."""
    lone = [t for t in plan.terms if len(t) == 1 and has_cjk(t) and plan.df.get(t, UNKNOWN) <= 0]
    extra: dict[str, int] = {}
    for c in lone:
        found = sorted(((t, n) for t, n in known(c) if len(t) > 1 and n > 0), key=lambda x: (-x[1], x[0]))
        extra.update((t, n) for t, n in found[:per_char] if t not in plan.df)
    if not extra:
        return plan
    df = {**plan.df, **{c: UNKNOWN for c in lone}, **extra}
    terms = plan.terms + list(extra)
    weights = {**term_weights(plan.terms, df, plan.nodes), **{t: 0.0 for t in extra}}
    return Plan(terms, [t for t in plan.ask if t not in lone] + list(extra), weights, df, plan.nodes,
                [t for t in plan.absent if t not in lone], dict(plan.replaced), plan.mode)


def fuzzy_replacements(st: Any, absent: list[str], rules: SearchRules, link_rules: Any) -> dict[str, str]:
    """For terms found nowhere (a typo, another inflection), the most similar known keyword sharing their
    first three letters, when it is at least `fuzzy_terms_min` alike."""
    out: dict[str, str] = {}
    for t in absent:
        if has_cjk(t) or len(t) < 4 or " " in t:  # a version or id is as written: 1.9 is not 1.2
            continue
        key = keyword(t, link_rules) or t
        pool = {r["term"]: r["df"] for r in st.run("memory_terms_prefix", prefix=key[:3])}
        pool.pop(key, None)
        if not pool:
            continue
        best = process.extractOne(key, list(pool), scorer=fuzz.ratio, score_cutoff=rules.fuzzy_terms_min)
        if best is not None:
            out[t] = best[0]
    return out
