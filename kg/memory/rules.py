"""Frozen, validated views of `rules/memory.toml` and `rules/topics.toml`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kg.errors import RulesError

MEMORY_SOURCE = "rules/memory.toml"
TOPICS_SOURCE = "rules/topics.toml"
KNOWN_SOURCES = ("graph", "MEMORY.md", "USER.md", "daily", "sessions", "skills", "trail")


def _num(data: dict[str, Any], key: str, source: str, *, lo: float | None = None,
         hi: float | None = None) -> float:
    try:
        value = data[key]
    except KeyError:
        raise RulesError(f"{source}: missing key {key!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RulesError(f"{source}: key {key!r} must be a number")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise RulesError(f"{source}: key {key!r} = {value} is out of range "
                         f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]")
    return float(value)


@dataclass(frozen=True)
class SearchRules:
    limit: int
    candidates: int
    max_terms: int
    common_fraction: float
    w_text: float
    w_fuzzy: float
    w_graph: float
    w_recency: float
    w_importance: float
    half_life_days: float
    fuzzy_min: float
    neighbour_decay: float
    expand_top: int
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

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> MemoryRules:
        src = MEMORY_SOURCE
        try:
            s, i, k, c = data["search"], data["inject"], data["skills"], data["scores"]
        except KeyError as exc:
            raise RulesError(f"{src}: missing table [{exc.args[0]}]") from None
        sources = tuple(s.get("sources", ()))
        bad = [x for x in sources if x not in KNOWN_SOURCES]
        if bad:
            raise RulesError(f"{src}: search.sources has unknown {bad[0]!r} (known: {', '.join(KNOWN_SOURCES)})")
        search = SearchRules(
            limit=int(_num(s, "limit", src + " [search]", lo=1)),
            candidates=int(_num(s, "candidates", src + " [search]", lo=1, hi=10000)),
            max_terms=int(_num(s, "max_terms", src + " [search]", lo=1, hi=64)),
            common_fraction=_num(s, "common_fraction", src + " [search]", lo=0, hi=1),
            **{w: _num(s, w, src + " [search]", lo=0, hi=10)
               for w in ("w_text", "w_fuzzy", "w_graph", "w_recency", "w_importance")},
            half_life_days=_num(s, "half_life_days", src + " [search]", lo=0.01),
            fuzzy_min=_num(s, "fuzzy_min", src + " [search]", lo=0, hi=100),
            neighbour_decay=_num(s, "neighbour_decay", src + " [search]", lo=0, hi=1),
            expand_top=int(_num(s, "expand_top", src + " [search]", lo=0, hi=1000)),
            snippet_chars=int(_num(s, "snippet_chars", src + " [search]", lo=20)),
            sources=sources,
            kind_weight={key: _num(s["kind_weight"], key, src + " [search.kind_weight]", lo=0, hi=1)
                         for key in s.get("kind_weight", {})},
            priority_weight={key: _num(s["priority_weight"], key, src + " [search.priority_weight]", lo=0, hi=1)
                             for key in s.get("priority_weight", {})},
        )
        inject = InjectRules(
            budget=int(_num(i, "budget", src + " [inject]", lo=50)),
            w_relevance=_num(i, "w_relevance", src + " [inject]", lo=0, hi=10),
            w_importance=_num(i, "w_importance", src + " [inject]", lo=0, hi=10),
            w_recency=_num(i, "w_recency", src + " [inject]", lo=0, hi=10),
            max_principles=int(_num(i, "max_principles", src + " [inject]", lo=0)),
            watch_priorities=tuple(i.get("watch_priorities", ())),
            min_relevance=_num(i, "min_relevance", src + " [inject]", lo=0, hi=1),
        )
        skills = SkillRules(
            similar_threshold=_num(k, "similar_threshold", src + " [skills]", lo=0, hi=100),
            find_min=_num(k, "find_min", src + " [skills]", lo=0, hi=100),
            find_limit=int(_num(k, "find_limit", src + " [skills]", lo=1)),
            min_tool_calls=int(_num(k, "min_tool_calls", src + " [skills]", lo=1)),
            min_repeats=int(_num(k, "min_repeats", src + " [skills]", lo=1)),
            remember_phrases=tuple(p.lower() for p in k.get("remember_phrases", ())),
        )
        scores = ScoreRules(
            min=int(_num(c, "min", src + " [scores]")),
            max=int(_num(c, "max", src + " [scores]")),
            trend_threshold=_num(c, "trend_threshold", src + " [scores]", lo=0),
        )
        if scores.min >= scores.max:
            raise RulesError(f"{src}: scores.min must be below scores.max")
        return cls(search, inject, skills, scores, dict(data.get("retention", {})))


@dataclass(frozen=True)
class TopicRules:
    topics: dict[str, tuple[str, ...]]
    fallback: str
    index_days: int
    recall_files: int
    recall_nodes: int

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> TopicRules:
        src = TOPICS_SOURCE
        raw = data.get("topics")
        if not isinstance(raw, dict) or not raw:
            raise RulesError(f"{src}: [topics] must be a table of topic = [keywords]")
        topics: dict[str, tuple[str, ...]] = {}
        for name, words in raw.items():
            if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
                raise RulesError(f"{src}: topics.{name} must be a list of non-empty strings")
            seen: dict[str, None] = {}
            for w in words:
                seen.setdefault(w.strip().lower(), None)
            topics[str(name).lower()] = tuple(seen)
        fallback = str(data.get("fallback", "general")).lower()
        return cls(topics, fallback,
                   int(_num(data, "index_days", src, lo=1)), int(_num(data, "recall_files", src, lo=1)),
                   int(_num(data, "recall_nodes", src, lo=0)))


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
