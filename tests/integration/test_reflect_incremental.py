"""Reflection on a growing transcript reads on from where the last one left off (kg.reflect.window), and logs what
one reflection of the whole file logs: on every real transcript of ../shared/data (every format kg reads), cut into
growing prefixes as a runtime appends to it. A file rewritten or cut short under the cursor is read whole again, an
old state file without the read's position still works, and a run that dies before its state is written loses
nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kg.reflect import state as rstate
from kg.reflect.apply import reflect_file
from kg.reflect.parse import TranscriptError, read_transcript
from tests.conftest import fresh_workspace, shared_data_dir

NOW = "2027-01-02T00:00:00"
DATA = shared_data_dir()
RUNTIMES = DATA / "runtimes"
CODEX = RUNTIMES / "codex" / "transcripts" / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"


def _real(pattern: str, root: Path = RUNTIMES) -> list[Path]:
    return sorted(root.glob(pattern))


REAL = [
    *_real("codex/transcripts/*.jsonl"), *_real("claude_code/transcripts/*.jsonl"),
    *_real("transcripts/claude_code/*.jsonl", DATA), *_real("openclaw/transcripts/**/*.jsonl"),
    *_real("aider/*/.aider.chat.history.md"), *_real("aider/aider-ai_aider/**/*.md"),
]
SPECSTORY = _real("transcripts/specstory/*.md", DATA)


def entries(ws) -> list[tuple]:
    """What was logged, as a reader of .learnings sees it: kind, summary, evidence (the lines that quote it)."""
    from kg.graph import reads

    out = []
    for e in reads.list_nodes(ws, type="event", limit=100000):
        details = ws.show(e["id"])["node"].get("details") or ""
        quoted = tuple(ln for ln in details.splitlines() if ln.startswith(("Evidence (", "Error:", "Tool call id:")))
        out.append((e["entry_type"], e["text"], quoted))
    return sorted(out)


def cuts(data: bytes, k: int) -> list[int]:
    """Where a growing file stands after each of `k` chunks of whole lines, the whole file last."""
    ends = [m.end() for m in re.finditer(rb"\n", data)]
    step = max(1, len(ends) // k)
    return sorted({*ends[step - 1::step], len(data)})


def grown(ws, src: Path, dest: Path, k: int, *, whole_each_time: bool = False) -> list[int]:
    """Reflect (--apply) after each chunk appended; the lines each run began reading at. `whole_each_time`: every
    run reads the whole file (its cursor as kg kept it before: the line and the head, no position to read on from)."""
    data = src.read_bytes()
    starts = []
    with dest.open("wb") as fh:
        done = 0
        for end in cuts(data, k):
            fh.write(data[done:end])
            fh.flush()
            done = end
            if whole_each_time:
                forget_positions(ws)
            starts.append(reflect_file(ws, str(dest), apply=True, end_session=False, now=NOW).read_from)
    return starts


def forget_positions(ws) -> None:
    f = ws.memory / ".kg" / rstate.FILE
    if f.exists():
        doc = json.loads(f.read_text(encoding="utf-8"))
        doc["cursors"] = {k: {"head": c["head"], "line": c["line"]} for k, c in doc["cursors"].items()}
        f.write_text(json.dumps(doc), encoding="utf-8")


def whole(ws, src: Path, dest: Path) -> int:
    """One reflection of the whole file; how many findings its caps left out."""
    dest.write_bytes(src.read_bytes())
    return reflect_file(ws, str(dest), apply=True, end_session=False, now=NOW).dropped_by_cap


def check_equivalent(src: Path, tmp_path: Path, request, k: int) -> list[int]:
    """Grown, the file logs what one reflection of it whole logs. Unless the caps (rules/reflect.toml
    max_per_kind ..., rules/errors.toml max_per_session) left findings out: they keep the highest priority of the
    session, so a finding logged while the file was short may be one the whole file's caps leave out, as when every
    run read the whole file. Then: what runs that each read the whole file log."""
    one, parts = fresh_workspace(tmp_path / "one", request), fresh_workspace(tmp_path / "parts", request)
    for d in "abc":
        (tmp_path / d).mkdir()
    dropped = whole(one, src, tmp_path / "a" / src.name)
    starts = grown(parts, src, tmp_path / "b" / src.name, k)
    if dropped:
        one = fresh_workspace(tmp_path / "each", request)
        grown(one, src, tmp_path / "c" / src.name, k, whole_each_time=True)
    assert entries(parts) == entries(one)
    return starts


@pytest.mark.slow
@pytest.mark.parametrize("src", REAL, ids=lambda p: p.name)
def test_a_growing_real_transcript_logs_what_the_whole_file_logs(src, tmp_path, request):
    starts = check_equivalent(src, tmp_path, request, 8)
    if not src.name.endswith(".gz"):
        assert max(starts) > 1  # the runs after the first read on from where the last one left off


@pytest.mark.slow
def test_every_specstory_chat_grown_logs_what_the_whole_file_logs(tmp_path, request):
    chats = [p for p in SPECSTORY if _reads(p)]  # (one of them is notes, not a chat: kg refuses it whole)
    assert len(chats) >= 50
    resumed = 0
    for i, src in enumerate(chats):
        starts = check_equivalent(src, tmp_path / str(i), request, 4)
        resumed += max(starts) > 1
    assert resumed >= len(chats) // 2


def _reads(path: Path) -> bool:
    try:
        read_transcript(path)
    except TranscriptError:
        return False
    return True


def test_codex_stops_after_each_turn_read_only_what_is_new(ws, tmp_path):
    """At each Stop the rollout ends with the agent's last message: the next Stop reads from there (with the few
    earlier lines the detectors need), and a read that resumed reads far less than the file."""
    data = CODEX.read_bytes()
    dest = tmp_path / CODEX.name
    stops = [m.end() + 1 for m in re.finditer(rb"^.*\"type\":\"task_complete\".*$", data, re.M)]
    assert len(stops) >= 2
    read = []
    for end in [*stops, len(data)]:
        dest.write_bytes(data[:end])
        rep = reflect_file(ws, str(dest), apply=True, end_session=False, now=NOW)
        cursor = rstate.read(ws).window_of(str(dest.resolve()))
        read.append((rep.read_from, cursor))
    assert read[-1][0] > 1
    c = read[-1][1]
    again = sum(b - a for a, b, _ in c["context"]) + (len(data) - c["at"])
    assert again < len(data) // 10, again


def _grow_then(ws, tmp_path, change) -> tuple[int, Path]:
    data = CODEX.read_bytes()
    dest = tmp_path / CODEX.name
    half = cuts(data, 2)[0]
    dest.write_bytes(data[:half])
    reflect_file(ws, str(dest), apply=True, end_session=False, now=NOW)
    change(dest, data, half)
    return reflect_file(ws, str(dest), apply=True, end_session=False, now=NOW).read_from, dest


def test_a_file_cut_short_is_read_whole_and_logs_what_it_holds(ws, tmp_path, request):
    quarter = cuts(CODEX.read_bytes(), 4)[0]
    read_from, dest = _grow_then(ws, tmp_path, lambda p, data, half: p.write_bytes(data[:quarter]))
    assert read_from == 1
    dest.write_bytes(CODEX.read_bytes())  # and grows again
    reflect_file(ws, str(dest), apply=True, end_session=False, now=NOW)
    one = fresh_workspace(tmp_path / "one", request)
    (tmp_path / "a").mkdir()
    whole(one, CODEX, tmp_path / "a" / CODEX.name)
    assert entries(ws) == entries(one)


@pytest.mark.parametrize("where", ["resumes", "context"])
def test_a_file_rewritten_under_the_cursor_is_read_whole(ws, tmp_path, where):
    """Same size or larger, same first line, but other bytes where the next read resumes or in a part it reads
    again: read whole."""
    def rewrite(p: Path, data: bytes, half: int) -> None:
        c = rstate.read(ws).window_of(str(p.resolve()))
        at = c["at"] if where == "resumes" else c["context"][-1][0]
        grown = bytearray(data)
        grown[at + 1] = ord("X") if grown[at + 1] != ord("X") else ord("Y")
        p.write_bytes(bytes(grown))

    assert _grow_then(ws, tmp_path, rewrite)[0] == 1


def test_a_file_with_another_first_line_is_read_whole(ws, tmp_path):
    def other_head(p: Path, data: bytes, half: int) -> None:
        first, rest = data.split(b"\n", 1)
        p.write_bytes(first.replace(b"session_meta", b"session_meta ", 1) + b"\n" + rest)

    assert _grow_then(ws, tmp_path, other_head)[0] == 1


def test_a_file_that_grew_reads_on_from_the_cursor(ws, tmp_path):
    assert _grow_then(ws, tmp_path, lambda p, data, half: p.write_bytes(data))[0] > 1


def test_a_state_file_from_before_reads_whole_and_then_on(ws, tmp_path, request):
    """A cursor that holds only the line and the head (kg before this) still keeps what was logged from being logged
    again; the read is whole, and the next one resumes."""
    def old_state(p: Path, data: bytes, half: int) -> None:
        forget_positions(ws)
        p.write_bytes(data)

    read_from, dest = _grow_then(ws, tmp_path, old_state)
    assert read_from == 1
    one = fresh_workspace(tmp_path / "one", request)
    (tmp_path / "a").mkdir()
    whole(one, CODEX, tmp_path / "a" / CODEX.name)
    assert entries(ws) == entries(one)
    with dest.open("ab") as fh:
        fh.write(b"\n")
    assert reflect_file(ws, str(dest), apply=True, end_session=False, now=NOW).read_from > 1


@pytest.mark.parametrize("dies_at", ["second entry", "state write"])
def test_a_run_that_dies_before_its_state_is_written_loses_nothing(ws, tmp_path, request, monkeypatch, dies_at):
    """The cursor moves on only with the state written after the entries: a run that dies in between (or while it
    logs) leaves it where it was, and the next run logs everything past it."""
    data = CODEX.read_bytes()
    dest = tmp_path / CODEX.name
    first = cuts(data, 4)[0]
    dest.write_bytes(data[:first])
    assert reflect_file(ws, str(dest), apply=True, end_session=False, now=NOW).logged == []
    dest.write_bytes(data)
    log = ws.log
    logged = []

    def dies(*a, **k):
        if dies_at == "state write" or logged:
            raise OSError("killed")
        logged.append(log(*a, **k))
        return logged[-1]

    with monkeypatch.context() as m:
        if dies_at == "state write":
            m.setattr(rstate, "write_atomic", dies)
        else:
            m.setattr(ws, "log", dies)
        with pytest.raises(OSError):
            reflect_file(ws, str(dest), apply=True, end_session=False, now=NOW)
    reflect_file(ws, str(dest), apply=True, end_session=False, now=NOW)
    one = fresh_workspace(tmp_path / "one", request)
    (tmp_path / "a").mkdir()
    whole(one, CODEX, tmp_path / "a" / CODEX.name)
    assert len(entries(one)) >= 2 and set(entries(one)) <= set(entries(ws))


def test_a_summary_after_a_read_that_resumed_tells_the_whole_session(ws, tmp_path, request):
    """The session summary a reflection writes when it first logs something counts what the whole transcript holds
    (its turns, its findings), also when that reflection read on from where an earlier one (which logged nothing)
    left off."""
    data = CODEX.read_bytes()
    dest = tmp_path / CODEX.name
    dest.write_bytes(data[:cuts(data, 8)[0]])
    assert reflect_file(ws, str(dest), apply=True, now=NOW).logged == []
    dest.write_bytes(data)
    grown_rep = reflect_file(ws, str(dest), apply=True, now=NOW)
    assert grown_rep.read_from > 1 and grown_rep.summary_file
    one = fresh_workspace(tmp_path / "one", request)
    (tmp_path / "a").mkdir()
    dest_one = tmp_path / "a" / CODEX.name
    dest_one.write_bytes(data)
    one_rep = reflect_file(one, str(dest_one), apply=True, now=NOW)
    assert one_rep.summary_file == grown_rep.summary_file
    mine, theirs = ((w.root / r.summary_file).read_text(encoding="utf-8").replace(str(d), "T")
                    for w, r, d in ((ws, grown_rep, dest), (one, one_rep, dest_one)))
    assert f"{one_rep.turns} turns)" in theirs
    assert mine == theirs


@pytest.mark.skipif(not CODEX.is_file(), reason="needs /work/shared/data/runtimes")
@pytest.mark.parametrize("lines", [269, 270, 271, 273])
def test_a_poll_of_a_command_started_before_the_cursor_is_that_commands_failure(ws, run_kg, tmp_path, lines):
    """QA: the Codex Stop hook reflected this rollout at line 273, then whole: the read that resumed at 269 began
    after the command's "Process running with session ID 83395", so the poll (write_stdin) that brought its exit
    was a call of its own, and the one npm test failure was logged twice (ERR-002, then "write_stdin failed")."""
    text = CODEX.read_text(encoding="utf-8")
    dest = tmp_path / CODEX.name
    dest.write_text("".join(text.splitlines(keepends=True)[:lines]), encoding="utf-8")
    for _ in range(2):
        r = run_kg(["--now", NOW, "reflect", str(dest), "--apply"])
        assert r.exit_code == 0, r.stderr
        dest.write_text(text, encoding="utf-8")
    logged = [e[1] for e in entries(ws) if e[0] == "error"]
    assert not [s for s in logged if s.startswith("write_stdin failed")], logged
    assert len(logged) == 2, logged
