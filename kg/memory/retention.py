"""Retention, as in the seed: daily logs are append-only and kept forever; learning entries resolve
automatically after 90 days; verified principles are kept; preferences last until changed.

The memory layer only describes it. Decay is applied by the lifecycle cycle (`kg cycle`), whose thresholds
live in `rules/lifecycle.toml` [decay]; this module reads them from there so the two never disagree.
"""

from __future__ import annotations

from typing import Any

from kg.core.errors import RulesError


def describe(ws: Any) -> dict[str, Any]:
    own = dict(ws.rules.raw("memory").get("retention", {}))
    try:
        decay = dict(ws.rules.raw("lifecycle").get("decay", {}))
    except (RulesError, FileNotFoundError, ModuleNotFoundError):
        decay = {}
    days = decay.get("expire_days")
    kept = decay.get("keep_categories") or []
    entries = (f"pending {', '.join(decay.get('kinds', ['event']))} entries unreinforced for {days} days "
               "(counted from the later of their own time and when kg learned them) "
               f"become {decay.get('expired_status', 'wont_fix')} (applied by `kg cycle`)"
               + (f", except {', '.join(kept)} entries, which never expire" if kept else "")
               + "; nothing is deleted" if days else "decay is applied by the lifecycle cycle (`kg cycle`)")
    return {"daily_logs": own.get("daily_logs", ""), "learning_entries": entries,
            "principles": own.get("principles", ""), "preferences": own.get("preferences", ""),
            "decay": decay}


def render(d: dict[str, Any]) -> str:
    return "\n".join(f"{k.replace('_', ' ').capitalize()}: {d[k]}"
                     for k in ("daily_logs", "learning_entries", "principles", "preferences"))
