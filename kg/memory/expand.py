"""Graph-aware recall (issue 17, build item 4): from the best full-text hits, follow the graph to what they are
linked to and to what was logged beside them, and rank every candidate by the evidence of all its paths. Pure.

A path runs from one seed (a best hit) to a candidate:
- along an edge (led_to, caused_by, related_to, supports, contradicts), worth the edge type's weight times the
  link's own (a link made by hand is a fact, an auto-link a guess);
- within the seed's session, to the entries logged just before and after it (of any kind: the fix logged
  after an error, the next turn of a conversation), worth less with each step.

Paths from one seed count once (the strongest); paths from several seeds add up as independent evidence
(noisy-or), so a candidate reached from two good hits beats one reached from one. One path is worth at most
`path_max` (< 1): two top hits often tie (FalkorDB's full-text scores do), and a single path from either would
otherwise already be certain, leaving a candidate of both paths no room above it. The weights are data:
`rules/search.toml` `[expand]`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kg.core.policy import RuleReader

SEARCH_SOURCE = "rules/search.toml"
EDGE_TYPES = ("led_to", "caused_by", "related_to", "supports", "contradicts")


@dataclass(frozen=True)
class ExpandRules:
    seeds: int                       # best hits expanded from
    seed_floor: float                # a hit below this share of the best one's score is not a seed
    edge_weight: dict[str, float]    # per edge type
    session_steps: int               # entries before and after a seed in its session (each way)
    session_rows: int                # at most this many entries of the seeds' sessions read (ids and times)
    session_weight: float            # a path to the next entry in the session
    step_decay: float                # times this per further step
    inherit: float                   # a candidate found only by the graph gets this share of its evidence as text
    w_evidence: float                # weight of the paths' evidence in the graph part
    w_session_share: float           # weight of sharing a session with many of the seeds
    path_max: float                  # one path's evidence at most (several paths can add past it)

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> ExpandRules:
        r = RuleReader(data, SEARCH_SOURCE).table("expand").known(
            ("seeds", "seed_floor", "edge_weight", "session_steps", "session_rows", "session_weight", "step_decay",
             "inherit", "w_evidence", "w_session_share", "path_max"))
        edges = r.table("edge_weight", {})
        unknown = [k for k in edges.data if k not in EDGE_TYPES]
        if unknown:
            raise edges.fail(unknown[0], f"is not an edge search follows (known: {', '.join(EDGE_TYPES)})")
        return cls(seeds=r.whole("seeds", 0, 100), seed_floor=r.number("seed_floor", 0, 1),
                   edge_weight={k: edges.number(k, 0, 1) for k in EDGE_TYPES if k in edges.data},
                   session_steps=r.whole("session_steps", 0, 10),
                   session_rows=r.whole("session_rows", 0, 100000),
                   session_weight=r.number("session_weight", 0, 1), step_decay=r.number("step_decay", 0, 1),
                   inherit=r.number("inherit", 0, 1), w_evidence=r.number("w_evidence", 0, 1),
                   w_session_share=r.number("w_session_share", 0, 1),
                   path_max=r.number("path_max", 0, 1))


def expand_rules(ws: Any) -> ExpandRules:
    cache = ws.__dict__.setdefault("_memory_rules", {})
    if "expand" not in cache:
        cache["expand"] = ExpandRules.from_mapping(ws.rules.raw("search"))
    return cache["expand"]


def seeds(scores: dict[str, float], rules: ExpandRules) -> list[str]:
    """The best hits to expand from: the top `seeds` by score, none below `seed_floor` of the best, ties by
    id."""
    if not scores or rules.seeds <= 0:
        return []
    top = max(scores.values())
    ranked = sorted((i for i, s in scores.items() if s > 0 and s >= rules.seed_floor * top),
                    key=lambda i: (-scores[i], i))
    return ranked[: rules.seeds]


def session_neighbours(members: list[tuple[Any, str]], seed: str, steps: int) -> list[tuple[str, int]]:
    """The entries logged up to `steps` places before and after `seed` in its session, with their distance,
    nearest first. `members` are the session's (time, id) pairs; entries of the same time are ordered by id."""
    ordered = sorted(members, key=lambda m: (m[0] is None, m[0] or 0, m[1]))
    ids = [m[1] for m in ordered]
    if seed not in ids:
        return []
    at = ids.index(seed)
    out = []
    for d in range(1, steps + 1):
        out += [(ids[k], d) for k in (at - d, at + d) if 0 <= k < len(ids)]
    return out


@dataclass(frozen=True)
class Path:
    seed: str
    to: str
    weight: float      # the path's own worth, 0..1, before the seed's strength
    via: str           # the edge type, or "session"


def edge_path(seed: str, to: str, edge_type: str, link: float, rules: ExpandRules) -> Path:
    return Path(seed, to, rules.edge_weight.get(edge_type, 0.0) * link, edge_type)


def session_path(seed: str, to: str, distance: int, rules: ExpandRules) -> Path:
    return Path(seed, to, rules.session_weight * rules.step_decay ** (distance - 1), "session")


def evidence(paths: Iterable[Path], strength: dict[str, float], path_max: float = 1.0) -> dict[str, float]:
    """Each candidate's evidence, 0..1: per seed the strongest path times the seed's strength, combined over
    seeds as independent evidence (1 - the product of what each leaves unexplained); one path is worth at most
    `path_max`. A seed is no path to itself."""
    best: dict[str, dict[str, float]] = {}
    for p in paths:
        if p.to == p.seed:
            continue
        value = max(0.0, min(path_max, p.weight * strength.get(p.seed, 0.0)))
        per = best.setdefault(p.to, {})
        if value > per.get(p.seed, 0.0):
            per[p.seed] = value
    out = {}
    for node, per in best.items():
        left = 1.0
        for value in per.values():
            left *= 1.0 - value
        out[node] = 1.0 - left
    return out


def graph_part(evidence_value: float, share: float, rules: ExpandRules) -> float:
    """The graph part of a candidate's score: its paths' evidence and the share of the seeds in its session,
    combined the same way. 0..1."""
    a = rules.w_evidence * evidence_value
    b = rules.w_session_share * share
    return 1.0 - (1.0 - a) * (1.0 - b)
