"""Memory search: the graph and the memory files, ranked together.

Sources, in the seed's order (it breaks ties): the graph, MEMORY.md, USER.md, the daily logs, then session
summaries, skills and the imported trail. Ranking combines
- full-text: Kùzu's BM25 over `Node.tokens` (asked with the query's rarer terms only: a term in most nodes
  is slow there and says little), and a BM25 over the matching lines of the files;
- fuzzy: the share of the query's terms found in the text by rapidfuzz (catches inflections and typos);
- the graph (`expand`): from the best hits along their links and to the entries logged beside them in their
  session; every candidate ranked by the evidence of all its paths (two good hits reaching it beat one);
- recency and importance (kind, priority, pinned).
Chinese works because both the index and the query are tokenised by `kg.core.text.words` (CJK bigrams).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz, process

from kg.core import clock, paths
from kg.core.errors import UsageError
from kg.core.text import clean, folded, has_cjk, stem_prefix, stopwords, words
from kg.memory import dates, expand
from kg.memory._common import iso
from kg.memory.dates import Window
from kg.memory.query import Plan, fts_rules, fuzzy_replacements, plan_query
from kg.memory.rules import KNOWN_SOURCES, SearchRules, memory_rules
from kg.memory.search_files import TRAIL_ID, TRAIL_PROBE, _trail_lines, mirrors_graph  # noqa: F401
from kg.memory.views import cached_view, common_terms, link_weight, refresh_common_terms, view
from kg.store import KNOWLEDGE_KINDS

__all__ = ["Hit", "search", "render", "cached_view", "refresh_common_terms", "link_weight", "query_terms"]
DAILY = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
LOG_LINE = re.compile(r"^###\s+\S+\s+\d{2}:\d{2}\s*[-–—]\s*(?:(?:Error|Insight|Correction|User preference|"
                      r"Feature request|Session summary [\d-]+):\s*)?(.*)$")
FILE_PRIOR = {"MEMORY.md": 0.9, "USER.md": 0.8, "skills": 0.6, "sessions": 0.5, "daily": 0.4, "trail": 0.3}
DAILY_DAYS_DEFAULT = 30


@dataclass
class Hit:
    source: str                      # graph | MEMORY.md | USER.md | daily | sessions | skills | trail
    ref: str                         # node id, or path:line
    kind: str | None
    text: str
    snippet: str
    score: float
    location: str
    created_at: str | None = None
    session: str | None = None
    tags: list[str] = field(default_factory=list)
    parts: dict[str, float] = field(default_factory=dict)
    also: list[str] = field(default_factory=list)   # where else this memory is: mirrored lines, identical events
    count: int = 1                                  # graph nodes of this memory (identical events collapse)
    match: str = "terms"                            # terms | fuzzy (relaxed) | recent (nothing matched)
    fts: str = ""                                   # how the full-text step asked: ranked | bounded | relaxed

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- pure pieces --------------------------------------------------------------------------------------------
def query_terms(query: str) -> list[str]:
    """The query's content terms, in order, without repeats or stopwords."""
    seen: dict[str, None] = {}
    for w in words(query):
        if w not in stopwords() and (len(w) > 1 or has_cjk(w)):  # rules/words.toml: the one list
            seen.setdefault(w, None)
    return list(seen)


def coverage(terms: list[str], weights: dict[str, float], text_words: set[str], fuzzy_min: float) -> float:
    """Weighted share of the query terms present in the text, exactly or fuzzily. 0..1."""
    if not terms:
        return 0.0
    total = found = 0.0
    pool = list(text_words)
    for t in terms:
        w = weights.get(t, 1.0)
        total += w
        if t in text_words:
            found += w
        elif pool and not has_cjk(t) and len(t) >= 4:
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
    positions = [low.find(stem_prefix(t)) for t in terms]
    positions = [p for p in positions if p >= 0]
    start = max(0, min(positions, default=0) - width // 3)
    start = min(start, len(flat) - width)
    out = flat[start : start + width]
    return ("…" if start > 0 else "") + out + ("…" if start + width < len(flat) else "")


def combine(parts: dict[str, float], rules: SearchRules, w_date: float = 0.0) -> float:
    return (rules.w_text * parts.get("text", 0.0) + rules.w_fuzzy * parts.get("fuzzy", 0.0)
            + rules.w_graph * parts.get("graph", 0.0) + rules.w_recency * parts.get("recency", 0.0)
            + rules.w_importance * parts.get("importance", 0.0) + w_date * parts.get("date", 0.0))


def importance(row: dict[str, Any], rules: SearchRules) -> float:
    kind = rules.kind_weight.get(row.get("kind") or "event", 0.5)
    prio = rules.priority_weight.get(row.get("priority") or "", 0.5)
    return 1.0 if row.get("pinned") else (kind + prio) / 2


# -- the graph ----------------------------------------------------------------------------------------------
def session_share(sessions: list[str | None], session: str | None, own: bool) -> float:
    """The share of the best hits held in `session` (not counting the node itself). Pure."""
    if not session or not sessions:
        return 0.0
    n = sum(1 for s in sessions if s == session) - (1 if own else 0)
    return max(0, n) / len(sessions)


def _body(row: dict[str, Any]) -> str:
    return " ".join(x for x in (row["text"], row["details"], " ".join(row["tags"] or [])) if x)


def _expand(v: Any, rows: dict[str, dict[str, Any]], text_score: dict[str, float], fuzzy: dict[str, float],
            rules: SearchRules, erules: expand.ExpandRules) -> tuple[dict[str, float], list[str]]:
    """Graph-aware recall (kg/memory/expand.py): the seeds (the best hits by text and word coverage), the
    nodes their paths reach added to `rows`, and every node's evidence. Reads are bounded: at most
    `neighbours_per_hit` edges per seed (one indexed statement each), one scan of the seeds' sessions for ids
    and times (`session_rows` at most), and the `2 * session_steps` entries beside each seed read by key."""
    first = {i: rules.w_text * text_score.get(i, 0.0) + rules.w_fuzzy * fuzzy.get(i, 0.0) for i in rows}
    seeds = expand.seeds(first, erules)
    if not seeds:
        return {}, []
    top = max(first[i] for i in seeds) or 1.0
    strength = {i: first[i] / top for i in seeds}
    paths = []
    for src, r, w, edge_type in v.neighbours(seeds, rules.neighbours_per_hit):
        rows.setdefault(r["id"], r)
        paths.append(expand.edge_path(src, r["id"], edge_type, w, erules))
    if erules.session_steps and erules.session_rows:
        sessions = sorted({rows[i]["session"] for i in seeds if rows[i]["session"]})
        members = v.session_members(sessions, erules.session_rows) if sessions else {}
        near = [(s, j, d) for s in seeds if rows[s]["session"] in members
                for j, d in expand.session_neighbours(members[rows[s]["session"]], s, erules.session_steps)]
        missing = [j for j in dict.fromkeys(j for _, j, _ in near) if j not in rows]
        if missing:
            rows.update(v.by_id(missing))
        paths += [expand.session_path(s, j, d, erules) for s, j, d in near if j in rows]
    return expand.evidence(paths, strength, erules.path_max), seeds


def _graph_hits(ws: Any, st: Any, plan: Plan, rules: SearchRules, *, now: datetime, kinds: set[str] | None,
                entry_types: set[str] | None, since: datetime | None, session: str | None, limit: int,
                windows: list[Window], w_date: float, window_candidates: int, recent: bool = False) -> list[Hit]:
    terms = plan.terms
    filtered = bool(kinds or entry_types or since or session)
    k = max(rules.candidates, limit * 3) * (5 if filtered else 1)
    v = view(ws, st)
    erules = expand.expand_rules(ws)
    fts, plan.mode = v.match(ws, plan, rules, k)
    bm25 = {r["id"]: float(r["score"]) for r in fts}
    rows = {r["id"]: r for r in fts}
    for w in windows:  # events of a time the query names, whatever their words
        a, b = w.outer
        for r in v.between(a, b, window_candidates):
            rows.setdefault(r["id"], r)
    if recent and not rows:  # the last resort: the newest memory
        rows = {r["id"]: r for r in v.recent(k)}
    if not rows:
        return []
    top = max(bm25.values(), default=1.0) or 1.0
    text_score = {i: s / top for i, s in bm25.items()}
    fuzzy = {i: coverage(terms, plan.weights, v.words(i, _body(r)), rules.fuzzy_min) for i, r in rows.items()}
    evidence, seeds = _expand(v, rows, text_score, fuzzy, rules, erules)
    for i, r in rows.items():
        if i not in fuzzy:
            fuzzy[i] = coverage(terms, plan.weights, v.words(i, _body(r)), rules.fuzzy_min)
    seed_sessions = [rows[i]["session"] for i in seeds]
    hits = _score(rows, bm25, text_score, fuzzy, evidence, seeds, seed_sessions, rules, erules, now=now,
                  kinds=kinds, entry_types=entry_types, since=since, session=session, windows=windows,
                  w_date=w_date)
    # Rows from the side index hold priority, pinning and reinforcement as created: the best are read again
    stale = [h.ref for h in sorted(hits, key=lambda h: -h.score)[:limit] if rows[h.ref].get("side")]
    if stale:
        rows.update(v.fresh(stale))
        fresh = set(stale)
        hits = [h for h in hits if h.ref not in fresh] + _score(
            {i: rows[i] for i in stale}, bm25, text_score, fuzzy, evidence, seeds, seed_sessions, rules, erules,
            now=now, kinds=kinds, entry_types=entry_types, since=since, session=session, windows=windows,
            w_date=w_date)
    return hits


def _score(rows: dict[str, dict[str, Any]], bm25: dict[str, float], text_score: dict[str, float],
           fuzzy: dict[str, float], evidence: dict[str, float], seeds: list[str], seed_sessions: list[Any],
           rules: SearchRules, erules: expand.ExpandRules, *, now: datetime, kinds: set[str] | None,
           entry_types: set[str] | None, since: datetime | None, session: str | None, windows: list[Window],
           w_date: float) -> list[Hit]:
    hits = []
    for node_id, row in rows.items():
        if kinds and row["kind"] not in kinds:
            continue
        if entry_types and row["entry_type"] not in entry_types:
            continue
        if since and (row["created_at"] is None or row["created_at"] < since):
            continue
        if session and row["session"] != session:
            continue
        body = _body(row)
        share = session_share(seed_sessions, row["session"], node_id in seeds)
        found = evidence.get(node_id, 0.0)
        parts = {
            "text": text_score[node_id] if node_id in bm25 else erules.inherit * found,
            "fuzzy": fuzzy[node_id],
            "graph": expand.graph_part(found, share, erules),
            "recency": recency(row["reinforced_at"] or row["created_at"], now, rules.half_life_days),
            "importance": importance(row, rules),
        }
        if windows:
            parts["date"] = dates.weight(windows, row["created_at"])
        kind = row["entry_type"] or row["kind"]
        where = f"graph {node_id} ({kind}" + (f", session {row['session']}" if row["session"] else "") + ")"
        hits.append(Hit("graph", node_id, kind, row["text"], body,  # cut to a snippet once ranked
                        combine(parts, rules, w_date), where, iso(row["created_at"]), row["session"],
                        list(row["tags"] or []), {k: round(v, 4) for k, v in parts.items()}))
    return hits


# -- the files ----------------------------------------------------------------------------------------------
def _file_sets(ws: Any, sources: tuple[str, ...], since: datetime | None, now: datetime,
               session: str | None, in_graph: Any = None) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    for source in sources:
        if source in ("MEMORY.md", "USER.md"):
            for path in (ws.root / source, ws.memory / source):
                if path.is_file() and not session:
                    out.append((source, path))
        elif source == "daily" and not session:
            start = since or (now - timedelta(days=DAILY_DAYS_DEFAULT))
            for path in sorted(ws.memory.glob("*.md"), reverse=True):
                m = DAILY.match(path.name)
                if m and m.group(1) >= f"{start:%Y-%m-%d}":
                    out.append(("daily", path))
        elif source == "sessions":
            pattern = f"{paths.check_name(session, 'session id')}.md" if session else "*.md"
            found = set((ws.memory / "sessions").glob(pattern))
            if session and ":" in session:  # a new file's portable name (kg.memory.sessions.file_name)
                found |= set((ws.memory / "sessions").glob(session.replace(":", "-") + ".md"))
            out += [("sessions", p) for p in sorted(found, reverse=True)]
        elif source == "skills" and not session:
            out += [("skills", p) for p in sorted((ws.memory / "skills").glob("*.md"))]
        elif source == "trail" and not session:
            path = ws.memory / ".learning-trail.json"
            if path.is_file() and not (in_graph and mirrors_graph(path, in_graph)):
                out.append(("trail", path))
    return out


def _file_hits(ws: Any, terms: list[str], rules: SearchRules, *, now: datetime, sources: tuple[str, ...],
               since: datetime | None, session: str | None, match_terms: list[str] | None = None,
               in_graph: Any = None) -> list[Hit]:
    """Lines of the memory files that hold the query's rarer terms (`match_terms`, as for the index: a
    common word would match thousands of log lines), ranked like the graph's hits."""
    stems = sorted({stem_prefix(t) for t in (match_terms or terms)}, key=len, reverse=True)
    if not stems:
        return []
    finder = re.compile("|".join(re.escape(s) for s in stems))
    chunks: list[tuple[str, Path, int, str, set[str]]] = []
    total_lines = 0
    for source, path in _file_sets(ws, sources, since, now, session, in_graph):
        try:
            if source == "trail":
                lines = _trail_lines(path)
                text = "\n".join(lines)
            else:
                text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        low = text.lower()
        total_lines += low.count("\n") + 1
        if not finder.search(low):
            continue
        newlines = [m.start() for m in re.finditer("\n", low)]
        seen_lines: dict[int, set[str]] = {}
        for m in finder.finditer(low):
            seen_lines.setdefault(bisect_right(newlines, m.start()), set()).add(m.group(0))
        all_lines = text.split("\n")
        for number, found in seen_lines.items():
            line = all_lines[number].strip()
            if not line or (line.startswith("#") and not line.startswith(("###", "## "))):
                continue
            chunks.append((source, path, number + 1, line, found))
    if not chunks:
        return []
    df = Counter(s for c in chunks for s in c[4])
    n = max(total_lines, len(chunks))
    idf = {s: math.log(1 + (n - df[s] + 0.5) / (df[s] + 0.5)) for s in df}
    raw = [sum(idf[s] for s in c[4]) for c in chunks]
    top = max(raw) or 1.0
    # Only the best lines are re-ranked: a common word can match thousands of log lines.
    keep = sorted(range(len(chunks)), key=lambda i: (-raw[i], i))[: rules.candidates]
    hits = []
    for source, path, number, line, _found, score in ((*chunks[i], raw[i]) for i in keep):
        m = LOG_LINE.match(line)
        body = m.group(1) if m else line.lstrip("-* ").strip()
        day = DAILY.match(path.name)
        at = datetime.fromisoformat(day.group(1)) if day else datetime.fromtimestamp(path.stat().st_mtime)
        if since and at < since and source == "daily":
            continue
        parts = {"text": score / top, "fuzzy": coverage(terms, {}, set(words(body)), rules.fuzzy_min),
                 "graph": 0.0, "recency": recency(at, now, rules.half_life_days),
                 "importance": FILE_PRIOR.get(source, 0.4)}
        rel = str(path.relative_to(ws.root))
        hits.append(Hit(source, f"{rel}:{number}", "file", body, body,
                        combine(parts, rules), f"{rel}:{number}", at.isoformat(),
                        path.stem if source == "sessions" else None, [],
                        {k: round(v, 4) for k, v in parts.items()}))
    return hits


# -- the search ---------------------------------------------------------------------------------------------
def _parse_types(type_: str | list[str] | None, ws: Any) -> tuple[set[str] | None, set[str] | None]:
    if not type_:
        return None, None
    names = [type_] if isinstance(type_, str) else list(type_)
    kinds, entry_types = set(), set()
    for raw in names:
        for t in (x.strip().lower() for x in raw.split(",") if x.strip()):
            if t in KNOWLEDGE_KINDS:
                kinds.add(t)
            elif t in ws.policy.kinds:
                entry_types.add(t)
            else:
                raise UsageError(f"unknown type {t!r}: use one of {', '.join(KNOWLEDGE_KINDS + ws.policy.kinds)}")
    return kinds or None, entry_types or None


def collapse(hits: list[Hit]) -> list[Hit]:
    """One hit per memory: hits with the same text (an event, the pattern named after it, its daily-log line,
    identical events logged again) become the best of them, naming the others in `also`, counting the graph
    nodes, and keeping every tag. An event stands for the group before a pattern, a node before a line.
    `hits` must be sorted best first. Pure."""
    groups: dict[str, list[Hit]] = {}
    for h in hits:
        groups.setdefault(folded(h.text or ""), []).append(h)
    out = []
    for group in groups.values():
        lead = min(group, key=lambda h: (h.source != "graph", h.kind == "pattern", -h.score))
        lead.score = max(h.score for h in group)
        lead.count = sum(1 for h in group if h.source == "graph" and h.kind != "pattern") or 1
        for h in group:
            if h is not lead:
                lead.also.append(h.location if h.source != "graph" else h.ref)
                lead.tags += [t for t in h.tags if t not in lead.tags]
        out.append(lead)
    return out


def search(ws: Any, query: str, *, type: str | list[str] | None = None, since: str | datetime | None = None,
           session: str | None = None, limit: int | None = None, now: datetime | str | None = None,
           sources: list[str] | tuple[str, ...] | None = None) -> list[Hit]:
    """Ranked hits for `query` over the graph and the memory files, one per memory. Deterministic for a given
    state. A query that finds nothing is relaxed: a term found nowhere is replaced by a similar known one
    (`match` = "fuzzy"), then the newest memory is returned (`match` = "recent")."""
    mrules = memory_rules(ws)
    rules = mrules.search
    at = clock.now(now)
    text = clean(query or "", one_line=True)
    if not text:
        raise UsageError("the search query is empty")
    limit = limit or rules.limit
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    since_at = None
    if since:
        since_at = since if isinstance(since, datetime) else clock.parse_since(since, at)
    kinds, entry_types = _parse_types(type, ws)
    chosen = tuple(sources) if sources else rules.sources
    for s in chosen:
        if s not in KNOWN_SOURCES:
            raise UsageError(f"unknown source {s!r}: use one of {', '.join(KNOWN_SOURCES)}")
    if kinds or entry_types:
        chosen = ("graph",)  # a node type only exists in the graph
    windows, rest = dates.find(text, at, mrules.dates)
    terms = query_terms(rest)
    if not terms and not windows:  # only stopwords: search with them rather than return nothing
        terms = list(dict.fromkeys(words(text)))
    from kg.graph import linking

    link_rules = linking.rules_of(ws.rules)
    hits: list[Hit] = []
    match = "terms"
    budget = fts_rules(ws).postings_max
    with ws.reading() as st:
        cache = cached_view(ws, st)
        memo = cache.memo.setdefault("df", {}) if cache is not None else None
        p = plan_query(st, terms, rules, link_rules, lambda: common_terms(ws, st), memo, budget)
        graph_args = dict(now=at, kinds=kinds, entry_types=entry_types, since=since_at, session=session,
                          limit=limit, windows=windows, w_date=mrules.dates.w_date,
                          window_candidates=mrules.dates.window_candidates)
        if "graph" in chosen:
            hits = _graph_hits(ws, st, p, rules, **graph_args)
            if not hits and p.absent:
                replaced = fuzzy_replacements(st, p.absent, rules, link_rules)
                if replaced:
                    p = plan_query(st, [replaced.get(t, t) for t in terms], rules, link_rules,
                                   lambda: common_terms(ws, st), memo, budget)
                    p.replaced = replaced
                    hits = _graph_hits(ws, st, p, rules, **graph_args)
                    match = "fuzzy"
        file_sources = tuple(s for s in chosen if s != "graph")
        if file_sources:
            hits += _file_hits(ws, p.terms, rules, now=at, sources=file_sources, since=since_at,
                               session=session, match_terms=p.ask,
                               in_graph=lambda ids: all(st.run("node_exists", id=i) for i in ids))
        if not hits and "graph" in chosen and not (kinds or entry_types or since_at or session):
            hits = _graph_hits(ws, st, p, rules, **{**graph_args, "windows": []}, recent=True)
            match = "recent"
    order = {s: i for i, s in enumerate(KNOWN_SOURCES)}
    hits.sort(key=lambda h: (-round(h.score, 9), order.get(h.source, 99), h.ref))
    hits = collapse(hits)
    hits.sort(key=lambda h: (-round(h.score, 9), order.get(h.source, 99), h.ref))
    hits = hits[:limit]
    for h in hits:
        h.score = round(h.score, 4)
        h.also.sort()
        h.match = match
        h.fts = p.mode if p.mode in BOUNDED else ""
        h.snippet = snippet(h.snippet, p.terms, rules.snippet_chars)
    return hits


BOUNDED = {"bounded": "common words only: the newest entries holding the rarest of them, re-ranked",
           "relaxed": "common words only: the newest entries holding the rarest of them, re-ranked"}
RELAXED = {"fuzzy": "nothing held every word as written; matched similar words instead",
           "recent": "nothing matched; showing the newest memory instead"}


def render(hits: list[dict[str, Any]], query: str) -> str:
    from kg.redaction.redact import redact_text

    query = redact_text(query)  # the answer is read back into the agent's context, and often logged
    if not hits:
        return f"No results for '{query}'"
    lines = [f"🔍 {len(hits)} result(s) for '{query}':"]
    if hits[0].get("match") in RELAXED:
        lines.append(f"  ({RELAXED[hits[0]['match']]})")
    if hits[0].get("fts") in BOUNDED:
        lines.append(f"  ({BOUNDED[hits[0]['fts']]})")
    for i, h in enumerate(hits, 1):
        lines.append(f"  {i}. [{h['score']:.3f}] {h['location']}")
        lines.append(f"     → {h['snippet']}")
        if h.get("count", 1) > 1:
            lines.append(f"     {h['count']} identical events")
        if h.get("also"):
            lines.append(f"     also in: {', '.join(h['also'])}")
    return "\n".join(lines)
