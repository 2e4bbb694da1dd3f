"""Import and export of the seed's formats: `memory/.learning-trail.json` and `.learnings/*.md`.

Both directions go through the graph: export renders it, import validates, redacts and bulk-loads. Files
written by other tools or by hand to the same convention import too; what cannot be read is counted and
reported, never half-written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.entries import TooLong, prepare
from kg.core.errors import KgError, UsageError
from kg.core.files import check_folder
from kg.core.text import clean, index_tokens
from kg.ingest import trail_lifecycle
from kg.ingest.journal import write_atomic
from kg.memory.logs import LEARNINGS_DIR, field_text, write_learnings
from kg.store import (
    HIDDEN_COLUMNS,
    KNOWLEDGE_KINDS,
    NODE_COLUMNS,
    plain,
)
from kg.workspace_out import check_out

TRAIL_FILE = Path("memory") / ".learning-trail.json"
_ENTRY_ID = re.compile(r"^(LRN|ERR|FEAT)-\d{8}-[0-9A-Za-z]+$")
_NODE_ID = re.compile(r"^(eve|les|pri|kno|pat)-\d{8}-\d+$")
_KIND = re.compile(r"[a-z0-9][a-z0-9_]{0,63}")  # a secret kind's name (kg/redaction/rules.py)
_KIND_OF_PREFIX = {"LRN": "learning", "ERR": "error", "FEAT": "feature"}


@dataclass
class ImportReport:
    entries: int = 0
    nodes: int = 0
    edges: int = 0
    already_present: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    redacted: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    resumed: bool = False  # this run finished an import that was interrupted
    # a value kg's vocabulary does not hold, which took the default: "priority 'urgent' -> medium" -> entries
    defaulted: dict[str, int] = field(default_factory=dict)
    # the trail's lifecycle loaded (kg/ingest/trail_lifecycle.py): "changes" | "proposals" | ... -> how many
    lifecycle: dict[str, int] = field(default_factory=dict)
    # ... and not loaded: another workspace's lifecycle, or one beside the graph's own (kg/ingest/trail_lifecycle.py)
    lifecycle_not_imported: dict[str, int] = field(default_factory=dict)
    # another workspace's active principles, each a pending `import` proposal (kg/lifecycle/imported.py)
    principles_proposed: int = 0
    # another workspace's promoted TOOLS.md/USER.md/skill rules, each a pending `import` proposal
    # (kg/lifecycle/imported_rules.py)
    rules_proposed: int = 0

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        return {"entries": self.entries, "nodes": self.nodes, "edges": self.edges,
                "already_present": self.already_present, "skipped": self.skipped,
                "redacted": sorted(set(self.redacted)), "warnings": self.warnings, "resumed": self.resumed,
                "defaulted": self.defaulted, "lifecycle": self.lifecycle,
                "lifecycle_not_imported": self.lifecycle_not_imported,
                "principles_proposed": self.principles_proposed, "rules_proposed": self.rules_proposed}


# -- export -------------------------------------------------------------------------------------------------
def export_trail(ws: Any, *, out: Path | None = None, learnings: bool | None = None,
                 now: datetime | str | None = None) -> dict[str, Any]:
    """Write the trail JSON (and `.learnings/*.md` when that folder exists or `learnings=True`). `ws`: a
    Workspace, a workspace folder's path, or None for the one the current folder is in, as the analyst's
    exports take it (a path was an AttributeError, 'str' object has no attribute 'store': QA8 #3)."""
    from kg.workspace import Workspace

    if not isinstance(ws, Workspace):
        from kg.analysis.graphs import _workspace  # (networkx is loaded only for a notebook's path)

        ws = _workspace(ws)
    at = clock.now(now)
    # the CLI's guard (kg/workspace_out.py), before the graph is read: an `out` of MEMORY.md or kg.toml is refused
    target = check_out(ws, out, trail=True, example=TRAIL_FILE.name) if out is not None else ws.root / TRAIL_FILE
    with ws.store() as st:
        nodes = [plain(r["n"], hide=HIDDEN_COLUMNS) for r in st.run("nodes_all")]
        edges = [plain(r, hide=HIDDEN_COLUMNS) for r in st.run("edges_all")]
        stats = st.run("pattern_stats_all", limit=10**9)
        patterns = {p["key"]: p for p in (plain(r, hide=HIDDEN_COLUMNS) for r in stats)}
        lifecycle = trail_lifecycle.read(st, ws)
    doc = build_trail(nodes, edges, patterns, at, lifecycle)
    if learnings or (learnings is None and (ws.root / LEARNINGS_DIR).is_dir()):
        check_folder(ws.root / LEARNINGS_DIR, root=ws.root)  # refused before the trail is written either
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    written = [str(target)]
    kept: list[dict[str, str]] = []
    if learnings or (learnings is None and (ws.root / LEARNINGS_DIR).is_dir()):
        events = [n for n in nodes if n["kind"] == "event"]
        report = write_learnings(ws.root, events, lock=ws.journal.locked)  # the files' one writer
        written += report.written
        kept = report.kept
    warnings = []
    if getattr(ws, "store_url", None) is not None:  # said, not silent (QA6 #5: the same line as a full trail)
        warnings.append("this workspace's graph is a team graph, which keeps its lifecycle per workspace on the "
                        "server: the trail holds the entries, nodes and edges, not the applied changes, proposals, "
                        "decisions or blocks")
    return {"written": written, "entries": len(doc["entries"]), "nodes": len(doc["graph"]["nodes"]),
            "edges": len(doc["graph"]["edges"]), "kept": kept, "warnings": warnings}


def build_trail(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], patterns: dict[str, dict[str, Any]],
                at: datetime, lifecycle: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The seed's trail document (version 3) from graph rows, with kg's own additions: each node's state
    (`kg.ingest.trail_lifecycle.NODE_STATE`), the applied `changes` and the `lifecycle` (proposals, decisions,
    blocks), so that a graph rebuilt from it is the same graph. Pure."""
    lifecycle = lifecycle or {}
    changes = lifecycle.get("changes") or []
    entries, graph_nodes, principles = [], [], []
    for n in nodes:
        if n["kind"] == "event" and n.get("entry_type"):
            p = patterns.get(n.get("pattern_key") or "")
            entries.append({
                "id": n["id"], "type": n["entry_type"], "category": n.get("category"), "summary": n["text"],
                "details": n.get("details") or "", "suggested_action": n.get("action") or "",
                "area": n.get("area"), "priority": n.get("priority"), "status": n.get("status"),
                "logged": n.get("created_at"), "source": n.get("source"), "pattern_key": n.get("pattern_key"),
                "recurrence_count": p["recurrence"] if p else 1,
                "first_seen": (p["first_seen"] if p else n.get("created_at") or "")[:10],
                "last_seen": (p["last_seen"] if p else n.get("created_at") or "")[:10],
                "session": n.get("session"), "files": n.get("files") or [], "tags": n.get("tags") or [],
                "error": n.get("error_text"), "context": n.get("context"), "reproducible": n.get("reproducible"),
                "user_context": n.get("user_context"), "complexity": n.get("complexity"),
                "frequency": n.get("frequency"), "redactions": n.get("redactions") or [],
                **trail_lifecycle.state_of(n),
            })
        else:
            graph_nodes.append({
                "id": n["id"], "type": n["kind"], "content": n["text"], "tags": n.get("tags") or [],
                "source": n.get("source") or "manual", "created": n.get("created_at"),
                "confidence": 1.0 if n["kind"] == "event" else 0.5,
                "status": n.get("status"), "pattern_key": n.get("pattern_key"), "area": n.get("area"),
                "priority": n.get("priority"), "category": n.get("category"), "files": n.get("files") or [],
                "redactions": n.get("redactions") or [], **trail_lifecycle.state_of(n),
            })
            if n["kind"] == "principle" and n.get("status") not in ("reverted", "wont_fix"):
                principles.append(n["text"])
    graph_edges = [{"from": e["src"], "to": e["dst"], "type": e["type"], "created": e.get("created_at"),
                    "properties": {"manual": e.get("manual"), "score": e.get("score"), "reason": e.get("reason")}}
                   for e in edges]
    return {
        "version": 3, "generator": "kaizen-kg", "exported": at.isoformat(), "last_cycle": None,
        "entries": entries, "changes": changes, "watchlist": [], "principles": principles,
        "graph": {"nodes": graph_nodes, "edges": graph_edges},
        "lifecycle": {kind: lifecycle.get(kind) or [] for kind in ("proposals", "decisions", "blocks")},
        "stats": {"total_entries": len(entries), "total_changes": len(changes),
                  "verified_ok": sum(1 for c in changes if c.get("status") == "confirmed"),
                  "reverted": sum(1 for c in changes if c.get("reverted_at")),
                  "total_nodes": len(graph_nodes), "total_edges": len(graph_edges)},
    }


# -- import -------------------------------------------------------------------------------------------------
def import_trail(ws: Any, paths: list[Path] | None = None, *, now: datetime | str | None = None,
                 dry_run: bool = False, progress: Callable[[int, int], None] | None = None) -> ImportReport:
    """Import trail JSON files and `.learnings/*.md` files (default: the workspace's own, or those of an
    import that was interrupted). Streams: memory stays bounded whatever the files' size (see kg.ingest.importing)."""
    from kg.ingest import importing

    at = clock.now(now)
    report = ImportReport()
    if not paths and importing.interrupted(ws) is None:
        paths = [p for p in [ws.root / TRAIL_FILE, *sorted((ws.root / ".learnings").glob("*.md"))] if p.exists()]
        if not paths:
            raise UsageError(f"nothing to import: no {TRAIL_FILE} and no .learnings/*.md in {ws.root}; "
                             "name a file to import")
    return importing.run(ws, list(paths or []), at=at, report=report, dry_run=dry_run, progress=progress)


_HEADER = re.compile(r"^##\s*\[([A-Za-z]+-\d{8}-[0-9A-Za-z]+)\]\s*(.*)$")
_FIELD = re.compile(r"^\*\*([A-Za-z -]+)\*\*:\s*(.*)$")
_SECTION = re.compile(r"^###\s+(.+?)\s*$")
_META = re.compile(r"^-\s*([A-Za-z -]+):\s*(.*)$")
_SECTION_FIELDS = {
    "summary": "summary", "details": "details", "suggested action": "suggested_action",
    "suggested fix": "suggested_action", "suggested implementation": "suggested_action", "error": "error",
    "context": "context", "user context": "user_context", "complexity estimate": "complexity",
}
_META_FIELDS = {
    "source": "source", "related files": "files", "tags": "tags", "pattern-key": "pattern_key",
    "session": "session", "reproducible": "reproducible", "frequency": "frequency",
    "recurrence-count": "recurrence_count", "first-seen": "first_seen", "last-seen": "last_seen",
}


def parse_learnings_md(text: str, file: Path, report: ImportReport) -> list[dict[str, Any]]:
    """Entries in the `.learnings/*.md` convention: `## [ID] category:title`, `**Field**: value` lines,
    `### Section` bodies and `- Key: value` metadata. Pure apart from the report."""
    return list(iter_learnings_md(text.splitlines(), file, report))


def iter_learnings_md(lines: Iterable[str], file: Path, report: ImportReport) -> Iterator[dict[str, Any]]:
    """`parse_learnings_md` over lines read one at a time: each entry is handed out when the next begins."""
    current: dict[str, Any] | None = None
    section: str | None = None
    body: list[str] = []

    def close_section() -> None:
        if current is not None and section:
            value = field_text("\n".join(body)).strip()  # a line kg escaped as structure (`field_lines`)
            if section == "metadata":
                for line in body:
                    m = _META.match(line.strip())
                    if m and m.group(1).strip().lower() in _META_FIELDS:
                        current[_META_FIELDS[m.group(1).strip().lower()]] = m.group(2).strip()
            elif section in _SECTION_FIELDS and value:
                current[_SECTION_FIELDS[section]] = value

    for raw in lines:
        line = raw.rstrip()
        header = _HEADER.match(line)
        if header:
            close_section()
            if current is not None:
                yield current
            entry_id, title = header.groups()
            category = title.split(":", 1)[0].strip() if ":" in title else None
            current = {"id": entry_id, "category": category, "_title": title, "_source": str(file)}
            section, body = None, []
            continue
        if line.startswith("## "):
            # a second-level heading that is not an entry header ends the entry before it
            close_section()
            if current is not None:
                yield current
            current, section, body = None, None, []
            report.skip("entry without a LRN/ERR/FEAT id")
            continue
        if current is None:
            continue
        if line.strip() == "---":
            continue
        sec = _SECTION.match(line)
        if sec:
            close_section()
            section, body = sec.group(1).strip().lower(), []
            continue
        fld = _FIELD.match(line.strip())
        if fld and section is None:
            current[fld.group(1).strip().lower()] = fld.group(2).strip()
            continue
        if section:
            body.append(line)
    close_section()
    if current is not None:
        yield current


def _split_list(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return []


def _kinds(value: Any) -> list[str]:
    """The secret kinds a trail says an item's text lost (`redactions`, as kg exports it): a graph rebuilt from
    the trail says so too (the text holds only the markers, so the import finds nothing to redact)."""
    return [v for v in value if isinstance(v, str) and _KIND.fullmatch(v)] if isinstance(value, list) else []


def item_id(kind: str, item: Any) -> str | None:
    """The id an entry or graph node of the files will be loaded under, when it has a valid one (as
    `_entry_rows` and `_node_rows` read it), else None."""
    if kind == "entries":
        key = str(item.get("id") or "").strip()
        return key if _ENTRY_ID.match(key) else None
    if kind == "nodes":
        key = str(item.get("id") or "")
        return key if _NODE_ID.match(key) else None
    return None


_CHOICES = (("source", "sources", "import"), ("priority", "priorities", None), ("category", "categories", None),
            ("reproducible", "reproducible", None), ("complexity", "complexity", None),
            ("frequency", "frequency", None), ("status", "statuses", "pending"))
# the trail's free-text fields -> `prepare`'s names
_TEXTS = (("details", "details"), ("suggested_action", "action"), ("area", "area"), ("pattern_key", "pattern_key"),
          ("error", "error_text"), ("context", "context"), ("user_context", "user_context"))
_ROW = dict.fromkeys(NODE_COLUMNS + trail_lifecycle.NODE_STATE_COLUMNS)


def _entry_rows(ws: Any, entries: list[dict[str, Any]], at: datetime, report: ImportReport, *,
                redactor: Any = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Node rows and pattern links for entries. `redactor` is the import's `Gated` for items already
    redacted (their kinds under `_redactions`); by default each value is redacted here.

    The closed vocabularies (source, priority, ...) are read once per distinct value of a batch (`_known`'s
    answers kept per combination in `known`) and handed to `prepare` as None: it would check again what `_known`
    has checked (its defaults then apply, and the known value replaces them: the same fields as passing it in)."""
    rows, links = [], []
    policy = ws.policy
    redactor = redactor or ws.rules.redactor
    # the vocabulary fields' values -> `_known`'s answers, and the values it did not know (each took the default)
    known: dict[tuple[Any, ...], tuple[tuple[tuple[str, str], ...], tuple[str, ...]]] = {}
    choices = [(name, getattr(policy, table), default) for name, table, default in _CHOICES]
    names = [name for name, _, _ in _CHOICES]
    columns = _ROW.keys()
    fallback = at.isoformat()
    entry_id_ok = _ENTRY_ID.match
    for item in entries:
        entry_id = item.get("id")
        entry_id = str(entry_id or "").strip() if entry_id.__class__ is not str else entry_id.strip()
        if not entry_id_ok(entry_id):
            report.skip("entry without a LRN/ERR/FEAT id")
            continue
        kind = _KIND_OF_PREFIX[entry_id.split("-", 1)[0]]
        summary = item.get("summary") or (item.get("_title", "").split(":", 1)[-1].replace("_", " "))
        logged = item.get("logged") or item.get("first_seen") or fallback
        try:
            created = clock.parse_time(str(logged), what="logged time")
        except UsageError:
            report.skip("entry with an unreadable time")
            continue
        fields: dict[str, Any] = {}
        for key, name in _TEXTS:
            v = item.get(key) or None
            fields[name] = str(v) if v.__class__ in (int, float) else v
        # as given: `prepare` splits a text on commas and refuses what is no list of texts (the entry is skipped,
        # the warning naming the field), as `kg ingest` does; an object's keys were taken as tags
        fields["files"] = item.get("files")
        fields["tags"] = item.get("tags")
        values = tuple(map(item.get, names))
        try:
            hit = known.get(values)
        except TypeError:  # a list or an object where a word belongs: `_known` reads it as text
            hit = None
        if hit is None:
            chosen = tuple((name, got) for (name, allowed, default), value in zip(choices, values, strict=True)
                           if (got := _known(value, allowed, default)) is not None)
            hit = chosen, tuple(f"{name} {str(value).strip()!r}"
                                for (name, allowed, default), value in zip(choices, values, strict=True)
                                if value is not None and str(value).strip() and _known(value, allowed, None) is None)
            if len(known) < 4096 and all(v.__class__ in (str, type(None)) for v in values):
                known[values] = hit
        chosen, unknown = hit
        for what in unknown:
            report.defaulted[what] = report.defaulted.get(what, 0) + 1
        try:
            prepared = prepare(policy, redactor, kind, str(summary), now=created,
                               session=item.get("session") or None, **fields)
        except KgError as exc:
            report.skip("invalid entry")
            said = exc.said(exc.field) if isinstance(exc, TooLong) else exc  # the trail's field, not a flag
            report.warnings.append(f"{item.get('_source', '?')}: {entry_id}: {said}")
            continue
        report.redacted.extend(prepared.redactions)
        f = prepared.fields
        f.update(chosen)
        row = _ROW.copy()
        row.update(f if f.keys() <= columns else {k: v for k, v in f.items() if k in columns})
        found = [*(item.get("_redactions") or ()), *_kinds(item.get("redactions"))]
        # reinforced when kg learned it (the import), not at its own older time: the first cycle after an import of
        # old history does not expire it, as an ingested entry's (kg/ingest/apply.py); a trail's own state wins
        row.update(id=entry_id, kind="event", created_at=created, updated_at=created,
                   reinforced_at=created if created > at else at, pinned=False, stale=False, decay_stage=0,
                   redactions=sorted({*prepared.redactions, *found}) if found or prepared.redactions else [])
        trail_lifecycle.apply_state(row, item)
        rows.append(row)
        if f["pattern_key"]:
            links.append({"key": f["pattern_key"], "event": entry_id, "at": created, "text": f["text"],
                          "area": f["area"], "priority": f["priority"]})
    return rows, links


def _known(value: Any, allowed: tuple[str, ...], default: str | None) -> str | None:
    if value is None:
        return default
    text = str(value).strip().lower().replace("-", "_")
    return text if text in allowed else default


def _node_rows(ws: Any, nodes: list[dict[str, Any]], at: datetime, report: ImportReport, *,
               redactor: Any = None) -> list[dict[str, Any]]:
    rows = []
    redactor = redactor or ws.rules.redactor
    for item in nodes:
        node_id = str(item.get("id") or "")
        kind = str(item.get("type") or "")
        if kind not in KNOWLEDGE_KINDS or not _NODE_ID.match(node_id):
            report.skip("graph node with an unknown type or id")
            continue
        text = clean(str(item.get("content") or ""), one_line=True)
        if not text:
            report.skip("graph node without content")
            continue
        redacted = redactor.redact(text)
        report.redacted.extend(redacted.kinds)
        kinds = sorted({*redacted.kinds, *(item.get("_redactions") or ()), *_kinds(item.get("redactions"))})
        try:
            created = clock.parse_time(str(item.get("created") or at.isoformat()))
        except UsageError:
            created = at
        row = {c: None for c in NODE_COLUMNS}
        tags = _split_list(item.get("tags"))
        category = item.get("category")
        row.update(id=node_id, kind=kind, text=redacted.text, tags=tags, files=_split_list(item.get("files")),
                   category=category if isinstance(category, str) and category else None, redactions=kinds,
                   source=str(item.get("source") or "import"), status=item.get("status") or "active",
                   pattern_key=item.get("pattern_key"), area=item.get("area"), priority=item.get("priority"),
                   created_at=created, updated_at=created, reinforced_at=created if created > at else at,
                   pinned=False, stale=False,
                   decay_stage=0, tokens=index_tokens(redacted.text, " ".join(tags)))
        trail_lifecycle.apply_state(row, item)
        rows.append(row)
    return rows
