"""What kg's blocks should contain, computed from the graph, and the one writer that puts it in the files.

Files are renderings: every block's content is derived from the live changes (and, for MEMORY.md, the active
principles no change rendered), minus the losers of conflict decisions, in a stable order. Applying a change
adds a line to the rendering, reverting removes it; when nothing else changed in between, the block comes
back byte for byte as it was before the change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core.errors import FileChanged, UnusableFile
from kg.core.files import ANY
from kg.lifecycle import blocks
from kg.lifecycle.policy import LifecyclePolicy

LIVE = ("applied", "confirmed")
JSON_BLOCK = "json"
SKIP = "skip"  # a plan's action for a file kg may not use (`Lifecycle.problem`): not read, not written


@dataclass(frozen=True)
class Line:
    """One rendered rule and where it came from."""

    file: str
    block: str
    text: str
    node: str
    change: str
    at: datetime


@dataclass
class Desired:
    file: str
    block: str
    section: str
    format: str
    lines: list[Line] = field(default_factory=list)

    def inner(self) -> str | None:
        if not self.lines:
            return None
        if self.format == "document":
            return "".join(line.text if line.text.endswith("\n") else line.text + "\n" for line in self.lines)
        return blocks.list_inner([line.text for line in self.lines])


def desired_blocks(live: list[dict[str, Any]], free: list[dict[str, Any]], hidden: set[str],
                   lp: LifecyclePolicy, here: str | None = None) -> dict[tuple[str, str], Desired]:
    """Every block kg should hold: live changes by their target, free principles into MEMORY.md. On a team
    graph a change names the workspace that made it, and `here` is this one: a change whose target's scope
    is "workspace" renders only there."""
    out: dict[tuple[str, str], Desired] = {}
    for row in live:
        if row["node"] in hidden or row.get("node_status") not in ("active", None):
            continue
        target = lp.targets.get(row["target_kind"])
        if target and target.scope == "workspace" and row.get("workspace") not in (None, here):
            continue
        section = target.section if target else ""
        fmt = target.format if target else "list"
        key = (row["target"], row["block"])
        d = out.setdefault(key, Desired(row["target"], row["block"], section, fmt))
        d.lines.append(Line(row["target"], row["block"], row["text"], row["node"], row["change"], row["applied_at"]))
    m = lp.memory
    for row in free:
        if row["node"] in hidden:
            continue
        key = (m.file, m.block)
        d = out.setdefault(key, Desired(m.file, m.block, m.section, "list"))
        d.lines.append(Line(m.file, m.block, row["text"], row["node"], "", row["created_at"]))
    for d in out.values():
        d.lines.sort(key=lambda line: (line.at, line.change or "~", line.node))
    return out


def written_before(d: Desired | None, change: str, expected_hash: str | None) -> bool:
    """Whether what kg last wrote into the block (`expected_hash`) renders only the lines before `change`'s: kg
    never wrote that rule into this file. kg leaves a block a person edited as it is, so a rule promoted after the
    edit (on a team graph, by another member's cycle) is not in this file, and is no rule a person took out of it
    (QA2 #8). False when the stored hash renders no such prefix (a rule reverted since, say): not known."""
    if d is None or not expected_hash:
        return False
    at = next((i for i, line in enumerate(d.lines) if line.change == change), None)
    if at is None:
        return False
    return any(blocks.same(Desired(d.file, d.block, d.section, d.format, d.lines[:k]).inner() or "", expected_hash)
               for k in range(at + 1))


def preference_lines(desired: dict[tuple[str, str], Desired], lp: LifecyclePolicy) -> list[dict[str, str]]:
    """The learned preferences mirrored into memory/preferences.json."""
    pref = lp.targets.get("preference")
    if pref is None:
        return []
    d = desired.get((pref.file, pref.block))
    if d is None:
        return []
    return [{"id": line.node, "text": line.text, "since": line.at.date().isoformat()} for line in d.lines]


@dataclass(frozen=True)
class FilePlan:
    """One file sync: the block plan, plus the block row to store afterwards."""

    path: str
    block: str
    action: str
    text: str | None
    hash: str
    glue: str
    created_file: bool
    flag: str
    base: Any = ANY  # the file text the plan was made from (`blocks.SyncPlan.base`)

    @property
    def block_id(self) -> str:
        return f"{self.path}#{self.block}"

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "block": self.block, "action": self.action, "flag": self.flag}


def plan_files(root: Path, desired: dict[tuple[str, str], Desired], states: dict[str, dict[str, Any]],
               prefs: list[dict[str, str]], lp: LifecyclePolicy, *, force: bool = False,
               problem: Callable[[str], str] = lambda file: "") -> list[FilePlan]:
    """Plan every block sync (no writes). `states` are the stored ManagedBlock rows by id; a file `problem`
    gives a reason against is planned as SKIP, with the reason as its flag."""
    keys = set(desired) | {(s["path"], s["name"]) for s in states.values() if s["name"] != JSON_BLOCK}
    plans: list[FilePlan] = []
    for file, name in sorted(keys):
        if problem(file):
            plans.append(FilePlan(file, name, SKIP, None, "", "", False, problem(file)))
            continue
        plans.append(plan_block(root, file, name, desired.get((file, name)), states, force=force))
    prefs_path = lp.memory.preferences_file
    state = states.get(f"{prefs_path}#{JSON_BLOCK}")
    if (prefs or state) and problem(prefs_path):
        plans.append(FilePlan(prefs_path, JSON_BLOCK, SKIP, None, "", "", False, problem(prefs_path)))
    elif prefs or state:
        plans.append(_plan_json(root, prefs_path, lp.memory.preferences_key, prefs, state or {}, force))
    return plans


def plan_block(root: Path, file: str, name: str, d: Desired | None, states: dict[str, dict[str, Any]], *,
               force: bool = False) -> FilePlan:
    """Plan one block's sync from the file as it is now (`plan_files`, and again for a file that changed
    before kg could write it)."""
    state = states.get(f"{file}#{name}") or {}
    current = blocks.read(root / file)
    plan = blocks.plan_sync(
        current, name, d.inner() if d else None, expected_hash=state.get("hash") or None,
        glue=state.get("glue") or "", created_file=bool(state.get("created_file")),
        section=d.section if d else "", force=force,
    )
    created = plan.action == "create" or (bool(state.get("created_file")) and plan.action not in
                                           ("remove", "delete"))
    return FilePlan(file, name, plan.action, plan.text, plan.hash or "", plan.glue, created, plan.reason, current)


def skipped(p: FilePlan, why: str) -> FilePlan:
    """`p` not carried out: its file may not be written (`Lifecycle.problem`)."""
    return FilePlan(p.path, p.block, SKIP, None, "", "", False, why)


def replan(root: Path, p: FilePlan, desired: dict[tuple[str, str], Desired], states: dict[str, dict[str, Any]],
           prefs: list[dict[str, str]], lp: LifecyclePolicy, *, force: bool = False) -> FilePlan:
    """`p` planned again from its file as it is now (someone wrote the file after it was planned)."""
    if p.block == JSON_BLOCK:
        state = states.get(f"{p.path}#{JSON_BLOCK}") or {}
        return _plan_json(root, p.path, lp.memory.preferences_key, prefs, state, force)
    return plan_block(root, p.path, p.block, desired.get((p.path, p.block)), states, force=force)


def _plan_json(root: Path, rel: str, key: str, prefs: list[dict[str, str]], state: dict[str, Any],
               force: bool) -> FilePlan:
    """memory/preferences.json: kg owns one key; its format and plan belong to kg/memory/preferences.py."""
    from kg.memory.preferences import plan_learned

    current = blocks.read(root / rel)
    p = plan_learned(current, key, prefs, expected_hash=state.get("hash") or "",
                     created_file=bool(state.get("created_file")), force=force)
    return FilePlan(rel, JSON_BLOCK, p.action, p.text, p.hash, "", p.created_file, p.flag, current)


def write(root: Path, plans: list[FilePlan], *,
          replan: Callable[[FilePlan], FilePlan] | None = None, tries: int = 5) -> list[tuple[str, str]]:
    """Carry the plans out. A file with an owner module is written through it (preferences.json's learned key,
    a promoted skill's file), every other one by the block editor: each file kg writes has one writer. Returns
    (path, reason) for each file the writer refused (`kg.core.files.check_target`); the others are written.
    A file written by someone else after it was planned (FileChanged) is planned again from its new text with
    `replan` and written, at most `tries` times in all; then it is refused, as it was found, for the next run.
    `plans` is updated in place with the plans carried out."""
    refused: list[tuple[str, str]] = []
    for i, p in enumerate(plans):
        for attempt in range(tries):
            if p.action == SKIP or any(path == p.path for path, _ in refused):
                break
            try:
                _write_one(root, p)
                break
            except FileChanged as exc:
                if replan is None or attempt == tries - 1:
                    refused.append((p.path, str(exc)))
                    break
                try:
                    p = plans[i] = replan(p)
                except UnusableFile as why:
                    refused.append((p.path, str(why)))
            except UnusableFile as exc:
                refused.append((p.path, str(exc)))
                break
    return refused


def _write_one(root: Path, p: FilePlan) -> None:
    from kg.memory import preferences, skills

    plan = blocks.SyncPlan(p.action, p.text, p.hash, p.glue, p.flag, p.base)
    if p.block == JSON_BLOCK:
        preferences.apply_plan(root / p.path, plan)
    elif skills.is_skill_file(p.path):
        skills.apply_plan(root / p.path, plan)
    else:
        blocks.apply(root / p.path, plan)


def block_rows(plans: list[FilePlan], states: dict[str, dict[str, Any]], at: datetime) -> list[dict[str, Any]]:
    """ManagedBlock rows that differ from what is stored (so a second run writes nothing)."""
    rows = []
    for p in plans:
        if p.action == SKIP:  # its row stays as it was: the file is brought up to date once kg may use it
            continue
        old = states.get(p.block_id) or {}
        row = {"id": p.block_id, "path": p.path, "name": p.block, "hash": p.hash, "glue": p.glue,
               "created_file": p.created_file, "flag": p.flag}
        if p.action == "flag":
            row.update(hash=old.get("hash") or "", glue=old.get("glue") or "",
                       created_file=bool(old.get("created_file")))
        if not old and p.action == "none" and not p.hash:
            continue
        if all((old.get(k) if old.get(k) is not None else ("" if k != "created_file" else False)) == v
               for k, v in row.items()):
            continue
        rows.append({**row, "at": at})
    return rows
