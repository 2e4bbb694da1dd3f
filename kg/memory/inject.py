"""Memory injection: the block of memory to put in an agent's context for a message, within a size budget.

Candidates are the user's preferences, principles, lessons (lessons, knowledge, patterns and learning entries
found by search) and the watch list (pending high-priority errors and entries). Each gets
    score = w_relevance * relevance + w_importance * importance + w_recency * recency
and the block is filled greedily, best first, until the budget is spent; then rendered section by section.
Same graph, same message, same budget: same block.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from kg.core import clock
from kg.core.errors import UsageError
from kg.core.text import clean, search_words, variant_key
from kg.memory import preferences, search, topics
from kg.memory.readable import preference_text
from kg.memory.rules import memory_rules, topic_rules

SECTIONS = (("preference", "Preferences"), ("principle", "Principles"), ("lesson", "Lessons"),
            ("watch", "Watch list"))


@dataclass
class Item:
    section: str
    ref: str
    text: str
    relevance: float
    importance: float
    recency: float
    score: float = 0.0
    count: int = 1  # identical entries this line stands for

    def line(self) -> str:
        return (f"- {self.text}" + (f" [{self.ref}]" if self.ref and self.section != "preference" else "")
                + (f" ({self.count}×)" if self.count > 1 else ""))


def fold_variants(items: list[Item]) -> list[Item]:
    """Lessons that say one sentence in two wordings (`variant_key`: a space beside a Chinese word, 。 or ！ at the
    end) as one line: the newest (by recency, then id), counting every entry the others stood for. Search folds only
    identical texts, and the brief listed "以后都用 pnpm 安装依赖，不要用 npm。" three times (QA qa10 F9). Pure."""
    out: list[Item] = []
    by_key: dict[str, Item] = {}
    for it in items:
        key = variant_key(it.text) if it.section == "lesson" else ""
        kept = by_key.get(key) if key else None
        if kept is None:
            out.append(it)
            if key:
                by_key[key] = it
            continue
        count = kept.count + it.count
        if (it.recency, it.ref) > (kept.recency, kept.ref):  # the newest stands for the group, where the first was
            kept.ref, kept.text, kept.recency = it.ref, it.text, it.recency
        kept.relevance = max(kept.relevance, it.relevance)
        kept.importance = max(kept.importance, it.importance)
        kept.count = count
    return out


def rank(items: list[Item], w_rel: float, w_imp: float, w_rec: float) -> list[Item]:
    for it in items:
        it.score = round(w_rel * it.relevance + w_imp * it.importance + w_rec * it.recency, 6)
    return sorted(items, key=lambda i: (-i.score, SECTION_ORDER[i.section], i.ref, i.text))


SECTION_ORDER = {name: i for i, (name, _) in enumerate(SECTIONS)}


def header(message: str, topic: str) -> str:
    return f"## Memory (kg) — topic: {topic}"


def fit(items: list[Item], budget: int, head: str) -> tuple[list[Item], int]:
    """Keep the best items whose rendered block stays within `budget` characters. Pure."""
    kept: list[Item] = []
    for it in items:
        trial = kept + [it]
        if len(render_block(head, trial)) <= budget:
            kept = trial
    return kept, len(items) - len(kept)


EMPTY_NOTE = "(no memory for this message)"
# (the budget by its size, not an option's name: the brief's memory_budget, the MCP tool's `budget` and `kg inject
# --budget` all come here)
DROPPED_NOTES = ("({n} item(s) did not fit the budget of {budget} characters: a larger one shows them)",
                 "({n} item(s) did not fit the budget)", "({n} did not fit)")


def render_block(head: str, items: list[Item], budget: int | None = None, dropped: int = 0) -> str:
    """The block; with `budget`, never longer (a budget is a hard cap: an empty block's header and note are cut
    to fit, the note first, its shorter form tried before). A block empty because nothing fit (`dropped`) says
    so, not "no memory": a QA pass read "(no memory for this message)" beside `dropped: 3`. Pure."""
    if not items:
        notes = [n.format(n=dropped, budget=budget) for n in DROPPED_NOTES] if dropped else [EMPTY_NOTE]
        for note in notes:
            block = head + "\n" + note
            if budget is None or len(block) <= budget:
                return block
        return _cut(head, budget)
    lines = [head]
    for name, title in SECTIONS:
        chosen = [i for i in items if i.section == name]
        if chosen:
            lines += ["", f"### {title}"] + [i.line() for i in chosen]
    return "\n".join(lines)


def _cut(text: str, budget: int) -> str:
    return text if len(text) <= budget else text[: max(0, budget - 1)].rstrip() + "…"


_CLOSED = ("resolved", "wont_fix", "reverted", "retired")


def _principles(nodes: dict[str, dict[str, Any]], limit: int, out: Collection[str] = ()) -> list[dict[str, Any]]:
    """The `memory_principles` query over the in-process cache: same filter, same order, `out` left out. Pure."""
    rows = [n for n in nodes.values() if n["kind"] == "principle" and not n.get("stale")
            and (n.get("status") is None or n["status"] not in _CLOSED) and n["id"] not in out]
    rows.sort(key=lambda n: n["id"])
    rows.sort(key=lambda n: n.get("reinforced_at") or datetime.min, reverse=True)
    rows.sort(key=lambda n: bool(n.get("pinned")), reverse=True)
    return rows[:limit]


def _watch(nodes: dict[str, dict[str, Any]], priorities: tuple[str, ...], limit: int) -> list[dict[str, Any]]:
    """The `memory_watch` query over the in-process cache. Pure."""
    rows = [n for n in nodes.values() if n["kind"] == "event" and n.get("status") == "pending"
            and n.get("priority") in priorities]
    rows.sort(key=lambda n: (n.get("created_at") or datetime.min, n["id"]), reverse=True)
    return rows[:limit]


def kept_out(ws: Any, st: Any, at: datetime) -> frozenset[str]:
    """The rules a conflict keeps out of kg's files (`kg export memory`: a decision's loser, both sides of a tie
    held back), a contradiction no decision covers yet decided as `kg conflicts` would decide it: not shown here
    either. Inject showed both sides of a tie and the loser beside the winner MEMORY.md holds (a QA pass). Read
    only: a reader decides nothing it stores (kg/lifecycle/settling.py `kept_out`). Held open, the graph's part is
    read once until it changes (the view's memo), not on every message."""
    from kg.lifecycle.cycle import Lifecycle
    from kg.lifecycle.settling import kept_out as settled_out

    # held open (`with ws:`): what does not change with the time kept in the view's memo. Only then: a one-off
    # view costs a node count (the side index's check), the first before search's
    view = search.cached_view(ws, st) if ws.in_batch else None
    return frozenset(settled_out(Lifecycle(ws, st, at), view.memo if view is not None else None)[0])


def inject(ws: Any, message: str = "", *, budget: int | None = None,
           now: datetime | str | None = None, elsewhere: Collection[str] = ()) -> dict[str, Any]:
    """The block for `message`. `elsewhere`: ids the caller shows already (the session brief's pending items),
    left out here with the entries identical to them."""
    rules = memory_rules(ws)
    ir, sr = rules.inject, rules.search
    at = clock.now(now)
    budget = budget if budget is not None else ir.budget
    if budget < 40:
        raise UsageError("--budget must be at least 40 characters")
    message = ws.rules.redactor.redact(clean(message or "", one_line=True)).text  # it is echoed in the answer
    terms = search.query_terms(message)
    topic = topics.detect(message, topic_rules(ws)) if message else topic_rules(ws).fallback
    warnings: list[str] = []
    items: list[Item] = []

    def rel(text: str) -> float:
        return search.coverage(terms, {}, search_words(text), sr.fuzzy_min) if terms else 0.0

    try:
        for key, value in sorted(preferences.load(ws).items()):
            shown = preference_text(value)
            items.append(Item("preference", key, f"{key}: {shown}", rel(f"{key} {shown}"), 0.9, 1.0))
    except preferences.BrokenPreferences as exc:
        warnings.append(str(exc))
    seen: set[str] = set(elsewhere)
    pattern = f"{ws.policy.node_prefix.get('pattern', 'pat')}-"  # a pattern's id, as `also` names it
    recurring: dict[str, tuple[Item, set[str]]] = {}  # errors taken as lessons, with the ids they stand for
    with ws.reading() as st:  # one open for the whole call: search inside shares the handle
        out = kept_out(ws, st, at)
        hits = search.search(ws, message, limit=30, now=at, sources=["graph"]) if terms else []
        for h in hits:
            relevance = min(1.0, h.parts.get("text", 0) * 0.5 + h.parts.get("fuzzy", 0) * 0.5)
            if h.kind == "principle":
                section = "principle"
            elif h.kind == "error" or h.kind == "feature":
                if not (h.count > 1 or any(a.startswith(pattern) for a in h.also)):
                    continue  # a one-off comes in through the watch list below, when still pending
                section = "lesson"  # a recurring one (identical events, a pattern search folded into it)
            else:
                section = "lesson"
            if relevance < ir.min_relevance and section == "lesson":
                continue
            if h.ref in elsewhere or any(a in elsewhere for a in h.also) or h.ref in out:
                continue
            seen.add(h.ref)
            seen.update(h.also)  # identical events folded into this hit
            items.append(Item(section, h.ref, h.text, relevance, h.parts.get("importance", 0.5),
                               h.parts.get("recency", 0.0), count=h.count))
            if h.kind in ("error", "feature"):
                recurring[items[-1].ref] = (items[-1], {h.ref, *h.also})
        view = search.cached_view(ws, st)  # held open: the lists come from memory, not from a scan
        if view is not None:
            key = (ir.max_principles, ir.watch_priorities, out)
            if key not in view.memo:
                view.memo[key] = (_principles(view.nodes, ir.max_principles, out),
                                  _watch(view.nodes, ir.watch_priorities, 50))
            principles, watch = view.memo[key]
        else:
            principles = [r for r in st.run("memory_principles", limit=ir.max_principles + len(out))
                          if r["id"] not in out][: ir.max_principles]
            watch = st.run("memory_watch", priorities=list(ir.watch_priorities), limit=50)
        for row in principles:
            if row["id"] in seen:
                continue
            seen.add(row["id"])
            items.append(Item("principle", row["id"], row["text"], rel(row["text"]),
                              1.0 if row["pinned"] else 0.8,
                              search.recency(row["reinforced_at"] or row["created_at"], at, sr.half_life_days)))
        pending = {row["id"] for row in watch}
        for item, ids in recurring.values():  # still pending at a watched priority: the watch list says so
            if ids & pending:
                items.remove(item)
                seen.difference_update(ids)
        prio = sr.priority_weight
        shown: dict[str, Item] = {}  # identical pending entries: one line naming how many
        shown_texts: set[str] = set()
        for row in watch:
            if row["id"] in elsewhere or row["text"] in shown_texts:  # the caller shows it (or its twin)
                shown_texts.add(row["text"])
                continue
            if row["id"] in seen:  # already a lesson above: one place per entry
                continue
            r = rel(row["text"])
            if r < ir.min_relevance and row["priority"] != "critical":
                continue
            text = f"{row['text']} ({row['priority']}, pending)"
            if text in shown:
                shown[text].count += 1
                continue
            seen.add(row["id"])
            shown[text] = Item("watch", row["id"], text, r, prio.get(row["priority"], 0.5),
                               search.recency(row["reinforced_at"] or row["created_at"], at, sr.half_life_days))
            items.append(shown[text])
    ranked = rank(fold_variants(items), ir.w_relevance, ir.w_importance, ir.w_recency)
    head = header(message, topic)
    kept, dropped = fit(ranked, budget, head)
    block = render_block(head, kept, budget, dropped)
    return {"message": message, "topic": topic, "budget": budget, "chars": len(block), "block": block,
            "items": [asdict(i) for i in kept], "dropped": dropped, "warnings": warnings}
