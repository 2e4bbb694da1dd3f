"""The demo workspace: a scripted, multi-day, multi-session history run through the public API.

It is what `kg demo` builds and what the notebooks explore. Everything is replayed with explicit times, so
the result is the same on every machine and every run.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from kg.core.errors import UsageError
from kg.workspace import Workspace
from kg.workspace_setup import init_workspace

START = datetime(2026, 10, 15, 9, 0)  # the story ends on 2026-11-30, the notebooks' fixed now

HUMAN_TOOLS_MD = """# TOOLS.md

Notes the team keeps by hand about the tools in this repository.

- The staging database is reset every Sunday night.
"""

HUMAN_MEMORY_MD = """# MEMORY.md

Long-term memory for the agent. The team writes here too; kg only edits its own marked block.

## Project
- Monorepo: web/ (Next.js) and api/ (FastAPI).
"""

# (day, hour:minute, session, kind, summary, fields). Sessions are one agent conversation each; the same
# mistakes come back in different words, as they do in real use.
HISTORY: list[tuple[int, str, str, str, str, dict[str, Any]]] = [
    (0, "09:12", "s01", "error", "git push failed: the current branch has no upstream branch",
     {"area": "tooling", "pattern_key": "git.push.no_upstream", "error_text": "fatal: The current branch "
      "feature/login has no upstream branch.", "context": "git push", "reproducible": "yes",
      "action": "push with `git push -u origin HEAD`"}),
    (0, "09:40", "s01", "learning", "User corrected me: this repo uses pnpm, not npm",
     {"category": "correction", "area": "tooling", "pattern_key": "pkg.use_pnpm", "source": "user_feedback",
      "details": "I ran `npm install`, which wrote a package-lock.json next to pnpm-lock.yaml.",
      "action": "always use pnpm in this repository"}),
    (0, "10:05", "s01", "feature", "Can you also export the weekly report as CSV?",
     {"area": "backend", "user_context": "the finance team imports it into a spreadsheet",
      "complexity": "simple", "frequency": "first_time"}),
    (1, "14:20", "s02", "error", "pytest run failed: database connection refused on port 5433",
     {"area": "tests", "pattern_key": "tests.db_not_running", "error_text": "psycopg.OperationalError: "
      "connection refused (port 5433)", "context": "pytest api/tests", "action": "start the test database with "
      "`docker compose up -d db-test` first"}),
    (1, "14:55", "s02", "error", "git push rejected: no upstream configured for the branch",
     {"area": "tooling", "pattern_key": "git.push.no_upstream", "context": "git push"}),
    (1, "15:30", "s02", "learning", "用户喜欢直接回答，不要解释太多",
     {"category": "preference", "area": "behavior", "source": "user_feedback", "pattern_key": "pref.direct_answers"}),
    (3, "10:02", "s03", "learning", "Used npm again although the user asked for pnpm",
     {"category": "correction", "area": "tooling", "pattern_key": "pkg.use_pnpm", "source": "user_feedback"}),
    (3, "11:45", "s03", "error", "Deploy script failed: token ghp_demo0000000000000000000000000000000000 expired",
     {"area": "infra", "error_text": "HTTP 401 from GitHub API with Authorization: Bearer "
      "ghp_demo0000000000000000000000000000000000", "priority": "critical", "context": "scripts/deploy.sh"}),
    (3, "16:10", "s03", "error", "git push failed again: branch has no upstream",
     {"area": "tooling", "pattern_key": "git.push.no_upstream"}),
    (4, "09:30", "s04", "learning", "Answer directly; the user does not want long explanations",
     {"category": "preference", "area": "behavior", "source": "user_feedback", "pattern_key": "pref.direct_answers"}),
    (4, "13:00", "s04", "error", "pytest failed: could not connect to the test database",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (6, "10:20", "s05", "learning", "pnpm, not npm: the user corrected me a third time",
     {"category": "correction", "area": "tooling", "pattern_key": "pkg.use_pnpm", "source": "user_feedback"}),
    (6, "11:00", "s05", "learning", "Running the linter before committing saves a CI round trip",
     {"category": "best_practice", "area": "tooling", "source": "self_discovery"}),
    (6, "15:40", "s05", "error", "pytest: the test database was not up, connection refused",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (8, "15:15", "s06", "error", "Test database not running: pytest connection refused",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (8, "16:00", "s06", "feature", "I wish you could open a pull request when the tests pass",
     {"area": "tooling", "complexity": "medium", "frequency": "first_time"}),
    (11, "09:05", "s07", "learning", "用户说：记住，回答要简短直接",
     {"category": "preference", "area": "behavior", "source": "user_feedback", "pattern_key": "pref.direct_answers"}),
    (11, "10:40", "s07", "error", "pytest: connection refused, the test database was down again",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (11, "17:20", "s07", "error", "pytest failed once more: the test database was not started",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
]

# The cycle on day 12 finds the recurring patterns ready but promotes none: a rule's verification compares the
# rate after it with the rate before, and that rate must rest on 14 days watched (verification.min_baseline_days),
# so each waits and says the day it becomes eligible. The cycle on day 16 promotes them; the story goes on for
# a week: the git, pnpm and preference mistakes stop, the test-database error keeps coming. The verification on
# day 24 finds every change inconclusive (three to five occurrences before them are a thin baseline for one
# week) and checks again.
SECOND_ACT: list[tuple[int, str, str, str, str, dict[str, Any]]] = [
    (17, "10:10", "s08", "error", "pytest could not reach the test database again",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (18, "09:20", "s09", "learning", "Pushed the new branch with -u first time, as TOOLS.md says",
     {"category": "best_practice", "area": "tooling", "source": "self_discovery"}),
    (19, "11:30", "s09", "error", "pytest: test database connection refused, port 5433",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (21, "14:05", "s10", "error", "Test DB was not up, pytest failed to connect",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (22, "16:40", "s11", "error", "pytest could not connect: test database down",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
]
# Act three: four more weeks. The test-database error goes on in spite of its AGENTS.md rule; the git, pnpm
# and preference mistakes do not come back. The cycle on day 46 has enough evidence to decide both ways.
THIRD_ACT: list[tuple[int, str, str, str, str, dict[str, Any]]] = [
    (26, "10:15", "s12", "error", "pytest: the test database refused the connection",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (29, "09:50", "s13", "learning", "The weekly CSV export is used by finance every Monday",
     {"category": "knowledge_gap", "area": "backend", "source": "user_feedback"}),
    (30, "14:30", "s13", "error", "pytest failed again: no test database on port 5433",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (28, "15:30", "s12", "error", "pytest: test database not started, connection refused",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (33, "11:10", "s14", "error", "Test database down: pytest connection refused",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (35, "14:20", "s14", "error", "pytest failed to reach the test database, port 5433 closed",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (37, "15:45", "s15", "error", "pytest could not connect to the test database (port 5433)",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (40, "10:05", "s16", "learning", "Opened the pull request with pnpm's lock file unchanged",
     {"category": "best_practice", "area": "tooling", "source": "self_discovery"}),
    (41, "16:20", "s16", "error", "pytest: connection to the test database refused",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (42, "11:25", "s16", "error", "pytest: no test database listening, connection refused",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
    (44, "09:40", "s17", "error", "Test DB not running, pytest could not connect",
     {"area": "tests", "pattern_key": "tests.db_not_running"}),
]
WAITING_CYCLE_DAY = 12  # a cycle that promotes nothing yet: kg has watched for 11 days, a verdict needs 14
FIRST_CYCLE_DAY = 16
SECOND_CYCLE_DAY = 24
THIRD_CYCLE_DAY = 46

# Knowledge added by hand: lessons drawn from the errors, and the principles they led to.
LESSONS = [
    ("lesson", "Set the upstream on first push with git push -u origin HEAD", "git.push.no_upstream", "caused_by"),
    ("lesson", "Start the test database before running pytest", "tests.db_not_running", "caused_by"),
    ("principle", "Check the environment a command needs before running it", None, None),
    ("knowledge", "This repository uses pnpm workspaces; npm breaks the lock file", "pkg.use_pnpm", "derived_from"),
]


@dataclass
class DemoReport:
    workspace: str
    days: int
    sessions: int
    entries: int
    nodes: list[str] = field(default_factory=list)
    redacted: list[str] = field(default_factory=list)
    cycles: list[dict[str, Any]] = field(default_factory=list)
    approved: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


DEMO_MARKER = Path("memory") / ".kg" / "demo-workspace"


def is_demo(root: Path) -> bool:
    """Whether `kg demo` made this folder (its marker is a regular file, not a link planted there)."""
    marker = root / DEMO_MARKER
    return marker.is_file() and not marker.is_symlink()


def build_demo(path: str | Path, *, force: bool = False) -> tuple[Workspace, DemoReport]:
    """Build the demo workspace at `path` (refuses a non-empty folder unless `force`)."""
    root = Path(path).expanduser().resolve()
    blocked = next((p for p in (root, *root.parents) if p.exists() and not p.is_dir()), None)
    if blocked is not None:  # (QA #12: "Error: Not a directory", exit 1, for bad input)
        raise UsageError(f"{blocked} is a file, not a folder: `kg demo` builds its workspace in a folder of its "
                         "own; choose another path")
    if root.exists() and any(root.iterdir()):
        if not force:
            raise UsageError(f"{root} exists and is not empty: pass --force to rebuild the demo there")
        if not is_demo(root):
            raise UsageError(f"{root} is not a demo workspace made by `kg demo` (it has no "
                             f"{DEMO_MARKER.as_posix()}); refusing to delete it. Choose another path")
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    # the workspace first: a memory/.kg/ made before it (by the marker) reads as a used workspace that lost its
    # ids.json, and every demo began with a warning that it had been rebuilt
    ws = init_workspace(root)
    (root / DEMO_MARKER).write_text("made by `kg demo`; `kg demo --force` may delete and rebuild this folder\n",
                                    encoding="utf-8")
    (root / "TOOLS.md").write_text(HUMAN_TOOLS_MD, encoding="utf-8")
    (root / "MEMORY.md").write_text(HUMAN_MEMORY_MD, encoding="utf-8")
    with ws:  # one open graph for the whole replay
        report = _replay(ws, root)
    return ws, report


def _replay(ws: Workspace, root: Path) -> DemoReport:
    report = DemoReport(workspace=str(root), days=0, sessions=0, entries=0)
    first_of_pattern: dict[str, str] = {}
    sessions: set[str] = set()

    def play(script: list[tuple[int, str, str, str, str, dict[str, Any]]]) -> None:
        for day, hm, session, kind, summary, fields in script:
            hour, minute = (int(x) for x in hm.split(":"))
            at = (START + timedelta(days=day)).replace(hour=hour, minute=minute)
            result = ws.log(kind, summary, now=at, session=f"demo-{session}", **fields)
            report.entries += 1
            report.redacted += list(result.redacted)
            sessions.add(session)
            key = fields.get("pattern_key")
            if key and key not in first_of_pattern:
                first_of_pattern[key] = result.id
            report.days = max(report.days, day + 1)

    play(HISTORY)
    at = START + timedelta(days=9, hours=8)
    principle_id = None
    made: list[dict[str, Any]] = []
    report.sessions = len(sessions)
    for kind, text, key, edge in LESSONS:
        node = ws.node_add(kind, text, now=at)
        made.append(node)
        report.nodes.append(node["id"])
        if key and edge:
            ws.edge_add(node["id"], first_of_pattern[key], edge, now=at, reason="drawn from the demo history")
        if kind == "principle":
            principle_id = node["id"]
    if principle_id:
        for node in made:
            if node["kind"] == "lesson":
                ws.edge_add(node["id"], principle_id, "led_to", now=at, reason="the lesson generalises")
    # Act two: the periodic job promotes what recurred; the user approves the proposals; a week later the
    # verification keeps what helped and reverts what did not.
    from kg.lifecycle import api as lifecycle

    waiting = lifecycle.cycle(ws, now=START + timedelta(days=WAITING_CYCLE_DAY, hours=-1))
    report.cycles.append(_cycle_summary(waiting))
    first = lifecycle.cycle(ws, now=START + timedelta(days=FIRST_CYCLE_DAY, hours=-1))
    report.cycles.append(_cycle_summary(first))
    for proposal in lifecycle.propose(ws):
        if proposal["type"] == "promotion":
            done = lifecycle.approve(ws, proposal["number"], now=START + timedelta(days=FIRST_CYCLE_DAY))
            report.approved.append({"number": proposal["number"], "target": proposal["target"],
                                    "change": proposal["change"], "result": done.get("status", "applied")})
    play(SECOND_ACT)
    second = lifecycle.cycle(ws, now=START + timedelta(days=SECOND_CYCLE_DAY, hours=-1))
    report.cycles.append(_cycle_summary(second))
    play(THIRD_ACT)
    third = lifecycle.cycle(ws, now=end_of_story())
    report.cycles.append(_cycle_summary(third))
    report.sessions = len(sessions)
    report.redacted = sorted(set(report.redacted))
    return report


def end_of_story() -> datetime:
    """The demo's last moment: the morning of its last cycle."""
    return START + timedelta(days=THIRD_CYCLE_DAY, hours=-1)


def _cycle_summary(report: Any) -> dict[str, Any]:
    return {"now": report.now,
            "promoted": [{"pattern_key": p["pattern_key"], "target": p["target"], "text": p["text"]}
                         for p in report.promoted],
            "proposed": [{"number": p["number"], "type": p["type"], "target": p["target"], "text": p["text"]}
                         for p in report.proposed],
            "verified": [{"pattern_key": v["pattern_key"], "target": v["target"], "verdict": v["verdict"],
                          "summary": v["summary"]} for v in report.verified],
            "reverted": [{"pattern_key": r["pattern_key"], "target": r["target"]} for r in report.reverted],
            "waiting": [{"pattern_key": w["pattern_key"], "target": w["target"], "reason": w["reason"]}
                        for w in report.waiting]}
