"""The learning loop decides the same whatever Python's hash order, and in one process or many ("no LLM,
deterministic"), through the real CLI in subprocesses under several PYTHONHASHSEED values:

- a rule a conflict set aside and let back is resumed by the next cycle, its check moved on by the days it was
  out, and not also taken out for a check at the deadline it had before (one in-process `kg cycle` did both: the
  pause's row, made anew, read back in the same Kùzu transaction as it was before: `Lifecycle.sync`);
- the cycle and `kg status` say such a rule was let back, not "edited by hand";
- two whole replays of the demo's history write the same files and answer `kg verify` and `kg status` alike, and
  its trail imported under two seeds says the same (`kg import trail --json` listed its lifecycle counts in a set's
  order)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ALWAYS, NEVER = "always use pnpm in this repository", "never use pnpm in CI scripts"


def _log(key: str, action: str, day: int, session: str) -> list[str]:
    return ["log", "learning", f"said: {action}", "--category", "principle", "--pattern-key", key, "--action", action,
            "--session", session, "--now", f"2026-09-{day:02d}T10:00"]


# 'always' recurs once more: it wins on 09-05 and 'never' is set aside; 'never' recurs: it wins on 09-06 and is
# let back (written back, its pause closed by the next cycle); on 10-20 both score 70, a tie kg keeps 'never' in
HISTORY = [step for day in (1, 2, 3, 4) for step in
           ([_log("a.pnpm", ALWAYS, day, f"s{day}")] + ([_log("b.nopnpm", NEVER, day, f"s{day}")] if day < 4 else []))]
HISTORY += [["cycle", "--now", "2026-09-05T08:00"], _log("b.nopnpm", NEVER, 5, "s5"),
            ["cycle", "--now", "2026-09-06T08:00"]]
LAST = ["cycle", "--now", "2026-10-20T08:00", "--json"]

# Runs the steps in one process (CliRunner, as the suite's run_kg does): argv[1] the workspace, argv[2] the steps.
DRIVER = """
import json, sys
from typer.testing import CliRunner
import kg
from kg.cli.app import app
root, steps = sys.argv[1], json.loads(sys.argv[2])
kg.init_workspace(root)
with open(root + "/kg.toml", "a") as f:
    f.write("\\n[rules.lifecycle.verification]\\nmin_baseline_days = 0\\n")
runner = CliRunner()
for argv in steps:
    res = runner.invoke(app, ["-w", root, *argv])
    if res.exit_code:
        sys.exit(f"{argv}: exit {res.exit_code}: {res.stderr} {res.exception!r}")
print(res.stdout)
"""


def _env(seed: int) -> dict[str, str]:
    keep = ("KG_STORE", "KG_STORE_PASSWORD")  # the FalkorDB pass: a graph of its own per workspace folder
    return {k: v for k, v in os.environ.items() if not k.startswith("KG_") or k in keep} | {
        "KG_SERVER": "0", "PYTHONHASHSEED": str(seed)}


def _run(args: list[str], seed: int) -> str:
    r = subprocess.run(args, capture_output=True, text=True, env=_env(seed), timeout=600)
    assert r.returncode == 0, (args[:4], r.stdout[-2000:], r.stderr[-2000:])
    return r.stdout


def _kg(root: Path, args: list[str], seed: int) -> str:
    return _run([str(Path(sys.executable).with_name("kg")), "-w", str(root), *args], seed)


def _decided(out: str) -> dict:
    d = json.loads(out)
    return {k: d[k] for k in ("verified", "checks", "withdrawn", "reverted", "conflicts", "promoted", "files")}


def test_a_rule_a_conflict_let_back_is_resumed_not_checked_under_every_hash_seed(tmp_path):
    seen = {}
    for seed, apart in ((0, False), (1, False), (2, False), (3, True)):  # 3: the last cycle a process of its own
        root = tmp_path / f"ws{seed}"
        steps = HISTORY if apart else [*HISTORY, LAST]
        out = _run([sys.executable, "-c", DRIVER, str(root), json.dumps(steps)], seed)
        if apart:
            out = _kg(root, LAST, seed)
        seen[seed] = _decided(out)
    first = seen[0]
    assert all(d == first for d in seen.values()), {s: d["checks"] for s, d in seen.items()}
    # which is right: 'never' was out of MEMORY.md from 09-05 until the 09-06 cycle wrote it back and resumed it
    # (the next test), so its first check (09-12, 7 days after it was applied: verification.first_check_days) moved
    # on by that day to 09-13: overdue on 10-20, it is judged once, and not resumed again (before: its pause closed
    # only now, 45 days counted as out, and no check)
    (v,) = first["verified"]
    assert v["change"] == "chg-20260905-002" and v["stats"]["withdrawn"] == [
        ["2026-09-05T08:00:00", "2026-09-06T08:00:00"]], v
    by_change = {w["change"]: w for w in first["withdrawn"]}
    assert "chg-20260905-002" not in by_change, first["withdrawn"]
    # 'never' out for its check, no live rule contradicts 'always': let back and resumed in the cycle that writes it
    always = by_change["chg-20260905-001"]
    assert (always["action"], always["how"], always["since"]) == ("resumed", "let back", "2026-09-06T08:00:00")
    assert always["next_check"] == "2026-10-26T08:00:00" and first["conflicts"] == [], first


@pytest.mark.baseline_wait_off("two contradicting principles promoted in the first days of a workspace")
def test_a_rule_a_conflict_lets_back_is_said_let_back_not_edited_by_hand(run_kg, ws):
    for argv in HISTORY[:-1]:  # up to the cycle that lets 'never' back
        assert run_kg(argv).exit_code == 0
    r = run_kg(["cycle", "--now", "2026-09-06T08:00"])
    assert r.exit_code == 0, r.stderr
    (line,) = [x for x in r.stdout.splitlines() if "chg-20260905-002" in x]
    assert "let back: no conflict keeps it out now, kg wrote it back, verification resumed (next check 2026-09-13)" \
        in line, r.stdout
    assert "edited by hand" not in r.stdout, r.stdout
    assert f"- {NEVER}" in (ws.root / "MEMORY.md").read_text().splitlines()
    r = run_kg(["status", "--json", "--now", "2026-09-06T09:00"])
    paused = {v["change"]: v["how"] for v in r.json["lifecycle"]["verifications_paused"]}
    assert paused == {"chg-20260905-001": "aside"}, paused  # (before: 'never' paused "let back" until the next cycle)
    text = run_kg(["status", "--now", "2026-09-06T09:00"]).stdout
    assert "[chg-20260905-002]" not in text and "edited by hand" not in text, text
    assert "Verifications paused: the rule is not in its file" not in text, text  # nothing of a person's to undo
    # the next cycle has nothing left to resume
    r = run_kg(["cycle", "--now", "2026-09-07T08:00", "--json"])
    assert [w for w in r.json["withdrawn"] if w["change"] == "chg-20260905-002"] == [], r.json["withdrawn"]


DEMO_FILES = ("MEMORY.md", "AGENTS.md", "TOOLS.md", "SOUL.md", "USER.md")


def test_two_replays_of_the_demo_under_two_hash_seeds_write_the_same_bytes_and_answers(tmp_path):
    from datetime import timedelta

    from kg.demo import end_of_story

    at = (end_of_story() + timedelta(hours=1)).isoformat()
    made = {}
    for seed in (1, 2):
        root = tmp_path / f"demo{seed}"
        _run([str(Path(sys.executable).with_name("kg")), "demo", str(root)], seed)
        files = {name: (root / name).read_bytes() if (root / name).exists() else None for name in DEMO_FILES}
        files |= {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "memory").rglob("*"))
                  if p.is_file() and ".kg" not in p.relative_to(root).parts}
        answers = [_kg(root, args, seed).replace(str(root), "<ws>") for args in
                   (["verify", "--dry-run", "--json", "--now", at], ["status", "--json", "--now", at])]
        # and the same trail imported into an empty workspace (its lifecycle too): the same --json, byte for byte
        trail = tmp_path / "demo1" / "trail.json"
        if seed == 1:
            _kg(root, ["export", "trail", "--out", str(trail)], seed)
        empty = tmp_path / f"empty{seed}"
        _run([str(Path(sys.executable).with_name("kg")), "init", str(empty)], seed)
        answers.append(_kg(empty, ["import", "trail", str(trail), "--json"], seed).replace(str(empty), "<ws>"))
        said = [json.loads(a) for a in answers[:2]]
        said[1].pop("team", None)  # (the FalkorDB pass: it names this member's folder and graph, demo1 or demo2)
        made[seed] = files, said + answers[2:]
    (files_1, answers_1), (files_2, answers_2) = made[1], made[2]
    assert files_1["MEMORY.md"] and files_1["TOOLS.md"], sorted(files_1)  # the demo writes rules into both
    assert sorted(files_1) == sorted(files_2)
    assert [k for k in files_1 if files_1[k] != files_2[k]] == []
    for a, b in zip(answers_1, answers_2, strict=True):
        if isinstance(a, dict):
            assert {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)} == {}
    assert answers_1 == answers_2
    assert answers_1[0]["monitoring"], answers_1[0]  # the demo's rules are there to compare
