"""A fresh held-out set of aider user turns (tests/data/heldout_aider_p15.jsonl), chosen by a fixed rule and
labelled by hand before any detector change of that landing; scored once, at the end, this tree beside another.

    .venv/bin/python bench/reflect_heldout.py --show               # the turns to label, with the agent's turn before
    .venv/bin/python bench/reflect_heldout.py --score --baseline /work/main    # once, at the end of a piece of work

The rule (fixed before anyone read a turn): in runtimes/aider/aider-ai_aider/chat-history.part1.md (497 sessions),
walk the sessions of the second half (index >= 248) in file order, skip any session holding a turn labelled in
tests/data/other_user_turns.jsonl, keep every user turn of each session kept, and stop after the session in which the
kept turns that are not slash commands reach 150. Slash commands are labelled too (nothing to learn, as the guide
says of commands). The labels follow $KG_SHARED_DATA/labels/README.md. These turns are never trained on
(bench/reflect_train.py reads other_user_turns.jsonl only), and --show runs no detector.

What the rule gave (labelled 2026-12-03 before any detector change, by one annotator): 329 user turns of 126 sessions,
most of them slash commands, "hi", aider's own /help question turns and bare first requests; 8 corrections (a request
said again after /undo or a failed fix, "no, this happens even on ...", "i don't want to modify the config", an
instruction to write the just-written code another way) and 1 knowledge gap. Judgement calls, kept the same way
throughout: a session's first turn is not a correction (the agent of that session did nothing yet), even when it
asks to change code an earlier session wrote; a pasted error without words is not one; a request split after /clear
without /undo is not one. The share of corrections (8 of 329) is far below the other sets': recall rests on 8 turns,
precision on the 321 turns with nothing to learn.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import reflect_train as rt

REPO = Path(__file__).resolve().parents[1]
FILE = "runtimes/aider/aider-ai_aider/chat-history.part1.md"
LABELS = REPO / "tests" / "data" / "heldout_aider_p15.jsonl"
OTHER = REPO / "tests" / "data" / "other_user_turns.jsonl"
FIRST_SESSION = 248
TARGET = 150
CLASSES = ("correction", "preference", "knowledge_gap", "feature_request", "positive")
CATEGORY = {"correction": "correction", "preference": "preference", "knowledge_gap": "knowledge_gap",
            "feature_request": "feature", "positive": "best_practice"}


def held_out_turns() -> set[tuple[str, int]]:
    """(file under shared data, turn index as this tree's reader counts turns) of every held-out turn: the
    development benches leave them out of what they print (bench/reflect_lessons.py, reflect_keys.py), so nobody
    reads the detector's findings on them before the final score. A label names its turn by its first line in the
    file (`line`), which no change of a reader moves."""
    from kg.reflect import read_transcript

    if not LABELS.exists():
        return set()
    lines = {lab["line"] for lab in map(json.loads, LABELS.read_text(encoding="utf-8").splitlines())}
    t = read_transcript(rt.shared_data() / FILE)
    return {(FILE, u.index) for u in t.turns if u.role == "user" and u.line in lines}


def chosen(data: Path) -> list[tuple[int, object, object]]:
    """(session index, user turn, the turn before it) for every turn the rule keeps; no detector runs."""
    from kg.reflect import read_transcript

    path = data / FILE
    starts = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
              if re.match(r"# aider chat started at ", line)]
    t = read_transcript(path)
    # the labelled turns as bench/reflect_quality.py finds them: at their index when the text is there, else the
    # first user turn with the same text (the indexes came from an older reader that counted turns differently)
    texts = {u.index: " ".join(u.text.split())[:120] for u in t.turns if u.role == "user"}
    taken = set()
    for lab in (json.loads(x) for x in OTHER.read_text(encoding="utf-8").splitlines() if x.strip()):
        if lab["file"] == FILE:
            taken.add(lab["turn"] if texts.get(lab["turn"]) == lab["text"] else next(
                (i for i, x in texts.items() if x == lab["text"]), -1))

    def session(turn) -> int:
        return sum(1 for s in starts if s <= turn.line) - 1

    by_session: dict[int, list[int]] = {}
    for i, turn in enumerate(t.turns):
        by_session.setdefault(session(turn), []).append(i)
    out: list[tuple[int, object, object]] = []
    speaking = 0
    for s in sorted(by_session):
        if s < FIRST_SESSION or taken & set(by_session[s]):
            continue
        for i in by_session[s]:
            if t.turns[i].role == "user":
                before = next((t.turns[j] for j in range(i - 1, -1, -1) if t.turns[j].role != "user"), None)
                out.append((s, t.turns[i], before))
                speaking += not t.turns[i].text.lstrip().startswith("/")
        if speaking >= TARGET:
            break
    return out


def show(data: Path) -> None:
    for s, turn, before in chosen(data):
        print(f"=== session {s} turn {turn.index} (line {turn.line})")
        if before is not None:
            print(f"--- before ({before.role}): {before.text[-600:]}")
        print(f"+++ user: {turn.text[:1500]}")


def score_tree(tree: Path, data: Path) -> dict[str, tuple[int, int, int]]:
    """Run the tree's own detector (its venv, its rules) on the file; count against the labels."""
    code = (  # findings by the first line of their user turn: trees whose readers count turns differently agree
        "import json,sys\n"
        "from kg.reflect import default_rules, read_transcript\n"
        "from kg.reflect.detect import learnings\n"
        f"t = read_transcript({str(data / FILE)!r})\n"
        "out = {}\n"
        "for f in learnings(t, default_rules()):\n"
        "    out.setdefault(t.turns[f.turn].line, []).append(f.category)\n"
        "print(json.dumps(out))\n")
    res = subprocess.run([str(tree / ".venv" / "bin" / "python"), "-c", code], capture_output=True, text=True,
                         cwd=tree, check=True)
    found = {int(k): set(v) for k, v in json.loads(res.stdout).items()}
    labels = [json.loads(x) for x in LABELS.read_text(encoding="utf-8").splitlines() if x.strip()]
    counts = {}
    for cls in [*CLASSES, "anything"]:
        tp = fp = fn = 0
        for lab in labels:
            got = found.get(lab["line"], set())
            a = bool(lab["labels"]) if cls == "anything" else cls in lab["labels"]
            b = bool(got) if cls == "anything" else CATEGORY[cls] in got
            tp, fp, fn = tp + (a and b), fp + (b and not a), fn + (a and not b)
        counts[cls] = (tp, fp, fn)
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true", help="print the chosen turns to label (no detector runs)")
    ap.add_argument("--score", action="store_true", help="score this tree and --baseline on the labels (read once)")
    ap.add_argument("--baseline", type=Path, default=REPO.parent / "main")
    args = ap.parse_args()
    data = rt.shared_data()
    if args.show:
        show(data)
    if args.score:
        labels = [json.loads(x) for x in LABELS.read_text(encoding="utf-8").splitlines() if x.strip()]
        print(f"held out (new): {len(labels)} aider turns, {FILE}; gold " + ", ".join(
            f"{c} {sum(c in lab['labels'] for lab in labels)}" for c in CLASSES))
        trees = [("this", REPO)] + ([("baseline", args.baseline)] if str(args.baseline) else [])
        results = {name: score_tree(tree, data) for name, tree in trees}
        print(f"  {'class':16} " + " ".join(f"{name + ' P / R / F1 (tp fp fn)':>34}" for name, _ in trees))
        for cls in [*CLASSES, "anything"]:
            cells = []
            for name, _ in trees:
                tp, fp, fn = results[name][cls]
                p, r, f = rt.prf(tp, fp, fn)
                cells.append(f"{p:.2f} / {r:.2f} / {f:.2f} ({tp} {fp} {fn})".rjust(34))
            print(f"  {cls:16} " + " ".join(cells))
    if not (args.show or args.score):
        sys.exit("say --show or --score")


if __name__ == "__main__":
    main()
