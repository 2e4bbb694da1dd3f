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


def test_uninstall_of_a_job_the_person_edited_says_it_is_kept_and_force_removes_it(ws, tmp_path, capsys):
    """QA1 #5: a job a person moved to 07:30 inside kg's block is kept, as every kg block a person edited; uninstall
    said `No cron job for WS` on stdout and exit 0 while the job stayed and ran. Now it says the job is kept and still
    runs, why, and that `--force` removes it (exit 0, as `kg uninstall` keeping an edited part)."""
    kg = _kg(ws, capsys)
    crontab = tmp_path / "crontab"
    human = b"MAILTO=me@example.org\n0 * * * * /usr/bin/true\n"
    crontab.write_bytes(human)
    assert kg(f"schedule install --crontab {crontab}")[0] == 0
    crontab.write_bytes(crontab.read_bytes().replace(b"\n15 6 * * * ", b"\n30 7 * * * "))
    edited = crontab.read_bytes()
    job = next(ln for ln in edited.decode().splitlines() if "schedule run" in ln)
    assert job.startswith("30 7 * * * ")
    why = ("a human edited inside the kg block; move the text outside the markers, or run "
           "`kg schedule uninstall --force` to remove it (your edit is lost)\n")
    for dry, kept in (("--dry-run", "Would keep"), ("", "Kept")):
        code, out, err = kg(f"schedule uninstall {dry} --crontab {crontab}")
        assert code == 0 and "No cron job" not in out, out
        assert out.startswith(f"⏰ {kept} the cron job for {ws.root} in {crontab}: it still runs\n   {job}\n"), out
        assert err == f"{kept} this workspace's job as it is, and it still runs: {why}"
        assert crontab.read_bytes() == edited
    code, out, _ = kg(f"schedule uninstall --crontab {crontab} --json")
    d = json.loads(out)
    assert (code, d["removed"], d["job"]) == (0, False, job) and d["flagged"] == why.rstrip("\n")
    code, out, _ = kg(f"schedule uninstall --dry-run --force --crontab {crontab}")
    assert (code, out) == (0, f"⏰ Would remove from {crontab}:\n   {job}\nDry run: nothing was changed.\n")
    assert crontab.read_bytes() == edited
    code, out, err = kg(f"schedule uninstall --force --crontab {crontab}")
    assert (code, out, err) == (0, f"Removed the cron job for {ws.root}\n", "")
    assert crontab.read_bytes() == human


def test_install_again_with_nothing_to_change_says_it_is_already_installed(ws, tmp_path, capsys):
    kg = _kg(ws, capsys)
    crontab = tmp_path / "crontab"
    code, out, _ = kg(f"schedule install --crontab {crontab}")
    assert code == 0 and out.startswith(f"⏰ Added to {crontab}:\n"), out
    assert kg(f"schedule install --crontab {crontab} --json")[1].count('"changed": false') == 1
    before = crontab.read_bytes()
    code, out, err = kg(f"schedule install --crontab {crontab}")
    assert (code, err) == (0, "") and out.startswith(f"⏰ Already installed in {crontab} (nothing changed):\n"), out
    assert out.splitlines()[1:] == ["   " + ln for ln in before.decode().splitlines()] + [
        f"   Log: {ws.root / 'memory/.kg/cycle.log'}"]
    assert crontab.read_bytes() == before
    units = tmp_path / "units"
    code, out, _ = kg(f"schedule install --systemd --unit-dir {units}")
    assert code == 0 and "already installed" not in out, out
    code, out, _ = kg(f"schedule install --systemd --unit-dir {units}")
    assert code == 0 and " (already installed: the units were as kg writes them)\n" in out, out


def test_install_force_replaces_kg_s_edited_job_and_no_other_line(ws, tmp_path, capsys):
    """`kg schedule install` had no --force: a job a person edited inside kg's block was kept, and the only way back
    to kg's job was to delete the block by hand. --force rewrites kg's block alone; the person's other crontab
    lines (before and after it) stay byte for byte."""
    kg = _kg(ws, capsys)
    crontab = tmp_path / "crontab"
    crontab.write_bytes(b"MAILTO=me@example.org\n0 * * * * /usr/bin/true\n")
    assert kg(f"schedule install --crontab {crontab}")[0] == 0
    crontab.write_bytes(crontab.read_bytes() + b"# mine\n5 4 * * sun /usr/local/bin/backup\n")
    pristine = crontab.read_bytes()
    crontab.write_bytes(pristine.replace(b"\n15 6 * * * ", b"\n30 7 * * * "))
    edited = crontab.read_bytes()
    job = next(ln for ln in edited.decode().splitlines() if "schedule run" in ln)
    code, out, err = kg(f"schedule install --crontab {crontab}")
    assert (code, out, crontab.read_bytes()) == (0, "", edited)
    assert err == (f"Kept the job in {crontab} as it is: a human edited inside the kg block; move the text outside "
                   "the markers, or run `kg schedule install --force` to replace it with kg's job (your edit is "
                   "lost)\n"), err
    code, out, err = kg(f"schedule install --force --crontab {crontab}")
    assert (code, err) == (0, "")
    assert out.startswith(f"⏰ Replaced this workspace's job in {crontab} (it was: {job}):\n"), out
    assert crontab.read_bytes() == pristine
    code, out, err = kg(f"schedule install --force --crontab {crontab}")  # kg's job as it is: nothing to do
    assert (code, err) == (0, "") and out.startswith(f"⏰ Already installed in {crontab} (nothing changed):\n"), out
    assert crontab.read_bytes() == pristine
    units = tmp_path / "units"
    assert kg(f"schedule install --systemd --force --unit-dir {units}")[0] == 0
    (units / next(p.name for p in units.glob("*.timer"))).write_text("[Timer]\nOnCalendar=hourly\n")
    code, out, _ = kg(f"schedule install --systemd --force --unit-dir {units}")
    assert code == 0 and "already installed" not in out and "06:15" in next(units.glob("*.timer")).read_text()


def test_install_dry_run_says_what_the_real_install_does_over_an_edited_job(ws, tmp_path, capsys):
    """`kg schedule install --dry-run` over a crontab job a person edited inside kg's block said "Would add" while
    the real run keeps the job: the dry run now makes the real run's plan and says it (keep without --force, replace
    with it, nothing when kg's job is there as it writes it); a unit file that differs is said to be replaced."""
    kg = _kg(ws, capsys)
    crontab = tmp_path / "crontab"
    crontab.write_bytes(b"MAILTO=me@example.org\n")
    assert kg(f"schedule install --crontab {crontab}")[0] == 0
    code, out, err = kg(f"schedule install --dry-run --crontab {crontab}")
    assert (code, err) == (0, "") and out.startswith(f"⏰ Already installed in {crontab} (nothing would change):\n")
    crontab.write_bytes(crontab.read_bytes().replace(b"\n15 6 * * * ", b"\n30 7 * * * "))
    edited = crontab.read_bytes()
    job = next(ln for ln in edited.decode().splitlines() if "schedule run" in ln)
    code, out, err = kg(f"schedule install --dry-run --crontab {crontab}")
    assert code == 0 and "Would add" not in out, out
    assert out == (f"⏰ Would keep the job in {crontab} as it is (not replaced without --force)\n   {job}\n"
                   "Dry run: nothing was written.\n")
    assert err == (f"Would keep the job in {crontab} as it is: a human edited inside the kg block; move the text "
                   "outside the markers, or run `kg schedule install --force` to replace it with kg's job (your edit "
                   "is lost)\n"), err
    code, out, err = kg(f"schedule install --dry-run --force --crontab {crontab}")
    assert (code, err) == (0, "")
    assert out.startswith(f"⏰ Would replace this workspace's job in {crontab} (it is: {job}):\n"), out
    assert json.loads(kg(f"schedule install --dry-run --crontab {crontab} --json")[1])["flagged"]
    assert crontab.read_bytes() == edited  # no dry run wrote
    code, out, _ = kg(f"schedule install --force --crontab {crontab}")  # the real run does what the dry run said
    assert code == 0 and out.startswith(f"⏰ Replaced this workspace's job in {crontab} (it was: {job}):\n"), out
    units = tmp_path / "units"
    assert kg(f"schedule install --systemd --unit-dir {units}")[0] == 0
    code, out, _ = kg(f"schedule install --systemd --unit-dir {units} --dry-run")
    assert code == 0 and out.startswith(f"⏰ Already installed in {units} (the units are as kg writes them"), out
    service = next(p for p in units.iterdir() if p.name.endswith(".service"))
    service.write_bytes(service.read_bytes() + b"# mine\n")
    code, out, _ = kg(f"schedule install --systemd --unit-dir {units} --dry-run")
    assert code == 0 and out.startswith(f"⏰ Would write to {units} (replacing what differs from kg's: "
                                        f"{service.name}):\n"), out
    assert service.read_bytes().endswith(b"# mine\n")
