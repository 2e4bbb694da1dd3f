"""Near-duplicate attach through the real CLI (QA4 #10): two releases' facts are two facts, a chain of pairwise-alike
entries is no one pattern, and what the loop's intake must keep as one recurrence stays one: a failure logged with
an "Error:" label and without, a note with a "Note:" label and without (the speaker rule of an earlier attempt read
those labels as speakers and split them), and one push failure struck on two branches."""

from __future__ import annotations

import json

import pytest


def _log(run_kg, kind: str, texts: list[str]) -> list[str]:
    ids = []
    for day, text in enumerate(texts, 1):
        done = run_kg(["log", kind, text, "--now", f"2026-05-0{day}T10:00", "--json"])
        assert done.exit_code == 0, done.stderr
        ids.append(done.json["id"])
    return ids


def _patterns(run_kg) -> list[set[str]]:
    """Each pattern's member ids."""
    out = []
    for p in run_kg("patterns --json --limit 0").json:
        shown = run_kg(["patterns", "show", p["key"], "--json"])
        assert shown.exit_code == 0, shown.stderr
        out.append({m["id"] for m in shown.json["members"]})
    return out


@pytest.mark.parametrize(("kind", "texts"), [
    ("error", ["Error: connection refused by postgres on port 5432",
               "connection refused by postgres on port 5432 during migrate"]),
    ("learning", ["Note: run migrations before tests", "run migrations on the test database before tests"]),
    ("error", ["git push failed: no upstream for branch feature-3",
               "git push failed: no upstream for branch feature-7"]),
])
def test_one_recurrence_stays_one_pattern(run_kg, kind, texts):
    ids = _log(run_kg, kind, texts)
    assert _patterns(run_kg) == [set(ids)]


@pytest.mark.parametrize("texts", [
    ["deploy release-1.2 broke login", "deploy release-1.3 fixed login"],
    ["upgrade to lib v2.4.1 breaks auth", "upgrade to lib v2.4.0 is fine for auth"],
])
def test_two_versions_facts_are_two_facts(run_kg, texts):
    _log(run_kg, "learning", texts)
    assert _patterns(run_kg) == []


def test_the_same_version_again_is_one_pattern(run_kg):
    ids = _log(run_kg, "learning", ["deploy release-1.2 broke login", "deploy release-1.2 broke the login page"])
    assert _patterns(run_kg) == [set(ids)]


CHAIN = ["the staging deploy failed: disk full on the runner",
         "staging deploy failed, runner cache cleaned and rebuilt",
         "cleaned the runner cache and rebuilt it"]


def test_a_chain_of_alike_pairs_is_not_one_pattern(run_kg):
    # each entry is near the one before it, the third not near the first: it does not join the pattern the
    # first two made
    ids = _log(run_kg, "learning", CHAIN)
    assert _patterns(run_kg) == [set(ids[:2])]


def test_a_batch_chain_is_not_one_pattern(run_kg, tmp_path):
    # in one batch (a conversation imported with `kg ingest --thread`), the same
    lines = tmp_path / "chat.jsonl"
    lines.write_text("\n".join(json.dumps({"kind": "learning", "summary": s, "at": f"2026-06-0{i}T10:00:00",
                                           "source": "conversation"}) for i, s in enumerate(CHAIN, 1)) + "\n",
                     encoding="utf-8")
    done = run_kg(f"ingest {lines} --thread --json")
    assert done.exit_code == 0, done.stderr
    assert _patterns(run_kg) == [set(done.json["ids"][:2])]


def test_a_conversation_imported_as_memory_chains_no_small_talk(run_kg, shared_data, tmp_path):
    """LoCoMo conversation 0 through `kg ingest --thread` (QA4 #10): its greetings and thanks chained into a pattern
    of 24 turns, each near one other member, and `kg cycle` would promote two into MEMORY.md. Now a pattern takes
    only near-duplicates of its first turn, and the cycle promotes none of them."""
    from datetime import datetime, timedelta

    conv = json.loads((shared_data / "locomo" / "locomo_dev.json").read_text(encoding="utf-8"))[0]["conversation"]
    numbers = sorted(int(k.split("_")[1]) for k in conv if k.startswith("session_") and not k.endswith("date_time"))
    lines, last = [], None
    for n in numbers:
        last = datetime.strptime(conv[f"session_{n}_date_time"].strip(), "%I:%M %p on %d %B, %Y")
        lines += [json.dumps({"kind": "learning", "summary": f"{t['speaker']}: {t['text']}", "session": f"c0-s{n}",
                              "at": (last + timedelta(seconds=30 * j)).isoformat(), "source": "conversation"})
                  for j, t in enumerate(conv[f"session_{n}"])]
    path = tmp_path / "c0.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run_kg(f"ingest {path} --thread")
    assert done.exit_code == 0, done.stderr
    sizes = sorted((p["recurrence"] for p in run_kg("patterns --json --limit 0").json), reverse=True)
    assert sizes and sizes[0] <= 10, sizes  # main: 24, 10 and 9 turns of greetings and thanks
    cycle = run_kg(["cycle", "--dry-run", "--now", (last + timedelta(days=1)).isoformat(timespec="minutes"), "--json"])
    assert cycle.exit_code == 0, cycle.stderr
    assert cycle.json["promoted"] == []
