"""Memory search over the files: MEMORY.md, USER.md, the daily logs, session summaries, skills and the imported
trail (when it does not only mirror the graph), each line ranked like the graph's hits and dated."""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from kg.core import clock, paths
from kg.core.text import joined_pattern, search_words, stem_prefix
from kg.memory import dates
from kg.memory.dates import Window
from kg.memory.hits import Hit
from kg.memory.ranking import combine, coverage, recency
from kg.memory.rules import SearchRules

DAILY = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
LOG_LINE = re.compile(r"^###\s+\S+\s+\d{2}:\d{2}\s*[-–—]\s*(?:(?:Error|Insight|Correction|User preference|"
                      r"Feature request|Session summary \S+):\s+)?(.*)$")
FILE_PRIOR = {"MEMORY.md": 0.9, "USER.md": 0.8, "skills": 0.6, "sessions": 0.5, "daily": 0.4, "trail": 0.3}
DAILY_DAYS_DEFAULT = 30

TRAIL_ID = re.compile(rb'"id"\s*:\s*"([A-Za-z0-9_.:-]{1,80})"')
TRAIL_PROBE = 65536
# the ids of the trail's entries and graph nodes (as kg.ingest.trail reads them): its changes, proposals,
# decisions and blocks (kg/ingest/trail_lifecycle.py) have ids too, which are no graph nodes
GRAPH_ID = re.compile(r"^(?:(?:LRN|ERR|FEAT)-\d{8}-[0-9A-Za-z]+|(?:eve|les|pri|kno|pat)-\d{8}-\d+)$")


def mirrors_graph(path: Path, in_graph: Any) -> bool:
    """Whether the trail JSON mirrors the graph (it was imported, or written by `kg export trail`): the ids at
    both ends of the file are all graph nodes. Its lines would then only repeat graph hits, and reading it
    means parsing every entry (45 MB at 100k entries) on each search. A trail the seed's tool went on writing
    after the import ends with ids the graph lacks, and is searched."""
    try:
        with path.open("rb") as f:
            head = f.read(TRAIL_PROBE)
            size = f.seek(0, 2)
            f.seek(max(0, size - TRAIL_PROBE))
            tail = f.read()
    except OSError:
        return False
    ids = [i for i in (m.decode() for m in TRAIL_ID.findall(head)) if GRAPH_ID.match(i)][:5] + \
        [i for i in (m.decode() for m in TRAIL_ID.findall(tail)) if GRAPH_ID.match(i)][-5:]
    return bool(ids) and in_graph(ids)


def _trail_lines(path: Path) -> list[str]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return []
    lines = []
    for e in doc.get("entries", []) if isinstance(doc, dict) else []:
        if isinstance(e, dict):
            lines.append(f"[{e.get('id', '')}] {e.get('summary', '')} {e.get('details', '') or ''}".strip())
    for p in doc.get("principles", []) if isinstance(doc, dict) else []:
        lines.append(f"principle: {p}")
    graph = doc.get("graph", {}) if isinstance(doc, dict) else {}
    for n in graph.get("nodes", []) if isinstance(graph, dict) else []:
        if isinstance(n, dict):
            lines.append(f"[{n.get('id', '')}] {n.get('content', '')}")
    return lines


def file_sets(ws: Any, sources: tuple[str, ...], since: datetime | None, now: datetime,
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


def file_hits(ws: Any, terms: list[str], rules: SearchRules, *, now: datetime, sources: tuple[str, ...],
               since: datetime | None, session: str | None, match_terms: list[str] | None = None,
               in_graph: Any = None, windows: list[Window] = (), w_date: float = 0.0) -> list[Hit]:
    """Lines of the memory files that hold the query's rarer terms (`match_terms`, as for the index: a
    common word would match thousands of log lines), ranked like the graph's hits."""
    asked = match_terms or terms
    stems = sorted({stem_prefix(t) for t in asked if " " not in t}, key=len, reverse=True)
    # a version or id ("2 4 1") as written: its pieces joined by . - : (first, so it wins over a word in it)
    found_as = [joined_pattern(t) for t in asked if " " in t] + [re.escape(s) for s in stems]
    if not found_as:
        return []
    finder = re.compile("|".join(found_as))
    chunks: list[tuple[str, Path, int, str, set[str], datetime]] = []
    stamps: dict[Path, datetime] = {}
    total_lines = 0
    for source, path in file_sets(ws, sources, since, now, session, in_graph):
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
            if source == "sessions" and (line.startswith("#") or GENERATED.match(line) or line == "- (none)"):
                continue  # a summary's frame (its title, section headings, "Generated:"): no memory in it
            at, day_only = line_when(source, path, line, stamps)
            if since and at < since and not (day_only and at + timedelta(days=1) > since):
                continue  # every line is dated (its own time, its day, or its file's): --since holds for each
            chunks.append((source, path, number + 1, line, found, at))
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
    for source, path, number, line, _found, at, score in ((*chunks[i], raw[i]) for i in keep):
        m = LOG_LINE.match(line)
        body = m.group(1) if m else line.lstrip("-* ").strip()
        parts = {"text": score / top, "fuzzy": coverage(terms, {}, search_words(body), rules.fuzzy_min),
                 "graph": 0.0, "recency": recency(at, now, rules.half_life_days),
                 "importance": FILE_PRIOR.get(source, 0.4)}
        if windows:
            parts["date"] = dates.weight(windows, at)
        rel = str(path.relative_to(ws.root))
        hits.append(Hit(source, f"{rel}:{number}", "file", body, body,
                        combine(parts, rules, w_date), f"{rel}:{number}", at.isoformat(),
                        path.stem if source == "sessions" else None, [],
                        {k: round(v, 4) for k, v in parts.items()}))
    return hits


LINE_TIME = re.compile(r"^###\s+\S+\s+(\d{2}):(\d{2})\b")
_TRAIL_LINE_DAY = re.compile(r"^\[[A-Za-z]+-(\d{4})(\d{2})(\d{2})-\d+\]")  # a trail line's entry id: its day
GENERATED = re.compile(r"^Generated: (\d{4}-\d{2}-\d{2} \d{2}:\d{2})$", re.M)


def line_when(source: str, path: Path, line: str, stamps: dict[Path, datetime]) -> tuple[datetime, bool]:
    """When a file line was written, and whether only its day is known: a daily log's day and the line's own HH:MM
    (only the day for a line under its entry's heading), a session summary's "Generated:" time, a trail line's
    entry id's day; else the file's last change. `--since` keeps a line known only by its day while any of its day
    is in the window, not only its midnight (review: `--since 1h` dropped the trail's entries of that morning)."""
    day = DAILY.match(path.name)
    if day:
        at = datetime.fromisoformat(day.group(1))
        hm = LINE_TIME.match(line)
        if hm and int(hm.group(1)) < 24 and int(hm.group(2)) < 60:
            return at.replace(hour=int(hm.group(1)), minute=int(hm.group(2))), False
        return at, True
    if source == "trail":
        m = _TRAIL_LINE_DAY.match(line)
        if m:
            try:
                return datetime(int(m.group(1)), int(m.group(2)), int(m.group(3))), True
            except ValueError:
                pass
    if path not in stamps:
        stamps[path] = clock.from_timestamp(path.stat().st_mtime)
        if source == "sessions":
            try:
                with path.open(encoding="utf-8", errors="replace") as f:
                    g = GENERATED.search(f.read(512))
                if g:
                    stamps[path] = datetime.fromisoformat(g.group(1))
            except (OSError, ValueError):
                pass
    return stamps[path], False
