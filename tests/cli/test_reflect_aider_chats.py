"""An aider history appends every chat to one file, and each chat is its own session: the caps per session (10 per
kind, 25 in all: rules/reflect.toml) were applied to the whole file, and one chat's finding merged with another's
recurrence. QA: aider's own history (part 1) logged 10 learnings and dropped 21 findings; reflected chat by chat
it logs 27. Now each chat is deduplicated and capped on its own."""

from __future__ import annotations

from collections import Counter


def test_each_aider_chat_is_capped_on_its_own(ws, run_kg, shared_data):
    history = shared_data / "runtimes" / "aider" / "aider-ai_aider" / "chat-history.part1.md"
    r = run_kg(["reflect", str(history), "--json"])
    assert r.exit_code == 0, r.stderr
    found = r.json["findings"]
    per_session = Counter(f["session"] for f in found)
    per_kind = Counter((f["session"], f["kind"]) for f in found)
    assert len(per_session) > 10 and max(per_session.values()) <= 25 and max(per_kind.values()) <= 10
    learnings = [f for f in found if f["kind"] == "learning"]
    assert len(learnings) > 10, len(learnings)  # the whole file's cap held it to 10
    assert r.json["dropped_by_cap"] < 21
