"""From a correction in a real transcript of each runtime to a lesson in the graph that recurs across sessions.

Each session is a real transcript of the runtime (../shared/data/runtimes) with one more exchange at its end, in the
runtime's own record format, cloned from the file's own records: the agent says it is done, the user corrects it,
the agent concedes. Two sessions say the same lesson in other words; `kg reflect --apply` on both must log a
correction whose lesson says what to do (not an exit status), with the user's words as evidence and the signals
that fired, under one pattern key that `kg status` counts in two sessions.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest

NOW = "--now 2026-11-30T18:00:00"
CLAIM = "Done: the dependencies are installed and the build passes."
CONCEDE = "You're right, my mistake. Switching to pnpm now."
# The same lesson, said two ways in two sessions.
SAID = ("No, that's wrong: this repo uses pnpm, not npm.",
        "You ran the install with npm again. Use pnpm in this repo, not npm!")

Record = dict
Pick = Callable[[Record], bool]
Put = Callable[[Record, str], None]


def _claude_text(r: Record, role: str) -> bool:
    content = (r.get("message") or {}).get("content")
    if r.get("type") != role or r.get("isSidechain") or r.get("isMeta"):  # the main conversation, not a sub-agent's
        return False
    if isinstance(content, str):
        return True
    return isinstance(content, list) and any(b.get("type") == "text" for b in content)


def _claude_put(r: Record, text: str) -> None:
    r["message"]["content"] = text if r["type"] == "user" else [{"type": "text", "text": text}]


def _codex_user(r: Record) -> bool:
    return r.get("type") == "event_msg" and (r.get("payload") or {}).get("type") == "user_message"


def _codex_agent(r: Record) -> bool:
    p = r.get("payload") or {}
    return r.get("type") == "response_item" and p.get("type") == "message" and p.get("role") == "assistant"


def _codex_put(r: Record, text: str) -> None:
    if r["type"] == "event_msg":
        r["payload"]["message"] = text
    else:
        r["payload"]["content"] = [{"type": "output_text", "text": text}]


def _openclaw_role(role: str) -> Pick:
    def pick(r: Record) -> bool:
        m = r.get("message") or {}
        return (r.get("type") == "message" and m.get("role") == role and isinstance(m.get("content"), list)
                and any(b.get("type") == "text" for b in m["content"]))
    return pick


def _openclaw_put(r: Record, text: str) -> None:
    r["message"]["content"] = [{"type": "text", "text": text}]


RUNTIMES = {
    # runtime: (the two real transcripts, picks the agent's and the user's text records, writes a text into one)
    "claude-code": (("claude_code/transcripts/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
                     "claude_code/transcripts/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"),
                    lambda r: _claude_text(r, "assistant"), lambda r: _claude_text(r, "user"), _claude_put),
    "codex": (("codex/transcripts/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
               "codex/transcripts/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"),
              _codex_agent, _codex_user, _codex_put),
    "openclaw": (("openclaw/transcripts/b3db607f-7ae8-4089-b806-44800e961672.jsonl",
                  "openclaw/transcripts/f967d602-325a-4a45-8d54-ee17484cfd96.jsonl"),
                 _openclaw_role("assistant"), _openclaw_role("user"), _openclaw_put),
}


def _record(line: str) -> Record | None:
    try:  # real files hold a damaged line now and then (one OpenClaw file opens with stray bytes): kept, not cloned
        r = json.loads(line)
    except json.JSONDecodeError:
        return None
    return r if isinstance(r, dict) else None


def with_exchange(src: Path, dest: Path, agent: Pick, user: Pick, put: Put, said: str) -> Path:
    """The real transcript, then the agent's claim, the user's correction and the agent's concession, each a copy of
    the file's own last record of that role with only its text changed."""
    lines = [ln for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip()]
    records = [r for r in map(_record, lines) if r is not None]
    last_agent = next(r for r in reversed(records) if agent(r))
    last_user = next(r for r in reversed(records) if user(r))
    added = []
    for n, (model, text) in enumerate(((last_agent, CLAIM), (last_user, said), (last_agent, CONCEDE))):
        r = copy.deepcopy(model)
        put(r, text)
        for field in ("uuid", "id"):  # a record of its own: readers skip a record id seen before
            if field in r:
                r[field] = f"added-{n}-{r[field]}"
        added.append(json.dumps(r))
    dest.write_text("\n".join([*lines, *added]) + "\n", encoding="utf-8")
    return dest


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
def test_a_correction_becomes_a_lesson_that_recurs_across_sessions(runtime, run_kg, ws, shared_data, tmp_path):
    sources, agent, user, put = RUNTIMES[runtime]
    keys = []
    for n, (name, said) in enumerate(zip(sources, SAID, strict=True)):
        src = shared_data / "runtimes" / name
        t = with_exchange(src, tmp_path / f"{n}-{src.name}", agent, user, put, said)
        r = run_kg(f"reflect {t} --format {runtime} --apply --session {runtime}-{n} --json {NOW}")
        assert r.exit_code == 0, r.stderr
        # the real turns may hold corrections of their own (one OpenClaw user asks for longer paragraphs)
        fixes = [f for f in r.json["findings"] if f["category"] == "correction" and "pnpm" in f["evidence"]]
        assert len(fixes) == 1, [(f["category"], f["summary"]) for f in r.json["findings"]]
        f = fixes[0]
        assert "pnpm" in f["summary"] and "npm" in f["summary"].replace("pnpm", "")
        assert "exit code" not in f["summary"].lower()
        assert f["evidence"] in said  # the user's own words
        assert f["signals"], f
        assert f["pattern_key"] and f["pattern_key"].startswith("fix.")
        keys.append(f["pattern_key"])
    assert keys[0] == keys[1], keys
    status = run_kg(f"status --json {NOW}").json
    fixes = [p for p in status["patterns"] if p["key"] == keys[0]]
    assert len(fixes) == 1 and fixes[0]["recurrence"] == 2 and fixes[0]["sessions"] == 2, status["patterns"]
