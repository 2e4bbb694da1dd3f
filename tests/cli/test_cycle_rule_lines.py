"""Every line kg writes into an instruction file is its rule's text, however many rules the file holds already.

QA5 (find-only): a `kg cycle` promoting a rule into a file that held two or more of kg's rules wrote the new line
cut short ("- Always restart the worker after c") or another rule's twice: the cycle read the live changes
(`lc_live_changes`) in the transaction that made the new one, and kuzu 0.11.3 read that row through the pushed
status filter as another's (tests/integration/test_filter_in_transaction.py); `kg export memory --dry-run` then
said "update", and the cycle run again wrote the file right. Through the real CLI, per target file (MEMORY.md,
TOOLS.md written at once; AGENTS.md through `kg approve`): rules of different lengths, the longer first or last,
a few per cycle over several cycles; after each cycle every line in kg's block is exactly one rule's text, the
same cycle again writes nothing, `kg export memory --dry-run` has nothing to update, and the cycle's dry run
renders the same lines the cycle then writes."""

from __future__ import annotations

import pytest

from kg.lifecycle import blocks
from kg.lifecycle.cycle import Lifecycle

pytestmark = pytest.mark.baseline_wait_off

SHORT = ["Back up the DB before a migration", "Pin dependency versions in the lockfile",
         "Always restart the worker after config edits"]
MANY = ["Run the linter before every commit", "Keep secrets out of the repository history at all times",
        "Use UTC in every stored timestamp", "Write a failing test first, then fix the code it exercises",
        "Prefer small pull requests", "Never force-push to a shared branch without telling the team first",
        "Read the migration notes", "Rebuild the search index after changing its analyzers or tokenizers"]
TARGETS = {"MEMORY.md": ("principle", "learning"), "TOOLS.md": ("tool_gotcha", "learning"),
           "AGENTS.md": ("workflow", "learning")}


def _plans(monkeypatch: pytest.MonkeyPatch) -> list:
    """What each cycle's export planned (the real method, its result kept: a dry run writes no file to read)."""
    seen: list = []
    real = Lifecycle.export

    def export(self, **kw):
        plans = real(self, **kw)
        seen.append((self.dry_run, plans))
        return plans

    monkeypatch.setattr(Lifecycle, "export", export)
    return seen


def _lines(text: str | None) -> list[str]:
    return [line[2:] for line in (text or "").splitlines() if line.startswith("- ")]


def _cycle(run_kg, ws, target: str, batch: list[str], first: int, day: int, seen: list) -> None:
    category, kind = TARGETS[target]
    for n, text in enumerate(batch, first):
        for s in (1, 2, 3):
            res = run_kg(["log", kind, text, "--category", category, "--pattern-key", f"rule.r{n:02d}",
                          "--session", f"b{day}s{s}", "--now", f"2026-11-{day - 4 + s:02d}T{10 + n % 10:02d}:00"])
            assert res.exit_code == 0, res.stderr
    now = f"2026-11-{day:02d}T08:00"
    seen.clear()
    dry = run_kg(["cycle", "--dry-run", "--now", now, "--json"])
    assert dry.exit_code == 0, dry.stderr
    res = run_kg(["cycle", "--now", now, "--json"])
    assert res.exit_code == 0, res.stderr
    if target == "AGENTS.md":  # a workflow rule waits for a human: approve this cycle's proposals
        for p in res.json["proposed"]:
            ok = run_kg(["approve", str(p["number"]), "--now", f"2026-11-{day:02d}T09:00"])
            assert ok.exit_code == 0, ok.stderr + ok.stdout
    else:
        assert sorted(p["text"] for p in res.json["promoted"]) == sorted(batch)
        assert [p["text"] for p in dry.json["promoted"]] == [p["text"] for p in res.json["promoted"]]
        (_, dry_plans), (_, real_plans) = seen[0], seen[1]
        rendered = lambda plans: {p.path: _lines(p.text) for p in plans if p.path == target}  # noqa: E731
        assert rendered(dry_plans) == rendered(real_plans)


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("rules, batches", [
    (SHORT, [2, 1]),  # QA5's repro: two rules, then a third
    (sorted(SHORT, key=len, reverse=True), [2, 1]),  # the longer ones first
    (MANY, [2, 2, 2, 2]),  # eight in one file over four cycles
], ids=["three", "longer-first", "eight"])
def test_each_line_is_its_rules_text_and_a_second_cycle_writes_nothing(ws, run_kg, monkeypatch, target, rules,
                                                                       batches):
    seen = _plans(monkeypatch)
    done: list[str] = []
    first, day = 1, 5
    for size in batches:
        batch = rules[first - 1:first - 1 + size]
        _cycle(run_kg, ws, target, batch, first, day, seen)
        done += batch
        text = (ws.root / target).read_text(encoding="utf-8")
        lines = _lines(blocks.inner_of(text, "kaizen-kg"))
        assert sorted(lines) == sorted(done), text  # each line exactly one rule's text, none twice, none missing
        again = run_kg(["cycle", "--now", f"2026-11-{day:02d}T08:00", "--json"])
        assert again.exit_code == 0, again.stderr
        assert again.json["files"] == [] and again.json["promoted"] == []
        assert (ws.root / target).read_text(encoding="utf-8") == text
        check = run_kg(["export", "memory", "--dry-run", "--now", f"2026-11-{day:02d}T09:30", "--json"])
        assert check.exit_code == 0, check.stderr
        assert [f for f in check.json["files"] if f["action"] != "none"] == [], check.stdout
        first, day = first + size, day + 1
