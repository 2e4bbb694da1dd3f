"""`kg schedule uninstall --dry-run` says what it would remove and changes nothing, as `schedule install --dry-run`
and `kg uninstall RUNTIME --dry-run` do; a machine without cron is an operational failure (exit 1), not bad input.
The crontab and the unit folder are files in tmp_path: the user's real crontab and systemd are never touched."""

from __future__ import annotations

import json
import shlex


def _kg(ws, capsys):
    """`kg.cli.app.run`, the in-process path every command line takes."""
    from kg.cli.app import run

    def call(args: str):
        code = run(["-w", str(ws.root), *shlex.split(args)])
        out, err = capsys.readouterr()
        return code, out, err

    return call


def test_uninstall_dry_run_names_the_cron_job_and_removes_nothing(ws, tmp_path, capsys):
    kg = _kg(ws, capsys)
    crontab = tmp_path / "crontab"
    crontab.write_text("MAILTO=me@example.org\n", encoding="utf-8")
    assert kg(f"schedule install --crontab {crontab}")[0] == 0
    before = crontab.read_bytes()
    job = next(ln for ln in before.decode().splitlines() if "schedule run" in ln)
    code, out, err = kg(f"schedule uninstall --dry-run --crontab {crontab}")
    assert (code, err) == (0, ""), err
    assert out == f"⏰ Would remove from {crontab}:\n   {job}\nDry run: nothing was changed.\n"
    code, out, _ = kg(f"schedule uninstall --dry-run --crontab {crontab} --json")
    d = json.loads(out)
    assert (code, d["dry_run"], d["would_remove"], d["removed"], d["job"]) == (0, True, True, False, job)
    assert crontab.read_bytes() == before  # nothing changed
    assert kg(f"schedule uninstall --crontab {crontab}")[1].startswith("Removed the cron job")
    code, out, _ = kg(f"schedule uninstall --dry-run --crontab {crontab}")
    assert (code, out) == (0, f"No cron job for {ws.root} in {crontab}\nDry run: nothing was changed.\n")


def test_uninstall_dry_run_names_the_units_and_removes_nothing(ws, tmp_path, capsys):
    kg = _kg(ws, capsys)
    units = tmp_path / "units"
    assert kg(f"schedule install --systemd --unit-dir {units}")[0] == 0
    there = sorted(p.name for p in units.iterdir())
    code, out, _ = kg(f"schedule uninstall --systemd --unit-dir {units} --dry-run --json")
    d = json.loads(out)
    assert (code, d["would_remove"], d["units"], d["removed"]) == (0, True, there, False)
    assert sorted(p.name for p in units.iterdir()) == there


def test_no_cron_on_this_machine_is_an_operational_failure(ws, tmp_path, capsys, monkeypatch):
    """The command was right; the machine lacks a program: exit 1 (it exited 2, as for bad input)."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no `crontab` to find
    monkeypatch.delenv("KG_CRONTAB", raising=False)
    kg = _kg(ws, capsys)
    for args in ("schedule install", "schedule uninstall", "schedule uninstall --dry-run"):
        code, out, err = kg(args)
        assert (code, out) == (1, ""), (args, err)
        assert err == "Error: cron is not installed here (no `crontab` command): use --systemd, or install cron\n"
