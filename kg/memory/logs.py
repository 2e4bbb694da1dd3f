"""Plain files kg writes beside the graph: the daily log and the `.learnings/` copies.

Both are renderings for people and for agents that read markdown; the graph is the source of truth.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core.policy import Policy

LEARNINGS_FILES = {"learning": "LEARNINGS.md", "error": "ERRORS.md", "feature": "FEATURE_REQUESTS.md"}


def append_text(path: Path, text: str, *, header: str = "") -> None:
    """Append with O_APPEND, so concurrent writers never interleave inside one write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        data = text
        if header and os.fstat(fd).st_size == 0:
            data = header + text
        os.write(fd, data.encode("utf-8"))
    finally:
        os.close(fd)


def daily_log_path(memory: Path, at: datetime) -> Path:
    return memory / f"{at:%Y-%m-%d}.md"


def daily_line(policy: Policy, kind: str, category: str | None, summary: str, at: datetime) -> str:
    """`### ❌ 10:35 - Error: brief description`, the seed's format."""
    keys = [f"{kind}.{category}", kind] if category else [kind]
    icon = next((policy.log_icon[k] for k in keys if k in policy.log_icon), "💡")
    label = next((policy.log_label[k] for k in keys if k in policy.log_label), "")
    text = f"{label}: {summary}" if label else summary
    return f"### {icon} {at:%H:%M} - {text}\n"


def append_daily(memory: Path, line: str, at: datetime) -> Path:
    path = daily_log_path(memory, at)
    append_text(path, line, header=f"# {at:%Y-%m-%d}\n\n")
    return path


def learnings_entry(entry: dict[str, Any]) -> str:
    """A full structured entry in the seed's `.learnings/*.md` format."""
    kind = entry["entry_type"]
    title = entry.get("category") or kind
    lines = [f"## [{entry['id']}] {title}:{_slug(entry['text'])}", ""]
    lines += [f"**Logged**: {entry['created_at']}", f"**Priority**: {entry['priority']}",
              f"**Status**: {entry['status']}", f"**Area**: {entry.get('area') or ''}", "",
              "### Summary", entry["text"], ""]
    if kind == "error":
        sections = [("Error", entry.get("error_text")), ("Context", entry.get("context")),
                    ("Details", entry.get("details")), ("Suggested Fix", entry.get("action"))]
    elif kind == "feature":
        sections = [("User Context", entry.get("user_context")),
                    ("Complexity Estimate", entry.get("complexity")), ("Details", entry.get("details")),
                    ("Suggested Implementation", entry.get("action"))]
    else:
        sections = [("Details", entry.get("details")), ("Suggested Action", entry.get("action"))]
    for heading, body in sections:
        if body:
            lines += [f"### {heading}", body, ""]
    meta = [("Source", entry.get("source")), ("Related Files", ", ".join(entry.get("files") or [])),
            ("Tags", ", ".join(entry.get("tags") or [])), ("Pattern-Key", entry.get("pattern_key")),
            ("Session", entry.get("session"))]
    if kind == "error":
        meta.append(("Reproducible", entry.get("reproducible")))
    if kind == "feature":
        meta.append(("Frequency", entry.get("frequency")))
    lines.append("### Metadata")
    lines += [f"- {key}: {value}" for key, value in meta if value]
    return "\n".join(lines) + "\n\n---\n\n"


def _slug(text: str) -> str:
    words = "".join(c if c.isalnum() else " " for c in text.lower()).split()
    return "_".join(words[:6]) or "entry"
