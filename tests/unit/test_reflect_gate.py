"""The redaction gate `kg reflect` puts before detection (kg.reflect.apply.gated): every text detection and the
failure finder read is redacted; a tool result its runtime marked as not failed, which nothing reads for its words,
is emptied instead of scanned. Real transcripts from /work/shared/data."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from kg.core.policy import packaged
from kg.redaction.redact import load_default
from kg.reflect import default_rules, read_transcript
from kg.reflect import failures as fl
from kg.reflect.apply import gated
from kg.reflect.detect import reflect

SECRET = "ghp_" + "A1b2C3d4E5" * 4  # a GitHub token shape the shipped rules redact


class Counting:
    """The real redactor, counting the characters it is asked to scan."""

    def __init__(self) -> None:
        self.inner = load_default()
        self.chars = 0

    def redact(self, text: str):
        self.chars += len(text)
        return self.inner.redact(text)

    def redact_group(self, texts):
        self.chars += sum(map(len, texts))
        return self.inner.redact_group(texts)


def _full(transcript, redactor):
    """The gate as it was: every text and input of every turn redacted."""
    return replace(transcript, turns=tuple(
        replace(t, text=redactor.redact(t.text).text,
                tool_input=redactor.redact(t.tool_input).text if t.tool_input else t.tool_input)
        for t in transcript.turns))


def _transcripts(shared_data: Path) -> list[Path]:
    runtimes = shared_data / "runtimes"
    return [*sorted((shared_data / "transcripts" / "claude_code").glob("*.json*")),
            *sorted((runtimes / "codex" / "transcripts").glob("*.jsonl")),
            *sorted((runtimes / "claude_code" / "transcripts").glob("*.jsonl")),
            runtimes / "aider" / "aquaticat_monochromatic" / ".aider.chat.history.md"]


def _found(transcript) -> str:
    rules, frules = default_rules(), fl.load_rules(packaged("errors"))
    said = reflect(transcript, rules, redact=lambda s: s)
    failed = fl.failures(transcript, frules)
    return json.dumps([[asdict(f) for f in said.findings], [asdict(f) for f in failed.found]], default=str)


def test_the_gate_finds_what_redacting_everything_finds_and_scans_a_fraction(shared_data):
    paths = _transcripts(shared_data)
    assert len(paths) >= 8
    scanned = whole = 0
    for path in paths:
        t = read_transcript(path)
        full, lean = Counting(), Counting()
        assert _found(gated(t, lean)) == _found(_full(t, full)), path.name
        scanned, whole = scanned + lean.chars, whole + full.chars
    # most of a transcript's bytes are tool output the runtime marked as not failed: not scanned
    assert scanned < 0.5 * whole, (scanned, whole)


@pytest.mark.parametrize("is_error", [False, True, None])
def test_no_unredacted_text_survives_the_gate(is_error):
    from kg.reflect.parse import Transcript, Turn

    turns = (Turn(0, "user", "deploy it"), Turn(1, "assistant", "", tool_name="Bash", tool_input=f"TOKEN={SECRET} ./d",
                                                call_id="c1"),
             Turn(2, "tool", f"printed {SECRET}", tool_name="Bash", tool_input=f"TOKEN={SECRET} ./d", call_id="c1",
                  is_error=is_error),
             Turn(3, "assistant", "Deployed."), Turn(4, "tool", f"more {SECRET}", is_error=is_error),
             Turn(5, "user", f"no, use {SECRET} only in CI"))
    out = gated(Transcript("claude-code", turns), load_default())
    assert SECRET not in json.dumps([asdict(t) for t in out.turns])
    if is_error is False:  # read by nothing for its words: emptied; the turn right before the user is kept, redacted
        assert out.turns[2].text == "" and out.turns[4].text.startswith("more [REDACTED")
    else:  # a failed (or unflagged) result is read by the failure finder: redacted, not emptied
        assert out.turns[2].text.startswith("printed [REDACTED")


def test_a_secret_said_once_is_redacted_where_the_session_repeats_it():
    """(note 48) The user gave a password once, redacted there; the agent's failing command after it held the same
    password under no label (`./seed_admin.sh --user admin 'Rp7…'`) and kept it whole: each turn was redacted
    alone. The whole session is one group now: the secret found in one turn is redacted in every turn, before it
    too."""
    from kg.reflect.parse import Transcript, Turn

    pw = "Rp7Lm2Qx9Vz4"
    turns = (Turn(0, "assistant", "", tool_name="Bash", tool_input=f"./check.sh '{pw}'", call_id="c0"),
             Turn(1, "tool", f"check failed for '{pw}'", tool_name="Bash", tool_input=f"./check.sh '{pw}'",
                  call_id="c0", is_error=True),
             Turn(2, "user", f"the admin password is {pw}, seed the admin with it"),
             Turn(3, "assistant", "", tool_name="Bash", tool_input=f"./seed_admin.sh --user admin '{pw}'",
                  call_id="c1"),
             Turn(4, "tool", "seed failed: exit 1", tool_name="Bash", tool_input=f"./seed_admin.sh --user admin '{pw}'",
                  call_id="c1", is_error=True))
    out = gated(Transcript("claude-code", turns), load_default())
    assert pw not in json.dumps([asdict(t) for t in out.turns])
    assert out.turns[3].tool_input.startswith("./seed_admin.sh --user admin '[REDACTED:")
