"""`kg doctor`: check a workspace (folders, rules, ids, graph, full-text index, journal, blocks, files) and
repair what can be repaired safely, saying what was done.

Safe repairs run by default: missing folders made, leftover temporary files of dead processes removed, a
stale current-session pointer cleared, the full-text index rebuilt, the journal applied. Starting a new graph
over a missing or empty one (rebuilt from the workspace's trail and `.learnings/` files when present) only
happens with `repair=True` (`kg doctor --repair`), because what was acknowledged and not exported is gone.
The graph's own checks live in kg/doctor/graph.py.
"""

from __future__ import annotations

import json
import re
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kg.core import paths
from kg.core.errors import KgError
from kg.doctor.graph import _fts_leftovers, _graph, _graph_file, _graph_looked_at, _left_text, _unmark_fts
from kg.redaction import cache as _rule_cache
from kg.store.lock import pid_alive

INSTRUCTION_FILES = ("AGENTS.md", "MEMORY.md", "SOUL.md", "TOOLS.md", "USER.md", "CLAUDE.md")
# a temporary file and the pid of the process writing it: `.<name>.<pid>.<thread ident>.tmp` (kg/core/files.py),
# `.<name>.<pid>.tmp` (older), `.bulk-...-<pid>.csv`, `.import-{edges,implied,lifecycle}-<pid>.jsonl` (a killed
# import's spools, which its resumption writes again). (The thread ident is no pid: read as one, it named a live
# process, or was too big for the kernel's call and `kg doctor` failed on the very file it is there to remove.)
_TMP = re.compile(r"^\..+\.(?P<pid>\d+)\.\d+\.tmp$|^\..+\.(?P<old>\d+)\.tmp$|^\.bulk-.+-(?P<bulk>\d+)\.csv$"
                  r"|^\.import-(?:edges|implied|lifecycle)-(?P<spool>\d+)\.jsonl$")


@dataclass
class Check:
    name: str
    status: str  # ok | repaired | warning | error
    detail: str


@dataclass
class DoctorReport:
    workspace: str
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, status: str, detail: str) -> None:
        self.checks.append(Check(name, status, detail))

    @property
    def ok(self) -> bool:
        return not any(c.status == "error" for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        return {"workspace": self.workspace, "ok": self.ok, "checks": [asdict(c) for c in self.checks]}


def doctor(ws: Any, *, repair: bool = False, dry_run: bool = False) -> DoctorReport:
    if dry_run:  # "repair nothing": not even the secret rules' parse is kept in the workspace's cache
        with _rule_cache.writes_held():
            return _doctor(ws, repair=repair, dry_run=True)
    return _doctor(ws, repair=repair, dry_run=False)


def _doctor(ws: Any, *, repair: bool, dry_run: bool) -> DoctorReport:
    report = DoctorReport(str(ws.root))
    _folders(ws, report, dry_run)
    _rules(ws, report)
    _temp_files(ws, report, dry_run)
    _cut_short(ws, report, dry_run)
    _session_pointer(ws, report, dry_run)
    _team(ws, report, dry_run)
    from kg.doctor.graph import _graph_crashes

    crashes = _graph_crashes(ws, report, repair and not dry_run, dry_run)
    _ids(ws, report, dry_run, crashes)
    if not crashes and _graph_file(ws, report, repair and not dry_run):
        leftovers = _fts_leftovers(ws)
        if leftovers and dry_run:  # (the writer's open below would rebuild the graph)
            report.add("full-text index", "error", f"{_left_text(leftovers)}; run `kg doctor` to rebuild the graph")
        elif dry_run:
            _graph_looked_at(ws, report)
        else:
            if leftovers:  # (issue 22) the mark of a clean graph goes: the writer's open then finds and rebuilds it
                _unmark_fts(ws)
            _graph(ws, report, dry_run, leftovers, repair)
    _journal(ws, report, dry_run)
    _import(ws, report)
    _blocks(ws, report)
    _links(ws, report)
    _preferences(ws, report)
    _clock(ws, report)
    _installs(ws, report)
    return report


def _installs(ws: Any, report: DoctorReport) -> None:
    """Hooks and MCP entries `kg install` made for another workspace's path (a copy or a move: QA6 #2), and hooks
    that will not run: a command this machine does not find, Codex hooks turned off (QA1 #3, #6)."""
    from kg.runtimes.install_paths import advice, elsewhere, not_running

    found = elsewhere(ws.kg_dir, ws.root)
    if found:
        report.add("runtime installs", "warning", advice(found))
    for problem in not_running(ws.kg_dir):
        report.add("runtime installs", "warning", problem)


def _clock(ws: Any, report: DoctorReport) -> None:
    """The workspace's clock zone (kg/workspace_zone.py), after the graph's open, which may have taken the store's
    and rewrote a mirror that was missing, unreadable or not the store's record (reported as repaired)."""
    from kg import workspace_zone
    from kg.core import clock

    mirror = ws.kg_dir / workspace_zone.CACHE
    fixed = getattr(ws, "zone_mirror_fixed", None)
    if not fixed and mirror.exists() and workspace_zone.cached(ws.kg_dir) is None:  # (--dry-run)
        report.add("clock zone", "warning", f"memory/.kg/{workspace_zone.CACHE} names no zone kg can read: "
                                            "`kg doctor` rewrites it from the graph's record")
        return
    kept = workspace_zone._mirror_text(ws.kg_dir) if ws.zone_checked and ws.zone_recorded else None
    if not fixed and kept is not None and kept != ws.zone_recorded:  # (--dry-run: the writer's open rewrites it)
        report.add("clock zone", "warning", f"memory/.kg/{workspace_zone.CACHE} names {kept}, but the graph keeps "
                   f"its times in {ws.zone_recorded} (and kg stores them so): `kg doctor` rewrites it from the "
                   "graph's record")
        return
    said = workspace_zone.note(ws)
    if said:
        report.add("clock zone", "warning", f"{clock.zone_name(ws.zone)}: {said}")
        return
    how = "set in kg.toml" if getattr(ws, "zone_pinned", None) is not None else "the workspace's"
    said = (f"every time kg keeps and shows is a wall-clock time in {clock.zone_name(ws.zone)} ({how}, whatever "
            "the zone of the process)")
    report.add("clock zone", "repaired" if fixed else "ok", f"{said}; {fixed}" if fixed else said)


def _folders(ws: Any, report: DoctorReport, dry_run: bool) -> None:
    missing = [p for p in (ws.memory / "sessions", ws.memory / "skills") if not p.is_dir()]
    if not missing:
        report.add("folders", "ok", "memory/, memory/sessions/, memory/skills/ and memory/.kg/ exist")
    elif dry_run:
        report.add("folders", "warning", f"missing: {', '.join(str(p.relative_to(ws.root)) for p in missing)}")
    else:
        for p in missing:
            p.mkdir(parents=True, exist_ok=True)
        report.add("folders", "repaired", f"made {', '.join(str(p.relative_to(ws.root)) for p in missing)}")


def _rules(ws: Any, report: DoctorReport) -> None:
    """Every rule file loaded as the commands load it (kg/core/rulecheck.py). A workspace opened with `fallback`
    found the problem already and runs the rest of the checks on the packaged rules."""
    from kg.core.rulecheck import problem

    found = getattr(ws, "rules_problem", None) or problem(ws.rules)
    if found:
        ran_on = getattr(ws, "ran_on", None) or "the packaged rules"
        report.add("rules", "error", found + (f"; the other checks ran on {ran_on}"
                                              if getattr(ws, "rules_problem", None) else ""))
    else:
        report.add("rules", "ok", "kg.toml and the rule files are valid")


def _temp_files(ws: Any, report: DoctorReport, dry_run: bool) -> None:
    stale = []
    for folder in (ws.root, ws.memory, ws.kg_dir, ws.memory / "sessions", ws.memory / "skills"):
        if not folder.is_dir():
            continue
        for p in folder.iterdir():
            m = _TMP.match(p.name)
            pid = m and int(m["pid"] or m["old"] or m["bulk"] or m["spool"])
            if m and p.is_file() and not p.is_symlink() and not _alive(pid):
                stale.append(p)
    copies, size = _dead_snapshots(ws, dry_run)
    if not stale and not copies:
        report.add("temporary files", "ok", "none left behind")
        return
    left = stale + copies
    names = ", ".join(str(p.relative_to(ws.root)) for p in left[:5]) + (" ..." if len(left) > 5 else "")
    if copies:
        names += f" ({len(copies)} snapshot cop{'y' if len(copies) == 1 else 'ies'} of the graph, {size / 1e6:.1f} MB)"
    if dry_run:
        report.add("temporary files", "warning", f"{len(left)} left by dead processes: {names}")
        return
    for p in stale:
        p.unlink(missing_ok=True)
    report.add("temporary files", "repaired", f"removed {len(left)} left by dead processes: {names}")


def _dead_snapshots(ws: Any, dry_run: bool) -> tuple[list[Path], int]:
    """The graph copies in memory/.kg/snapshots/ whose owner died (a notebook killed while it held
    `kg.analysis.load`: 49 MB on the demo, QA8 #4), found as the next snapshot finds them (its owner lock is
    free: kg/analysis/snapshot.py `sweep`, never a live process's copy), and removed unless `dry_run`; with
    their size, measured first."""
    from kg.analysis.snapshot import SNAPSHOTS, _dropper, sweep

    parent = ws.kg_dir / SNAPSHOTS
    if not parent.is_dir() or _leads_out(parent, ws):  # not swept through a link out (the files check says it)
        return [], 0
    found = sweep(parent, dry_run=True)
    size = sum(_size(f) for d in found for f in d.rglob("*"))
    if found and not dry_run:
        found = sweep(parent, drop=_dropper(getattr(ws, "store_url", None)))
        try:
            parent.rmdir()  # as the last copy's close removes it (an empty folder only)
        except OSError:
            pass
    return found, size


def _leads_out(folder: Path, ws: Any) -> bool:
    from kg.core.files import outside_problem

    return bool(outside_problem(folder, root=Path(ws.root)))


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size if path.is_file() and not path.is_symlink() else 0
    except OSError:  # gone meanwhile
        return 0


def _alive(pid: int) -> bool:
    try:
        return pid_alive(pid)
    except (OverflowError, ValueError):  # no process has such an id
        return False


def _cut_short(ws: Any, report: DoctorReport, dry_run: bool) -> None:
    """The file a killed import left, kept by the restore of its copy (kg/store/rollback.py): a full-size graph
    nothing reads again."""
    from kg.store.rollback import cut_short_of

    kept = cut_short_of(ws.graph_path)
    if not kept.is_file():
        return
    size = f"{kept.stat().st_size / 1e6:.1f} MB"
    if dry_run:
        report.add("cut-short graph", "warning", f"{kept} ({size}), left by a restore after a killed import")
        return
    kept.unlink(missing_ok=True)
    report.add("cut-short graph", "repaired", f"removed {kept} ({size}), left by a restore after a killed import")


def _session_pointer(ws: Any, report: DoctorReport, dry_run: bool) -> None:
    path = ws.kg_dir / "current-session"
    try:
        raw = path.read_bytes().decode("utf-8", "replace").strip()
    except FileNotFoundError:
        return
    if paths.is_name(raw):
        report.add("current session", "ok", raw)
    elif dry_run:
        report.add("current session", "warning", f"memory/.kg/current-session holds an invalid id {raw[:60]!r}")
    else:
        path.unlink(missing_ok=True)
        report.add("current session", "repaired", f"cleared an invalid id {raw[:60]!r} (it is never used)")


def _team(ws: Any, report: DoctorReport, dry_run: bool) -> None:
    """memory/.kg/team.json made for another folder: this workspace is a copy holding the original's member numbers
    (kg/store/team.py), whose ids would be the original's. Repaired by asking the server for a number of its own."""
    from kg.store import team

    source = team.copied_from(ws.kg_dir)
    if source is None:
        return
    said = f"memory/.kg/team.json was made for {source}: this workspace is a copy and holds that one's member numbers"
    if dry_run or ws.store_url is None:
        report.add("team member", "warning", f"{said}; its next write on the team graph (or `kg doctor`) asks the "
                   "server for a number of its own")
        if dry_run and ws.store_url is not None:  # the team journal would ask for it: the other checks read the
            from kg.ingest.journal import Journal  # same files through a plain one, which gives out no id

            ws._journal = Journal(ws.kg_dir, timeout=ws.lock_timeout, lane=ws._lane())
        return
    try:
        number = team.member(ws.kg_dir, ws.store_url)
    except KgError as exc:
        report.add("team member", "error", str(exc))
        return
    report.add("team member", "repaired", f"{said}; the server gave it member number {number} of its own")


def _ids(ws: Any, report: DoctorReport, dry_run: bool = False, crashes: bool = False) -> None:
    """A damaged ids.json is rebuilt from the graph and the journal (kg/ingest/ids_rebuild.py) by an open of the
    graph that does not drain the journal first (not of a graph Kùzu crashes on: `crashes`)."""
    from kg.ingest.journal import IdsDamaged

    try:
        if dry_run:  # read without the journal's lock, whose holder sweeps temporary files
            ws.journal._load_ids()
            ws.journal._ids = None
        else:
            with ws.journal.locked():
                ws.journal._load_ids()
        if not _ids_behind(ws, report, dry_run):
            report.add("ids", "ok", "memory/.kg/ids.json is readable and no counter is behind an id the workspace "
                       "holds")
    except IdsDamaged as exc:
        if dry_run or crashes:
            report.add("ids", "error", str(exc) + ("; the graph it is rebuilt from is damaged" if crashes else ""))
            return
        try:
            ws.rebuild_ids()
        except KgError as failed:
            report.add("ids", "error", f"{exc}; the graph could not be opened to rebuild it ({failed})")
            return
        report.add("ids", "repaired", ws.ids_rebuilt or "memory/.kg/ids.json is readable")
    except KgError as exc:
        report.add("ids", "error", str(exc))



def _ids_behind(ws: Any, report: DoctorReport, dry_run: bool) -> bool:
    """Counters of a readable ids.json behind ids the workspace holds (a backup of it restored, a copy made while kg
    wrote: QA3 #2, `kg log` answered an id another entry had): raised past them (only skips numbers), unless
    `dry_run`. Whether any was."""
    from kg.ingest import ids_seen

    journal = ws.journal
    with journal.locked() if not dry_run else nullcontext():  # (a dry run takes no lock, as above)
        ids = dict(journal._load_ids())
        journal._ids = None if dry_run else journal._ids
        late = ids_seen.behind(ws, ids)
        if not late:
            return False
        said = ", ".join(f"{key} at {ids.get(key, 0)}, an entry has {n}" for key, n in list(late.items())[:3])
        said = (f"memory/.kg/ids.json is behind what the workspace holds for {len(late)} counter(s) ({said}"
                f"{', ...' if len(late) > 3 else ''}): `kg log` would answer ids other entries have")
        if dry_run:
            report.add("ids", "error", f"{said}; `kg doctor` raises them")
            return True
        from kg.core.files import write_atomic

        ids.update(late)
        write_atomic(journal.ids_path, json.dumps(ids, sort_keys=True).encode())
        journal._ids = None
    report.add("ids", "repaired", f"{said}; raised past them (a counter only skips numbers)")
    return True


def _waiting(ws: Any) -> str:
    """What `kg doctor` will do with the journal's waiting lines, read without moving them: apply the records and
    set aside in journal.rejected the lines the drain cannot apply (torn, garbled, malformed: kg.ingest.drain
    `quarantine`), as the drain does."""
    from kg.ingest.journal import check_record, read_lines

    good = bad = 0
    for path in (ws.journal.path, *ws.journal.draining_files()):
        try:
            records, torn = read_lines(path)
        except FileNotFoundError:
            continue
        refused = sum(1 for rec in records if check_record(rec, ws.policy.kinds))
        good, bad = good + len(records) - refused, bad + len(torn) + refused
    said = []
    if good:
        said.append(f"{good} journal line(s) wait to be applied: the next write, or `kg doctor`, applies them")
    if bad:
        said.append(f"{bad} journal line(s) cannot be applied (torn by a crash, garbled or malformed): `kg doctor` "
                    "sets them aside into memory/.kg/journal.rejected")
    return "; ".join(said) or "entries are waiting to be applied: the next write, or `kg doctor`, applies them"


def _journal(ws: Any, report: DoctorReport, dry_run: bool = False) -> None:
    pending = ws.journal.has_pending()
    rejected = ws.journal.rejected()
    if rejected:
        first = rejected[0]
        shown = first.get("record", {}).get("id") if isinstance(first.get("record"), dict) else None
        report.add("journal", "warning",
                   f"{len(rejected)} line(s) in memory/.kg/journal.rejected could not be applied (first: "
                   f"{first.get('reason')}{f', {shown}' if shown else ''}); fix and re-append them to "
                   "memory/.kg/journal.jsonl, or keep the file as a record")
    elif pending and dry_run:
        report.add("journal", "warning", _waiting(ws))
    elif pending:
        report.add("journal", "warning", "entries are waiting to be applied (the graph could not be opened)")
    else:
        report.add("journal", "ok", "nothing waiting, nothing set aside")
    others = ws.journal.other_lanes()
    if others:
        name, lines = next(iter(others.items()))
        # what applies them, as it is (QA2 #2: "a team graph KG_STORE chose" for writes `kg init --store` had
        # handed over from the graph kg.toml named before; and back on that graph nothing applied them)
        whose, run = (("the store kg.toml configures", "a kg command run without KG_STORE applies them")
                      if name == "journal.jsonl" or name.startswith("draining-") else
                      ("the embedded graph", "`KG_STORE=kuzu kg status` applies them, and so does any kg command "
                       "once kg.toml names no [store]") if ".kuzu" in name else
                      ("another team graph (one KG_STORE named, or the one kg.toml named before `kg init --store` "
                       "changed it)", "a kg command run with KG_STORE=<that graph's URL> applies them, and so "
                       "does any kg command once `kg init --store <that URL>` names it again"))
        report.add("journal", "warning",
                   f"{sum(others.values())} line(s) wait in {len(others)} other store's lane(s) (first: "
                   f"memory/.kg/{name}, {lines} line(s), for {whose}): {run}; no other store takes them")


def _import(ws: Any, report: DoctorReport) -> None:
    """An import that did not finish: only running it again loads its entries (kg/ingest/importing.py)."""
    from kg.ingest.import_mark import unfinished, unfinished_text

    left = unfinished(ws)
    if left:
        report.add("import", "warning" if left["running"] else "error", unfinished_text(left))


def _blocks(ws: Any, report: DoctorReport) -> None:
    """Each kg block's markers as export, cycle and status check them (kg/lifecycle/blocks.py `find`): one begin,
    one end, the end after the begin. (QA5 #3: a count of its own passed an end line above its begin.)"""
    from kg.lifecycle.blocks import BEGIN, END, BlockError, find

    damaged = []
    first = ""  # the first damaged block's name, for the fix's example
    for name in INSTRUCTION_FILES:
        path = ws.root / name
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        names = set(re.findall(r"<!-- kaizen-kg:(?:begin|end) (\S+) -->", text))
        for block in sorted(names):
            try:
                find(text, block)
            except BlockError:
                damaged.append(f"{name} [{block}]")
                first = first or block
    if damaged:
        # a person's fix: kg writes no promotion or revert into these blocks until then (exit 1)
        report.add("blocks", "error", "damaged kg block markers (kg leaves these blocks alone until fixed): "
                   + ", ".join(damaged) + ". Give each block one begin line and one end line after it ("
                   f"`{BEGIN.format(name=first)}` ... `{END.format(name=first)}`), or delete its markers and the "
                   "lines between them, then run `kg cycle`")
    else:
        report.add("blocks", "ok", "every kg block in the instruction files has one begin and one end marker")


def _links(ws: Any, report: DoctorReport) -> None:
    """Links leading out of the workspace: the folders kg writes into (memory/, its skills/ and sessions/,
    .learnings/; and memory/.kg's subfolders and cycle.log, whose bound is memory/.kg: kg writes nothing through
    them, so a command that must, `kg skill new` in a linked skills/, fails: an error, QA3 #5 found this check
    passing then), and the session and skill files in them (kg reads and writes past those: a warning).
    memory/.kg itself may be kept elsewhere through a link, and so may its graph file (Kùzu writes it, a restore
    writes through the link)."""
    from kg.core.files import outside_problem
    from kg.runtimes.schedule import LOG_FILE

    kept = sorted(p for p in ws.kg_dir.iterdir() if p.is_dir() or p.name == LOG_FILE) if ws.kg_dir.is_dir() else []
    folders = [ws.memory, ws.memory / "skills", ws.memory / "sessions", Path(ws.root) / ".learnings", *kept]
    led: list[Path] = []
    for folder in folders:
        problem = "" if folder.parent in led else outside_problem(folder, root=Path(ws.root))  # (memory/: once)
        if problem:
            led.append(folder)
            report.add("files", "error", problem)
    _install_links(ws, report, led)
    outside = []
    for folder in (ws.memory / "sessions", ws.memory / "skills"):
        if not folder.is_dir():
            continue
        for p in folder.iterdir():
            try:
                paths.inside(ws.root, p, "file")
            except KgError:
                outside.append(str(p.relative_to(ws.root)))
    if outside:
        report.add("files", "warning", "links leading outside the workspace (kg will not read or write them): "
                   + ", ".join(outside[:5]))
    elif not led:
        report.add("files", "ok", "session and skill files stay inside the workspace")


def _install_links(ws: Any, report: DoctorReport, led: list[Path]) -> None:
    """The files `kg install` writes (AGENTS.md, .claude/, .mcp.json, .codex/, hooks/kaizen-kg/), each an error when
    it leads out of the workspace, as install refuses it: this check passed a linked AGENTS.md that `kg install
    codex` then refused. One line a link (a linked .claude/ holds two of them); appended to `led`."""
    from kg.core.files import outside_problem
    from kg.runtimes.integrations import written_files

    said: set[str] = set()
    for path in written_files(Path(ws.root)):
        problem = outside_problem(path, root=Path(ws.root))
        link = problem.split(" is a symlink", 1)[0]
        if problem and link not in said:
            said.add(link)
            led.append(path)
            report.add("files", "error", f"{problem} (`kg install` writes it, and refuses until then)")


def _preferences(ws: Any, report: DoctorReport) -> None:
    """memory/preferences.json as `kg pref` reads it: a folder of that name, a broken file or one kg may not
    replace fails every `kg pref` command, so it is said here with the fix."""
    from kg.core.files import target_problem
    from kg.memory import preferences

    try:
        preferences.load(ws)
    except KgError as exc:
        report.add("preferences", "error", str(exc))
        return
    problem = target_problem(preferences.path_of(ws), root=ws.root)
    if problem:
        report.add("preferences", "error", f"{problem} (`kg pref set` would fail)")
    else:
        report.add("preferences", "ok", f"memory/{preferences.FILE} is readable and kg may write it")
