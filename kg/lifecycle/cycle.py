"""The lifecycle's one write path: each step selects candidates with a named query, decides with a pure
function, and writes set-based (UNWIND $rows), in the order verify, revert, decay, conflicts, promote,
export. `Lifecycle` is used by `kg cycle` and by the single-step commands (`kg verify`, `kg approve`, ...).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from kg.core.errors import UnusableFile
from kg.core.files import target_problem
from kg.core.text import index_tokens
from kg.ingest.import_mark import loading_principles
from kg.lifecycle import (
    blocks,
    conflicts,
    decay,
    imported_rules,
    promote,
    promoting,
    render,
    revert_log,
    settling,
    verifying,
)
from kg.lifecycle.cycle_report import CycleReport
from kg.lifecycle.policy import LifecyclePolicy
from kg.lifecycle.policy import load as load_policy
from kg.store import Store, bulk
from kg.store import plain as _jsonable  # noqa: F401 - the one JSON-ready helper (kg.store.plain); api.py imports this name
from kg.store.schema import meta_key

DAY = timedelta(days=1)
LIVE = render.LIVE
OPEN_EVENT = ["pending", "in_progress"]
STAGE_COPY_ROWS = 2000  # more decay decisions than this are staged with one COPY
STAGE_COLUMNS = ("id", "stage", "priority", "base", "stale", "status", "at")
SAMPLE = 50  # report at most this many ids per decay stage (a 1M-event first cycle decays a lot)


class _DryRun(Exception):
    pass


@contextmanager
def holding(ws: Any) -> Iterator[Store]:
    """The workspace's graph, held open for the whole operation (so `ws.log` can run inside it). The journal's
    waiting entries are applied first; `drained(ws, before)` says how many."""
    held = getattr(ws, "_held", None)
    if held is not None:
        with ws.store() as st:
            yield st
        return
    # issue 20: its drains are bounded as a reader's are (under contention it applies what it can in
    # `write.reader_drain_seconds`, then runs; the appliers and the read server apply the rest)
    bounded, ws.drain_budget = ws.drain_budget, ws.policy.reader_drain_seconds
    try:
        with ws, ws.store() as st:
            yield st
    finally:
        ws.drain_budget = bounded


def drained(ws: Any, before: int) -> int:
    """How many journal entries were applied since `before` (ws.applied_total then: kg/ingest/drain.py)."""
    return getattr(ws, "applied_total", 0) - before


class Lifecycle:
    def __init__(self, ws: Any, st: Store, now: datetime, *, dry_run: bool = False,
                 report: CycleReport | None = None, policy: LifecyclePolicy | None = None):
        self.ws, self.st, self.now, self.dry_run = ws, st, now, dry_run
        self.lp = policy or load_policy(ws)
        self.report = report or CycleReport(now=now.isoformat(), dry_run=dry_run)
        self.root = ws.root
        self._dry_ids = 0
        self._marks: list[str] | None = None  # patterns to mark promoted at once (`marking`), else at apply
        self._rules: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None  # rule_rows, until a write
        self._next_number = 0  # the next proposal number, once read (the cycle holds the write lock)
        self._problems: dict[str, str] = {}
        self._unwritable: dict[str, str] = {}  # `problem(file, writing=True)`, asked apart: reading one is fine
        self._paused: dict[str, list[tuple[datetime, datetime]]] | None = None  # `sync`'s, until `verify`

    def problem(self, file: str, *, writing: bool = False) -> str:
        """Why the target `file` cannot be used this run ('' when it can): a symlink out of the workspace, a
        folder, an unreadable file (`kg.core.files.target_problem`); `writing`: also a file kg may not write (a
        person made it read-only), asked only where kg has something to write. Such a file is reported once in
        `report.skipped` and left as it is; every other file and step goes on (a QA pass: one folder named
        USER.md failed the whole cycle)."""
        if writing and not self.problem(file):
            if file not in self._unwritable:
                self._unwritable[file] = target_problem(self.root / file, root=self.root)
                if self._unwritable[file]:
                    self.report.skipped.append({"path": file, "reason": self._unwritable[file]})
            return self._unwritable[file]
        if file not in self._problems:
            why = target_problem(self.root / file, root=self.root, writing=False)
            if not why:
                try:
                    blocks.read(self.root / file)
                except UnusableFile as exc:
                    why = str(exc)
            self._problems[file] = why
            if why:
                self.report.skipped.append({"path": file, "reason": why})
        return self._problems[file]

    # -- transactions ---------------------------------------------------------------------------------------
    @contextmanager
    def tx(self) -> Iterator[None]:
        with self.st.transaction():
            yield

    @contextmanager
    def rehearsal(self) -> Iterator[None]:
        """A dry run's writes, undone: one transaction rolled back, or, on a team graph (FalkorDB has no
        multi-statement transactions), made on a scratch copy of it that is then deleted."""
        scratch = getattr(self.st, "scratch_copy", None)
        if scratch is not None:
            with scratch():
                yield
            return
        from kg.store.remake import rehearsing

        try:
            with self.tx(), rehearsing(self.st):
                yield
                raise _DryRun
        except _DryRun:
            pass

    def run_all(self, *, force: bool = False) -> CycleReport:
        """verify, revert, decay, conflicts, promote, export. Dry run: rehearsed, its writes undone."""
        if self.dry_run:
            with self.rehearsal():
                reverts = self.verify()
                self.log(self.revert(reverts))
                self.decay()
                self.settle_conflicts()
                self.promote()
                self.settle_new()
                verifying.pause_set_aside(self)
                self.export(force=force)
            return self.report
        self.sync()
        with self.tx():
            reverts = self.verify()
            logs = self.revert(reverts)
        self.log(self.missed_logs(logs))
        with self.tx():
            self.decay()
            self.settle_conflicts()
            self.promote()
            self.settle_new()
            verifying.pause_set_aside(self)  # (what a conflict just set aside: its days out are no evidence)
        bulk.unstage(self.st, "LcStage")  # the decay's scratch table, once its pass is committed (migration 0013)
        self.export(force=force)
        with self.tx():
            verifying.resume_let_back(self)  # (what the export just wrote back: read from the files)
        return self.report

    # -- ids ------------------------------------------------------------------------------------------------
    def _seq_id(self, query: str, prefix: str) -> str:
        return next(self._seq_ids(query, prefix))

    def _seq_ids(self, query: str, prefix: str) -> Iterator[str]:
        """The next ids after the stored ones, one after another: for a step that writes its rows after its loop
        (each read from the store, every conflict decision of one cycle got the same id and they overwrote each
        other: a QA pass)."""
        stem = f"{prefix}-{self.now:%Y%m%d}-"
        nums = [int(m.group(1)) for r in self.st.run(query, prefix=stem)
                if (m := re.match(rf"^{re.escape(stem)}(\d+)$", r["id"]))]
        n = max(nums, default=0)
        while True:
            n += 1
            yield f"{stem}{n:03d}"

    def _node_id(self, kind: str) -> str:
        prefix = self.ws.policy.node_prefix[kind]
        if self.dry_run:
            self._dry_ids += 1
            return f"{prefix}-dry-run-{self._dry_ids:03d}"
        with self.ws.journal.locked():
            (node_id,) = self.ws.journal.allocate(prefix, f"{self.now:%Y%m%d}")
        return node_id

    def _redact(self, text: str) -> str:
        return self.ws.rules.redactor.redact(text).text

    # -- 1. verify ------------------------------------------------------------------------------------------
    # -- 1. verify (kg/lifecycle/verifying.py) ----------------------------------------------------------------
    def sync(self) -> None:
        """Pause the verification of the rules out of their files and resume the ones back
        (`verifying.sync_withdrawals`), committed before `verify` reads which changes are due. A pause or resume
        makes the change's row anew (its evidence list: kg/store/remake.py), and read again in the same Kùzu
        0.11.3 transaction through its pattern edge (lc_changes_due) the row came back as it was before: a rule
        resumed with its next check moved on by 45 days paused was judged at its old deadline, and one cycle both
        resumed it and took it out for a check. (A dry run rehearses it in its one transaction: lists are SET in
        place there, no row is made anew.)"""
        with self.tx():
            self._paused = verifying.sync_withdrawals(self)

    def verify(self) -> list[dict[str, Any]]:
        """Judge every due change; returns the reverts to carry out (the pauses `sync` committed, else synced
        here first)."""
        paused, self._paused = self._paused, None
        return verifying.verify_due(self, paused)

    def prior(self) -> tuple[float, float]:
        return verifying.prior(self)

    def observed_from(self) -> datetime | None:
        return verifying.observed_from(self)

    def effect_prior(self) -> Any:
        """The workspace's effect prior (None when `verification.effect_prior` is off)."""
        return verifying.effect_prior(self)

    def history(self, pattern: str, change: str) -> tuple[list[datetime], list[tuple[datetime, datetime]]]:
        return verifying.history(self, pattern, change)

    # -- 2. revert ------------------------------------------------------------------------------------------
    def revert(self, reverts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Mark the changes reverted (the export step takes their lines out of the files); returns the log
        entries to write: why each was reverted, and a critical item when a change made things worse."""
        if not reverts:
            return []
        self._rules = None
        self.st.run("lc_change_revert", rows=[{"id": r["change"], "status": r["status"], "at": self.now,
                                               "reason": r["reason"], "evidence": r["evidence"], "rule": r["rule"],
                                               "pattern": r["pattern"]} for r in reverts])
        for r in reverts:
            self.report.reverted.append({k: r[k] for k in ("change", "target", "text", "pattern_key", "verdict",
                                                            "status", "summary")})
        return [revert_log.entry(r, self.lp.verification.critical_priority) for r in reverts]

    def missed_logs(self, logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`logs`, and the entries of changes a killed run reverted without logging (kg/lifecycle/revert_log.py)."""
        return logs + revert_log.missed(self, verifying.OWN_AREA, {item["change"] for item in logs})

    def log(self, logs: list[dict[str, Any]]) -> None:
        for item in logs:
            if self.dry_run:
                self.report.logged.append({**item, "id": None})
                continue
            res = self.ws.log(item["kind"], item["summary"], now=self.now, priority=item["priority"],
                              category=item["category"], details=item["details"], source="self_discovery",
                              area=verifying.OWN_AREA, tags=[verifying.OWN_AREA, item["change"]])
            self.report.logged.append({**item, "id": res.id})

    # -- 3. decay -------------------------------------------------------------------------------------------
    def decay(self) -> None:
        d = self.lp.decay
        rows = self.st.run("lc_decay_candidates", kinds=list(d.kinds), statuses=list(d.statuses),
                           keep_categories=list(d.keep_categories),
                           demote_before=self.now - d.demote_days * DAY, stale_before=self.now - d.stale_days * DAY,
                           expire_before=self.now - d.expire_days * DAY)
        back = self.st.run("lc_decay_revive", kinds=list(d.revive_kinds), expired_status=d.expired_status,
                           since=self.now - d.expire_days * DAY, min=d.revive_recurrence,
                           ignore_statuses=list(self.lp.promotion.ignore_event_statuses)) if d.revive_kinds else []
        updates = []
        rep = self.report.decayed
        for r, revive in [(r, False) for r in rows] + [(r, True) for r in back]:
            u = decay.decide(decay.DecayState(r["id"], r["status"], r["priority"], r["base_priority"],
                                              int(r["stage"] or 0), False, r["last"]), self.now, self.lp, revive=revive)
            if u is None:
                continue
            name = "revived" if revive else "restored" if u.stage < int(r["stage"] or 0) else \
                {1: "demoted", 2: "stale", 3: "expired"}[u.stage]
            rep[name] += 1
            ids = rep["ids"].setdefault(name, [])
            if len(ids) < SAMPLE:
                ids.append(u.id)
            updates.append({"id": u.id, "stage": u.stage, "priority": u.priority, "base": u.base_priority,
                            "stale": u.stale, "status": u.status, "at": self.now})
        if updates:
            from kg.store.sidestate import naming

            bulk.stage(self.st, "LcStage")  # (issue 17) made for this pass, dropped after its commit (run_all)
            if len(updates) > STAGE_COPY_ROWS:  # COPY FROM a file: 30k rows in ~0.3 s, UNWIND CREATE ~10 s
                bulk.copy_rows(self.st, "LcStage", updates, scratch=self.ws.kg_dir, columns=STAGE_COLUMNS)
            else:
                self.st.run("lc_stage_load", rows=updates)
            with naming(self.st, [u["id"] for u in updates]):  # (issue 17) the side index rereads only these
                self.st.run("lc_decay_apply")
        self._skip_closed()

    def _skip_closed(self) -> None:
        """The pending proposals about a pattern decay closed (wont_fix, now or in a cycle of an older kg) are
        skipped, as a person's close skips them (`kg resolve`): they stayed listed in the brief and `kg propose`,
        and `kg approve` refused each (QA9 #1)."""
        waiting = sorted({q["node"] for q in self.st.run("lc_proposals", statuses=["pending"])
                          if q["node_kind"] == "pattern"})
        closed = [n for n in (self.st.run("node_get", id=i)[0]["n"] for i in waiting)
                  if n.get("status") == self.lp.decay.expired_status]
        if not closed:
            return
        from kg.ingest.writes import skip_proposals_of

        reasons = {}
        for n in closed:
            key = n.get("pattern_key") or n["id"]
            expired = int(n.get("decay_stage") or 0) >= 3
            why = (f"expired: not seen for {self.lp.decay.expire_days} days ({self.now:%Y-%m-%d}); it comes back "
                   "when it recurs, or" if expired else f"closed ({n['status']}, {self.now:%Y-%m-%d}); never revived:")
            reasons[n["id"]] = f"pattern '{key}' {why} `kg resolve {key} --status active` reopens it"
        skipped = skip_proposals_of(self.st, reasons, self.now)
        if skipped:
            self.report.decayed.setdefault("proposals_skipped", []).extend(skipped)

    # -- 4. conflicts ---------------------------------------------------------------------------------------
    def rule_rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The live changes and the free principles (not those an unfinished import loaded: `loading_principles`);
        read again only after this cycle applied or reverted."""
        if self._rules is None:
            held = loading_principles(self.ws)
            self._rules = (self.st.run("lc_live_changes", statuses=list(LIVE)),
                           [r for r in self.st.run("lc_free_principles") if r["node"] not in held])
        return self._rules

    def settle_conflicts(self) -> None:
        settling.settle(self)

    def settle_new(self) -> None:
        """The conflicts of the rules this cycle promoted, settled before the export writes them: else the next
        cycle at the same --now found them, and took out of the file what this one had just written (QA qa2)."""
        if self.report.promoted:
            self.settle_conflicts()

    def rule_facts(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        return settling.rule_facts(self, ids)

    def _score(self, f: dict[str, Any]) -> conflicts.Score:
        return settling.score(self, f)

    # -- 5. promote -----------------------------------------------------------------------------------------
    def candidates(self) -> list[promote.Candidate]:
        """Every pattern ready to promote, best first, filled in from its window's events."""
        return promoting.fill(self, self.ready_rows())

    def ready_rows(self, shown: int | None = None) -> list[dict[str, Any]]:
        """The patterns ready to promote (new, and reverted ones that recur again), best first, with their
        figures only (a status line needs their number and the first few: `shown` of them with their text)."""
        return promoting.ready_rows(self, shown)

    def fill(self, rows: list[dict[str, Any]]) -> list[promote.Candidate]:
        return promoting.fill(self, rows)

    def promote(self) -> None:
        promoting.promote_all(self)
        self.report.superseded += imported_rules.supersede(self.st, self.now)  # its pattern promoted here
        self.critical_proposals()

    def critical_proposals(self) -> None:
        rows = self.st.run("lc_critical_candidates", priorities=list(self.lp.proposals.critical_priorities),
                           now=self.now)
        waiting = int(self.st.run("lc_pending_count", type="critical_fix")[0]["n"])
        room = max(0, self.lp.proposals.max_pending_critical - waiting)
        for r in (rows[-room:] if room else []):  # the newest; older ones once these are decided
            number = self._new_proposal(
                type="critical_fix", target=r["area"] or "", target_kind="", change=f"Address: {r['text'][:80]}",
                text=r["text"], hypothesis="", priority="critical", area=r["area"] or "", category="",
                motivation=f"Critical priority entry {r['id']} logged {r['created_at']:%Y-%m-%d}",
                evidence=[r["id"]], risk="Medium", effort="medium", impact="high", node=r["id"])
            self.report.proposed.append({"number": number, "type": "critical_fix", "target": r["area"] or "",
                                         "text": r["text"], "entry": r["id"]})

    def _new_proposal(self, *, node: str | None = None, change_id: str | None = None, **fields: Any) -> int:
        number = self._next_number or int(self.st.run("lc_proposal_max")[0]["n"] or 0) + 1
        self._next_number = number + 1
        pid = f"prop-{number:04d}"
        for k in ("change", "text", "motivation", "hypothesis"):
            fields[k] = self._redact(fields[k])
        self.st.run("lc_proposal_create", id=pid, number=number, at=self.now, **fields)
        if node:
            self.st.run("lc_proposal_about", key=meta_key("Proposal", pid), node=node, at=self.now)
        if change_id:
            self.st.run("lc_proposal_for_change", key=meta_key("Proposal", pid), change=change_id, at=self.now)
        return number

    def blocked(self, file: str, block: str) -> str:
        """Why kg may not write this block now ('' when it may): a human edit inside it, damaged markers, a file
        kg may not use."""
        if self.problem(file, writing=True):
            return self.problem(file, writing=True)
        states = {r["id"]: r for r in self.st.run("lc_blocks")}
        state = states.get(f"{file}#{block}")
        try:
            inner = blocks.inner_of(blocks.read(self.root / file), block)
        except blocks.BlockError as exc:
            return str(exc)
        if state and state["hash"] and (inner is None or not blocks.same(inner, state["hash"])):
            return "a human edited inside the kg block (or removed it)"
        return ""

    def apply(self, plan: promote.Plan, *, source: str, proposal: int) -> str | None:
        """Write a rule: the rule node derived_from the pattern, the Change (with the block's prior content),
        the pattern and its occurrences marked promoted. The export step renders it into the file."""
        why = self.blocked(plan.file, plan.block)
        if why:
            self.report.held.append({"pattern_key": plan.key, "target": plan.file, "reason": why})
            if not self.problem(plan.file, writing=True):  # (a file kg may not use is in `skipped` already)
                self.report.flags.append({"path": plan.file, "block": plan.block, "flag": why})
            return None
        prior = blocks.inner_of(blocks.read(self.root / plan.file), plan.block)
        text = self._redact(plan.text)
        node_id = self._node_id(plan.node_kind)
        self.st.run("node_create", id=node_id, kind=plan.node_kind, entry_type=None, text=text, details=None,
                    action=None, category=plan.category or None, priority=plan.priority, status="active",
                    area=plan.area or None, source="promotion", pattern_key=None, session=None, files=[plan.file],
                    tags=[plan.target], error_text=None, context=None, reproducible=None, user_context=None,
                    complexity=None, frequency=None, redactions=[], created_at=self.now, reinforced_at=self.now,
                    tokens=index_tokens(text))
        body = text
        if self.lp.targets[plan.target].format == "document":
            body = promote.skill_document(plan.key, text, plan.motivation)
        change_id = self._seq_id("lc_change_ids", "chg")
        self.st.run("lc_change_create", id=change_id, kind="promotion", target=plan.file, block=plan.block,
                    target_kind=plan.target, text=body, hypothesis=self._redact(plan.hypothesis),
                    prior_block=prior, prior_exists=prior is not None, post_block=None, pattern_key=plan.key,
                    at=self.now, next_check=self.now + self.lp.verification.first_check_days * DAY,
                    evidence=[f"{self.now:%Y-%m-%d} applied ({source}); evidence: {', '.join(plan.event_ids)}"],
                    proposal=proposal, source=source)
        self.st.run("lc_change_link", change=change_id, node=node_id, pattern=plan.pattern_id, at=self.now,
                    reason=f"promoted by {change_id}")
        self._rules = None
        if self._marks is not None:
            self._marks.append(plan.pattern_id)
        else:
            self.st.run("lc_mark_promoted", pattern=plan.pattern_id, at=self.now, from_statuses=OPEN_EVENT)
        self.report.promoted.append({"change": change_id, "node": node_id, "pattern_key": plan.key,
                                     "target": plan.file, "text": text, "mode": source, "proposal": proposal or None,
                                     "next_check": self.now + self.lp.verification.first_check_days * DAY})
        return change_id

    @contextmanager
    def marking(self) -> Iterator[None]:
        """Patterns `apply`d inside are marked promoted with one statement at the end."""
        self._marks = []
        try:
            yield
            if self._marks:
                self.st.run("lc_mark_promoted_many", patterns=self._marks, at=self.now, from_statuses=OPEN_EVENT)
        finally:
            self._marks = None

    # -- 6. export ------------------------------------------------------------------------------------------
    def hidden(self, live: list[dict[str, Any]], free: list[dict[str, Any]],
               decisions: list[dict[str, Any]] | None = None) -> set[str]:
        """The rules not rendered for a conflict: by the stored decisions, or `decisions` (`settling.kept_out`)."""
        active = {r["node"] for r in live if r["node_status"] == "active"} | {r["node"] for r in free}
        views = [conflicts.DecisionView(d["a"], d["b"], d["winner"] or "", bool(d["override"]))
                 for d in (self.st.run("lc_decisions") if decisions is None else decisions)]
        return conflicts.suppressed(views, active, self.lp.conflicts.on_tie)

    def desired(self) -> dict[tuple[str, str], render.Desired]:
        live, free = self.rule_rows()
        here = (getattr(self.st, "origin", None) or {}).get("origin_workspace")  # a team graph's workspace
        return render.desired_blocks(live, free, self.hidden(live, free), self.lp, here)

    def export(self, *, force: bool = False) -> list[render.FilePlan]:
        """Render every block from the graph and write the files that differ (not in a dry run)."""
        desired = self.desired()
        states = {r["id"]: r for r in self.st.run("lc_blocks")}
        prefs = render.preference_lines(desired, self.lp)
        plans = render.plan_files(self.root, desired, states, prefs, self.lp, force=force, problem=self.problem)
        plans = [render.skipped(p, why) if p.action not in ("none", "flag", render.SKIP)
                 and (why := self.problem(p.path, writing=True)) else p for p in plans]  # the dry run says so too
        new = [p["change"] for p in self.report.promoted]
        posts = []
        for ch in self.st.run("lc_changes_all") if new else []:
            if ch["id"] in new:
                d = desired.get((ch["target"], ch["block"]))
                posts.append({"id": ch["id"], "post": (d.inner() if d else None) or ""})
        for p in plans:
            if p.action == "flag":
                if not any(f["path"] == p.path and f["block"] == p.block for f in self.report.flags):
                    self.report.flags.append({"path": p.path, "block": p.block, "flag": p.flag})
            elif p.action not in ("none", render.SKIP):
                self.report.files.append(p.as_dict())
        if self.dry_run:
            return plans
        again = lambda p: render.replan(self.root, p, desired, states, prefs, self.lp, force=force)  # noqa: E731
        for path, why in render.write(self.root, plans, replan=again):  # unusable (or kept changing) since planned
            self._problems[path] = why
            self.report.skipped.append({"path": path, "reason": why})
            self.report.files = [f for f in self.report.files if f["path"] != path]
        plans = [p for p in plans if not self._problems.get(p.path)]
        rows = render.block_rows(plans, states, self.now)
        if rows or posts:
            with self.tx():
                if rows:
                    self.st.run("lc_block_upsert", rows=rows)
                if posts:
                    self.st.run("lc_change_post", rows=posts)
        return plans
