"""Search's full-text candidates from the side index (kg/store/sideindex.py), bounded whatever the graph's size.

An exhaustive "any word, best first" ranking is linear in the asked terms' postings in any engine (SQLite FTS5:
0.52 s at 1M entries for two words in 6-10 % of them). So:
- when the asked terms' postings together are few (`rules/search.toml [fts] postings_max`), rank them all
  with BM25, any word (as the graph's own index did): "ranked";
- otherwise ask the two rarest terms, all of them, newest first, `bounded_candidates` at most (an index walk
  that stops there: 0.6 ms at 1M): "bounded"; when that finds fewer than `relax_below`, add the rarest term's
  newest entries: "relaxed". Search re-ranks the candidates as always (word coverage, the graph, recency).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kg.memory.query import UNKNOWN, Plan, fts_rules, pick_index_terms
from kg.memory.rules import SearchRules


@dataclass
class Candidates:
    scored: list[tuple[int, float]]  # (position in the side index, BM25 > 0)
    mode: str                        # ranked | bounded | relaxed
    asked: list[str]


def candidates(side: Any, ws: Any, plan: Plan, rules: SearchRules, k: int) -> Candidates:
    fr = fts_rules(ws)
    ask = pick_index_terms(plan.terms, plan.df, plan.nodes, rules, 0)  # uncapped: the cap is decided here
    if not ask:
        return Candidates([], "ranked", [])
    df = {t: plan.df[t] if plan.df.get(t, UNKNOWN) >= 0 else side.df(t) for t in ask}
    if not fr.postings_max or sum(df.values()) <= fr.postings_max:
        return Candidates(side.ranked(ask, k), "ranked", ask)
    rare = sorted(ask, key=lambda t: (df[t], -len(t), t))[:2]
    m = max(k, fr.bounded_candidates)
    got = side.newest(rare, m)
    if len(rare) < 2 or len(got) >= fr.relax_below:
        return Candidates(got, "bounded", rare)
    seen = {p for p, _ in got}
    got += [(p, s) for p, s in side.newest(rare[:1], m) if p not in seen][: m - len(got)]
    return Candidates(got, "relaxed", rare[:1])
