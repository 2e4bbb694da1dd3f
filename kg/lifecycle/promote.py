"""Promotion decisions: is a pattern ready, where does its rule go, what does the proposal say. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from kg.core.text import code_span, has_cjk
from kg.core.text import slugify as text_slugify
from kg.lifecycle.policy import LifecyclePolicy, Target


def eligible(recurrence: int, sessions: int, policy: LifecyclePolicy) -> bool:
    """≥ min_recurrence occurrences across ≥ min_sessions sessions (both counted inside the window)."""
    p = policy.promotion
    return recurrence >= p.min_recurrence and sessions >= p.min_sessions


def classify(policy: LifecyclePolicy, *, category: str | None, area: str | None, entry_type: str | None,
             tags: Iterable[str] = ()) -> str:
    """The target name of the first [[classify]] rule whose every condition matches."""
    values = {"category": (category or "").lower(), "area": (area or "").lower(),
              "entry_type": (entry_type or "").lower()}
    tag_set = {t.lower() for t in tags}
    for rule in policy.classify:
        ok = True
        for name in ("category", "area", "entry_type"):
            accepted = getattr(rule, name)
            if accepted is not None and values[name] not in accepted:
                ok = False
        if rule.tags is not None and not tag_set.intersection(rule.tags):
            ok = False
        if ok:
            return rule.target
    return policy.classify[-1].target


def rule_text(summary: str, action: str | None, policy: LifecyclePolicy) -> str:
    """One line: the suggested action when there is one (and the rules prefer it), else the summary; said of
    the recurring lesson, not of one occurrence (`promotion.generalise`: a path as its file name, no ids)."""
    text = action if (policy.promotion.prefer_action and action and action.strip()) else summary
    text = general(text, policy)
    limit = policy.promotion.max_text_chars
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    # at the last clause mark in its second half (Chinese writes no blanks: the last blank was before a Latin word,
    # and the instruction after it was lost, QA qa10 F6), else the last blank there
    marks = [m.end() for m in _CLAUSE_END.finditer(cut, limit // 2)] if has_cjk(cut) else []  # (English: as before,
    # review M6: "e.g." and a "because" clause were cut at)
    if marks:
        cut = cut[: marks[-1]]
    elif " " in cut[limit // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.，、；：。！？") + "…"


_CLAUSE_END = re.compile(r"[，、；。！？：]|[,;.!?:](?=\s)")  # where a clause ends: full-width, or ASCII and a blank


def says_nothing_to_do(c: Candidate, text: str, policy: LifecyclePolicy) -> str:
    """Why a failure pattern's rule would teach nothing ("" when it may be promoted): its events are of a kind
    that must say what to do (`promotion.needs_instruction_tags`) and its text holds no instruction."""
    p = policy.promotion
    if (not set(p.needs_instruction_tags).intersection(c.tags) or (c.action or "").strip()
            or any(rx.search(text) for rx in p.instruction)):
        return ""
    return "says what failed, not what to do: log the fix with `kg log --action`"


def general(text: str, policy: LifecyclePolicy) -> str:
    """`text` on one line with the instance details of one occurrence generalised (rules/lifecycle.toml)."""
    out = " ".join(text.split())
    for pattern, replacement in policy.promotion.generalise:
        out = pattern.sub(replacement, out)
    return " ".join(out.split()).strip() or " ".join(text.split())


def slugify(key: str) -> str:
    """A file-safe name for a pattern key (CJK kept): `git.push.auth` → `git-push-auth`."""
    return text_slugify(key, fallback="skill")


def target_file(target: Target, key: str) -> str:
    return target.file.replace("{slug}", slugify(key))


def impact(recurrence: int, priority: str | None, policy: LifecyclePolicy) -> str:
    p = policy.proposals
    return "high" if recurrence >= p.high_impact_recurrence or (priority or "") in p.high_impact_priorities \
        else "medium"


@dataclass(frozen=True)
class Candidate:
    """A pattern as the promotion query sees it (counts are inside the window)."""

    pattern_id: str
    key: str
    summary: str
    recurrence: int
    sessions: int
    priority: str | None = None
    area: str | None = None
    category: str | None = None
    entry_type: str | None = None
    action: str | None = None
    tags: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    event_ids: tuple[str, ...] = field(default=())
    failed: tuple[str, ...] = ()    # texts of this pattern's earlier rules that were reverted
    actions: tuple[str, ...] = ()   # every suggested action among its occurrences, oldest first
    note: str = ""                  # why it is a candidate again (recovery)


@dataclass(frozen=True)
class Plan:
    """What promoting a candidate means: the rule, its target, and the proposal's wording."""

    pattern_id: str
    key: str
    target: str
    file: str
    block: str
    mode: str
    node_kind: str
    text: str
    hypothesis: str
    change: str
    motivation: str
    risk: str
    effort: str
    impact: str
    priority: str
    area: str
    category: str
    event_ids: tuple[str, ...]


def plan(c: Candidate, policy: LifecyclePolicy) -> Plan:
    name = classify(policy, category=c.category, area=c.area, entry_type=c.entry_type, tags=c.tags)
    target = policy.targets[name]
    path = target_file(target, c.key)
    text, mode = rule_text(c.summary, c.action, policy), target.apply
    if c.failed:  # recovery: the next-best text; the same text again only with a human's yes
        # with no untried action the last reverted text, not the summary: the summary says what failed, not what to
        # do (after a revert with no new --action kg proposed "Add workflow rule: 'pytest failed: …'": a QA pass)
        text = next_text(c.actions, c.summary, c.failed, policy) or (text if (c.action or "").strip()
                                                                      else c.failed[-1])
        if _key(text) in {_key(t) for t in c.failed}:
            mode = "ask"
    fmt = {"text": text, "key": c.key, "file": path, "slug": slugify(c.key), "recurrence": c.recurrence,
           "sessions": c.sessions, "window": policy.promotion.window_days}
    sources = ", ".join(sorted({s for s in c.sources if s})) or "unknown"
    motivation = (f"Pattern '{c.key}' occurred {c.recurrence}x across {c.sessions} sessions in the last "
                  f"{policy.promotion.window_days} days (source: {sources}); evidence: "
                  f"{', '.join(c.event_ids)}")
    if c.failed:
        motivation += f". Reverted before: {'; '.join(repr(t) for t in c.failed)}. {c.note}".rstrip()
    return Plan(
        pattern_id=c.pattern_id, key=c.key, target=name, file=path, block=target.block, mode=mode,
        node_kind=target.node, text=text, hypothesis=_format(policy.promotion.hypothesis, fmt),
        change=_format(target.change, fmt), motivation=motivation, risk=target.risk, effort=target.effort,
        impact=impact(c.recurrence, c.priority, policy), priority=c.priority or policy.conflicts.default_priority,
        area=c.area or "", category=c.category or "", event_ids=tuple(c.event_ids),
    )


def _format(template: str, values: dict[str, object]) -> str:
    out = template
    for k, v in values.items():
        out = out.replace("{" + k + "}", str(v))
    return out


def skill_document(key: str, text: str, motivation: str) -> str:
    """A skill file's kg block: what to do, and why kg wrote it."""
    return (f"# {key}\n\n{text}\n\n## When\n- The situation of pattern {code_span(key)} comes up again.\n\n"
            f"## Why\n- {motivation}\n")


# -- recovery and budgets --------------------------------------------------------------------------------------
def next_text(actions: Iterable[str], summary: str, failed: Iterable[str], policy: LifecyclePolicy) -> str | None:
    """The next-best rule text for a pattern whose earlier rules were reverted: the most suggested action
    (ties: the latest) whose text has not failed; None when every suggested action failed already (the
    summary says what went wrong, not what to do, so it is no next try)."""
    tried = {_key(t) for t in failed}
    counts: dict[str, list[int]] = {}
    for i, a in enumerate(actions):
        if a and a.strip():
            c = counts.setdefault(rule_text(summary, a, policy), [0, 0])
            c[0], c[1] = c[0] + 1, i
    ranked = sorted(counts, key=lambda t: (-counts[t][0], -counts[t][1]))
    for text in ranked:
        if _key(text) not in tried:
            return text
    return None


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def rank(rows: Iterable[dict], policy: LifecyclePolicy) -> list[dict]:
    """Ready patterns by impact: high impact first, then recurrence in the window, then the latest."""
    def key(r: dict) -> tuple:
        return (impact(int(r["recurrence"]), r.get("priority"), policy) != "high", -int(r["recurrence"]),
                -(r["last_seen"].timestamp() if r.get("last_seen") else 0), r["id"])
    return sorted(rows, key=key)


class Budget:
    """How many rules a cycle may still put into each file, and how much room each block has left."""

    def __init__(self, policy: LifecyclePolicy, blocks: dict[tuple[str, str], list[str]]):
        self.b = policy.budget
        self.lines = {k: len(v) for k, v in blocks.items()}
        self.chars = {k: sum(len(x) + 3 for x in v) for k, v in blocks.items()}
        self.per_file: dict[str, int] = {}

    def why_not(self, file: str, block: str, text: str) -> str:
        """'' when the rule fits, else why it waits."""
        if self.per_file.get(file, 0) >= self.b.per_file_per_cycle:
            return f"{self.b.per_file_per_cycle} promotions into {file} this cycle already"
        if self.lines.get((file, block), 0) >= self.b.max_block_lines:
            return f"the {file} block holds {self.b.max_block_lines} rules already"
        if self.chars.get((file, block), 0) + len(text) + 3 > self.b.max_block_chars:
            return f"the {file} block would pass {self.b.max_block_chars} characters"
        return ""

    def take(self, file: str, block: str, text: str) -> None:
        self.per_file[file] = self.per_file.get(file, 0) + 1
        self.lines[(file, block)] = self.lines.get((file, block), 0) + 1
        self.chars[(file, block)] = self.chars.get((file, block), 0) + len(text) + 3
