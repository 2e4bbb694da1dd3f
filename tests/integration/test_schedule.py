"""`kg schedule`: the job it writes runs under cron's bare environment (`env -i /bin/sh -c LINE`), logs a
timestamped line on success and on failure, and `kg status` shows the last run. The crontab and the unit folder
are files in tmp_path (KG_CRONTAB, --unit-dir): the user's real crontab and systemd are never touched."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from kg.runtimes import schedule

KG = str(Path(sys.executable).with_name("kg"))
REPO = Path(__file__).resolve().parents[2]
STAMPED = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2} kg cycle (ok: .+|FAILED: .+)$")


def kg(*args: str, crontab: Path | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KG_CRONTAB", "KG_SYSTEMD_DIR", "KG_WORKSPACE")}
    if crontab is not None:
        env["KG_CRONTAB"] = str(crontab)
    return subprocess.run([KG, *args], capture_output=True, text=True, timeout=180, check=False, env=env, cwd=cwd)


def as_cron_runs_it(command: str) -> subprocess.CompletedProcess[str]:
    """cron runs the command part of a line with /bin/sh, from $HOME, in an almost empty environment."""
    return subprocess.run(["env", "-i", "/bin/sh", "-c", command], capture_output=True, text=True, timeout=180,
                          check=False, cwd="/")


def test_cron_job_runs_in_a_bare_environment_and_logs_every_run(ws, tmp_path):
    crontab = tmp_path / "crontab"
    crontab.write_text("MAILTO=me@example.org\n0 * * * * /usr/bin/true\n", encoding="utf-8")
    for _ in range(2):  # installing again replaces the job, never doubles it
        done = kg("schedule", "install", "--json", crontab=crontab, cwd=ws.root)
        assert done.returncode == 0, done.stderr
    lines = crontab.read_text(encoding="utf-8").splitlines()
    assert lines[:2] == ["MAILTO=me@example.org", "0 * * * * /usr/bin/true"]
    name = schedule.block_name(ws.root)
    assert lines[2:5] == ["", f"# kaizen-kg:begin {name}", f"# kaizen-kg cycle for {ws.root}"]
    assert lines[6] == f"# kaizen-kg:end {name}" and len(lines) == 7
    job = lines[5]
    assert job.startswith(f"15 6 * * * {KG} -w {ws.root} schedule run >> ")
    assert json.loads(done.stdout)["lines"] == lines[3:]

    ran = as_cron_runs_it(job.split(" ", 5)[5])
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")
    log = ws.root / "memory/.kg/cycle.log"
    entries = log.read_text(encoding="utf-8").splitlines()
    assert len(entries) == 1 and STAMPED.match(entries[0]) and " kg cycle ok: " in entries[0]

    status = kg("-w", str(ws.root), "status", "--json")
    assert json.loads(status.stdout)["last_cycle"]["ok"] is True
    text = kg("-w", str(ws.root), "status").stdout
    assert f"   Last scheduled cycle: {entries[0].split(' ')[0]} ok (" in text

    # a run that fails (a rule file broken by hand) is logged too, with its time and the reason
    (ws.root / "kg.toml").write_text('[rules.lifecycle.verification]\nfirst_check_days = "soon"\n')
    failed = as_cron_runs_it(job.split(" ", 5)[5])
    assert failed.returncode == 1
    entries = log.read_text(encoding="utf-8").splitlines()
    assert len(entries) == 2 and STAMPED.match(entries[1])
    assert " kg cycle FAILED: " in entries[1] and "first_check_days: must be a number" in entries[1]
    (ws.root / "kg.toml").unlink()
    text = kg("-w", str(ws.root), "status").stdout
    assert "Last scheduled cycle: " in text and " FAILED: " in text

    shown = kg("-w", str(ws.root), "schedule", "status", "--json", crontab=crontab)
    assert json.loads(shown.stdout)["cron"] == job and json.loads(shown.stdout)["systemd"] == []
    removed = kg("-w", str(ws.root), "schedule", "uninstall", crontab=crontab)
    assert removed.stdout == f"Removed the cron job for {ws.root}\n"
    assert crontab.read_text(encoding="utf-8") == "MAILTO=me@example.org\n0 * * * * /usr/bin/true\n"


def test_systemd_units_run_in_a_bare_environment(ws, tmp_path):
    units = tmp_path / "units"
    done = kg("-w", str(ws.root), "schedule", "install", "--systemd", "--unit-dir", str(units), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    name = schedule.unit_name(ws.root)
    assert out["units"] == [f"{name}.service", f"{name}.timer"] and out["enabled"] is False
    assert "systemctl --user enable --now " + name + ".timer" in done.stderr
    service = (units / f"{name}.service").read_text(encoding="utf-8")
    fields = dict(ln.split("=", 1) for ln in service.splitlines() if "=" in ln)
    log = ws.root / "memory/.kg/cycle.log"
    assert fields["StandardOutput"] == fields["StandardError"] == f"append:{log}"
    assert "OnCalendar=*-*-* 06:15" in (units / f"{name}.timer").read_text(encoding="utf-8")
    # systemd runs ExecStart without a shell or PATH, with stdout appended to the log
    with open(log, "a", encoding="utf-8") as fh:
        ran = subprocess.run(["env", "-i", *shlex.split(fields["ExecStart"])], stdout=fh, stderr=fh, cwd="/",
                             timeout=180, check=False)
    assert ran.returncode == 0
    entries = log.read_text(encoding="utf-8").splitlines()
    assert len(entries) == 1 and STAMPED.match(entries[0])
    shown = json.loads(kg("-w", str(ws.root), "schedule", "status", "--unit-dir", str(units), "--json").stdout)
    assert shown["systemd"] == out["units"] and shown["last_run"]["ok"] is True
    gone = kg("-w", str(ws.root), "schedule", "uninstall", "--systemd", "--unit-dir", str(units))
    assert gone.returncode == 0 and list(units.iterdir()) == []


# `systemctl --user` as a machine without a user bus answers it (a login over ssh, a container), and as one with
# a bus does: `enable` links the timer into timers.target.wants/ in the user's unit folder.
NO_BUS = '#!/bin/sh\necho "Failed to connect to bus: No medium found" >&2\nexit 1\n'
WITH_BUS = ('#!/bin/sh\nif [ "$2" = enable ]; then d="$HOME/.config/systemd/user/timers.target.wants"; '
            'mkdir -p "$d" && ln -sf "../$4" "$d/$4"; fi\nexit 0\n')


def _schedule_with_systemctl(ws, tmp_path, config):
    """`kg schedule ...` run with HOME under tmp_path, XDG_CONFIG_HOME at `config` and a `systemctl` on PATH whose
    script each call gives (the fake is the only stand-in: the machine running the tests has no user bus)."""
    home, bin_ = tmp_path / "home", tmp_path / "bin"
    bin_.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("KG_CRONTAB", "KG_SYSTEMD_DIR", "KG_WORKSPACE")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(config), XDG_RUNTIME_DIR=str(home / "run"),
               PATH=f"{bin_}{os.pathsep}{env.get('PATH', '')}", KG_CRONTAB=str(tmp_path / "crontab"))

    def kg_(*args: str, systemctl: str) -> subprocess.CompletedProcess[str]:
        (bin_ / "systemctl").write_text(systemctl, encoding="utf-8")
        (bin_ / "systemctl").chmod(0o755)
        return subprocess.run([KG, "-w", str(ws.root), "schedule", *args], capture_output=True, text=True,
                              timeout=180, check=False, env=env)

    return kg_


def test_systemd_install_where_systemctl_fails_exits_1_and_status_says_not_enabled(ws, tmp_path):
    """Written is not scheduled: where `systemctl --user` cannot reach a user bus, install exits 1 saying so and
    what to run; the units stay (a working timer is not taken away by an install from a shell without a bus),
    and `kg schedule status` says they are written but not enabled."""
    home = tmp_path / "home"
    kg_ = _schedule_with_systemctl(ws, tmp_path, home / ".config")
    folder = home / ".config" / "systemd" / "user"
    timer = f"{schedule.unit_name(ws.root)}.timer"
    units = [f"{schedule.unit_name(ws.root)}.service", timer]
    enable = f"systemctl --user daemon-reload && systemctl --user enable --now {timer}"
    done = kg_("install", "--systemd", systemctl=NO_BUS)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"Error: systemd could not enable the timer (Failed to connect to bus: No medium found): {', '.join(units)} "
        f"are written in {folder} but nothing is scheduled. Run `{enable}` in a login session with a user bus "
        "(where there is none, `loginctl enable-linger $USER` first), or use `kg schedule install --cron`; "
        "`kg schedule uninstall --systemd` removes the units\n")
    assert sorted(p.name for p in folder.iterdir()) == units
    shown = kg_("status", "--json", systemctl=NO_BUS)
    assert shown.returncode == 0, shown.stderr
    assert {k: json.loads(shown.stdout)[k] for k in ("systemd", "systemd_enabled", "systemd_next")} == {
        "systemd": units, "systemd_enabled": False, "systemd_next": enable}
    text = kg_("status", systemctl=NO_BUS).stdout
    assert f"   systemd: {', '.join(units)} (written, not enabled: nothing is scheduled; run `{enable}`)\n" in text
    # with a user bus: enabled, and status says so
    done = kg_("install", "--systemd", systemctl=WITH_BUS)
    assert done.returncode == 0 and "systemd timer enabled" in done.stdout, done.stderr
    shown = json.loads(kg_("status", "--json", systemctl=WITH_BUS).stdout)
    assert (shown["systemd"], shown["systemd_enabled"], shown["systemd_next"]) == (units, True, None)


# a user bus that keeps the user's units where systemd looks for them: $XDG_CONFIG_HOME/systemd/user when it is set
HOME_BUS = ('#!/bin/sh\nd="$HOME/.config/systemd/user/timers.target.wants"\n'
            'if [ "$2" = enable ]; then mkdir -p "$d" && ln -sf "../$4" "$d/$4"; fi\n'
            'if [ "$2" = disable ]; then rm -f "$d/$4"; fi\nexit 0\n')


def test_a_failed_disable_is_said_and_units_stay_where_the_user_manager_reads(ws, tmp_path):
    """Uninstall ignored a failed `systemctl --user disable`: it removed the unit files under a timer still enabled
    and said "Removed". Now what was left is said, with what to run, and it exits 1. The units stay in
    ~/.config/systemd/user whatever XDG_CONFIG_HOME the shell has (the user's manager does not take the shell's
    environment, and a job an earlier kg installed there must stay visible to status and uninstall)."""
    home, config = tmp_path / "home", tmp_path / "xdg-config"
    kg_ = _schedule_with_systemctl(ws, tmp_path, config)
    folder = home / ".config" / "systemd" / "user"
    timer = f"{schedule.unit_name(ws.root)}.timer"
    units = [f"{schedule.unit_name(ws.root)}.service", timer]
    done = kg_("install", "--systemd", systemctl=HOME_BUS)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in folder.glob("kg-*")) == units and not config.exists()
    assert json.loads(kg_("status", "--json", systemctl=HOME_BUS).stdout)["systemd_enabled"] is True
    gone = kg_("uninstall", "--systemd", systemctl=NO_BUS)
    assert (gone.returncode, gone.stdout) == (1, "")
    assert gone.stderr == (
        "Error: systemd could not disable the timer (Failed to connect to bus: No medium found): nothing was "
        f"removed, and the job still runs: {', '.join(units)} are left in {folder}, the timer enabled. Run "
        f"`systemctl --user disable --now {timer}` in a login session with a user bus, then "
        "`kg schedule uninstall --systemd` again\n")
    assert sorted(p.name for p in folder.glob("kg-*")) == units
    gone = kg_("uninstall", "--systemd", systemctl=HOME_BUS)
    assert gone.returncode == 0 and "Removed the systemd job" in gone.stdout, gone.stderr
    assert list(folder.glob("kg-*")) == [] and list((folder / "timers.target.wants").iterdir()) == []
    # units written where systemctl failed to enable them: nothing schedules them, so they go without a bus
    assert kg_("install", "--systemd", systemctl=NO_BUS).returncode == 1
    gone = kg_("uninstall", "--systemd", systemctl=NO_BUS)
    assert gone.returncode == 0 and list(folder.glob("kg-*")) == [], gone.stderr


def test_readme_shows_what_install_writes():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    kg_path, root = Path("/path/to/kaizen-kg/.venv/bin/kg"), Path("/path/to/workspace")
    assert f"```\n{schedule.cron_entry(kg_path, root)}\n```" in readme
    units = schedule.systemd_units(kg_path, root)
    for text in units.values():
        assert f"```\n{text}```" in readme
    assert f"`~/.config/systemd/user/{next(iter(units))}`" in readme


def test_paths_with_spaces_and_percent_signs_survive_cron(tmp_path):
    import kg as kglib

    ws = kglib.init_workspace(tmp_path / "my work 100%")
    crontab = tmp_path / "crontab"
    assert kg("-w", str(ws.root), "schedule", "install", crontab=crontab).returncode == 0
    job = crontab.read_text(encoding="utf-8").splitlines()[2]
    assert job.startswith("15 6 * * * ") and "100\\%" in job
    ran = as_cron_runs_it(job.split(" ", 5)[5].replace("\\%", "%"))  # cron turns `\%` back into `%`
    assert ran.returncode == 0, ran.stderr
    assert STAMPED.match((ws.root / "memory/.kg/cycle.log").read_text(encoding="utf-8").splitlines()[0])


def _systemd_reads(value: str, *, command: bool = False) -> list[str]:
    """What systemd makes of a unit file's value: for a command line (systemd.service(5), "Command lines") the
    words split on blanks with quotes and C escapes undone, then in each word `%%` is `%` (systemd.unit(5),
    "Specifiers") and `$$` is `$`; a lone `%` or `$` would be a specifier or a variable, so it fails here."""
    words, word, quote, i, started = [], "", "", 0, False
    while command and i < len(value):
        c = value[i]
        if c == "\\":
            i += 1
            word += {"n": "\n", "t": "\t"}.get(value[i], value[i])
        elif quote and c == quote:
            quote = ""
        elif not quote and c in "\"'":
            quote, started = c, True
        elif not quote and c in " \t":
            if word or started:
                words.append(word)
            word, started = "", False
        else:
            word += c
        i += 1
    words = [*words, word] if command else [value]

    def literal(w: str) -> str:
        assert "%" not in w.replace("%%", ""), f"a specifier systemd would expand in {w!r}"
        w = w.replace("%%", "%")
        if command:
            assert "$" not in w.replace("$$", ""), f"a variable systemd would substitute in {w!r}"
            w = w.replace("$$", "$")
        return w

    return [literal(w) for w in words]


def test_systemd_units_keep_percent_signs_quotes_and_dollars_in_the_workspace_path(tmp_path):
    import kg as kglib

    ws = kglib.init_workspace(tmp_path / 'my work 100%h "q" $HOME a\\b')
    units = tmp_path / "units"
    done = kg("-w", str(ws.root), "schedule", "install", "--systemd", "--unit-dir", str(units), "--json")
    assert done.returncode == 0, done.stderr
    service, timer = (units / name for name in json.loads(done.stdout)["units"])
    fields = dict(ln.split("=", 1) for ln in service.read_text(encoding="utf-8").splitlines() if "=" in ln)
    log = str(ws.root / "memory/.kg/cycle.log")
    assert _systemd_reads(fields["StandardOutput"]) == _systemd_reads(fields["StandardError"]) == [f"append:{log}"]
    assert _systemd_reads(fields["Description"]) == [f"kaizen-kg learning cycle for {ws.root}"]
    argv = _systemd_reads(fields["ExecStart"], command=True)
    assert argv == [KG, "-w", str(ws.root), "schedule", "run"]
    timed = dict(ln.split("=", 1) for ln in timer.read_text(encoding="utf-8").splitlines() if "=" in ln)
    assert _systemd_reads(timed["Description"]) == [f"Run kg cycle daily for {ws.root}"]
    with open(log, "a", encoding="utf-8") as fh:  # what systemd would run, run: the job works from that path
        assert subprocess.run(["env", "-i", *argv], stdout=fh, stderr=fh, cwd="/", timeout=180).returncode == 0
    assert STAMPED.match(Path(log).read_text(encoding="utf-8").splitlines()[0])


@pytest.mark.parametrize(("args", "message"), [
    (["install", "--cron", "--systemd"], "Error: choose one of --cron and --systemd\n"),
])
def test_bad_input(ws, tmp_path, args, message):
    done = kg("-w", str(ws.root), "schedule", *args, crontab=tmp_path / "crontab")
    assert (done.returncode, done.stderr) == (2, message)


# -- the crontab block goes through the one block editor --------------------------------------------------------
HUMAN = b"MAILTO=me@example.org\r\n# my backups\t \n0 3 * * * /usr/local/bin/backup \xff\n"


def test_the_crontab_job_keeps_human_lines_byte_for_byte_and_a_human_edit_inside_is_kept(ws, tmp_path):
    crontab = tmp_path / "crontab"
    crontab.write_bytes(HUMAN)
    assert kg("-w", str(ws.root), "schedule", "install", crontab=crontab).returncode == 0
    installed = crontab.read_bytes()
    assert installed.startswith(HUMAN)  # CRLF, trailing blanks, a byte that is not UTF-8: all kept
    # a person moves the job to 05:00, inside kg's block
    edited = installed.replace(b"15 6 * * * ", b"0 5 * * * ")
    crontab.write_bytes(edited + b"@reboot /usr/bin/true\n")
    again = kg("-w", str(ws.root), "schedule", "install", "--json", crontab=crontab)
    assert again.returncode == 0, again.stderr
    assert crontab.read_bytes() == edited + b"@reboot /usr/bin/true\n"  # kept, not overwritten
    assert json.loads(again.stdout)["flagged"].startswith("a human edited inside the kg block")
    assert again.stderr.startswith(f"Kept the job in {crontab} as it is: a human edited inside the kg block")
    shown = json.loads(kg("-w", str(ws.root), "schedule", "status", "--json", crontab=crontab).stdout)
    assert shown["cron"].startswith("0 5 * * * ")
    gone = kg("-w", str(ws.root), "schedule", "uninstall", "--json", crontab=crontab)
    assert json.loads(gone.stdout)["removed"] is False and crontab.read_bytes().startswith(edited)

    # put back as kg wrote it, the block is kg's again: uninstall restores the human's crontab byte for byte
    crontab.write_bytes(installed + b"@reboot /usr/bin/true\n")
    gone = kg("-w", str(ws.root), "schedule", "uninstall", "--json", crontab=crontab)
    assert json.loads(gone.stdout)["removed"] is True
    assert crontab.read_bytes() == HUMAN + b"@reboot /usr/bin/true\n"


def test_an_older_kgs_unmarked_job_is_replaced_by_the_block(ws, tmp_path):
    crontab = tmp_path / "crontab"
    old = (f"MAILTO=me@example.org\n# kaizen-kg cycle for {ws.root}\n"
           f"15 6 * * * {KG} -w {ws.root} schedule run\n0 * * * * /usr/bin/true\n")
    crontab.write_text(old, encoding="utf-8")
    assert kg("-w", str(ws.root), "schedule", "install", crontab=crontab).returncode == 0
    text = crontab.read_text(encoding="utf-8")
    assert text.startswith("MAILTO=me@example.org\n0 * * * * /usr/bin/true\n")
    assert text.count(f"# kaizen-kg cycle for {ws.root}") == 1
    assert f"kaizen-kg:begin {schedule.block_name(ws.root)}" in text
    assert kg("-w", str(ws.root), "schedule", "uninstall", crontab=crontab).returncode == 0
    assert crontab.read_text(encoding="utf-8") == "MAILTO=me@example.org\n0 * * * * /usr/bin/true\n"


def test_the_log_line_says_which_file_waits_for_a_person():
    """Under cron the cycle.log line is all anyone sees of a run: '1 flags' did not say that a person had
    removed TOOLS.md's kg block, nor how to fix it (a report as the 60-day replay's cycle gave it)."""
    flag = ("the kg block was removed by hand; restore it, or run `kg export memory --force` to let kg rewrite "
            "the block")
    report = {"verified": [], "promoted": [], "decayed": {"demoted": 4, "stale": 0},
              "flags": [{"path": "TOOLS.md", "block": "kaizen-kg", "flag": flag}]}
    line = schedule._summary(report)
    assert line.startswith("1 flags, 4 decayed; ") and f"TOOLS.md: {flag}" in line
    assert schedule._summary({"verified": [], "decayed": {}}) == "nothing to do"


def test_a_dry_run_shows_what_install_writes_and_writes_nothing(ws, tmp_path):
    """The periodic job can be looked at before it is installed: the crontab lines (and the systemd units) a real
    install writes, and where; the crontab, the unit folder and the workspace's log folder stay as they were."""
    crontab = tmp_path / "crontab"
    crontab.write_bytes(HUMAN)
    dry = kg("-w", str(ws.root), "schedule", "install", "--dry-run", crontab=crontab)
    assert dry.returncode == 0, dry.stderr
    assert crontab.read_bytes() == HUMAN and not (ws.root / "memory" / ".kg" / "cycle.log").exists()
    assert dry.stdout.endswith("Dry run: nothing was written.\n") and f"Would add to {crontab}:" in dry.stdout
    assert kg("-w", str(ws.root), "schedule", "install", crontab=crontab).returncode == 0
    shown = [ln.strip() for ln in dry.stdout.splitlines()[1:] if ln.startswith("   ") and "Log:" not in ln]
    written = crontab.read_bytes()[len(HUMAN):].replace(b"\r\n", b"\n").lstrip(b"\n")  # in the file's line endings
    assert "\n".join(shown).encode() + b"\n" == written
    units = tmp_path / "units"
    dry = kg("-w", str(ws.root), "schedule", "install", "--systemd", "--unit-dir", str(units), "--dry-run", "--json")
    assert dry.returncode == 0 and not units.exists()
    assert json.loads(dry.stdout)["unit_text"] == schedule.systemd_units(Path(KG), ws.root.absolute())


def test_the_job_exits_1_when_the_cycle_skipped_a_file(ws, tmp_path):
    """A file the cycle cannot use (here MEMORY.md linked out of the workspace) is left alone and the rest runs,
    as `kg cycle` does; the job exits 1 as `kg cycle` does, so cron mails and systemd marks the unit failed."""
    outside = tmp_path / "elsewhere.md"
    outside.write_text("someone else's notes\n", encoding="utf-8")
    (ws.root / "MEMORY.md").unlink(missing_ok=True)
    (ws.root / "MEMORY.md").symlink_to(outside)
    assert kg("node", "add", "principle", "Review the diff before pushing", cwd=ws.root).returncode == 0
    r = kg("schedule", "run", "--json", cwd=ws.root)
    assert r.returncode == 1, r.stdout + r.stderr
    done = json.loads(r.stdout)
    assert done["ok"] is True and done["skipped"] == ["MEMORY.md"]
    assert done["line"].endswith("replace the link with a copy of the file, or link to a file inside the workspace "
                                 "(skipped)")
    assert outside.read_text(encoding="utf-8") == "someone else's notes\n"
    last = json.loads((ws.root / "memory" / ".kg" / schedule.LAST_FILE).read_text(encoding="utf-8"))
    assert last["ok"] is True and last["skipped"] == ["MEMORY.md"]


# -- the user's real crontab (`crontab -l`, then `crontab -`) -----------------------------------------------------
# A real `crontab` program on PATH that keeps the user's crontab in a file of tmp_path: `-l` prints it (or says
# "no crontab for USER" and exits 1, as cron's does when there is none), `-` replaces it with its stdin. Before
# printing, the read numbered N appends `edit-N` (when the test wrote one): another process editing the crontab
# between kg's read and its write. Every call is counted in `calls`.
FAKE_CRONTAB = """#!/bin/sh
dir=$(dirname "$0")/../cron
echo "$*" >> "$dir/calls"
case "$1" in
  -l)
    n=$(grep -c -- '^-l' "$dir/calls")
    had=0
    if [ -f "$dir/crontab" ]; then cat "$dir/crontab"; had=1; else echo "no crontab for $USER" >&2; fi
    if [ -f "$dir/edit-$n" ]; then cat "$dir/edit-$n" >> "$dir/crontab"; fi
    [ "$had" = 1 ] || exit 1 ;;
  -) cat > "$dir/crontab.new" && mv "$dir/crontab.new" "$dir/crontab" ;;
  *) echo "crontab: usage: crontab [-l | -]" >&2; exit 2 ;;
esac
"""


@pytest.fixture
def user_crontab(tmp_path):
    """`kg` run with the fake `crontab` first on PATH and no KG_CRONTAB: the path for the user's real crontab."""
    bin_, cron = tmp_path / "bin", tmp_path / "cron"
    bin_.mkdir()
    cron.mkdir()
    (bin_ / "crontab").write_text(FAKE_CRONTAB, encoding="utf-8")
    (bin_ / "crontab").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("KG_CRONTAB", "KG_SYSTEMD_DIR", "KG_WORKSPACE")}
    env["PATH"] = f"{bin_}{os.pathsep}{env.get('PATH', '')}"

    def kg_(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([KG, *args], capture_output=True, text=True, timeout=180, check=False, env=env)

    return kg_, cron


def _calls(cron: Path) -> list[str]:
    return (cron / "calls").read_text(encoding="utf-8").split("\n")[:-1] if (cron / "calls").exists() else []


def test_the_users_crontab_without_one_gets_the_job_and_loses_it_on_uninstall(ws, user_crontab):
    kg_, cron = user_crontab
    done = kg_("-w", str(ws.root), "schedule", "install", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["written"] == "the user's crontab"
    assert _calls(cron) == ["-l", "-l", "-"]  # read, read again right before the write, write
    text = (cron / "crontab").read_text(encoding="utf-8")
    assert f"kaizen-kg:begin {schedule.block_name(ws.root)}" in text and "schedule run" in text, text
    shown = kg_("-w", str(ws.root), "schedule", "status", "--json")
    assert shown.returncode == 0 and "schedule run" in json.loads(shown.stdout)["cron"], shown.stdout + shown.stderr
    gone = kg_("-w", str(ws.root), "schedule", "uninstall", "--json")
    assert gone.returncode == 0 and json.loads(gone.stdout)["removed"] is True, gone.stdout + gone.stderr
    assert "kaizen-kg" not in (cron / "crontab").read_text(encoding="utf-8")


def test_a_crontab_changed_between_kgs_read_and_its_write_is_read_again_and_kept(ws, user_crontab):
    """Someone adds a job after kg read the crontab (none then) and before it wrote: kg's check right before
    `crontab -` sees it, reads again and writes both; the other job is not lost."""
    kg_, cron = user_crontab
    (cron / "edit-1").write_text("0 4 * * * /usr/local/bin/backup\n", encoding="utf-8")
    done = kg_("-w", str(ws.root), "schedule", "install")
    assert done.returncode == 0, done.stderr
    assert _calls(cron) == ["-l", "-l", "-l", "-l", "-"]  # the first write refused, from a fresh read the second
    text = (cron / "crontab").read_text(encoding="utf-8")
    assert text.startswith("0 4 * * * /usr/local/bin/backup\n") and text.count("schedule run") == 1, text


def test_a_crontab_someone_keeps_changing_is_left_as_they_left_it_and_kg_exits_1(ws, user_crontab):
    kg_, cron = user_crontab
    for n in range(1, 20, 2):  # every read kg makes first is followed by another edit
        (cron / f"edit-{n}").write_text(f"{n} 4 * * * /usr/bin/true\n", encoding="utf-8")
    done = kg_("-w", str(ws.root), "schedule", "install")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.startswith("Error: ") and "changed by someone else" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "-" not in _calls(cron)
    assert "kaizen-kg" not in (cron / "crontab").read_text(encoding="utf-8")


def test_a_path_with_a_line_break_never_reaches_the_crontab(tmp_path):
    """(QA11 #0b) Git and tar allow a line break in a folder name: `kg schedule install` wrote the name's second line
    into the crontab as a job of its own (`* * * * * touch /tmp/x #`, run every minute), since quoting cannot hold a
    line together in a line-based file. Refused, as the systemd units refuse it, and nothing is written."""
    import kg as kglib

    ws = kglib.init_workspace(tmp_path / "proj\n* * * * * touch /tmp/kg-injected #")
    crontab = tmp_path / "crontab"
    crontab.write_text("MAILTO=me@example.org\n", encoding="utf-8")
    r = kg("-w", str(ws.root), "schedule", "install", crontab=crontab)
    assert r.returncode == 2 and "line break" in r.stderr, r.stderr
    assert crontab.read_text(encoding="utf-8") == "MAILTO=me@example.org\n"
    units = tmp_path / "units"
    r = kg("-w", str(ws.root), "schedule", "install", "--systemd", "--unit-dir", str(units))
    assert r.returncode == 2 and "line break" in r.stderr and not list(units.glob("*")), r.stderr
