"""Leave one SET out: how `kg reflect` does on a labelled set of other users' turns that its model never saw.

    .venv/bin/python bench/reflect_loso.py                          # this tree beside /work/cdx (a clean main)
    .venv/bin/python bench/reflect_loso.py --baseline ''            # this tree only
    .venv/bin/python bench/reflect_loso.py --misses                 # and the misses and false alarms, pooled

Why: signals built from one held-out set's misses met none of the next set's misses; scoring the set just developed
on measures memory, not generalisation. Here every external labelled set whose files are on this machine
(bench/reflect_heldout.py SETS: the aider sets p15 and p16 in shared data, p27-p35 in /work/heldoutNN/raw; p26's
folder holds one of its files, p17-p25 none; a set labelled blind for a later landing joins NEVER and is never read)
is left out in turn:

- "shipped": the tree's detector as `kg reflect` runs it (kg.reflect.detect.learnings), on the left-out set. Its
  model was trained on shared data only (bench/reflect_train.py), so this column is out-of-sample for the weights;
  the hand-written signals in rules/reflect.toml were developed on these sets, which is why a signal change is
  kept only when the misses it fixes recur across at least three sets of different users.
- "refit": the model and its thresholds refitted (reflect_train.train / calibrate, same priors and penalties) on
  shared data plus every other set, scored on the left-out set with reflect_train.decide: what adding more users'
  labels would buy, measured on a set it did not see.

Per set and pooled: correction and "anything" P / R / F1, and false alarms (any finding on a turn labelled with
nothing) per 100 quiet turns. The baseline tree (--baseline, its own .venv) runs this same file with its own kg and
its bench/reflect_train.py, in the same run, so both see the same data.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

if os.environ.get("KG_LOSO_TRAIN_DIR"):  # the baseline tree's trainer and set list, when run as its column
    sys.path.insert(0, os.environ["KG_LOSO_TRAIN_DIR"])

import reflect_heldout as rh  # noqa: E402
import reflect_train as rt  # noqa: E402

from kg.reflect import default_rules, read_transcript  # noqa: E402
from kg.reflect.detect import learnings, turn_signals  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# Labelled blind for a later landing: never read, never scored here, whatever SETS holds (bench/reflect_heldout.py
# UNREAD: a set leaves it in the commit that records its score)
NEVER: set[str] = set(rh.UNREAD)
SHOW = ("correction", "anything")


def available() -> list[str]:
    """The sets whose labels and files are here (all its files, or, for a set outside shared data, some), oldest
    first."""
    out = []
    for name, path in rh.SETS.items():
        if name in NEVER or not path.exists():
            continue
        folder = rh.OUTSIDE.get(name)
        if folder is None or any((folder / lab["file"]).is_file() for lab in rh._labels(path)):
            out.append(name)  # a set whose files were fetched again in part is read on the files that are here
    return sorted(out, key=lambda s: int(s[1:]))


def set_rows(name: str) -> list[dict]:
    """Each labelled turn of a set: its file, line, gold classes, the signals that fire, what the detector reports,
    and the user's words with the agent's turns around (for --misses)."""
    labels = rh._labels(rh.SETS[name])
    data = rh.OUTSIDE.get(name) or rt.shared_data()
    if name in rh.OUTSIDE:
        labels = [lab for lab in labels if (data / lab["file"]).is_file()]
        rh.checked_texts(data, labels)  # exits 2 naming the file when the saved text is not what was labelled
    rules, plain = default_rules(), default_rules(model=False)
    rows = []
    for rel in sorted({lab["file"] for lab in labels}):
        t = read_transcript(data / rel)
        sigs = turn_signals(t, plain)
        found: dict[int, set[str]] = {}
        for f in learnings(t, rules):
            found.setdefault(f.turn, set()).add(f.category)
        at = {u.line: u.index for u in t.turns if u.role in ("user", "system")}
        for lab in labels:
            if lab["file"] != rel:
                continue
            i = at.get(lab["line"])
            before, after = rh._around(t, i) if i is not None else (None, None)
            rows.append({"set": name, "session": f"{name}:{rel}", "line": lab["line"],
                         "gold": {rt.CLASSES[x] for x in lab["labels"] if x in rt.CLASSES},
                         "signals": sigs.get(i, ()), "shipped": sorted(found.get(i, ())),
                         "text": t.turns[i].text if i is not None else "",
                         "before": before.text[-300:] if before is not None else "",
                         "after": after.text[:200] if after is not None else ""})
    return rows


def loso(names: list[str]) -> dict[str, dict]:
    """Per left-out set: tp / fp / fn per class, as shipped and refitted without it, and its turns for --misses."""
    rows = {n: set_rows(n) for n in names}
    shared = rt.load_turns(rt.shared_data(), default_rules(model=False))
    out = {}
    for test in names:
        pool = shared + [r for n in names if n != test for r in rows[n]]
        models, thresholds = rt.train(pool), rt.calibrate(pool)
        refit = [rt.decide(models, tuple(r["signals"]), thresholds) for r in rows[test]]
        shipped = [set(r["shipped"]) for r in rows[test]]
        out[test] = {"turns": rows[test], "refit": [sorted(x) for x in refit],
                     "counts": {"shipped": rt.scores(rows[test], shipped), "refit": rt.scores(rows[test], refit)}}
        for r in rows[test]:
            r["gold"] = sorted(r["gold"])
    return out


def _cell(c) -> str:
    tp, fp, fn = c
    p, r, f = rt.prf(tp, fp, fn)
    return f"{p:4.2f} {r:4.2f} {f:4.2f} ({tp:2d} {fp:2d} {fn:2d})"


def table(results: dict[str, dict], names: list[str]) -> None:
    cols = [(tree, kind) for tree in results for kind in ("shipped", "refit")]
    head = "".join(f"  {(tree + ' ' + kind)[:27]:>27}" for tree, kind in cols)
    print("leave one set out: P R F1 (tp fp fn) per left-out set; false alarms per 100 quiet turns")
    for cls in SHOW:
        print(f"\n  {cls:14} {'turns':>5} {'gold':>4}{head}")
        pooled = {c: [0, 0, 0] for c in cols}
        for n in names:
            first = results[next(iter(results))][n]
            tp, _, fn = first["counts"]["shipped"][cls]
            cells = []
            for tree, kind in cols:
                c = results[tree][n]["counts"][kind][cls]
                pooled[(tree, kind)] = [a + b for a, b in zip(pooled[(tree, kind)], c, strict=True)]
                cells.append(f"  {_cell(c):>27}")
            print(f"  {n:14} {len(first['turns']):5d} {tp + fn:4d}" + "".join(cells))
        tp, _, fn = pooled[cols[0]]
        print(f"  {'pooled':14} {'':5} {tp + fn:4d}" + "".join(f"  {_cell(pooled[c]):>27}" for c in cols))
    print(f"\n  {'false alarms':14} {'quiet':>5} {'':4}" + "".join(f"  {'fp  per 100':>27}" for _ in cols))
    total = {c: 0 for c in cols}
    quiet_all = 0
    for n in names:
        first = results[next(iter(results))][n]
        quiet = sum(not r["gold"] for r in first["turns"])
        quiet_all += quiet
        cells = []
        for c in cols:
            fa = results[c[0]][n]["counts"][c[1]]["anything"][1]
            total[c] += fa
            cells.append(f"  {f'{fa:3d} {100 * fa / max(quiet, 1):6.1f}':>27}")
        print(f"  {n:14} {quiet:5d} {'':4}" + "".join(cells))
    print(f"  {'pooled':14} {quiet_all:5d} {'':4}" + "".join(
        f"  {f'{total[c]:3d} {100 * total[c] / max(quiet_all, 1):6.1f}':>27}" for c in cols))


def misses(result: dict[str, dict], names: list[str]) -> None:
    """Missed corrections and false alarms of the shipped detector, pooled across sets, with the agent's turns around:
    what to study for structure that recurs across sets (never phrases to copy into rules)."""
    for kind, want in (("missed correction", True), ("false alarm", False)):
        print(f"\n=== {kind}s")
        for n in names:
            for r in result[n]["turns"]:
                got = set(r["shipped"])
                if (want and "correction" in r["gold"] and "correction" not in got) or (
                        not want and not r["gold"] and got):
                    print(f"--- {r['session']}@{r['line']} gold={r['gold']} got={sorted(got)} sig={list(r['signals'])}")
                    print("  before: " + " ".join(r["before"].split())[-240:])
                    print("  USER:   " + " ".join(r["text"].split())[:400])
                    print("  after:  " + " ".join(r["after"].split())[:160])


def run_baseline(tree: Path, names: list[str]) -> dict[str, dict] | None:
    py = tree / ".venv" / "bin" / "python"
    if not py.exists():
        print(f"(no baseline: {py} not found)", file=sys.stderr)
        return None
    env = {**os.environ, "KG_LOSO_TRAIN_DIR": str(tree / "bench"), "KG_SHARED_DATA": str(rt.shared_data())}
    res = subprocess.run([str(py), str(Path(__file__).resolve()), "--json", "--sets", ",".join(names)],
                         capture_output=True, text=True, cwd=tree, env=env)
    if res.returncode:
        print(f"(no baseline: {tree} failed: {(res.stderr.strip().splitlines() or ['no output'])[-1]})",
              file=sys.stderr)
        return None
    return json.loads(res.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=str(REPO.parent / "cdx"),
                    help="a tree with its own .venv scored beside this one in the same run ('' for none)")
    ap.add_argument("--misses", action="store_true", help="also print this tree's misses and false alarms, pooled")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sets", default="", help="comma-separated sets (default: every one whose files are here)")
    args = ap.parse_args()
    names = [s for s in args.sets.split(",") if s] or available()
    bad = [s for s in names if s in NEVER or s not in rh.SETS]
    if bad:
        print(f"Error: {', '.join(bad)}: not a development set here; --sets takes some of {', '.join(available())}",
              file=sys.stderr)
        sys.exit(2)
    if args.json:
        res = loso(names)
        for v in res.values():  # the baseline's column needs only the counts
            v["turns"] = [{"gold": r["gold"]} for r in v["turns"]]
        print(json.dumps(res))
        return
    results: dict[str, dict] = {}
    if args.baseline:
        base = run_baseline(Path(args.baseline), names)
        if base is not None:
            results[f"base({Path(args.baseline).name})"] = base
    results["this"] = loso(names)
    table(results, names)
    if args.misses:
        misses(results["this"], names)


if __name__ == "__main__":
    main()
