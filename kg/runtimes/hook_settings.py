"""kg's hook handlers in a runtime's hook settings (Claude Code's `.claude/settings*.json`, Codex's
`.codex/hooks.json`: `{"hooks": {event: [{matcher?, hooks: [{type, command, timeout}]}]}}`). Pure.

kg's handlers are found by their command (`kg ... hook <name> ... --runtime <runtime>`), which a person may prefix
(`KG_X=1 kg ...`) without kg losing them. A handler of kg's is named by its event and hook (`SessionStart
session-start`); what it is, for telling an edit from kg's own text, is its group's matcher and the handler itself.
Installing again brings kg's handlers to the current ones, except those a person edited since kg wrote them: those
are kept where and as they are (the caller says which), as an edited OpenClaw handler.js or a kg block edited in
AGENTS.md is kept.
"""

from __future__ import annotations

import re
from typing import Any


def marker(runtime: str) -> re.Pattern[str]:
    return re.compile(r"\bhook (session-start|session-end|post-tool-use)\b.*--runtime " + re.escape(runtime)
                      + r"(\s|$)")


def _handlers(settings: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(event, group, handler) of every handler in `settings`, in order, whatever the shape around them."""
    hooks = settings.get("hooks")
    out = []
    for event, groups in (hooks.items() if isinstance(hooks, dict) else ()):
        for g in groups if isinstance(groups, list) else ():
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                out += [(event, g, h) for h in g["hooks"] if isinstance(h, dict)]
    return out


def kg_hooks(settings: dict[str, Any], runtime: str) -> dict[str, dict[str, Any]]:
    """kg's handlers in `settings` by name ("SessionStart session-start"): {"matcher": ..., "hook": {...}}; the first
    where a name is there twice."""
    mark = marker(runtime)
    out: dict[str, dict[str, Any]] = {}
    for event, g, h in _handlers(settings):
        m = mark.search(str(h.get("command", "")))
        if m:
            out.setdefault(f"{event} {m.group(1)}", {"matcher": g.get("matcher"), "hook": h})
    return out


def edited_hooks(settings: dict[str, Any], runtime: str, wrote: dict[str, Any] | None,
                 want: dict[str, Any]) -> dict[str, str]:
    """kg's handlers in `settings` that a person changed since kg wrote them (`wrote`: kg's entries as it last wrote
    them, by event; None when kg does not know, and then nothing counts as edited), by name, each with what changed.
    A handler already as kg wants it now (`want`) is not edited, whatever kg wrote before."""
    if wrote is None:
        return {}
    before, now = kg_hooks({"hooks": wrote}, runtime), kg_hooks({"hooks": want}, runtime)
    out = {}
    for name, cur in kg_hooks(settings, runtime).items():
        old = before.get(name)
        if old is not None and cur not in (old, now.get(name)):
            keys = sorted({k for k in {*old["hook"], *cur["hook"]} if old["hook"].get(k) != cur["hook"].get(k)})
            out[name] = ", ".join((["matcher"] if old["matcher"] != cur["matcher"] else []) + keys)
    return out


def strip_hooks(settings: dict[str, Any], runtime: str,
                keep: frozenset[str] = frozenset()) -> tuple[dict[str, Any], int]:
    """`settings` without kg's handlers for `runtime`, except those named in `keep` (groups and events left empty by
    that go too), and how many were taken out."""
    mark = marker(runtime)
    out = dict(settings)
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return out, 0

    def gone(event: str, h: Any) -> bool:
        m = mark.search(str(h.get("command", ""))) if isinstance(h, dict) else None
        return m is not None and f"{event} {m.group(1)}" not in keep

    removed = 0
    new_hooks: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            new_hooks[event] = groups
            continue
        kept_groups = []
        for g in groups:
            if not isinstance(g, dict) or not isinstance(g.get("hooks"), list):
                kept_groups.append(g)
                continue
            kept = [h for h in g["hooks"] if not gone(event, h)]
            removed += len(g["hooks"]) - len(kept)
            if len(kept) == len(g["hooks"]):
                kept_groups.append(g)
            elif kept:
                kept_groups.append({**g, "hooks": kept})
        if kept_groups or not groups:
            new_hooks[event] = kept_groups
    if new_hooks:
        out["hooks"] = new_hooks
    else:
        out.pop("hooks", None)
    return out, removed


def merge_hooks(settings: dict[str, Any], entries: dict[str, list[dict[str, Any]]], runtime: str,
                keep: frozenset[str] = frozenset()) -> dict[str, Any]:
    """`settings` with kg's hook groups (`entries`) in place of any earlier kg ones, but for the handlers named in
    `keep`, which stay where and as they are; everything else kept as it was."""
    out, _ = strip_hooks(settings, runtime, keep)
    hooks = dict(out.get("hooks") or {})
    for event, groups in entries.items():
        add = [g for g in groups if not any(name in keep for name in kg_hooks({"hooks": {event: [g]}}, runtime))]
        if add:
            hooks[event] = list(hooks.get(event) or []) + add
    out["hooks"] = hooks
    return out
