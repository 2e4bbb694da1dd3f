"""rules/hooks.toml read into `HookRules`: the brief's sections, their order, limits and budgets, and what a
session end does (reflect, write a summary, how long its detached child waits for the graph).

Apart from `kg.runtimes.hooks` because both halves of a runtime's session read it, the start's brief (hooks.py)
and the end (hook_end.py), and the end must not import the brief to get it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kg.core.policy import RuleReader

SECTIONS = ("pending_high", "verifications_due", "ready_to_promote", "proposals", "watch", "memory", "stats")
LIMITED = ("pending_high", "verifications_due", "ready_to_promote", "proposals", "watch")


@dataclass(frozen=True)
class HookRules:
    budget: int
    memory_budget: int
    item_chars: int
    order: tuple[str, ...]
    high_priorities: tuple[str, ...]
    limits: dict[str, int]
    end_reflect: bool
    end_summary: bool
    busy_wait: float = 3.0  # seconds a session-start waits for a graph another process holds read-write
    end_lock_wait: float = 600.0  # seconds a detached session end waits for the graph
    inline_reflect_bytes: int = 262144  # a left end's transcript a start with no detached child reflects on

    @classmethod
    def from_mapping(cls, data: dict[str, Any], priorities: tuple[str, ...] = ()) -> HookRules:
        r = RuleReader(data, "rules/hooks.toml")
        order = r.strings("order", list(SECTIONS), allowed=SECTIONS)
        if len(set(order)) != len(order):
            raise r.fail("order", "lists a section twice; name each once")
        return cls(budget=r.whole("budget", 200, default=4000, int_only=True),
                   memory_budget=r.whole("memory_budget", 0, default=1500, int_only=True),
                   item_chars=r.whole("item_chars", 20, default=100, int_only=True),
                   order=order,
                   high_priorities=r.strings("high_priorities", ["critical", "high"], empty=False,
                                             allowed=priorities or None),
                   limits={name: r.whole(f"limits.{name}", 0, default=5, int_only=True) for name in LIMITED},
                   end_reflect=r.flag("session_end.reflect", True),
                   end_summary=r.flag("session_end.summary", True),
                   busy_wait=r.number("busy_wait_seconds", 0, 25, default=3.0),
                   end_lock_wait=r.number("session_end.lock_wait_seconds", 0, 86400, default=600.0),
                   inline_reflect_bytes=r.whole("session_end.inline_reflect_bytes", 0, default=262144,
                                                int_only=True))


def load_rules(ws: Any) -> HookRules:
    return HookRules.from_mapping(ws.rules.raw("hooks"), tuple(ws.policy.priorities))
