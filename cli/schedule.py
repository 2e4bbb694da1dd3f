"""`kg schedule install|uninstall|status|run`: the periodic job, written with absolute paths (kg.runtimes.schedule)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from kg.cli.common import JsonOpt, NowOpt, emit, errors, note, now_of, workspace

schedule_app = typer.Typer(help="Run `kg cycle` every day, from cron or a systemd user timer, with a log.",
                           no_args_is_help=True)

CronOpt = Annotated[bool, typer.Option("--cron", help="Use the user's crontab (the default).")]
SystemdOpt = Annotated[bool, typer.Option("--systemd", help="Use a systemd user timer.")]
CrontabOpt = Annotated[Path | None, typer.Option("--crontab", envvar="KG_CRONTAB", show_envvar=False,
                                                 help="Edit this file instead of the user's crontab "
                                                      "(also KG_CRONTAB).")]
UnitDirOpt = Annotated[Path | None, typer.Option("--unit-dir", envvar="KG_SYSTEMD_DIR", show_envvar=False,
                                                 help="Write the units here instead of ~/.config/systemd/user, "
                                                      "without calling systemctl (also KG_SYSTEMD_DIR).")]


@schedule_app.command("install")
def install(ctx: typer.Context, cron: CronOpt = False, systemd: SystemdOpt = False, crontab: CrontabOpt = None,
            unit_dir: UnitDirOpt = None,
            dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be written, and where; "
                                                                    "write nothing.")] = False,
            force: Annotated[bool, typer.Option("--force", help="Replace the crontab job even where you edited it "
                                                                "inside kg's block (kept otherwise); the crontab's "
                                                                "other lines stay as they are.")] = False,
            as_json: JsonOpt = False) -> None:
    """Schedule `kg cycle` for this workspace every day at 06:15, with the absolute paths of this kg and the
    workspace, so it runs under cron's bare environment. Every run appends a timestamped line to
    memory/.kg/cycle.log; `kg status` shows the last one. Safe to run again. A crontab job you edited inside kg's
    block is kept, and said so, unless --force. With --systemd, exits 1 when systemctl cannot enable the timer (no
    user bus): the units stay written, and the message says what to run."""
    from kg.runtimes import schedule

    with errors():
        done = schedule.install(workspace(ctx), cron=cron, systemd=systemd, crontab=crontab, unit_dir=unit_dir,
                                dry_run=dry_run, force=force)
    if done.get("next"):
        note(f"To enable the timer, run: {done['next']}" + (f" ({done['why']})" if done.get("why") else ""))
    if done.get("flagged"):
        note(f"{'Would keep' if dry_run else 'Kept'} the job in {done['written']} as it is: {done['flagged']}")
    emit(done, as_json, _render_install)


def _job_lines(d: dict[str, Any]) -> str:
    return "\n".join(f"   {ln}" for ln in d["lines"]) + f"\n   Log: {d['log']}"


def _render_install(d: dict[str, Any]) -> str:
    if d.get("dry_run"):  # says what the real install would do (it said "Would add" over a job a person edited)
        dry = "Dry run: nothing was written."
        if d["mode"] == "cron":
            if d.get("flagged"):
                job = f"\n   {d['job']}" if d.get("job") else ""
                return f"⏰ Would keep the job in {d['written']} as it is (not replaced without --force){job}\n{dry}"
            head = (f"Would replace this workspace's job in {d['written']} (it is: {d['replaced']}):"
                    if d.get("replaced") else f"Would add to {d['written']}:" if d.get("changed")
                    else f"Already installed in {d['written']} (nothing would change):")
            return f"⏰ {head}\n{_job_lines(d)}\n{dry}"
        if not d.get("changed"):
            return (f"⏰ Already installed in {d['written']} (the units are as kg writes them: nothing would "
                    f"change): {', '.join(d['units'])}\n{dry}")
        texts = "\n".join(f"   --- {name}\n" + "".join(f"   {ln}\n" for ln in d["unit_text"][name].splitlines())
                          for name in d["units"])
        over = f" (replacing what differs from kg's: {', '.join(d['replaced'])})" if d.get("replaced") else ""
        return f"⏰ Would write to {d['written']}{over}:\n{texts}{dry}"
    if d["mode"] == "cron" and d.get("flagged"):
        return ""
    if d["mode"] == "cron":  # run again with nothing to change, it says so: it added nothing (QA1 #5)
        head = (f"Replaced this workspace's job in {d['written']} (it was: {d['replaced']}):" if d.get("replaced")
                else f"Added to {d['written']}:" if d.get("changed")
                else f"Already installed in {d['written']} (nothing changed):")
        return f"⏰ {head}\n" + _job_lines(d)
    state = "enabled" if d.get("enabled") else "written"
    already = "" if d.get("changed") else " (already installed: the units were as kg writes them)"
    return (f"⏰ systemd timer {state}: {', '.join(d['units'])} in {d['written']}{already}\n   Log: {d['log']}")


@schedule_app.command("uninstall")
def uninstall(ctx: typer.Context, cron: CronOpt = False, systemd: SystemdOpt = False, crontab: CrontabOpt = None,
              unit_dir: UnitDirOpt = None,
              dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be removed, and from where; "
                                                                      "change nothing.")] = False,
              force: Annotated[bool, typer.Option("--force", help="Remove the crontab job even where you edited "
                                                                  "it inside kg's block (kept otherwise).")] = False,
              as_json: JsonOpt = False) -> None:
    """Remove this workspace's job (the log stays). A crontab job you edited inside kg's block is kept, and said
    so, unless --force. With --systemd, exits 1 when systemctl cannot disable the enabled timer (no user bus):
    nothing is removed, and the message says what is left and what to run."""
    from kg.runtimes import schedule

    with errors():
        done = schedule.uninstall(workspace(ctx), cron=cron, systemd=systemd, crontab=crontab, unit_dir=unit_dir,
                                  dry_run=dry_run, force=force)
    if done.get("flagged"):
        note(f"{'Would keep' if dry_run else 'Kept'} this workspace's job as it is, and it still runs: "
             f"{done['flagged']}")
    emit(done, as_json, _render_uninstall)


def _render_uninstall(d: dict[str, Any]) -> str:
    if d.get("flagged"):  # the job stays, and runs: never "No cron job" (QA1 #5)
        kept = "Would keep" if d.get("dry_run") else "Kept"
        job = f"\n   {d['job']}" if d.get("job") else ""
        return (f"⏰ {kept} the {d['mode']} job for {d['workspace']} in {d['written']}: it still runs{job}"
                + ("\nDry run: nothing was changed." if d.get("dry_run") else ""))
    if not d.get("dry_run"):
        return (f"Removed the {d['mode']} job for {d['workspace']}" if d["removed"]
                else f"No {d['mode']} job for {d['workspace']}")
    if not d["would_remove"]:
        return f"No {d['mode']} job for {d['workspace']} in {d['written']}\nDry run: nothing was changed."
    if d["mode"] == "cron":
        return f"⏰ Would remove from {d['written']}:\n   {d['job']}\nDry run: nothing was changed."
    disable = " (and disable the timer)" if d.get("would_disable") else ""
    return (f"⏰ Would remove from {d['written']}{disable}:\n" + "".join(f"   {n}\n" for n in d["units"])
            + "Dry run: nothing was changed.")


@schedule_app.command("status")
def status(ctx: typer.Context, crontab: CrontabOpt = None, unit_dir: UnitDirOpt = None,
           as_json: JsonOpt = False) -> None:
    """Where the job is installed and how its last run went."""
    from kg.runtimes import schedule

    with errors():
        data = schedule.status(workspace(ctx), crontab=crontab, unit_dir=unit_dir)
    emit(data, as_json, _render_status)


def _render_status(d: dict[str, Any]) -> str:
    units = ", ".join(d["systemd"]) or "not installed"
    if d.get("systemd_enabled") is False:
        units += f" (written, not enabled: nothing is scheduled; run `{d['systemd_next']}`)"
    lines = [f"⏰ {d['workspace']}",
             f"   cron: {d['cron'] or 'not installed'}",
             f"   systemd: {units}",
             f"   log: {d['log']}",
             f"   last run: {last_run_text(d['last_run'])}"]
    return "\n".join(lines)


def last_run_text(last: dict[str, Any] | None) -> str:
    """One line for a scheduled run's outcome (also shown by `kg status`)."""
    if not last:
        return "never"
    return f"{last.get('at')} " + (f"ok ({last.get('summary')})" if last.get("ok") else f"FAILED: {last.get('error')}")


@schedule_app.command("run")
def run(ctx: typer.Context, now: NowOpt = None, as_json: JsonOpt = False) -> None:
    """What the job runs: `kg cycle`, then one timestamped line in memory/.kg/cycle.log, success or failure.
    Exits 1 when the cycle failed, or skipped a file it could not use (as `kg cycle` does): cron mails, and
    systemd marks the unit failed, so a person hears of the file that waits for them."""
    from kg.cli.common import state

    from kg.runtimes import schedule

    with errors():  # only a workspace that cannot be found is an error here: everything else goes to the log
        done = schedule.run(state(ctx).workspace, rules_dir=state(ctx).rules, now=now_of(ctx, now))
    if as_json or not _writes_to(done["log"]):  # under the job, stdout is the log: the line is there already
        emit(done, as_json, lambda d: d["line"])
    if not done["ok"] or done["skipped"]:
        raise typer.Exit(1)


def _writes_to(path: str) -> bool:
    """Whether stdout is the file at `path` (the job's `>> cycle.log` redirection)."""
    import os
    import sys

    try:
        return os.path.samestat(os.fstat(sys.stdout.fileno()), os.stat(path))
    except (OSError, ValueError, AttributeError):
        return False


def register(app: typer.Typer) -> None:
    app.add_typer(schedule_app, name="schedule")
