"""Fitting the session-start brief into its character budget (kg/runtimes/hooks.py gathers its sections). Pure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kg.core.text import clean

MIN_MEMORY = 80  # below this many characters the memory block is not worth asking for


@dataclass
class Section:
    """One section of the brief. `lines` are its items, best first; `total` is how many exist in all. A section
    with `render` is produced late, given the characters still free (the memory block)."""

    name: str
    title: str = ""
    lines: list[str] = field(default_factory=list)
    total: int = 0
    more: str = ""
    render: Callable[[int], str] | None = None
    weights: list[int] = field(default_factory=list)  # how many of `total` each line stands for (1 if unsaid)


def short(text: Any, width: int) -> str:
    one = clean(str(text or ""), one_line=True)
    return one if len(one) <= width else one[:width - 1].rstrip() + "…"


def fit(head: str, sections: list[Section], budget: int) -> tuple[str, list[dict[str, Any]], list[str]]:
    """Render `head` and the sections in order within `budget` characters. Pure (given the renderers).

    A section's items go in while they fit; the ones left out are counted in a last "- … N more" line. A
    section whose heading does not fit is left out whole and named in the third value."""
    parts = [head]
    used = len(head)
    shown: list[dict[str, Any]] = []
    omitted: list[str] = []
    for sec in sections:
        if sec.render is not None:
            free = budget - used - 2
            block = sec.render(free) if free >= MIN_MEMORY else ""
            if block and len(block) <= free:
                parts.append("\n\n" + block)
                used += 2 + len(block)
                shown.append({"name": sec.name, "chars": len(block)})
            elif block or free < MIN_MEMORY:
                omitted.append(sec.name)
            continue
        if not sec.lines:
            continue
        heading = f"\n\n## {sec.title}" + (f" ({sec.total})" if sec.total else "")
        if used + len(heading) > budget:
            omitted.append(sec.name)
            continue
        kept: list[str] = []
        cost = len(heading)
        for line in sec.lines:
            if used + cost + 1 + len(line) > budget:
                break
            kept.append(line)
            cost += 1 + len(line)
        while True:
            stood = sum(sec.weights[i] if i < len(sec.weights) else 1 for i in range(len(kept)))
            left = sec.total - stood if sec.total else len(sec.lines) - len(kept)
            more = f"- … {left} more: `{sec.more}`" if left > 0 and sec.more else (
                f"- … {left} more" if left > 0 else "")
            extra = 1 + len(more) if more else 0
            if used + cost + extra <= budget or not kept:
                break
            cost -= 1 + len(kept.pop())
        if not kept:
            omitted.append(sec.name)
            continue
        body = heading + "".join("\n" + line for line in kept)
        if more and used + len(body) + 1 + len(more) <= budget:
            body += "\n" + more
        parts.append(body)
        used += len(body)
        shown.append({"name": sec.name, "shown": len(kept), "total": sec.total or len(sec.lines)})
    return "".join(parts), shown, omitted
