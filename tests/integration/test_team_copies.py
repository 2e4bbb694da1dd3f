"""A copied team workspace (QA, w-qa-2): `cp -a b c` kept b's member number in memory/.kg/team.json, so both
acknowledged the same ids for different entries; c's was stored under another id, and `kg show` / `kg resolve` on
c's acknowledged id reached b's entry. Now a copy asks the server for a number of its own before its first id; a
folder moved with `mv` keeps its number; entries journaled before the copy land once; `kg doctor` says it.

Real FalkorDB servers on loopback, the real CLI, real folders copied with `cp -a` and moved with `mv`.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytestmark = pytest.mark.falkordb

NOW = "--now 2026-12-05T10:00:00"


def kg(args: str, *, workspace: Path) -> tuple[int, str, str]:
    from kg.cli.app import app

    result = CliRunner().invoke(app, ["-w", str(workspace), *shlex.split(args)])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def logged(root: Path, kind: str, text: str) -> dict:
    code, out, err = kg(f"log {kind} {shlex.quote(text)} --wait --json {NOW}", workspace=root)
    assert code == 0, err
    return json.loads(out)


def init(root: Path, url: str) -> Path:
    code, _, err = kg(f"init {root} --store {url}", workspace=root)
    assert code == 0, err
    return root


def members_given(port: int, url: str) -> int:
    import redis

    return int(redis.Redis(port=port).get(f"kg:members:{url.rsplit('/', 1)[1]}") or 0)


def shown_text(root: Path, entry: str) -> str:
    code, out, err = kg(f"show {entry} --json", workspace=root)
    assert code == 0, err
    return json.loads(out)["node"]["text"]


def member_and_copy(tmp_path: Path, url: str) -> tuple[Path, Path]:
    """Team members a and b (b has given out an id), and c: `cp -a` of b."""
    init(tmp_path / "a", url)
    b = init(tmp_path / "b", url)
    logged(b, "learning", "b first note")
    c = tmp_path / "c"
    subprocess.run(["cp", "-a", str(b), str(c)], check=True)
    return b, c


def test_a_copy_asks_for_a_member_number_of_its_own_before_its_first_id(tmp_path, falkordb_url):
    """The QA repro: b and its copy c each acknowledged ERR-20261205-002001."""
    b, c = member_and_copy(tmp_path, falkordb_url)
    b_id = logged(b, "error", "b alpha failed")["id"]
    c_id = logged(c, "error", "c beta failed")["id"]
    assert b_id == "ERR-20261205-002001"
    assert c_id == "ERR-20261205-003001"  # member 3 of its own
    for root in (b, c):  # each acknowledged id is the entry it was given for, from either workspace
        assert shown_text(root, b_id) == "b alpha failed"
        assert shown_text(root, c_id) == "c beta failed"
    assert logged(c, "error", "c gamma failed")["id"] == "ERR-20261205-003002"  # asked once, then kept


def test_a_moved_workspace_keeps_its_number(tmp_path, falkordb_server, falkordb_url):
    """`mv` leaves no original behind: the number is safe to keep, and asking for none costs the team nothing."""
    init(tmp_path / "a", falkordb_url)
    b = init(tmp_path / "b", falkordb_url)
    assert logged(b, "error", "before the move")["id"] == "ERR-20261205-002001"
    given = members_given(falkordb_server.port, falkordb_url)
    moved = tmp_path / "elsewhere" / "b"
    moved.parent.mkdir()
    subprocess.run(["mv", str(b), str(moved)], check=True)
    assert logged(moved, "error", "after the move")["id"] == "ERR-20261205-002002"
    assert members_given(falkordb_server.port, falkordb_url) == given
    team = json.loads((moved / "memory" / ".kg" / "team.json").read_text())
    assert team["folder"] == str((moved / "memory" / ".kg").resolve())  # the path it now has is recorded
    code, out, err = kg("doctor --dry-run --json", workspace=moved)
    assert "team member" not in {c["name"] for c in json.loads(out)["checks"]}, out


def test_entries_journaled_before_the_copy_land_once_and_the_copy_waits_for_its_number(tmp_path):
    """An entry journaled while the server was away sits in both copies under one id: one write, applied once,
    whichever drains first. The copy cannot ask for its number while the server is away: it refuses to log
    (exit 1, nothing recorded, saying why) rather than give out the original's ids."""
    from kg.store import falkor_server

    data = tmp_path / "server"
    server = falkor_server.start(data)
    url = f"falkordb://127.0.0.1:{server.port}/team"
    try:
        init(tmp_path / "a", url)
        b = init(tmp_path / "b", url)
        logged(b, "learning", "b first note")
        falkor_server.stop(data)
        waiting = logged(b, "error", "journaled before the copy")
        assert waiting["applied"] is False and waiting["id"] == "ERR-20261205-002001"
        c = tmp_path / "c"
        subprocess.run(["cp", "-a", str(b), str(c)], check=True)
        code, out, err = kg(f"log error 'c while the server is away' --json {NOW}", workspace=c)
        assert code == 1 and out == "", (out, err)
        assert err.startswith(f"Error: cannot reach the team graph at {url}") and "nothing was recorded" in err, err
        assert f"this workspace is a copy of {(b / 'memory' / '.kg').resolve()}" in err and err.count("\n") == 1
        falkor_server.start(data, port=server.port)
        c_id = logged(c, "error", "c after the server came back")["id"]  # c drains first: the shared entry lands
        b_id = logged(b, "error", "b after the server came back")["id"]
        assert c_id == "ERR-20261205-003002" and b_id == "ERR-20261205-002002"
        for root in (b, c):
            code, out, err = kg("list --json", workspace=root)
            assert code == 0, err
            events = sorted((r["id"], r["text"]) for r in json.loads(out) if r["kind"] == "event")
            assert events == [("ERR-20261205-002001", "journaled before the copy"),
                              ("ERR-20261205-002002", "b after the server came back"),
                              ("ERR-20261205-003002", "c after the server came back"),
                              ("LRN-20261205-002001", "b first note")], events
            assert not list((root / "memory" / ".kg").glob("journal*.jsonl")) or \
                not (root / "memory" / ".kg" / "journal.jsonl").read_text().strip()
    finally:
        falkor_server.stop(data)


def test_doctor_reports_a_copy_and_gives_it_a_number_of_its_own(tmp_path, falkordb_url):
    b, c = member_and_copy(tmp_path, falkordb_url)
    made_for = (b / "memory" / ".kg").resolve()
    code, out, err = kg("doctor --dry-run --json", workspace=c)
    (check,) = [ch for ch in json.loads(out)["checks"] if ch["name"] == "team member"]
    assert check["status"] == "warning", check
    assert check["detail"].startswith(f"memory/.kg/team.json was made for {made_for}: this workspace is a copy")
    code, out, err = kg("doctor --json", workspace=c)
    (check,) = [ch for ch in json.loads(out)["checks"] if ch["name"] == "team member"]
    assert check["status"] == "repaired" and check["detail"].endswith("the server gave it member number 3 of its "
                                                                      "own"), check
    code, out, err = kg("doctor --dry-run --json", workspace=c)
    assert "team member" not in {ch["name"] for ch in json.loads(out)["checks"]}, out
    assert logged(c, "error", "c beta failed")["id"] == "ERR-20261205-003001"
