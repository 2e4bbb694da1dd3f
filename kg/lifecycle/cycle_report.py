"""What a cycle (or one step of it) did, or with dry_run would do: `CycleReport`, which `kg cycle --json`, the
single-step commands and the scheduled cycle's `last-cycle.json` print.

Apart from `Lifecycle` (kg/lifecycle/cycle.py) because it is the answer's shape, read by the API, the CLI and
the schedule, where cycle.py is the write path; every step appends to one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kg.store import plain as _jsonable


@dataclass
class CycleReport:
    """What a cycle (or one step of it) did, or with dry_run would do."""

    now: str
    dry_run: bool = False
    verified: list[dict[str, Any]] = field(default_factory=list)
    withdrawn: list[dict[str, Any]] = field(default_factory=list)  # live changes a person took out of the files
    checks: list[dict[str, Any]] = field(default_factory=list)  # rules kg took out for a check, or put back
    reverted: list[dict[str, Any]] = field(default_factory=list)
    reminders: list[dict[str, Any]] = field(default_factory=list)
    evidence_requested: list[dict[str, Any]] = field(default_factory=list)
    decayed: dict[str, Any] = field(default_factory=lambda: {"demoted": 0, "stale": 0, "expired": 0,
                                                              "restored": 0, "revived": 0, "ids": {}})
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    rescored: int = 0
    promoted: list[dict[str, Any]] = field(default_factory=list)
    proposed: list[dict[str, Any]] = field(default_factory=list)
    superseded: list[dict[str, Any]] = field(default_factory=list)  # import proposals closed (imported_rules)
    held: list[dict[str, Any]] = field(default_factory=list)
    waiting: list[dict[str, Any]] = field(default_factory=list)  # ready, but over a budget (not a change)
    logged: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    flags: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)  # files kg may not use: left as they are
    # acknowledged writes that were waiting in the journal, applied as the graph was opened (every kg command
    # applies them, a dry run too: they are the agent's, not the cycle's; QA: a dry run said "nothing written")
    journal_applied: int = 0
    # the graph file rebuilt compact at the cycle's end (kg/store/compact.py): bytes before and after, or `error`
    compacted: dict[str, Any] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        d = self.decayed
        moved = any(w["action"] != "still paused" for w in self.withdrawn)
        return bool(moved or self.checks or
                    self.verified or self.reverted or self.evidence_requested or self.conflicts or
                    self.rescored or self.promoted or self.proposed or self.superseded or self.logged or self.files or
                    d["demoted"] or d["stale"] or d["expired"] or d["restored"] or d["revived"])

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["changed"] = self.changed
        return _jsonable(data)
