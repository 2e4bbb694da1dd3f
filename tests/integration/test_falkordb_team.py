"""Team memory on one FalkorDB server (issue 18): the real CLI, workspaces in separate folders.

Each workspace stands for a machine: its own folder, journal and member number, one server between them.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kg.core.errors import StoreError
from tests.conftest import baseline_wait_off

pytestmark = pytest.mark.falkordb


def kg(args: str, *, workspace: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    from kg.cli.app import app

    result = CliRunner().invoke(app, ["-w", str(workspace), *shlex.split(args)], env=env)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def init(tmp_path: Path, name: str, url: str, agent: str, wait_off: bool = False) -> Path:
    """A workspace on the team graph at `url`; `wait_off`: with the wait for a baseline off (a test about the team
    store whose patterns promote on the workspace's first days)."""
    root = tmp_path / name
    code, out, err = kg(f"init {root} --store {url} --json", workspace=root, env={"KG_AGENT": agent})
    assert code == 0, err
    assert json.loads(out)["graph"] == url
    if wait_off:
        baseline_wait_off(root)
    return root


def test_init_refuses_a_password_in_the_url(tmp_path, falkordb_url):
    bad = falkordb_url.replace("falkordb://", "falkordb://me:s3cret@")
    code, out, err = kg(f"init {tmp_path / 'ws'} --store {bad}", workspace=tmp_path / "ws")
    assert code == 2
    assert err.startswith("Error: the store URL holds a password") and "KG_STORE_PASSWORD" in err
    assert not (tmp_path / "ws" / "kg.toml").exists()


def test_init_refuses_port_0(tmp_path):
    """QA2 #7: `kg init --store falkordb://127.0.0.1:0/team` took port 0 as 6379 and named 6379 in its error: port 0
    is refused as bad input (exit 2) naming the port given, before anything is written."""
    code, out, err = kg(f"init {tmp_path / 'ws'} --store falkordb://127.0.0.1:0/team", workspace=tmp_path / "ws")
    assert code == 2, (out, err)
    assert err.startswith("Error: the store URL 'falkordb://127.0.0.1:0/team' names port 0") and "6379 in" not in err
    assert "Traceback" not in err and not (tmp_path / "ws" / "kg.toml").exists(), err


def test_init_writes_the_url_to_kg_toml(tmp_path, falkordb_url):
    root = init(tmp_path, "alpha", falkordb_url, "ann")
    assert (root / "kg.toml").read_text() == (f'# kaizen-kg:begin store\n[store]\nurl = "{falkordb_url}"\n'
                                              "# kaizen-kg:end store\n")
    assert not (root / "memory" / ".kg" / "graph.kuzu").exists()  # no embedded graph made


def test_two_workspaces_share_one_graph(tmp_path, falkordb_url):
    alpha = init(tmp_path, "alpha", falkordb_url, "ann")
    beta = init(tmp_path, "beta", falkordb_url, "bob")
    ids = []
    for root, agent, session in ((alpha, "ann", "s1"), (beta, "bob", "s2"), (alpha, "ann", "s3")):
        code, out, err = kg(f"log error 'Deploy failed: database lock timeout' --pattern-key db.lock "
                            f"--session {session} --wait --json --now 2026-03-0{len(ids) + 1}T10:00:00",
                            workspace=root, env={"KG_AGENT": agent})
        assert code == 0, err
        d = json.loads(out)
        assert d["applied"] is True
        ids.append(d["id"])
    assert len(set(ids)) == 3  # unique across the team: beta's ids carry its member number (2)
    assert [i.split("-")[-1] for i in ids] == ["001", "002001", "001"]  # alpha, member 1, keeps plain ids
    assert (d["pattern"]["key"], d["pattern"]["recurrence"], d["pattern"]["sessions"]) == ("db.lock", 3, 3)

    code, out, err = kg("status --json --now 2026-03-04T10:00:00", workspace=beta)
    assert code == 0, err
    status = json.loads(out)
    assert status["entries"] == {"error": 3}
    who = {(c["workspace"].split("#")[0], c["agent"], c["events"]) for c in status["team"]["contributors"]}
    assert who == {("alpha", "ann", 2), ("beta", "bob", 1)}
    assert all(type(c[k]) is int for c in status["team"]["contributors"] for k in ("events", "nodes"))  # not 2.0
    code, out, _ = kg("status --now 2026-03-04T10:00:00", workspace=beta)
    assert "Team graph" in out and "alpha#" in out and "(bob): 1 event(s), 1 node(s), last 2026-03-02" in out


def test_an_agents_name_is_one_line_of_printable_text(tmp_path, falkordb_url):
    """QA6 #7: KG_AGENT=$'a\\nb\\x01' was stored as given, newline and control byte, and `kg status` lists
    contributors by it: kept as one line of printable text."""
    root = init(tmp_path, "alpha", falkordb_url, "ann")
    code, out, err = kg("log learning 'named oddly' --wait --json --now 2026-03-01T10:00:00", workspace=root,
                        env={"KG_AGENT": "ci\nbot\x01  7\t"})
    assert code == 0, err
    code, out, err = kg(f"show {json.loads(out)['id']} --json", workspace=root)
    assert code == 0 and '"agent": "ci bot 7"' in out, out


def test_an_agents_name_is_redacted_before_it_is_stored(tmp_path, falkordb_url):
    """QA2 #5: KG_AGENT="ci-bot token=<a GitHub token>" was stored on the server as the node's agent (and kept in
    its AOF), and `kg status` listed it among the contributors: redacted as an entry's text is."""
    token = "ghp_" + "1234567890abcdefghijABCDEFGHIJ123456"
    root = init(tmp_path, "alpha", falkordb_url, "ann")
    code, out, err = kg("log learning 'agent with a token' --wait --json --now 2026-03-01T10:00:00",
                        workspace=root, env={"KG_AGENT": f"ci-bot token={token}"})
    assert code == 0, err
    code, shown, err = kg(f"show {json.loads(out)['id']} --json", workspace=root)
    assert code == 0, err
    code, status, err = kg("status --json --now 2026-03-01T11:00:00", workspace=root)
    assert code == 0, err
    agents = {c["agent"] for c in json.loads(status)["team"]["contributors"]}
    assert token not in shown + status and "ci-bot" in shown, shown
    assert any(a.startswith("ci-bot") and "REDACTED" in a for a in agents), agents


def _ann_once_bob_twice(tmp_path, falkordb_url, now: str) -> tuple[Path, Path]:
    """Two members on one team graph: ann's alpha logs one error, bob's beta two."""
    alpha = init(tmp_path, "alpha", falkordb_url, "ann")
    beta = init(tmp_path, "beta", falkordb_url, "bob")
    for root in (alpha, beta, beta):
        code, _, err = kg(f"log error 'first of {root.name}' --wait {now}", workspace=root)
        assert code == 0, err
    return alpha, beta


def test_importing_the_team_s_own_trail_keeps_each_member_s_id_counter(tmp_path, falkordb_url):
    """QA2 #4: member 1 importing the team's own trail read member 2's ERR-...-002001 as its own 2001st id, so its
    next id was ERR-...-2002 (ids.json {"ERR-...": 2002}); past 100 members an imported ...-100005 would make member
    1's next id member 100's 6th. Each member's counter moves past its own ids only."""
    now = "--now 2026-03-01T10:00:00"
    alpha, beta = _ann_once_bob_twice(tmp_path, falkordb_url, now)
    code, out, err = kg(f"export trail --out t.json {now}", workspace=alpha)  # the team's: beta's ids too
    assert code == 0, err
    trail = json.loads((alpha / "t.json").read_text())
    assert {e["id"] for e in trail["entries"]} >= {"ERR-20260301-002001", "ERR-20260301-002002"}, trail["entries"]
    trail["entries"].append({**trail["entries"][0], "id": "ERR-20260301-100005", "summary": "member 100's fifth"})
    (alpha / "t.json").write_text(json.dumps(trail))
    code, out, err = kg(f"import trail {alpha / 't.json'} {now}", workspace=alpha)
    assert code == 0, err
    nexts = []
    for root in (alpha, beta):
        code, out, err = kg(f"log error 'after the import' --json {now}", workspace=root)
        assert code == 0, err
        nexts.append(json.loads(out)["id"])
    assert nexts == ["ERR-20260301-002", "ERR-20260301-002003"], nexts


def test_an_unreachable_server_journals_and_the_entry_lands_later(tmp_path, falkordb_server):
    """The workspace's own server is stopped after init; `kg log` is acknowledged from the journal, and the
    first command after the restart (same port, same data) applies it. Nothing is lost across the restart."""
    from kg.store import falkor_server

    data = tmp_path / "server"
    server = falkor_server.start(data)
    url = f"falkordb://127.0.0.1:{server.port}/team"
    try:
        root = init(tmp_path, "alpha", url, "ann")
        code, out, err = kg("log error 'written before the outage' --wait --json", workspace=root)
        assert code == 0 and json.loads(out)["applied"] is True, err
        falkor_server.stop(data)
        code, out, err = kg("log error 'written during the outage' --wait --json", workspace=root)
        assert code == 0, err
        during = json.loads(out)
        assert during["applied"] is False and "cannot reach the team graph" in during["note"]
        code, out, err = kg("list --json", workspace=root)
        assert code == 1 and "cannot reach the team graph" in err
        falkor_server.start(data, port=server.port)
        code, out, err = kg("list --json", workspace=root)
        assert code == 0, err
        texts = sorted(r["text"] for r in json.loads(out) if r["kind"] == "event")
        assert texts == ["written before the outage", "written during the outage"]
    finally:
        falkor_server.stop(data)


def test_kg_server_start_status_stop(tmp_path, falkordb_server):
    root = tmp_path / "ws"
    assert kg(f"init {root}", workspace=root)[0] == 0
    code, out, err = kg("server start --json", workspace=root)
    assert code == 0, err
    started = json.loads(out)
    assert started["running"] and started["url"].startswith("falkordb://127.0.0.1:")
    assert Path(started["data"]) == root / "memory" / ".kg" / "falkordb"
    code, out, _ = kg("server status --json", workspace=root)
    assert json.loads(out)["pid"] == started["pid"]
    code, out, _ = kg("server stop --json", workspace=root)
    assert json.loads(out) == {"stopped": True}
    code, out, _ = kg("server status --json", workspace=root)
    assert json.loads(out) == {"running": False}


def test_kg_server_start_on_a_port_another_server_holds_is_refused(tmp_path, falkordb_server):
    """The new server failed to bind and exited while the other one answered the wait: `kg server start --port P`
    said it runs (exit 0), and workspaces pointed there wrote into another workspace's server. Now exit 2, a
    plain line, and nothing recorded as running."""
    root = tmp_path / "ws"
    assert kg(f"init {root}", workspace=root)[0] == 0
    code, out, err = kg(f"server start --port {falkordb_server.port}", workspace=root)
    assert code == 2, (out, err)
    assert err.startswith(f"Error: port {falkordb_server.port} on 127.0.0.1 is in use by another program "
                          "(a Redis or FalkorDB server)") and err.count("\n") == 1, err
    code, out, _ = kg("server status --json", workspace=root)
    assert json.loads(out) == {"running": False}


def test_a_mistake_recurring_across_two_workspaces_is_promoted_once_into_both(tmp_path, falkordb_url):
    """The issue's "done when", as far as it goes here: the same failure in two workspaces (two each, four
    sessions) makes one proposal; approved in one workspace, the rule is rendered into both workspaces'
    files, and the other workspace's cycle proposes nothing more."""
    alpha = init(tmp_path, "alpha", falkordb_url, "ann", wait_off=True)
    beta = init(tmp_path, "beta", falkordb_url, "bob", wait_off=True)
    for day, (root, session) in enumerate([(alpha, "s1"), (beta, "s2"), (alpha, "s3"), (beta, "s4")], start=1):
        code, _, err = kg(f"log error 'Deploy failed: database lock timeout on migrate' --pattern-key db.lock "
                          f"--area backend --session {session} --wait --now 2026-03-0{day}T10:00:00", workspace=root)
        assert code == 0, err
    code, out, err = kg("cycle --json --now 2026-03-06T10:00:00", workspace=alpha)
    assert code == 0, err
    (proposal,) = json.loads(out)["proposed"]
    assert (proposal["pattern_key"], proposal["target"]) == ("db.lock", "AGENTS.md")
    code, out, err = kg(f"approve {proposal['number']} --json --now 2026-03-06T10:05:00", workspace=alpha)
    assert code == 0 and json.loads(out)["action"] == "applied", err
    code, out, err = kg("cycle --json --now 2026-03-06T11:00:00", workspace=beta)
    assert code == 0, err
    assert json.loads(out)["proposed"] == [] and json.loads(out)["promoted"] == []
    rule = "- Deploy failed: database lock timeout on migrate"
    for root in (alpha, beta):
        assert rule in (root / "AGENTS.md").read_text(), root.name
    code, out, _ = kg("export memory --json --now 2026-03-06T12:00:00", workspace=beta)
    assert json.loads(out)["files"] == []  # beta's blocks are beta's own: nothing flagged, nothing rewritten


def test_two_machines_as_separate_processes_learn_from_each_other(tmp_path, falkordb_url):
    """The "done when" with every command its own `kg` process, as on two machines: each day alpha and beta
    log the same failure at the same moment (two processes racing for the server); alpha's cycle proposes
    it once, a person approves it in beta, and the rule is rendered into both workspaces' files. Ids stay
    unique and each event names its workspace and agent."""
    import os
    import subprocess
    import sys

    kg_bin = str(Path(sys.executable).with_name("kg"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0"}

    def start(root: Path, agent: str, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([kg_bin, "-w", str(root), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env | {"KG_AGENT": agent})

    def done(proc: subprocess.Popen[str]) -> str:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        return out

    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    for root, agent in ((alpha, "ann"), (beta, "bob")):
        done(start(root, agent, "init", str(root), "--store", falkordb_url))
        baseline_wait_off(root)  # the test is about two machines on one team graph, not the wait for a baseline
    ids = []
    for day in (1, 2):
        racing = [start(root, agent, "log", "error", "Deploy failed: database lock timeout on migrate",
                        "--pattern-key", "db.lock", "--area", "backend", "--session", f"{agent}{day}", "--wait",
                        "--json", "--now", f"2026-03-0{day}T10:00:00")
                  for root, agent in ((alpha, "ann"), (beta, "bob"))]
        ids += [json.loads(done(p))["id"] for p in racing]
    assert len(set(ids)) == 4
    (proposal,) = json.loads(done(start(alpha, "ann", "cycle", "--json", "--now", "2026-03-06T10:00:00")))["proposed"]
    assert proposal["pattern_key"] == "db.lock"
    applied = json.loads(done(start(beta, "bob", "approve", str(proposal["number"]), "--json",
                                    "--now", "2026-03-06T10:05:00")))
    assert applied["action"] == "applied"
    again = json.loads(done(start(alpha, "ann", "cycle", "--json", "--now", "2026-03-06T11:00:00")))
    assert again["proposed"] == [] and again["promoted"] == []
    for root in (alpha, beta):
        assert "- Deploy failed: database lock timeout on migrate" in (root / proposal["target"]).read_text()
    status = json.loads(done(start(alpha, "ann", "status", "--json", "--now", "2026-03-06T12:00:00")))
    who = {(c["workspace"].split("#")[0], c["agent"], c["events"]) for c in status["team"]["contributors"]}
    assert who == {("alpha", "ann", 2), ("beta", "bob", 2)}


def _log(root: Path, summary: str, key: str, day: int, session: str, month: int = 1) -> None:
    code, _, err = kg(f"log error {shlex.quote(summary)} --pattern-key {key} --area tooling --session {session} "
                      f"--wait --now 2026-{month:02d}-{day + 1:02d}T09:00:00", workspace=root)
    assert code == 0, err


def test_verification_counts_both_workspaces_later_events(tmp_path, falkordb_url):
    """Two rules promoted from both workspaces' failures (20 days, each workspace once a day each) are
    verified a week later by alpha's cycle. Neither recurs in alpha after the change; `pip.cache` goes on in
    beta at the team's old rate. Counted over the team, `git.ssh` is confirmed and kept, and `pip.cache` had
    no effect and is reverted, out of both workspaces' files. (Counting alpha's events alone would keep
    both.)"""
    alpha = init(tmp_path, "alpha", falkordb_url, "ann")
    beta = init(tmp_path, "beta", falkordb_url, "bob")
    ssh, pip = "git push failed: ssh key rejected by the remote", "pip install failed: cache directory is corrupt"
    for day in range(20):
        for root in (alpha, beta):
            _log(root, ssh, "git.ssh", day, f"{root.name}{day}")
            _log(root, pip, "pip.cache", day, f"{root.name}{day}")
    code, out, err = kg("cycle --json --now 2026-01-21T20:00:00", workspace=alpha)
    assert code == 0, err
    promoted = {p["pattern_key"]: p for p in json.loads(out)["promoted"]}
    assert set(promoted) == {"git.ssh", "pip.cache"} and {p["target"] for p in promoted.values()} == {"TOOLS.md"}
    code, out, err = kg("cycle --json --now 2026-01-21T20:30:00", workspace=beta)
    assert code == 0 and json.loads(out)["promoted"] == [], err
    for root in (alpha, beta):
        tools = (root / "TOOLS.md").read_text()
        assert f"- {ssh}" in tools and f"- {pip}" in tools, root.name
    for day in range(21, 28):  # the week after the change: pip.cache in beta only, twice a day
        _log(beta, pip, "pip.cache", day, f"beta{day}a")
        _log(beta, pip, "pip.cache", day, f"beta{day}b")
    code, out, err = kg("cycle --json --now 2026-01-28T20:00:00", workspace=alpha)
    assert code == 0, err
    report = json.loads(out)
    verdicts = {v["pattern_key"]: (v["verdict"], v["action"]) for v in report["verified"]}
    assert verdicts == {"git.ssh": ("confirmed", "keep"), "pip.cache": ("ineffective", "revert")}
    assert [r["pattern_key"] for r in report["reverted"]] == ["pip.cache"]
    code, out, err = kg("cycle --json --now 2026-01-28T20:30:00", workspace=beta)
    assert code == 0 and json.loads(out)["verified"] == [], err  # verified once, for the team
    for root in (alpha, beta):
        tools = (root / "TOOLS.md").read_text()
        assert f"- {ssh}" in tools and pip not in tools, root.name


def _preference_and_team_rule(tmp_path, falkordb_url) -> tuple[Path, Path]:
    """Two members, alpha and bob's beta: alpha's preference (USER.md, workspace scope) and a docker failure both
    logged (TOOLS.md, team scope), both promoted by alpha's cycle."""
    alpha = init(tmp_path, "alpha", falkordb_url, "ann", wait_off=True)
    beta = init(tmp_path, "beta", falkordb_url, "bob", wait_off=True)
    for day, session in enumerate(("p1", "p2", "p3")):
        code, _, err = kg(f"log learning 'Prefer tabs over spaces in Makefiles' --category preference "
                          f"--pattern-key tabs.make --session {session} --wait --now 2026-02-0{day + 1}T09:00:00",
                          workspace=alpha)
        assert code == 0, err
        for root in (alpha, beta):
            _log(root, "docker build failed: no space left on device", "docker.space", day,
                 f"{root.name}{session}", month=2)
    code, out, err = kg("cycle --json --now 2026-02-05T20:00:00", workspace=alpha)
    assert code == 0, err
    assert {p["pattern_key"]: p["target"] for p in json.loads(out)["promoted"]} == {
        "tabs.make": "USER.md", "docker.space": "TOOLS.md"}
    return alpha, beta


def test_a_rule_scoped_to_its_workspace_renders_only_there(tmp_path, falkordb_url):
    """rules/lifecycle.toml gives each target a scope. A preference (USER.md) stays with the workspace whose
    cycle promoted it; a team-scoped rule (TOOLS.md) goes into every workspace's files."""
    alpha, beta = _preference_and_team_rule(tmp_path, falkordb_url)
    assert kg("cycle --json --now 2026-02-05T20:30:00", workspace=beta)[0] == 0
    assert "Prefer tabs over spaces in Makefiles" in (alpha / "USER.md").read_text()
    assert "tabs" in (alpha / "memory" / "preferences.json").read_text()
    assert not (beta / "USER.md").exists() and not (beta / "memory" / "preferences.json").exists()
    for root in (alpha, beta):
        assert "- docker build failed: no space left on device" in (root / "TOOLS.md").read_text(), root.name


def test_a_preference_is_on_the_watch_list_of_its_own_workspace_only(tmp_path, falkordb_url):
    """The session brief's watch list (rules under verification: follow them) read every change on the team graph:
    alpha's preference, written into alpha's USER.md only, was on beta's list too, a rule beta's agent was told to
    follow that no file of beta holds (QA2 #1, left). A change whose target's scope is "workspace" is watched only
    where it is rendered; a team rule (TOOLS.md) is watched in both."""
    alpha, beta = _preference_and_team_rule(tmp_path, falkordb_url)
    watched = {}
    for root in (alpha, beta):
        code, out, err = kg("hook session-start --now 2026-02-06T09:00:00", workspace=root)
        assert code == 0, err
        watch = out.split("Watch List", 1)[1].split("\n\n", 1)[0]
        watched[root.name] = [ln for ln in watch.splitlines() if ln.startswith("- ")]
    assert sorted(ln.split(" (")[0] for ln in watched["alpha"]) == [
        "- Prefer tabs over spaces in Makefiles", "- docker build failed: no space left on device"], watched
    assert [ln.split(" (")[0] for ln in watched["beta"]] == ["- docker build failed: no space left on device"], watched


def test_a_preference_is_promoted_only_by_and_into_the_workspace_whose_events_made_it(tmp_path, falkordb_url):
    """Beta states a preference three times in three sessions; alpha's cycle ran first and wrote beta's preference
    into alpha's USER.md and preferences.json, and beta's own cycle then had nothing left to promote (QA2 #1). Now
    alpha's cycle leaves it, saying whose it is; beta's cycle promotes it into beta's files only. A team rule
    logged by beta alone is still promoted by alpha's cycle, into both."""
    alpha = init(tmp_path, "alpha", falkordb_url, "ann", wait_off=True)
    beta = init(tmp_path, "beta", falkordb_url, "bob", wait_off=True)
    for day, session in enumerate(("p1", "p2", "p3")):
        code, _, err = kg(f"log learning 'User prefers tabs over spaces' --category preference "
                          f"--pattern-key pref.tabs --session {session} --wait --now 2026-02-0{day + 1}T09:00:00",
                          workspace=beta)
        assert code == 0, err
        _log(beta, "docker build failed: no space left on device", "docker.space", day, f"beta{session}", month=2)
    code, out, err = kg("cycle --json --now 2026-02-05T20:00:00", workspace=alpha)
    assert code == 0, err
    report = json.loads(out)
    assert {p["pattern_key"]: p["target"] for p in report["promoted"]} == {"docker.space": "TOOLS.md"}
    waiting = [w for w in report["waiting"] if w["pattern_key"] == "pref.tabs"]
    assert len(waiting) == 1 and "beta#2" in waiting[0]["reason"] and "scope workspace" in waiting[0]["reason"]
    code, out, err = kg("cycle --json --now 2026-02-05T20:30:00", workspace=beta)
    assert code == 0, err
    assert {p["pattern_key"]: p["target"] for p in json.loads(out)["promoted"]} == {"pref.tabs": "USER.md"}
    assert kg("cycle --json --now 2026-02-05T21:00:00", workspace=alpha)[0] == 0
    assert "User prefers tabs over spaces" in (beta / "USER.md").read_text()
    assert "tabs" in (beta / "memory" / "preferences.json").read_text()
    assert not (alpha / "USER.md").exists() and not (alpha / "memory" / "preferences.json").exists()
    for root in (alpha, beta):
        assert "- docker build failed: no space left on device" in (root / "TOOLS.md").read_text(), root.name


def test_a_rule_never_written_into_a_hand_edited_block_is_not_withdrawn_there(tmp_path, falkordb_url):
    """Beta takes rule one out of its MEMORY.md kg block by hand; rule two is promoted later by alpha's cycle. kg
    leaves beta's edited block as it is, so rule two was never in beta's file: beta's cycle reported it as "edited by
    hand" and paused its verification for the whole team, and alpha's `kg why` said it was withdrawn in beta (QA2
    #8). Now rule one alone is beta's withdrawal; rule two is said to be not written there (with how to get it),
    neither paused nor withdrawn anywhere, and beta's edit is kept."""
    alpha = init(tmp_path, "alpha", falkordb_url, "ann", wait_off=True)
    beta = init(tmp_path, "beta", falkordb_url, "bob", wait_off=True)

    def learn(text: str, key: str, day: int) -> None:
        for root in (alpha, beta):
            code, _, err = kg(f"log learning {shlex.quote(text)} --category principle --pattern-key {key} "
                              f"--session {root.name}{key}{day} --wait --now 2026-03-{day:02d}T09:00:00",
                              workspace=root)
            assert code == 0, err

    one, two = "Rule one: run the linter first", "Rule two: pin the node version"
    for day in (1, 2):
        learn(one, "r1", day)
    assert kg("cycle --json --now 2026-03-03T09:00:00", workspace=alpha)[0] == 0
    assert kg("cycle --json --now 2026-03-03T09:30:00", workspace=beta)[0] == 0
    memory = beta / "MEMORY.md"
    assert f"- {one}" in memory.read_text()
    memory.write_text(memory.read_text().replace(f"- {one}\n", ""))
    edited = memory.read_text()
    for day in (4, 5):
        learn(two, "r2", day)
    code, out, err = kg("cycle --json --now 2026-03-06T09:00:00", workspace=alpha)
    assert code == 0 and [p["pattern_key"] for p in json.loads(out)["promoted"]] == ["r2"], (out, err)
    changes = {p["pattern_key"]: p["change"] for p in json.loads(out)["promoted"]}
    code, out, err = kg("cycle --json --now 2026-03-06T09:30:00", workspace=beta)
    assert code == 0, err
    said = {w["change"]: w for w in json.loads(out)["withdrawn"]}
    assert said[changes["r2"]]["action"] == "not written" and "how" not in said[changes["r2"]], said
    assert [w["action"] for c, w in said.items() if c != changes["r2"]] == ["paused"], said  # rule one, taken out
    code, out, err = kg("cycle --now 2026-03-06T10:00:00", workspace=beta)
    assert code == 0 and "not written into this file" in out and "kg export memory --force" in out, out
    assert memory.read_text() == edited  # the person's edit kept
    assert f"- {two}" in (alpha / "MEMORY.md").read_text()
    for root in (alpha, beta):
        code, out, err = kg(f"why {shlex.quote(two)} --now 2026-03-06T11:00:00", workspace=root)
        assert code == 0 and "paused" not in out and "withdrawn" not in out, (root.name, out)
        code, out, err = kg("status --json --now 2026-03-06T11:00:00", workspace=root)
        paused = {v["change"] for v in json.loads(out)["lifecycle"]["verifications_paused"]}
        assert changes["r2"] not in paused, (root.name, paused)


def test_a_missing_full_text_index_is_made_again_on_the_next_open(tmp_path, falkordb_url):
    """The embedded graph's index repair (tests/integration/test_reliability.py), on a team graph: the index
    dropped on the server (by an operator, or a server restored without it) is made again by the next command
    that opens the graph, which says so, and search keeps finding."""
    from kg.store.backend import parse_url
    from kg.store.falkor import _client

    root = init(tmp_path, "alpha", falkordb_url, "ann")
    code, _, err = kg("log learning 'deploy script broke on staging' --wait", workspace=root)
    assert code == 0, err
    url = parse_url(falkordb_url)
    _client(url).select_graph(url.graph).query("CALL db.idx.fulltext.drop('Node')")
    code, out, err = kg("search deploy", workspace=root)
    assert code == 0 and "made the full-text index on Node.tokens, which was missing" in err
    assert "deploy script broke on staging" in out
    code, out, _ = kg("doctor", workspace=root)
    assert code == 0 and "full-text index: node_fts is present" in out


def test_two_machines_as_separate_processes_verify_against_both(tmp_path, falkordb_url):
    """The rest of the "done when" with every command its own `kg` process: each workspace brings its own
    history (`kg import trail`: twenty days of two failures, each workspace once a day), alpha's cycle
    promotes both once and beta's finds nothing left to promote, both rules are rendered into both
    workspaces' files; a week later only beta's own import says `pip.cache` goes on, and alpha's cycle,
    counting the team's events, confirms `git.ssh` and reverts `pip.cache` out of both workspaces' files.
    Every imported event names the workspace and agent that brought it."""
    import os
    import subprocess
    import sys

    kg_bin = str(Path(sys.executable).with_name("kg"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0"}

    def run(root: Path, agent: str, *args: str) -> str:
        proc = subprocess.run([kg_bin, "-w", str(root), *args], capture_output=True, text=True, timeout=300,
                              env=env | {"KG_AGENT": agent}, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    ssh, pip = "git push failed: ssh key rejected by the remote", "pip install failed: cache directory is corrupt"

    def trail(root: Path, name: str, items: list[tuple[str, str, int, str]]) -> Path:
        entries = [{"id": f"ERR-202601{day:02d}-{root.name[0]}{i:04d}", "type": "error", "summary": summary,
                    "area": "tooling", "priority": "medium", "status": "pending", "pattern_key": key,
                    "logged": f"2026-01-{day:02d}T09:{i % 60:02d}:00", "session": session}
                   for i, (summary, key, day, session) in enumerate(items)]
        path = tmp_path / f"{root.name}-{name}.json"
        path.write_text(json.dumps({"version": 3, "entries": entries}), encoding="utf-8")
        return path

    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    for root, agent in ((alpha, "ann"), (beta, "bob")):
        run(root, agent, "init", str(root), "--store", falkordb_url)
        history = [(text, key, day + 1, f"{root.name}{day}") for day in range(20)
                   for text, key in ((ssh, "git.ssh"), (pip, "pip.cache"))]
        run(root, agent, "import", "trail", str(trail(root, "history", history)))
    promoted = {p["pattern_key"]: p["target"]
                for p in json.loads(run(alpha, "ann", "cycle", "--json", "--now", "2026-01-21T20:00:00"))["promoted"]}
    assert promoted == {"git.ssh": "TOOLS.md", "pip.cache": "TOOLS.md"}
    assert json.loads(run(beta, "bob", "cycle", "--json", "--now", "2026-01-21T20:30:00"))["promoted"] == []
    for root in (alpha, beta):
        tools = (root / "TOOLS.md").read_text()
        assert f"- {ssh}" in tools and f"- {pip}" in tools, root.name
    later = [(pip, "pip.cache", day, f"beta{day}{half}") for day in range(22, 29) for half in "ab"]
    run(beta, "bob", "import", "trail", str(trail(beta, "later", later)))
    report = json.loads(run(alpha, "ann", "cycle", "--json", "--now", "2026-01-28T20:00:00"))
    verdicts = {v["pattern_key"]: (v["verdict"], v["action"]) for v in report["verified"]}
    assert verdicts == {"git.ssh": ("confirmed", "keep"), "pip.cache": ("ineffective", "revert")}
    assert json.loads(run(beta, "bob", "cycle", "--json", "--now", "2026-01-28T20:30:00"))["verified"] == []
    for root in (alpha, beta):
        tools = (root / "TOOLS.md").read_text()
        assert f"- {ssh}" in tools and pip not in tools, root.name
    status = json.loads(run(alpha, "ann", "status", "--json", "--now", "2026-01-29T12:00:00"))
    who = {(c["workspace"].split("#")[0], c["agent"]): c["events"] for c in status["team"]["contributors"]}
    assert set(who) == {("alpha", "ann"), ("beta", "bob")}
    assert who[("beta", "bob")] == 54 and who[("alpha", "ann")] >= 40  # alpha's cycles may add events of their own


KILLED_SNAPSHOT_OWNER = """
import os, sys
import kg
from kg.analysis import snapshot
snap = snapshot.take(kg.open_workspace(sys.argv[1]))
print(snap.directory, flush=True)
os.kill(os.getpid(), 9)  # killed holding its copy on the server: nothing drops it
"""


def test_a_dead_owners_snapshot_copy_is_dropped_from_the_server_by_the_next_snapshot(tmp_path, falkordb_url):
    import subprocess
    import sys

    from kg.analysis import snapshot
    from kg.store.falkor import _client
    from kg.workspace import open_workspace

    root = init(tmp_path, "alpha", falkordb_url, "ann")
    assert kg("log error 'deploy failed' --wait", workspace=root)[0] == 0
    ws = open_workspace(root)

    def graphs() -> set[str]:
        listed = _client(ws.store_url).connection.execute_command("GRAPH.LIST")
        return {g.decode() if isinstance(g, bytes) else g for g in listed}

    killed = subprocess.run([sys.executable, "-c", KILLED_SNAPSHOT_OWNER, str(root)], capture_output=True,
                            text=True, timeout=120)
    left = Path(killed.stdout.strip())
    assert killed.returncode == -9 and left.is_relative_to(ws.kg_dir / snapshot.SNAPSHOTS), killed.stderr
    copy = (left / snapshot.SNAPSHOT_URL).read_text().strip().rsplit("/", 1)[-1]
    assert copy in graphs() and copy.startswith(f"{ws.store_url.graph}.snapshot-")
    with snapshot.take(ws) as mine:
        assert not left.exists() and copy not in graphs()  # the dead owner's folder and its server copy are gone
        assert ws.store_url.graph in graphs()  # never the team graph itself
        assert snapshot.sweep(mine.directory.parent) == []  # a living owner's copy stays
        assert len(snapshot.read(mine).nodes) == 1
    assert not mine.directory.exists()
    import gc
    import os

    probe = os.open(os.devnull, os.O_RDONLY)  # takes the number the owner lock's descriptor had
    try:
        del mine
        gc.collect()  # a second finalizer closed that number again: whatever reused it (an event loop's epoll)
        os.fstat(probe)
    finally:
        os.close(probe)


def test_a_start_behind_a_busy_team_graph_never_takes_another_workspaces_session(tmp_path, falkordb_url):
    """Session numbers on a team graph are the team's: alpha's first session of the day is 001 for everyone. A
    session start in beta while the team graph is busy (another agent's writer lock held past the hook's wait)
    cannot ask the graph which numbers exist: a start journaled with the numbers beta's files know was 001 too,
    which the drain merged into alpha's session, so beta's logs went into alpha's summary and beta's session end
    ended alpha's session."""
    import redis

    from kg.store.backend import parse_url

    alpha = init(tmp_path, "alpha", falkordb_url, "ann")
    beta = init(tmp_path, "beta", falkordb_url, "bob")
    now = "--now 2026-12-03T10:00:00"
    code, out, err = kg(f"session start --json {now}", workspace=alpha, env={"KG_AGENT": "ann"})
    assert code == 0, err
    theirs = json.loads(out)["id"]
    url = parse_url(falkordb_url)
    server = redis.Redis(host="127.0.0.1", port=url.port)
    server.set(f"kg:lock:{url.graph}", "another-machine/1/2/token", px=600_000)  # another agent writes
    try:
        code, out, err = kg(f"hook session-start --start-session --json {now}", workspace=beta,
                            env={"KG_AGENT": "bob"})
    finally:
        server.delete(f"kg:lock:{url.graph}")
    assert code == 0, err
    brief = json.loads(out)
    assert brief["graph_busy"] is True
    assert brief["session"] != theirs
    code, out, err = kg(f"log error 'beta deploy failed' --wait --json {now}", workspace=beta, env={"KG_AGENT": "bob"})
    assert code == 0, err
    code, out, err = kg(f"session end --json {now}", workspace=alpha, env={"KG_AGENT": "ann"})
    assert code == 0, err
    assert json.loads(out)["events"] == 0  # alpha logged nothing: beta's entry is not in its session


def test_doctor_warns_when_the_team_server_logs_writes_as_effects(tmp_path, falkordb_url):
    """Replayed from effects after a kill -9, FalkorDB 1.4.1 brought back a graph upgraded by migration 0011 without
    its keyword counts (test_falkordb_drain): kg's own server logs queries; a team's own server is checked."""
    from kg.store.backend import parse_url
    from kg.store.falkor import _client
    from kg.store.falkor_server import EFFECTS_THRESHOLD_US

    root = init(tmp_path, "alpha", falkordb_url, "ann")
    code, out, _ = kg("doctor", workspace=root)
    assert code == 0 and "team server: its append-only file keeps each write as its query" in out
    conn = _client(parse_url(falkordb_url)).connection
    conn.execute_command("GRAPH.CONFIG", "SET", "EFFECTS_THRESHOLD", 300)
    try:
        for args in ("doctor", "doctor --dry-run"):
            code, out, _ = kg(args, workspace=root)
            assert code == 0 and "team server: EFFECTS_THRESHOLD is 300 µs" in out, out
            assert f"EFFECTS_THRESHOLD {EFFECTS_THRESHOLD_US}" in out
    finally:
        conn.execute_command("GRAPH.CONFIG", "SET", "EFFECTS_THRESHOLD", EFFECTS_THRESHOLD_US)


def test_kg_server_start_again_takes_the_port_its_members_name(tmp_path, falkordb_server):
    """A stop then a start kept the data but moved the server to a new free port: every member's kg.toml named the
    old one (QA7 #3). The next start takes the last port when it is free; a --port other than the running
    server's is refused, not ignored."""
    root = tmp_path / "ws"
    assert kg(f"init {root}", workspace=root)[0] == 0
    code, out, err = kg("server start --json", workspace=root)
    assert code == 0, err
    port = json.loads(out)["port"]
    code, out, err = kg(f"server start --port {port + 1} --json", workspace=root)
    assert code == 2 and f"already runs on port {port}" in err, (out, err)
    assert kg("server stop", workspace=root)[0] == 0
    code, out, err = kg("server start --json", workspace=root)
    assert code == 0 and json.loads(out)["port"] == port, (out, err)
    assert kg("server stop", workspace=root)[0] == 0


def test_kg_server_start_whose_last_port_is_taken_refuses_and_keeps_it(tmp_path, falkordb_server):
    """Its last port held a moment by another program, `kg server start` took a free one, said nothing, and wrote it
    as the last port: every later start stayed there, away from the port its members' URLs name (QA2 #9). Now it
    refuses in one line naming the port, what holds it and --port (exit 1), keeps the last port, and once the port
    is free starts there; its advice names the graph the members use, not graph kg."""
    import socket

    from kg.store import falkor_server

    root = tmp_path / "ws"
    assert kg(f"init {root}", workspace=root)[0] == 0
    code, out, err = kg("server start --json", workspace=root)
    assert code == 0, err
    port = json.loads(out)["port"]
    member = init(tmp_path, "alpha", f"falkordb://127.0.0.1:{port}/team", "ann")
    assert kg("log error 'deploy failed' --wait", workspace=member, env={"KG_AGENT": "ann"})[0] == 0
    assert kg("server stop", workspace=root)[0] == 0
    last = root / "memory" / ".kg" / "falkordb" / falkor_server.LAST_PORT_FILE
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.bind(("127.0.0.1", port))
    holder.listen()
    try:
        code, out, err = kg("server start", workspace=root)
    finally:
        holder.close()
    assert code == 1 and out == "", (out, err)
    line = err.strip()
    assert "\n" not in line and line.startswith(f"Error: port {port} on 127.0.0.1") and "--port" in line, err
    assert f"(pid {__import__('os').getpid()}," in line, err  # what holds it
    assert last.read_text() == str(port) and falkor_server.recorded(last.parent) is None
    code, out, err = kg("server start", workspace=root)
    assert code == 0 and f"Point a workspace at it: kg init --store falkordb://127.0.0.1:{port}/team" in out, (out, err)
    code, out, err = kg("server status --json", workspace=root)
    assert json.loads(out)["port"] == port and json.loads(out)["graphs"] == ["team"], out
    assert kg("status", workspace=member, env={"KG_AGENT": "ann"})[0] == 0
    assert kg("server stop", workspace=root)[0] == 0


def test_a_server_that_runs_but_does_not_answer_is_said_and_no_second_one_starts(tmp_path, falkordb_server):
    """SIGSTOPped, the server did not answer a PING: `kg server status` said none ran and `kg server start`
    started a second server on the same data, each then holding its own writes and member numbers (QA7 #2)."""
    import os
    import signal

    root = tmp_path / "ws"
    assert kg(f"init {root}", workspace=root)[0] == 0
    code, out, err = kg("server start --json", workspace=root)
    assert code == 0, err
    started = json.loads(out)
    os.kill(started["pid"], signal.SIGSTOP)
    try:
        code, out, err = kg("server status --json", workspace=root)
        shown = json.loads(out)
        assert shown["running"] is True and shown["answering"] is False and shown["pid"] == started["pid"], shown
        code, out, err = kg("server start --json", workspace=root)
        assert code == 1 and "runs but does not answer" in err and "split the team's graph" in err, (out, err)
    finally:
        os.kill(started["pid"], signal.SIGCONT)
    code, out, err = kg("server status --json", workspace=root)
    assert json.loads(out)["answering"] is True and json.loads(out)["pid"] == started["pid"]
    assert kg("server stop", workspace=root)[0] == 0


def test_a_server_still_replaying_its_data_is_left_running_and_said(tmp_path, falkordb_server):
    """Restarted after a kill -9 on a big append-only file, the server was killed at the end of start's wait while
    it still replayed its data, so every start threw the replay away (QA7 #1). Now it is left running and said;
    the next start finds it (here the replay is made to look long by a tiny wait)."""
    import os
    import signal

    from kg.store import falkor_server

    data = tmp_path / "server"
    server = falkor_server.start(data)
    try:
        import falkordb

        g = falkordb.FalkorDB(port=server.port, socket_timeout=300).select_graph("g")
        # the append-only file keeps the query, and a restart runs it again: 60M rows walked for 12 nodes take
        # seconds (about 4 s idle) and little memory, where the start below waits 2.5 s for its log to say it loads
        g.query("UNWIND range(1, 60000000) AS i WITH i WHERE i % 5000000 = 0 CREATE (:N {i: i})")
        os.kill(server.pid, signal.SIGKILL)
        try:  # gone, and reaped: a process still dying is a server that runs and does not answer (ci1, this landing)
            os.waitpid(server.pid, 0)
        except ChildProcessError:
            pass
        with pytest.raises(StoreError, match=r"started and is (loading its data|still starting).* it is left running"):
            falkor_server.start(data, wait_s=2.5, loading_s=0.0)
        again = falkor_server.recorded(data)
        assert again is not None and again.port == server.port
        back = falkor_server.start(data, wait_s=120.0)  # the same server, once it answers
        assert back.pid == again.pid
        assert falkordb.FalkorDB(port=back.port).select_graph("g").query(
            "MATCH (n:N) RETURN count(n)").result_set == [[12]]
    finally:
        falkor_server.stop(data)


def test_a_rebuilt_ids_json_keeps_each_member_s_counter(tmp_path, falkordb_url):
    """A damaged ids.json is rebuilt from the team graph, which holds every member's ids: the rebuild read each as
    one number, so member 1's counter became 2002 (beta's ERR-...-002002) and its next id ERR-...-2003, and member
    2's next ERR-...-0022004. Each reads only its own ids, as its allocator writes them (`Journal.counter_of`)."""
    now = "--now 2026-03-01T10:00:00"
    alpha, beta = _ann_once_bob_twice(tmp_path, falkordb_url, now)
    nexts = []
    for root in (alpha, beta):
        (root / "memory" / ".kg" / "ids.json").write_text("{garbage", encoding="utf-8")
        code, out, err = kg(f"log error 'after the rebuild' --json {now}", workspace=root)
        assert code == 0, err
        nexts.append(json.loads(out)["id"])
    assert nexts == ["ERR-20260301-002", "ERR-20260301-002003"], nexts
