"""A runtime's SessionEnd records its hand-over (memory/.kg/ending/) first thing in the console entry, before the
command line, the rules and the workspace are loaded: Codex kills a SessionEnd hook after 3 s at most, and one
killed before the hand-over (1-2 s in on a loaded machine) left its session open for ever, with no record for the
next start or end to recover it from (QA1 #4). Here the process dies deterministically after the record and before
the full path's hand-over: its `--rules` folder does not exist, which the full path meets as it loads the app.
Real processes, the real console entry, a real Codex rollout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KG = str(Path(sys.executable).parent / "kg")
ROLLOUT = ("runtimes", "codex", "transcripts",
           "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl")
K1, K2 = "019e1695-0522-7c83-8b39-0dd379793f80", "019e1695-0000-7000-8000-000000000002"


def _hook(root: Path, event: str, sid: str, transcript: str, *extra: str, before: tuple[str, ...] = (),
          wait: bool = False, now: str = "2026-05-11T14:00") -> subprocess.CompletedProcess:
    env = {**os.environ, "KG_NOW": now, "KG_SERVER": "0"}
    for name in ("KG_WORKSPACE", "KG_HOOK_WAIT"):
        env.pop(name, None)
    if wait:
        env["KG_HOOK_WAIT"] = "1"
    payload = {"session_id": sid, "transcript_path": transcript, "cwd": str(root), "hook_event_name": event,
               "source": "startup", "reason": "other", "model": "m", "permission_mode": "default"}
    name = "session-start" if event == "SessionStart" else "session-end"
    return subprocess.run([KG, "-w", str(root), *before, "hook", name, *extra, "--runtime", "codex"],
                          input=json.dumps(payload), capture_output=True, text=True, cwd=root, env=env, timeout=300)


def _session(root: Path, sid: str, transcript: str) -> str:
    done = _hook(root, "SessionStart", sid, transcript, "--start-session")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"].split("- Session: ")[1].split()[0]


def _ended(ws, session: str):
    with ws.reading() as st:
        return st.run("memory_session_get", id=session)[0]["ended_at"]


def test_an_end_that_dies_before_its_hand_over_is_recovered_by_the_next_end(ws, shared_data, tmp_path):
    rollout = str(shared_data.joinpath(*ROLLOUT))
    first = _session(ws.root, K1, rollout)
    gone = ("--rules", str(tmp_path / "no-such-rules"))
    # Codex's Stop after a turn (--no-summary) ends nothing: no record, whatever becomes of the process
    stop = _hook(ws.root, "Stop", K1, rollout, "--no-summary", before=gone)
    assert stop.returncode == 1 and not list((ws.kg_dir / "ending").glob("*.json"))
    died = _hook(ws.root, "SessionEnd", K1, rollout, before=gone)
    assert died.returncode == 1 and "does not exist" in died.stderr
    record = json.loads((ws.kg_dir / "ending" / f"{first}.json").read_text())  # (before: no record at all)
    assert record["session"] == first and record["transcript"] == rollout
    assert _ended(ws, first) is None
    # the next Codex session starts and ends (in the foreground, to look at once): the first one is ended too,
    # with the reflection its end never made
    second = _session(ws.root, K2, rollout)
    assert second != first
    end = _hook(ws.root, "SessionEnd", K2, rollout, wait=True, now="2026-05-11T15:00")
    assert end.returncode == 0, end.stderr
    assert _ended(ws, first) is not None and _ended(ws, second) is not None
    summary = (ws.root / "memory" / "sessions" / f"{first}.md").read_text(encoding="utf-8")
    assert f"Reflected on {rollout}" in summary
    assert not list((ws.kg_dir / "ending").glob("*.json"))


def test_an_end_that_hands_nothing_over_withdraws_its_early_record(ws, shared_data, tmp_path):
    """The early record is written for the session the full path would end; when that path hands no end over
    (the summary turned off in rules/hooks.toml), it is withdrawn: no later sweep ends a session nobody ended."""
    rollout = str(shared_data.joinpath(*ROLLOUT))
    first = _session(ws.root, K1, rollout)
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "hooks.toml").write_text("[session_end]\nsummary = false\n", encoding="utf-8")
    done = _hook(ws.root, "SessionEnd", K1, rollout, before=("--rules", str(rules)))
    assert done.returncode == 0, done.stderr
    assert not list((ws.kg_dir / "ending").glob("*.json"))
    assert ws.current_session() == first


def test_a_start_of_the_same_session_after_an_end_that_died_opens_a_new_one(ws, shared_data, tmp_path):
    """The end that died left its session tied to the runtime's id and current; a start of that id (a resume) must
    not go on with a session whose end is recorded, which the sweep then ends under it."""
    rollout = str(shared_data.joinpath(*ROLLOUT))
    first = _session(ws.root, K1, rollout)
    died = _hook(ws.root, "SessionEnd", K1, rollout, before=("--rules", str(tmp_path / "no-such-rules")))
    assert died.returncode == 1
    again = _session(ws.root, K1, rollout)
    assert again != first and ws.current_session() == again
