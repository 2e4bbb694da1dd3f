"""Frozen, validated views of `rules/memory.toml` and `rules/topics.toml`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kg.core.policy import RuleReader
from kg.memory.dates import DateRules

MEMORY_SOURCE = "rules/memory.toml"
TOPICS_SOURCE = "rules/topics.toml"
KNOWN_SOURCES = ("graph", "MEMORY.md", "USER.md", "daily", "sessions", "skills", "trail")


@dataclass(frozen=True)
class SearchRules:
    limit: int
    candidates: int
    max_terms: int
    common_fraction: float
    common_floor: int
    w_text: float
    w_fuzzy: float
    w_graph: float
    w_recency: float
    w_importance: float
    half_life_days: float
    fuzzy_min: float
    neighbours_per_hit: int
    fuzzy_terms_min: float
    snippet_chars: int
    sources: tuple[str, ...]
    kind_weight: dict[str, float]
    priority_weight: dict[str, float]


@dataclass(frozen=True)
class InjectRules:
    budget: int
    w_relevance: float
    w_importance: float
    w_recency: float
    max_principles: int
    watch_priorities: tuple[str, ...]
    min_relevance: float


@dataclass(frozen=True)
class SkillRules:
    similar_threshold: float
    find_min: float
    find_limit: int
    min_tool_calls: int
    min_repeats: int
    remember_phrases: tuple[str, ...]


@dataclass(frozen=True)
class ScoreRules:
    min: int
    max: int
    trend_threshold: float


@dataclass(frozen=True)
class MemoryRules:
    search: SearchRules
    inject: InjectRules
    skills: SkillRules
    scores: ScoreRules
    retention: dict[str, Any]
    dates: DateRules

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> MemoryRules:
        r = RuleReader(data, MEMORY_SOURCE)
        s, i, k, c = (r.table(name) for name in ("search", "inject", "skills", "scores"))
        sources = tuple(s.get("sources", ()))
        bad = [x for x in sources if x not in KNOWN_SOURCES]
        if bad:
            raise s.fail("sources", f"has unknown {bad[0]!r} (known: {', '.join(KNOWN_SOURCES)})")
        kind_weight, priority_weight = s.table("kind_weight", {}), s.table("priority_weight", {})
        search = SearchRules(
            limit=int(s.number("limit", 1)),
            candidates=int(s.number("candidates", 1, 10000)),
            max_terms=int(s.number("max_terms", 1, 64)),
            common_fraction=s.number("common_fraction", 0, 1),
            common_floor=int(s.number("common_floor", 0)),
            **{w: s.number(w, 0, 10) for w in ("w_text", "w_fuzzy", "w_graph", "w_recency", "w_importance")},
            half_life_days=s.number("half_life_days", 0.01),
            fuzzy_min=s.number("fuzzy_min", 0, 100),
            neighbours_per_hit=int(s.number("neighbours_per_hit", 1, 10000)),
            fuzzy_terms_min=s.number("fuzzy_terms_min", 0, 100),
            snippet_chars=int(s.number("snippet_chars", 20)),
            sources=sources,
            kind_weight={key: kind_weight.number(key, 0, 1) for key in kind_weight.data},
            priority_weight={key: priority_weight.number(key, 0, 1) for key in priority_weight.data},
        )
        inject = InjectRules(
            budget=int(i.number("budget", 50)),
            w_relevance=i.number("w_relevance", 0, 10),
            w_importance=i.number("w_importance", 0, 10),
            w_recency=i.number("w_recency", 0, 10),
            max_principles=int(i.number("max_principles", 0)),
            watch_priorities=tuple(i.get("watch_priorities", ())),
            min_relevance=i.number("min_relevance", 0, 1),
        )
        skills = SkillRules(
            similar_threshold=k.number("similar_threshold", 0, 100),
            find_min=k.number("find_min", 0, 100),
            find_limit=int(k.number("find_limit", 1)),
            min_tool_calls=int(k.number("min_tool_calls", 1)),
            min_repeats=int(k.number("min_repeats", 1)),
            remember_phrases=tuple(p.lower() for p in k.get("remember_phrases", ())),
        )
        scores = ScoreRules(min=int(c.number("min")), max=int(c.number("max")),
                            trend_threshold=c.number("trend_threshold", 0))
        if scores.min >= scores.max:
            raise c.fail("min", f"must be below scores.max ({scores.max}), not {scores.min}")
        return cls(search, inject, skills, scores, dict(r.get("retention", {})),
                   DateRules.from_reader(r.table("dates")))


@dataclass(frozen=True)
class TopicRules:
    topics: dict[str, tuple[str, ...]]
    fallback: str
    index_days: int
    recall_files: int
    recall_nodes: int

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> TopicRules:
        r = RuleReader(data, TOPICS_SOURCE)
        raw = r.table("topics")
        if not raw.data:
            raise r.fail("topics", "must be a table of topic = [keywords], not empty")
        topics: dict[str, tuple[str, ...]] = {}
        for name in raw.data:
            seen: dict[str, None] = {}
            for w in raw.strings(name, items="non-blank"):
                seen.setdefault(w.strip().lower(), None)
            topics[str(name).lower()] = tuple(seen)
        fallback = str(r.get("fallback", "general")).lower()
        return cls(topics, fallback, int(r.number("index_days", 1)), int(r.number("recall_files", 1)),
                   int(r.number("recall_nodes", 0)))


def memory_rules(ws: Any) -> MemoryRules:
    cache = ws.__dict__.setdefault("_memory_rules", {})
    if "memory" not in cache:
        cache["memory"] = MemoryRules.from_mapping(ws.rules.raw("memory"))
    return cache["memory"]


def topic_rules(ws: Any) -> TopicRules:
    cache = ws.__dict__.setdefault("_memory_rules", {})
    if "topics" not in cache:
        cache["topics"] = TopicRules.from_mapping(ws.rules.raw("topics"))
    return cache["topics"]
