"""Do pattern keys recur with their lesson? `kg reflect`'s findings on every session in shared/data, grouped by key.

    .venv/bin/python bench/reflect_keys.py            # summary and every key seen in two or more sessions
    .venv/bin/python bench/reflect_keys.py --all      # and every key

A key should name one lesson: the same lesson in two sessions gets the same key (a key in two or more sessions is
a recurrence kg can count), and two different lessons get different keys. The second is checked by the lessons'
word overlap under one key (rapidfuzz token_set_ratio below SAME): a key whose lessons do not overlap is a likely
collision. The first by splits: lessons worded (nearly) alike (token_sort_ratio at or over ALIKE, joined
transitively) that got more than one key, or a key and none. Which keys name the same lesson is printed for a reader
to judge; no labels say it. The fresh held-out aider turns (bench/reflect_heldout.py) are left out.

    .venv/bin/python bench/reflect_keys.py --splits   # and every split group, to read by hand
    .venv/bin/python bench/reflect_keys.py --baseline /work/main    # the summary line of another tree beside
"""

from __future__ import annotations

import argparse
import sys
from itertools import combinations
from pathlib import Path

import reflect_train as rt
from rapidfuzz import fuzz

from kg.reflect import TranscriptError, default_rules, read_transcript
from kg.reflect.detect import learnings

SAME = 50  # token_set_ratio at or over this: two lessons share most of their words
ALIKE = 90  # token_sort_ratio at or over this: two lessons say the same thing in (nearly) the same words


def sessions(data: Path) -> list[Path]:
    """Every real transcript (bench/reflect_lessons.py's list): not the notes beside them (LICENSES.md, HOOKS.md,
    README.md ...), which read as plain text would make "findings" of documentation."""
    from reflect_lessons import transcripts

    return [p for _, p in transcripts(data)]


def splits(found: list[tuple[str, str | None]]) -> list[list[tuple[str, str | None]]]:
    """Groups of (lesson, key) worded alike (ALIKE, joined transitively) that hold more than one key (None counts as
    one: a lesson with a key once and without another time is split too). Pure."""
    from rapidfuzz import process

    lessons = [lesson.lower() for lesson, _ in found]
    parent = list(range(len(found)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    scores = process.cdist(lessons, lessons, scorer=fuzz.token_sort_ratio, score_cutoff=ALIKE)
    for i, j in zip(*scores.nonzero(), strict=True):
        if i < j:
            parent[root(int(i))] = root(int(j))
    groups: dict[int, list[tuple[str, str | None]]] = {}
    for i, item in enumerate(found):
        groups.setdefault(root(i), []).append(item)
    return [g for g in groups.values() if len({k for _, k in g}) > 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="print every key, not only those seen in two sessions")
    ap.add_argument("--splits", action="store_true", help="print every lesson worded alike under two keys")
    ap.add_argument("--baseline", default="", help="a tree with its own .venv: its summary lines printed first")
    ap.add_argument("--summary", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.baseline:
        import subprocess

        tree = Path(args.baseline)
        out = subprocess.run([str(tree / ".venv" / "bin" / "python"), str(Path(__file__).resolve()), "--summary"],
                             capture_output=True, text=True, cwd=tree)
        print(f"baseline ({tree}):\n{out.stdout.strip() or out.stderr.strip()}\n\nthis tree:")
    data = rt.shared_data()
    rules = default_rules()
    from reflect_heldout import held_out_turns

    held = held_out_turns()
    by_key: dict[str, list[tuple[str, str]]] = {}
    found: list[tuple[str, str | None]] = []
    total = keyed = read = 0
    for path in sessions(data):
        try:
            t = read_transcript(path)
        except (TranscriptError, OSError, ValueError):
            continue
        read += 1
        name = str(path.relative_to(data))
        for f in learnings(t, rules):
            if (name, f.turn) in held:
                continue
            total += 1
            found.append((f.summary, f.pattern_key))
            if f.pattern_key:
                keyed += 1
                by_key.setdefault(f.pattern_key, []).append((path.name, f.summary))
    split = splits(found)
    multi = {k: v for k, v in by_key.items() if len({s for s, _ in v}) >= 2}
    collisions = {k for k, v in by_key.items()
                  if any(fuzz.token_set_ratio(a.lower(), b.lower()) < SAME for (_, a), (_, b) in combinations(v, 2))}
    print(f"{read} sessions read, {total} findings, {keyed} with a key ({keyed / max(total, 1):.0%}), "
          f"{len(by_key)} distinct keys")
    print(f"keys seen in two or more sessions: {len(multi)}; keys whose lessons do not overlap "
          f"(likely collisions): {len(collisions)}")
    print(f"splits: {len(split)} groups of lessons worded alike under more than one key ({sum(map(len, split))} "
          f"findings; {sum(len({k for _, k in g}) - 1 for g in split)} keys too many)")
    if "--summary" in sys.argv:
        return
    if args.splits:
        for g in split:
            print("\nsplit:")
            for lesson, k in sorted(set(g), key=lambda x: str(x[1])):
                print(f"  {str(k)[:40]:40}  {lesson[:90]}")
    for k in sorted(by_key if args.all else multi):
        mark = "  (collision?)" if k in collisions else ""
        print(f"\n{k}{mark}")
        for s, lesson in by_key[k][:6]:
            print(f"  {s[:40]:40}  {lesson[:90]}")


if __name__ == "__main__":
    main()
