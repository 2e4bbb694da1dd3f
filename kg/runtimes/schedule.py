"""The periodic job: `kg schedule install|uninstall|status [--cron|--systemd]` and the run it schedules.

The job is written with absolute paths (this kg's executable and the workspace), so it runs under cron's
minimal environment (no PATH to the virtualenv, no working directory) as well as under a systemd user timer.
It runs `kg -w WORKSPACE schedule run`, which runs the cycle and appends one timestamped line to
`memory/.kg/cycle.log` whatever the outcome, and keeps the last run's outcome in `memory/.kg/last-cycle.json`
for `kg status`. The shell's own redirection (cron) or `StandardOutput=append:` (systemd) sends anything else
the process prints, a crash included, to the same log.

The crontab job is a marked block written through the one block editor (kg.lifecycle.blocks, '#' markers):
every other line of the crontab stays byte for byte, and a job a person edited inside the block is kept and
flagged instead of overwritten (its hash is kept in `memory/.kg/blocks.json`).

Where the job goes can be redirected, for tests and for people who keep their crontab in a file: `KG_CRONTAB`
(or `crontab=`) names a file used instead of `crontab -l` / `crontab -`, and `KG_SYSTEMD_DIR` (or `unit_dir=`)
a folder used instead of `~/.config/systemd/user` (then systemctl is not called: the answer says what to run).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import FileChanged, KgError, UnusableFile, UsageError
from kg.core.files import check_target, retried, write_atomic
from kg.lifecycle import blocks

__all__ = ["cron_entry", "cron_job", "install", "job_argv", "last_run", "run", "status", "systemd_units", "uninstall"]

CRON_TIME = "15 6 * * *"          # every day at 06:15
TIMER_CALENDAR = "*-*-* 06:15"    # the same, for systemd
LOG_FILE = "cycle.log"
LAST_FILE = "last-cycle.json"
ENV_CRONTAB = "KG_CRONTAB"
ENV_SYSTEMD_DIR = "KG_SYSTEMD_DIR"
MODES = ("cron", "systemd")


# -- what is written (pure) ------------------------------------------------------------------------------------
def kg_executable() -> Path:
    """The absolute path of the `kg` being run (the console script beside this interpreter, as installed)."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "kg" and argv0.exists():
        return argv0.absolute()
    beside = Path(sys.executable).with_name("kg")
    if beside.exists():
        return beside.absolute()
    found = shutil.which("kg")
    if found:
        return Path(found).absolute()
    # a program missing from this machine is an operational failure (exit 1), not bad input: the command was right
    raise KgError("cannot find the `kg` executable to schedule: install kaizen-kg (pip install kaizen-kg)")


def log_path(root: Path) -> Path:
    return root / "memory" / ".kg" / LOG_FILE


def job_argv(kg: Path, root: Path) -> list[str]:
    return [str(kg), "-w", str(root), "schedule", "run"]


def cron_marker(root: Path) -> str:
    return f"# kaizen-kg cycle for {root}"


def block_name(root: Path) -> str:
    """The crontab block's name: one per workspace, with no space whatever the path holds."""
    return f"cycle-{hashlib.sha1(str(root).encode()).hexdigest()[:12]}"


def cron_job(kg: Path, root: Path) -> str:
    """The job line (its command run by /bin/sh)."""
    command = " ".join(shlex.quote(a) for a in job_argv(kg, root))
    command = f"{command} >> {shlex.quote(str(log_path(root)))} 2>&1".replace("%", "\\%")  # cron reads % as a newline
    return f"{CRON_TIME} {command}"


def cron_inner(kg: Path, root: Path) -> str:
    """What kg writes inside its block: a comment naming the workspace, then the job. A path with a line break is
    refused: crontab is read line by line, so quoting cannot keep one in its argument, and the folder name's
    second line became a job of its own, run every minute (QA11 #0b: a cloned or unpacked project can carry one)."""
    one_line(kg, root, "a crontab line")
    return f"{cron_marker(root)}\n{cron_job(kg, root)}\n"


def one_line(kg: Path, root: Path, what: str) -> None:
    """Refuse paths that cannot stand in `what` (a line-based format) because they hold a line break."""
    for path in (root, kg):
        if "\n" in str(path) or "\r" in str(path):
            raise UsageError(f"{str(path)!r}: {what} cannot name a path with a line break in it; rename the folder "
                             "(kg schedule needs a path on one line)")


def cron_entry(kg: Path, root: Path) -> str:
    """The crontab lines of this workspace's job, as they stand in the crontab: the block with its markers."""
    return blocks.block_text(block_name(root), cron_inner(kg, root), "\n", blocks.TOML).rstrip("\n")


def unit_name(root: Path) -> str:
    """`kg-cycle-<folder>-<hash>`: one timer per workspace, recognisable, and never two workspaces on one."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", root.name).strip("-.") or "workspace"
    return f"kg-cycle-{slug}-{hashlib.sha1(str(root).encode()).hexdigest()[:6]}"


def _specifiers(value: str) -> str:
    """A value systemd expands `%` specifiers in (Description=, an append: path, each ExecStart= word, quoted
    or not) with every `%` kept literal: `%%` (systemd.unit(5), "Specifiers"). Unescaped, a workspace
    `/srv/50%home` would have its `%h` read as the home folder."""
    return value.replace("%", "%%")


def _systemd_word(value: str) -> str:
    """One ExecStart= argument as systemd.service(5)'s "Command lines" reads it back: `$` doubled (else
    environment substitution), `%` doubled, and quoted with C escapes (`\\`, `\"`) unless it is plain."""
    value = _specifiers(value).replace("$", "$$")
    if re.fullmatch(r"[A-Za-z0-9_./:@+=,-]+", value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def unit_files(root: Path) -> list[str]:
    """The service's and the timer's file names."""
    return [f"{unit_name(root)}.service", f"{unit_name(root)}.timer"]


def systemd_units(kg: Path, root: Path) -> dict[str, str]:
    """The service and timer files, by file name. A path that holds a newline cannot be a unit's value."""
    one_line(kg, root, "a systemd unit")
    name = unit_name(root)
    log = _specifiers(str(log_path(root)))
    service = (f"[Unit]\nDescription=kaizen-kg learning cycle for {_specifiers(str(root))}\n[Service]\n"
               f"Type=oneshot\nExecStart={' '.join(_systemd_word(a) for a in job_argv(kg, root))}\n"
               f"StandardOutput=append:{log}\nStandardError=append:{log}\n")
    timer = (f"[Unit]\nDescription=Run kg cycle daily for {_specifiers(str(root))}\n[Timer]\n"
             f"OnCalendar={TIMER_CALENDAR}\nPersistent=true\n[Install]\nWantedBy=timers.target\n")
    return {f"{name}.service": service, f"{name}.timer": timer}


def without_legacy_entry(crontab: str, root: Path) -> str:
    """The crontab without the unmarked job an older kg wrote for this workspace (its comment and the line after
    it), every other byte as it was."""
    lines = crontab.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() == cron_marker(root) and not _inside_block(crontab, sum(map(len, lines[:i])), root):
            return "".join(lines[:i] + lines[i + 2:])
    return crontab


def _inside_block(text: str, offset: int, root: Path) -> bool:
    try:
        span = blocks.find(text, block_name(root), blocks.TOML)
    except blocks.BlockError:
        return True  # damaged markers: leave every line alone, the editor flags them
    return span is not None and span.start <= offset < span.end


def job_in(crontab: str, root: Path) -> str | None:
    """This workspace's job line in a crontab (kg's block first, else an older kg's unmarked one), or None."""
    try:
        inner = blocks.inner_of(crontab, block_name(root), blocks.TOML)
    except blocks.BlockError:
        inner = None
    if inner is not None:
        return next((ln for ln in inner.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), None)
    lines = crontab.splitlines()
    return next((lines[i + 1] for i, ln in enumerate(lines[:-1]) if ln.strip() == cron_marker(root)), None)


# -- where it is written -----------------------------------------------------------------------------------------
def _mode(cron: bool, systemd: bool) -> str:
    if cron and systemd:
        raise UsageError("choose one of --cron and --systemd")
    return "systemd" if systemd else "cron"


def _crontab_file(crontab: str | Path | None) -> Path | None:
    value = crontab if crontab is not None else os.environ.get(ENV_CRONTAB)
    return Path(value).expanduser() if value else None


def _read_crontab(file: Path | None) -> str | None:
    """The crontab's text (bytes decoded with `surrogateescape`, so every byte survives), None when none."""
    if file is not None:
        return blocks.read(file)
    if shutil.which("crontab") is None:
        raise KgError("cron is not installed here (no `crontab` command): use --systemd, or install cron")
    done = subprocess.run(["crontab", "-l"], capture_output=True, check=False)
    if done.returncode != 0:
        if b"no crontab" in done.stderr.lower():
            return None
        raise KgError(f"crontab -l failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout.decode("utf-8", "surrogateescape")


def _write_crontab(file: Path | None, plan: blocks.SyncPlan, before: str | None) -> None:
    """Write the crontab `plan` made from `before`, only if it still holds `before` (else FileChanged): a job a
    person added meanwhile is not lost. The user's crontab has no compare-and-swap: it is read again right
    before `crontab -` replaces it."""
    if file is not None:
        if not file.parent.is_dir():
            raise UsageError(f"cannot write {file}: its folder does not exist")
        blocks.apply(file, replace(plan, base=before))
        return
    if _read_crontab(None) != before:
        raise FileChanged("the crontab was changed by someone else while kg was updating it, so kg did not replace "
                          "it (nothing written to it is lost): run the command again", "crontab")
    data = (plan.text or "").encode("utf-8", "surrogateescape")
    done = subprocess.run(["crontab", "-"], input=data, capture_output=True, check=False)
    if done.returncode != 0:
        raise KgError(f"crontab - failed: {done.stderr.decode('utf-8', 'replace').strip()}")


CRON_FIX = "run `kg schedule install --force` to replace it with kg's job (your edit is lost)"
UNINSTALL_FIX = "run `kg schedule uninstall --force` to remove it (your edit is lost)"


def _sync_cron(ws: Any, root: Path, file: Path | None, desired: str | None, *,
               force: bool = False) -> blocks.SyncPlan:
    """Write (or, with None, remove) this workspace's crontab block through the one block editor; an older
    kg's unmarked job for the workspace is taken out in the same write. A crontab written by someone else
    between kg's read and its write is read again (`retried`). `force` removes or rewrites a block a person
    edited inside."""
    return retried(lambda: _sync_cron_once(ws, root, file, desired, force=force))


def _sync_cron_once(ws: Any, root: Path, file: Path | None, desired: str | None,
                    dry_run: bool = False, force: bool = False) -> blocks.SyncPlan:
    before = _read_crontab(file)
    current = None if before is None else without_legacy_entry(before, root)
    wrote: list[blocks.SyncPlan] = []

    def write(plan: blocks.SyncPlan) -> None:
        _write_crontab(file, plan, before)
        wrote.append(plan)

    plan = blocks.sync_block(current, block_name(root), desired, write=write, state_dir=Path(ws.kg_dir),
                             key=f"crontab:{file or 'user'}", fix=CRON_FIX if desired is not None else UNINSTALL_FIX,
                             markers=blocks.TOML, dry_run=dry_run, force=force)
    if current != before and not wrote and plan.action != "flag" and not dry_run:
        write(blocks.SyncPlan("update", current, None, ""))
        return replace(plan, action="update")  # an older kg's job taken out: the crontab changed
    return plan


def _unit_dir(unit_dir: str | Path | None) -> tuple[Path, bool]:
    """The folder for unit files, and whether it is the user's real one (then systemctl is called). Always
    ~/.config/systemd/user, whatever XDG_CONFIG_HOME this shell has: the user's systemd manager does not take a
    shell's environment (it reads $XDG_CONFIG_HOME only when its own environment sets it, which is rare), and a job
    installed by an earlier kg stays where status and uninstall look for it."""
    value = unit_dir if unit_dir is not None else os.environ.get(ENV_SYSTEMD_DIR)
    if value:
        return Path(value).expanduser(), False
    return Path.home() / ".config" / "systemd" / "user", True


def _systemctl(*args: str) -> str | None:
    """Run `systemctl --user ...`; the error text when it cannot (no systemd, no user session)."""
    if shutil.which("systemctl") is None:
        return "systemctl is not installed"
    done = subprocess.run(["systemctl", "--user", *args], capture_output=True, text=True, check=False)
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")


# -- the three commands ------------------------------------------------------------------------------------------
def install(ws: Any, *, cron: bool = False, systemd: bool = False, crontab: str | Path | None = None,
            unit_dir: str | Path | None = None, kg: Path | None = None, dry_run: bool = False,
            force: bool = False) -> dict[str, Any]:
    """Write the job for this workspace (replacing an earlier one for it). Safe to run again. `dry_run`: what
    would be written, and where; nothing is. A crontab job a person edited inside kg's block is kept (`flagged`
    says why) unless `force`, which rewrites that block alone: every other line of the crontab stays as it was.
    The systemd units are kg's own files, rewritten whenever they differ (`force` changes nothing there)."""
    mode = _mode(cron, systemd)
    root = Path(ws.root).absolute()
    kg = Path(kg).absolute() if kg else kg_executable()
    out: dict[str, Any] = {"mode": mode, "workspace": str(root), "kg": str(kg), "log": str(log_path(root)),
                           "next": None, "dry_run": dry_run}
    if dry_run:  # what the real run would do, from the same plan: add, replace, keep a person's edit, nothing
        if mode == "cron":
            file = _crontab_file(crontab)
            job = job_in(_read_crontab(file) or "", root)
            plan = _sync_cron_once(ws, root, file, cron_inner(kg, root), dry_run=True, force=force)
            changed = plan.action not in ("none", "flag")
            out.update(written=str(file) if file else "the user's crontab", lines=cron_entry(kg, root).splitlines(),
                       flagged=plan.reason if plan.action == "flag" else None, changed=changed,
                       replaced=job if changed and job is not None else None, job=job)
        else:
            folder = _unit_dir(unit_dir)[0]
            units = systemd_units(kg, root)
            differ = [n for n, text in sorted(units.items()) if _bytes_of(folder / n) != text.encode("utf-8")]
            out.update(written=str(folder), units=sorted(units), unit_text=units, enabled=False, changed=bool(differ),
                       replaced=[n for n in differ if _bytes_of(folder / n) is not None])
        return out
    log_path(root).parent.mkdir(parents=True, exist_ok=True)
    if mode == "cron":
        file = _crontab_file(crontab)
        job = job_in(_read_crontab(file) or "", root) if force else None
        plan = _sync_cron(ws, root, file, cron_inner(kg, root), force=force)
        changed = plan.action not in ("none", "flag")
        out.update(written=str(file) if file else "the user's crontab", lines=cron_entry(kg, root).splitlines(),
                   flagged=plan.reason if plan.action == "flag" else None, changed=changed,
                   replaced=job if changed and job is not None else None)
        return out
    folder, real = _unit_dir(unit_dir)
    folder.mkdir(parents=True, exist_ok=True)
    units = systemd_units(kg, root)
    changed = False
    for name, text in units.items():
        if _bytes_of(folder / name) != text.encode("utf-8"):  # the same units again: not written, said so
            write_atomic(folder / name, text.encode("utf-8"))
            changed = True
    timer = next(n for n in units if n.endswith(".timer"))
    enable = _enable_command(timer)
    problem = (_systemctl("daemon-reload") or _systemctl("enable", "--now", timer)) if real else "not asked"
    if real and problem is not None:  # written, nothing scheduled: a failure (the units stay: run from a shell
        # without a bus, a second install must not take a working timer away)
        raise KgError(f"systemd could not enable the timer ({problem}): {', '.join(sorted(units))} are written in "
                      f"{folder} but nothing is scheduled. Run `{enable}` in a login session with a user bus "
                      "(where there is none, `loginctl enable-linger $USER` first), or use `kg schedule install "
                      "--cron`; `kg schedule uninstall --systemd` removes the units")
    out.update(written=str(folder), units=sorted(units), enabled=problem is None,
               next=None if problem is None else enable, why=None, changed=changed)
    return out


def _bytes_of(path: Path) -> bytes | None:
    """A unit file's bytes, None when it cannot be read (then kg writes it)."""
    try:
        return path.read_bytes()
    except OSError:
        return None


def _enable_command(timer: str) -> str:
    return f"systemctl --user daemon-reload && systemctl --user enable --now {timer}"


def _enabled(folder: Path, timer: str) -> bool:
    """Whether the timer is enabled: `systemctl --user enable` links it into `timers.target.wants/` beside it
    (the file is the truth, asked without a user bus, which `systemctl is-enabled` needs)."""
    return (folder / "timers.target.wants" / timer).is_symlink()


def uninstall(ws: Any, *, cron: bool = False, systemd: bool = False, crontab: str | Path | None = None,
              unit_dir: str | Path | None = None, dry_run: bool = False, force: bool = False) -> dict[str, Any]:
    """Remove this workspace's job; the log and the last run's record stay. `dry_run`: what would be removed
    (`would_remove`, and the job's line or unit files), and from where; nothing is changed. A crontab job a
    person edited inside kg's block is kept (`flagged` says why and how to remove it) unless `force`."""
    mode = _mode(cron, systemd)
    root = Path(ws.root).absolute()
    if mode == "cron":
        file = _crontab_file(crontab)
        job = job_in(_read_crontab(file) or "", root)
        plan = (_sync_cron_once(ws, root, file, None, dry_run=True, force=force) if dry_run
                else _sync_cron(ws, root, file, None, force=force))
        flagged = plan.reason if plan.action == "flag" else None
        out = {"mode": mode, "workspace": str(root), "removed": job is not None and not flagged and not dry_run,
               "flagged": flagged, "dry_run": dry_run, "written": str(file) if file else "the user's crontab",
               "job": job}
        if dry_run:
            out.update(would_remove=job is not None and not flagged)
        return out
    folder, real = _unit_dir(unit_dir)
    names = unit_files(root)
    timer = next(n for n in names if n.endswith(".timer"))
    if dry_run:
        there = [n for n in names if (folder / n).exists()]
        return {"mode": mode, "workspace": str(root), "removed": False, "units": there, "dry_run": True,
                "written": str(folder), "would_remove": bool(there),
                "would_disable": real and (folder / timer).exists()}  # systemctl, as below
    if real and (folder / timer).exists():
        problem = _systemctl("disable", "--now", timer)
        if problem is not None and _enabled(folder, timer):  # still scheduled: its units are what says so
            left = [n for n in names if (folder / n).exists()]
            raise KgError(f"systemd could not disable the timer ({problem}): nothing was removed, and the job "
                          f"still runs: {', '.join(left)} are left in {folder}, the timer enabled. Run "
                          f"`systemctl --user disable --now {timer}` in a login session with a user bus, then "
                          "`kg schedule uninstall --systemd` again")
    removed = [n for n in names if (folder / n).exists()]
    for n in removed:
        (folder / n).unlink()
    if real and removed:
        _systemctl("daemon-reload")
    return {"mode": mode, "workspace": str(root), "removed": bool(removed), "units": removed, "dry_run": False}


def status(ws: Any, *, crontab: str | Path | None = None, unit_dir: str | Path | None = None) -> dict[str, Any]:
    """Where the job is installed (cron, systemd, both or neither), and the last run. `systemd_enabled`: whether
    the timer in the user's unit folder is enabled (None: no timer there, or units in another folder)."""
    root = Path(ws.root).absolute()
    file = _crontab_file(crontab)
    try:
        cron_line = job_in(_read_crontab(file) or "", root)
    except KgError:
        cron_line = None
    folder, real = _unit_dir(unit_dir)
    units = [n for n in unit_files(root) if (folder / n).exists()]
    timer = next(n for n in unit_files(root) if n.endswith(".timer"))
    # written is not scheduled (an install where systemctl failed): said for the user's own folder, the one
    # kg enables in; units written elsewhere (--unit-dir) are enabled, if at all, by hand where kg cannot see
    enabled = _enabled(folder, timer) if real and timer in units else None
    return {"workspace": str(root), "cron": cron_line, "systemd": units, "systemd_enabled": enabled,
            "systemd_next": _enable_command(timer) if enabled is False else None, "log": str(log_path(root)),
            "last_run": last_run(ws)}


# -- the scheduled run -------------------------------------------------------------------------------------------
def _summary(report: dict[str, Any]) -> str:
    parts = [f"{len(v)} {k}" for k, v in report.items() if isinstance(v, list) and v]
    decayed = report.get("decayed") or {}
    changed = sum(v for v in decayed.values() if isinstance(v, int))
    if changed:
        parts.append(f"{changed} decayed")
    # under cron this line is all a person sees: a flag says which file waits for them and what to do
    flags = [f"{f.get('path')}: {f.get('flag')}" for f in report.get("flags") or [] if isinstance(f, dict)]
    flags += [f"{f.get('reason')} (skipped)" for f in report.get("skipped") or [] if isinstance(f, dict)]
    return ", ".join(parts) + "".join(f"; {f}" for f in flags) if parts else "nothing to do"


def run(target: Any = None, *, rules_dir: Path | None = None, now: datetime | str | None = None) -> dict[str, Any]:
    """Run the cycle for a workspace (or its path), append one timestamped line to its log whatever happens,
    and keep the outcome for `kg status`. The cycle's failures, a broken rules file or a bad time included, do
    not raise: the record says `ok: false` with the error. A file the cycle could not use (a folder named
    USER.md, a link out of the workspace) is in `skipped`: the rest ran, and the file waits for a person."""
    from kg.lifecycle.api import cycle
    from kg.workspace import open_workspace
    from kg.workspace_root import find_root

    root = Path(target.root) if hasattr(target, "root") else find_root(target)
    if not hasattr(target, "root"):  # (an open workspace has its zone in effect)
        from kg.workspace_zone import use_cached

        use_cached(root / "memory" / ".kg")
    try:
        started = clock.now(now)
    except KgError:
        started = clock.wall()
    record: dict[str, Any] = {"at": started.isoformat(), "ok": False, "summary": "", "error": None, "skipped": []}
    try:
        ws = target if hasattr(target, "root") else open_workspace(root, rules_dir=rules_dir)
        report = cycle(ws, clock.now(now)).as_dict()
        record.update(ok=True, summary=_summary(report), skipped=[f.get("path") for f in report.get("skipped") or []])
    except KgError as exc:
        record["error"] = str(exc)
    except Exception as exc:  # noqa: BLE001 - the job must log every failure, the unexpected ones too
        record["error"] = f"unexpected failure: {type(exc).__name__}: {exc}"
    line = (f"{record['at']} kg cycle ok: {record['summary']}" if record["ok"]
            else f"{record['at']} kg cycle FAILED: {record['error']}")
    log = log_path(root)
    log.parent.mkdir(parents=True, exist_ok=True)
    try:  # a cycle.log linked out of memory/.kg is not appended to (QA3 #4): said, as a file the cycle skipped
        check_target(log, root=root)
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    except UnusableFile as exc:
        line += f"; not logged: {exc} (skipped)"
        record["skipped"].append(f"memory/.kg/{LOG_FILE}")
    write_atomic(log.with_name(LAST_FILE), json.dumps(record, ensure_ascii=False).encode("utf-8"))
    return {**record, "log": str(log), "line": line}


def last_run(ws: Any) -> dict[str, Any] | None:
    """The last scheduled run's outcome (`at`, `ok`, `summary`, `error`), or None if it never ran."""
    try:
        data = json.loads((log_path(Path(ws.root)).with_name(LAST_FILE)).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) else None
