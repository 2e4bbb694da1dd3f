"""A team rule one member takes out of its own file (issue: QA5 #4). One change renders into every member's files
and each member's cycle sees only its own: the shared pause followed whichever cycle ran last (B's cycle paused it
each morning, A's resumed it an hour later, and on the first day A's even confirmed it on days B ran without it),
and B's `kg status` and `kg why` disagreed. Now a member pauses and resumes only its own withdrawal, the rule's days
out are any member's, no member's cycle judges it meanwhile, and status/why say whose file it is out of. Real CLI,
two workspaces on one real FalkorDB graph."""

from __future__ import annotations

import json

import pytest

from tests.integration.test_falkordb_team import init, kg

pytestmark = pytest.mark.falkordb

RULE = "stop the local postgres first: brew services stop postgresql"
ERROR = "docker compose up failed: port 5432 in use"


def _cycle(root, at: str) -> dict:
    code, out, err = kg(f"cycle --json --now {at}", workspace=root)
    assert code == 0, err
    return json.loads(out)


def _paused(root, at: str) -> list[dict]:
    code, out, err = kg(f"status --json --now {at}", workspace=root)
    assert code == 0, err
    return json.loads(out)["lifecycle"]["verifications_paused"]


def _why(root, at: str) -> str:
    code, out, err = kg(f"why '{RULE}' --now {at}", workspace=root)
    assert code == 0, err
    return out


@pytest.mark.parametrize("folder", ["wsB", "wsB[old]"])  # rev5 #1: a `]` in the name (written `)`) never resumed
def test_one_members_withdrawal_pauses_the_team_rule_for_all_until_it_is_back(tmp_path, falkordb_url, folder):
    a = init(tmp_path, "wsA", falkordb_url, "ann", wait_off=True)
    b = init(tmp_path, folder, falkordb_url, "bob", wait_off=True)
    tag = folder.replace("]", ")") + "#2"  # how pause lines name B
    code, _, err = kg(f"log error '{ERROR}' --pattern-key docker.port --action '{RULE}' --session a1 "
                      "--now 2026-11-05T10:00:00", workspace=a)
    assert code == 0, err
    for d in ("06", "07"):
        code, _, err = kg(f"log error '{ERROR}' --pattern-key docker.port --session b{d} --now 2026-11-{d}T10:00:00",
                          workspace=b)
        assert code == 0, err
    assert _cycle(a, "2026-11-08T10:00:00")["promoted"]
    _cycle(b, "2026-11-08T11:00:00")
    assert RULE in (a / "TOOLS.md").read_text() and RULE in (b / "TOOLS.md").read_text()
    (b / "TOOLS.md").write_text("## Known Gotchas\n\nour own notes only\n")  # B's person takes it out

    for day, action in (("16", "paused"), ("17", "still paused"), ("18", "still paused")):
        rb = _cycle(b, f"2026-11-{day}T11:00:00")
        assert [w["action"] for w in rb["withdrawn"]] == [action], rb["withdrawn"]
        ra = _cycle(a, f"2026-11-{day}T12:00:00")  # A holds the rule: it neither resumes B's pause nor judges it
        assert ra["withdrawn"] == [] and ra["verified"] == [], (ra["withdrawn"], ra["verified"])

    (pb,) = _paused(b, "2026-11-18T12:30:00")
    assert pb["withdrawn_since"].startswith("2026-11-16") and pb["how"] == "withdrawn", pb
    (pa,) = _paused(a, "2026-11-18T12:30:00")
    assert pa["how"] == "elsewhere" and pa["elsewhere"] == [tag], pa
    assert pa["withdrawn_since"].startswith("2026-11-16"), pa
    why_b = _why(b, "2026-11-18T12:30:00")
    assert "verification paused: withdrawn by hand since 2026-11-16" in why_b and "back in effect" not in why_b, why_b
    assert "in effect here" not in why_b, why_b  # B's own file, not another member's
    why_a = _why(a, "2026-11-18T12:30:00")
    assert f"withdrawn by hand in {tag} since 2026-11-16" in why_a and "in effect here" in why_a, why_a

    # B puts it back: B's cycle resumes it, and the days B ran without it are not counted for anyone
    code, _, err = kg("export memory --force --now 2026-11-20T11:00:00", workspace=b)
    assert code == 0 and RULE in (b / "TOOLS.md").read_text(), err
    rb = _cycle(b, "2026-11-20T11:00:00")
    assert [w["action"] for w in rb["withdrawn"]] == ["resumed"], rb["withdrawn"]
    (v,) = rb["verified"]
    assert "not counted: 0 in 4.0d withdrawn by hand" in v["summary"] + json.dumps(v), v
    assert _paused(a, "2026-11-20T12:00:00") == [] and _paused(b, "2026-11-20T12:00:00") == []
