"""Do pattern keys recur with their lesson? `kg reflect`'s findings on every session in shared/data, grouped by key.

    .venv/bin/python bench/reflect_keys.py            # summary and every key seen in two or more sessions
    .venv/bin/python bench/reflect_keys.py --all      # and every key

A key should name one lesson: the same lesson in two sessions gets the same key (a key in two or more sessions is
a recurrence kg can count), and two different lessons get different keys. The second is checked by the lessons'
word overlap under one key (rapidfuzz token_set_ratio below SAME): a key whose lessons do not overlap is a likely
collision. Which keys name the same lesson is printed for a reader to judge; no labels say it.
"""

from __future__ import annotations

import argparse
from itertools import combinations
from pathlib import Path

import reflect_train as rt
from rapidfuzz import fuzz

from kg.reflect import TranscriptError, default_rules, read_transcript
from kg.reflect.detect import learnings

SAME = 50  # token_set_ratio at or over this: two lessons share most of their words


def sessions(data: Path) -> list[Path]:
    """Every real transcript (bench/reflect_lessons.py's list): not the notes beside them (LICENSES.md, HOOKS.md,
    README.md ...), which read as plain text would make "findings" of documentation."""
    from reflect_lessons import transcripts

    return [p for _, p in transcripts(data)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="print every key, not only those seen in two sessions")
    args = ap.parse_args()
    data = rt.shared_data()
    rules = default_rules()
    by_key: dict[str, list[tuple[str, str]]] = {}
    total = keyed = read = 0
    for path in sessions(data):
        try:
            t = read_transcript(path)
        except (TranscriptError, OSError, ValueError):
            continue
        read += 1
        for f in learnings(t, rules):
            total += 1
            if f.pattern_key:
                keyed += 1
                by_key.setdefault(f.pattern_key, []).append((path.name, f.summary))
    multi = {k: v for k, v in by_key.items() if len({s for s, _ in v}) >= 2}
    collisions = {k for k, v in by_key.items()
                  if any(fuzz.token_set_ratio(a.lower(), b.lower()) < SAME for (_, a), (_, b) in combinations(v, 2))}
    print(f"{read} sessions read, {total} findings, {keyed} with a key ({keyed / max(total, 1):.0%}), "
          f"{len(by_key)} distinct keys")
    print(f"keys seen in two or more sessions: {len(multi)}; keys whose lessons do not overlap "
          f"(likely collisions): {len(collisions)}")
    for k in sorted(by_key if args.all else multi):
        mark = "  (collision?)" if k in collisions else ""
        print(f"\n{k}{mark}")
        for s, lesson in by_key[k][:6]:
            print(f"  {s[:40]:40}  {lesson[:90]}")


if __name__ == "__main__":
    main()
