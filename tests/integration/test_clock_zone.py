"""One clock zone per workspace (kg/workspace_zone.py): every time kg stores, compares or shows is a wall-clock
time in it, whatever the TZ of the process. Real `kg` processes, each with its own TZ, on a real Kùzu workspace.

A UTC cron job beside a shell in America/Los_Angeles stored events seconds apart as 8 hours apart: listed in the
wrong order, missed by `--since 1h`, written into another day's log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

KG = str(Path(sys.executable).with_name("kg"))
LA, UTC, TOKYO = "America/Los_Angeles", "UTC", "Asia/Tokyo"


def kg(root: Path, tz: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("KG_NOW", "KG_WORKSPACE", "KG_SESSION")}
    return subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, timeout=300,
                          env=env | {"KG_SERVER": "0", "TZ": tz})


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def init(root: Path, tz: str, toml: str | None = None) -> Path:
    root.mkdir(parents=True)
    if toml is not None:
        (root / "kg.toml").write_text(toml, encoding="utf-8")
    ok(subprocess.run([KG, "init", str(root)], capture_output=True, text=True, timeout=300,
                      env={k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"TZ": tz}))
    return root


def created(root: Path, tz: str) -> dict[str, datetime]:
    rows = json.loads(ok(kg(root, tz, "list", "--json")))
    return {r["text"]: datetime.fromisoformat(r["created_at"]) for r in rows}


def test_a_utc_job_and_an_la_shell_store_times_seconds_apart_and_agree_on_them(tmp_path):
    root = init(tmp_path / "ws", UTC)
    ok(kg(root, UTC, "log", "error", "logged by the cron job in UTC", "--wait"))
    ok(kg(root, LA, "log", "error", "logged by the shell in Los Angeles", "--wait"))
    at = created(root, LA)
    job, shell = at["logged by the cron job in UTC"], at["logged by the shell in Los Angeles"]
    assert timedelta(0) <= shell - job < timedelta(minutes=5), at
    for tz in (UTC, LA):
        listed = json.loads(ok(kg(root, tz, "list", "--json")))
        assert [r["text"] for r in listed] == ["logged by the shell in Los Angeles", "logged by the cron job in UTC"]
        recent = json.loads(ok(kg(root, tz, "list", "--since", "1h", "--json")))
        assert len(recent) == 2, (tz, recent)
        found = json.loads(ok(kg(root, tz, "search", "cron job shell", "--since", "1h", "--json")))
        assert {r["text"] for r in found} >= set(at), (tz, found)
    told = {tz: json.loads(ok(kg(root, tz, "status", "--json"))) for tz in (UTC, LA)}
    assert told[UTC]["zone"] == told[LA]["zone"] == UTC
    assert abs(datetime.fromisoformat(told[UTC]["now"]) - datetime.fromisoformat(told[LA]["now"])) < timedelta(
        minutes=5)
    day = (root / "memory" / f"{shell:%Y-%m-%d}.md").read_text(encoding="utf-8")
    assert "logged by the cron job in UTC" in day and "logged by the shell in Los Angeles" in day


def test_the_daily_log_is_the_workspace_day_not_the_process_day(tmp_path):
    """20:00 UTC is already the next day in Kiritimati (UTC+14): a process there wrote a UTC workspace's entry
    into tomorrow's log, at 10:00."""
    root = init(tmp_path / "ws", UTC)
    ok(kg(root, "Pacific/Kiritimati", "log", "error", "the deploy failed late", "--now", "2026-12-05T20:00:00Z",
          "--wait"))
    assert created(root, LA)["the deploy failed late"] == datetime(2026, 12, 5, 20, 0)
    assert "the deploy failed late" in (root / "memory" / "2026-12-05.md").read_text(encoding="utf-8")
    assert not (root / "memory" / "2026-12-06.md").exists()
    # a time without an offset is read in the workspace's zone, not the process's
    ok(kg(root, LA, "log", "error", "the deploy failed again", "--now", "2026-12-05T21:00:00", "--wait"))
    assert created(root, UTC)["the deploy failed again"] == datetime(2026, 12, 5, 21, 0)


def test_a_kg_toml_zone_is_the_workspace_clock(tmp_path):
    root = init(tmp_path / "ws", UTC, '[clock]\nzone = "Asia/Tokyo"\n')
    assert json.loads(ok(kg(root, LA, "status", "--json")))["zone"] == TOKYO
    ok(kg(root, LA, "log", "error", "the build broke", "--now", "2026-12-05T20:00:00Z", "--wait"))
    assert created(root, UTC)["the build broke"] == datetime(2026, 12, 6, 5, 0)
    assert "the build broke" in (root / "memory" / "2026-12-06.md").read_text(encoding="utf-8")
    ok(kg(root, UTC, "log", "error", "the build broke again"))
    now = datetime.now(ZoneInfo(TOKYO)).replace(tzinfo=None)
    assert abs(created(root, LA)["the build broke again"] - now) < timedelta(minutes=5)
    doctor = json.loads(kg(root, UTC, "doctor", "--json").stdout)
    assert {"name": "clock zone", "status": "ok", "detail": "every time kg keeps and shows is a wall-clock time in "
            "Asia/Tokyo (set in kg.toml, whatever the zone of the process)"} in doctor["checks"]


def test_a_kg_toml_zone_that_is_unknown_or_not_the_workspace_one_is_refused(tmp_path):
    root = init(tmp_path / "ws", UTC)
    (root / "kg.toml").write_text('[clock]\nzone = "Mars/Olympus"\n', encoding="utf-8")
    out = kg(root, UTC, "status")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "Mars/Olympus" in out.stderr and '"Europe/Berlin"' in out.stderr, out.stderr
    (root / "kg.toml").write_text('[clock]\nzone = "Europe/Berlin"\n', encoding="utf-8")
    out = kg(root, UTC, "log", "error", "not mixed into another zone")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "keeps its times in UTC" in out.stderr and 'zone = "UTC"' in out.stderr, out.stderr
    (root / "kg.toml").write_text('[clock]\nzone = "UTC"\n', encoding="utf-8")
    ok(kg(root, LA, "log", "error", "the same zone is fine", "--wait"))


def _as_an_older_kg_left_it(root: Path) -> Path:
    """No zone in the graph, no mirror: a workspace an older kg made."""
    from kg.store import Store

    kg_dir = root / "memory" / ".kg"
    (kg_dir / "clock-zone").unlink(missing_ok=True)
    with Store.open(kg_dir / "graph.kuzu", lock_path=kg_dir / "graph.lock", lock_timeout=30.0) as st:
        st.execute("MATCH (m:Meta {key: 'clock:zone'}) DELETE m")
    return kg_dir


def test_a_workspace_made_before_the_zone_gets_no_guessed_zone_and_says_how_to_set_one(tmp_path):
    """The first process after the upgrade (a UTC reader, then a UTC job) must not decide the zone of a history an
    LA shell wrote: each process keeps its own zone, as before, and status and doctor say how to record one."""
    root = init(tmp_path / "ws", LA)
    ok(kg(root, LA, "log", "error", "logged before there was a zone", "--now", "2026-12-01T09:00:00", "--wait"))
    kg_dir = _as_an_older_kg_left_it(root)
    status = json.loads(ok(kg(root, UTC, "status", "--json")))
    assert status["zone"] == UTC and status["zone_recorded"] is False
    assert '[clock] zone = "UTC"' in status["zone_note"] and "kg.toml" in status["zone_note"]
    assert "no clock zone is recorded" in ok(kg(root, UTC, "status"))
    ok(kg(root, UTC, "log", "error", "logged by a UTC job after", "--wait"))
    ok(kg(root, LA, "log", "error", "logged by the LA shell after", "--wait"))
    assert not (kg_dir / "clock-zone").exists()
    at = created(root, LA)
    assert at["logged before there was a zone"] == datetime(2026, 12, 1, 9, 0)
    assert abs(at["logged by the LA shell after"] - datetime.now(ZoneInfo(LA)).replace(tzinfo=None)) \
        < timedelta(minutes=5)
    doctor = json.loads(kg(root, LA, "doctor", "--json").stdout)
    [check] = [c for c in doctor["checks"] if c["name"] == "clock zone"]
    assert check["status"] == "warning" and '[clock] zone = "America/Los_Angeles"' in check["detail"], check
    (root / "kg.toml").write_text('[clock]\nzone = "America/Los_Angeles"\n', encoding="utf-8")
    ok(kg(root, UTC, "log", "error", "logged once the zone is set", "--wait"))
    (root / "kg.toml").unlink()
    assert (kg_dir / "clock-zone").read_text(encoding="utf-8").strip() == LA
    status = json.loads(ok(kg(root, TOKYO, "status", "--json")))
    assert status["zone"] == LA and status["zone_recorded"] is True and status["zone_note"] is None


def test_a_new_workspace_records_the_first_process_zone(tmp_path):
    root = init(tmp_path / "ws", LA)
    kg_dir = root / "memory" / ".kg"
    assert (kg_dir / "clock-zone").read_text(encoding="utf-8").strip() == LA
    (kg_dir / "clock-zone").unlink()  # a mirror lost: the graph's record wins over the asking process's zone
    assert json.loads(ok(kg(root, TOKYO, "status", "--json")))["zone"] == LA


@pytest.mark.falkordb
def test_a_workspace_joining_a_team_graph_takes_the_graph_zone(tmp_path, falkordb_url):
    """Two members on one FalkorDB graph, one in Tokyo and one a UTC machine: the second takes the zone the first
    recorded in the graph, so their entries logged seconds apart are seconds apart on the team graph."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0"}
    tokyo, utc = tmp_path / "tokyo", tmp_path / "utc"
    for root, tz, agent in ((tokyo, TOKYO, "ann"), (utc, UTC, "bob")):
        ok(subprocess.run([KG, "init", str(root), "--store", falkordb_url], capture_output=True, text=True,
                          timeout=300, env=env | {"TZ": tz, "KG_AGENT": agent}))
    assert json.loads(ok(kg(utc, UTC, "status", "--json")))["zone"] == TOKYO
    assert (utc / "memory" / ".kg" / "clock-zone").read_text(encoding="utf-8").strip() == TOKYO
    ok(kg(tokyo, TOKYO, "log", "error", "logged in Tokyo", "--wait"))
    ok(kg(utc, UTC, "log", "error", "logged on the UTC machine", "--wait"))
    at = created(utc, LA)
    assert timedelta(0) <= at["logged on the UTC machine"] - at["logged in Tokyo"] < timedelta(minutes=5), at
    now = datetime.now(ZoneInfo(TOKYO)).replace(tzinfo=None)
    assert abs(at["logged in Tokyo"] - now) < timedelta(minutes=5)


def test_a_lost_or_damaged_mirror_is_written_only_by_a_writer_from_the_graph_record_and_doctor_repairs_it(tmp_path):
    """A fast path (`kg log` before the graph opens) or a reader never names a zone in the mirror; a writer's
    open rewrites it from the graph's record, and `kg doctor` says it did."""
    root = init(tmp_path / "ws", LA)
    mirror = root / "memory" / ".kg" / "clock-zone"
    mirror.write_text("Amerca/Los_Angeles\n", encoding="utf-8")  # damaged (a typo, a full disk)
    looked = json.loads(kg(root, LA, "doctor", "--dry-run", "--json").stdout)
    [check] = [c for c in looked["checks"] if c["name"] == "clock zone"]
    assert check["status"] == "warning" and "rewrites it" in check["detail"], check
    assert mirror.read_text(encoding="utf-8").strip() == "Amerca/Los_Angeles"
    doctor = json.loads(kg(root, LA, "doctor", "--json").stdout)
    [check] = [c for c in doctor["checks"] if c["name"] == "clock zone"]
    assert check["status"] == "repaired" and "Amerca/Los_Angeles" in check["detail"], check
    assert mirror.read_text(encoding="utf-8").strip() == LA
    mirror.unlink()
    assert json.loads(ok(kg(root, UTC, "status", "--json")))["zone"] == LA  # a reader: the graph's, unwritten
    assert not mirror.exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"TZ": UTC}
    ok(subprocess.run([KG, "-w", str(root), "log", "error", "a UTC job, the mirror lost"], capture_output=True,
                      text=True, timeout=300, env=env | {"KG_SERVER": "0"}))
    # (its applier, a writer that read the graph's record, may have written it since)
    assert not mirror.exists() or mirror.read_text(encoding="utf-8").strip() == LA
    ok(kg(root, UTC, "log", "error", "a UTC job that waits", "--wait"))
    assert mirror.read_text(encoding="utf-8").strip() == LA


@pytest.mark.falkordb
def test_a_kg_store_override_uses_its_store_zone_and_leaves_the_workspace_mirror(tmp_path, falkordb_url):
    """A team member in UTC reaches the embedded graph they left (`KG_STORE=kuzu`, as `kg init --store`'s refusal
    says): that graph's zone is the process's, but the mirror stays the team graph's, so their next `kg log` on
    the team graph is stored in the team's zone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0"}
    ann, bob = tmp_path / "ann", tmp_path / "bob"
    ok(subprocess.run([KG, "init", str(ann), "--store", falkordb_url], capture_output=True, text=True,
                      timeout=300, env=env | {"TZ": TOKYO, "KG_AGENT": "ann"}))
    init(bob, UTC)
    ok(kg(bob, UTC, "log", "error", "bob's embedded history", "--wait"))
    ok(subprocess.run([KG, "init", str(bob), "--store", falkordb_url, "--force"], capture_output=True, text=True,
                      timeout=300, env=env | {"TZ": UTC, "KG_AGENT": "bob"}))
    mirror = bob / "memory" / ".kg" / "clock-zone"
    assert mirror.read_text(encoding="utf-8").strip() == TOKYO
    embedded = subprocess.run([KG, "-w", str(bob), "export", "trail"], capture_output=True, text=True, timeout=300,
                              env=env | {"TZ": UTC, "KG_STORE": "kuzu"})
    ok(embedded)
    assert mirror.read_text(encoding="utf-8").strip() == TOKYO
    ok(subprocess.run([KG, "-w", str(bob), "log", "error", "bob logs on the team graph", "--wait"],
                      capture_output=True, text=True, timeout=300, env=env | {"TZ": UTC, "KG_AGENT": "bob"}))
    now = datetime.now(ZoneInfo(TOKYO)).replace(tzinfo=None)
    assert abs(created(ann, TOKYO)["bob logs on the team graph"] - now) < timedelta(minutes=5)


@pytest.mark.parametrize("tz", ["/usr/share/zoneinfo/Europe/Berlin", ":/usr/share/zoneinfo/Europe/Berlin"])
def test_a_tz_given_as_a_path_is_its_iana_zone(tmp_path, tz):
    root = init(tmp_path / "ws", tz)
    assert (root / "memory" / ".kg" / "clock-zone").read_text(encoding="utf-8").strip() == "Europe/Berlin"
    ok(kg(root, tz, "log", "error", "noon in Berlin summer", "--now", "2026-07-01T12:00:00+02:00", "--wait"))
    assert created(root, tz)["noon in Berlin summer"] == datetime(2026, 7, 1, 12, 0)


def test_a_tz_kg_cannot_name_falls_back_and_status_and_doctor_say_so(tmp_path):
    tz = "CET-1CEST,M3.5.0,M10.5.0/3"
    root = init(tmp_path / "ws", tz)
    status = json.loads(ok(kg(root, tz, "status", "--json")))
    assert tz in status["zone_note"] and "[clock] zone" in status["zone_note"], status
    assert tz in ok(kg(root, tz, "status"))
    doctor = json.loads(kg(root, tz, "doctor", "--json").stdout)
    [check] = [c for c in doctor["checks"] if c["name"] == "clock zone"]
    assert check["status"] == "warning" and tz in check["detail"], check


def test_a_kg_toml_zone_spelled_otherwise_is_the_same_zone(tmp_path):
    root = init(tmp_path / "ws", UTC)
    (root / "kg.toml").write_text('[clock]\nzone = "Etc/UTC"\n', encoding="utf-8")
    ok(kg(root, LA, "log", "error", "Etc/UTC is UTC", "--wait"))
    assert json.loads(ok(kg(root, LA, "status", "--json")))["zone"] == UTC


@pytest.mark.parametrize(("written", "zone"), [("utc", "UTC"), ("Utc", "UTC"), ("gmt", "GMT"), ("etc/utc", "Etc/UTC"),
                                               ("europe/berlin", "Europe/Berlin")])
def test_a_kg_toml_zone_in_another_case_is_that_zone_under_its_own_name(tmp_path, written, zone):
    """zoneinfo's names are case-sensitive: `zone = "utc"` was refused as unknown (exit 2 on every command)."""
    root = init(tmp_path / "ws", LA, f'[clock]\nzone = "{written}"\n')
    assert json.loads(ok(kg(root, LA, "status", "--json")))["zone"] == zone
    assert f"Clock zone: {zone}" in ok(kg(root, LA, "status"))
    assert (root / "memory" / ".kg" / "clock-zone").read_text(encoding="utf-8").strip() == zone


def test_times_are_stored_in_the_graph_zone_whatever_the_mirror_says(tmp_path):
    """QA6 #1a: the mirror is a cache, never the authority. Lost, the second note was stored on the process's clock
    (8 h in the future, another day's log, out of `--since 1h`); naming another zone, in that zone."""
    root = init(tmp_path / "ws", LA)
    mirror = root / "memory" / ".kg" / "clock-zone"

    def log(text: str, at: str) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
        # (--wait: no detached applier left to rewrite the mirror behind the test; the time is stamped before the
        # graph opens all the same)
        return subprocess.run([KG, "-w", str(root), "log", "learning", text, "--wait"], capture_output=True,
                              text=True, timeout=300, env=env | {"KG_SERVER": "0", "TZ": UTC, "KG_NOW": at})

    ok(log("first note", "2026-12-06T02:00:00Z"))
    mirror.unlink()
    ok(log("second note ten minutes later", "2026-12-06T02:10:00Z"))
    mirror.write_text(TOKYO + "\n", encoding="utf-8")
    looked = json.loads(kg(root, UTC, "doctor", "--dry-run", "--json").stdout)
    [check] = [c for c in looked["checks"] if c["name"] == "clock zone"]
    assert check["status"] == "warning" and TOKYO in check["detail"] and LA in check["detail"], check
    third = log("third note with a wrong mirror", "2026-12-06T02:20:00Z")
    ok(third)
    listed = json.loads(ok(kg(root, UTC, "--now", "2026-12-06T02:30:00Z", "list", "--since", "1h", "--json")))
    at = {r["text"]: r["created_at"] for r in listed}
    assert at == {"first note": "2026-12-05T18:00:00", "second note ten minutes later": "2026-12-05T18:10:00",
                  "third note with a wrong mirror": "2026-12-05T18:20:00"}, listed
    day = (root / "memory" / "2026-12-05.md").read_text(encoding="utf-8")
    assert "first note" in day and "second note ten minutes later" in day
    assert mirror.read_text(encoding="utf-8").strip() == LA  # the writer's open set it back from the graph


@pytest.mark.falkordb
def test_a_kg_store_override_from_a_workspace_of_another_zone_writes_in_the_store_zone(tmp_path, falkordb_url):
    """QA6 #1b: a member's Tokyo workspace writing the New York team graph through KG_STORE stored Tokyo's wall
    clock there (14 h in the future for every member); the team graph's zone is the one its times are in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0"}
    team, own = tmp_path / "team", tmp_path / "own"
    ok(subprocess.run([KG, "init", str(team), "--store", falkordb_url], capture_output=True, text=True,
                      timeout=300, env=env | {"TZ": "America/New_York"}))
    init(own, TOKYO)
    ok(subprocess.run([KG, "-w", str(own), "log", "learning", "via KG_STORE from tokyo"], capture_output=True,
                      text=True, timeout=300,
                      env=env | {"TZ": TOKYO, "KG_STORE": falkordb_url, "KG_NOW": "2026-12-06T02:00:00Z"}))
    listed = json.loads(ok(kg(team, "America/New_York", "list", "--json")))
    [row] = [r for r in listed if r["text"] == "via KG_STORE from tokyo"]
    assert row["created_at"] == "2026-12-05T21:00:00", row
    assert row["id"].startswith("LRN-20261205-"), row
    assert (own / "memory" / ".kg" / "clock-zone").read_text(encoding="utf-8").strip() == TOKYO


def test_the_applier_puts_a_journaled_time_in_the_graph_zone(tmp_path):
    """A record journaled by a process that could not learn the store's zone (the graph held, the mirror wrong)
    says which zone its time was read in; the applier, which knows the store's, converts it."""
    import kg

    root = init(tmp_path / "ws", LA)
    ws = kg.open_workspace(root)
    with ws.journal.locked():
        (entry_id,) = ws.journal.allocate("LRN", "20261206")
        fields = {"entry_type": "learning", "text": "journaled on Tokyo's clock", "priority": "medium",
                  "status": "pending", "created_at": "2026-12-06T11:00:00", "tokens": "journaled tokyo clock"}
        ws.journal.append([{"op": "log", "id": entry_id, "fields": fields, "redacted": [], "link": False,
                            "zone": TOKYO}])
    ws.drain()
    [row] = [r for r in ws.list(type="learning") if r["id"] == entry_id]
    assert str(row["created_at"]).replace(" ", "T") == "2026-12-05T18:00:00", row
