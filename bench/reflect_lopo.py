"""Leave one provider out: how the `kg reflect` model does on a runtime and a user it was not trained on.

    .venv/bin/python bench/reflect_lopo.py                      # development providers, this tree beside main's
    .venv/bin/python bench/reflect_lopo.py --final              # and the held-out providers (read once, at the end)
    .venv/bin/python bench/reflect_lopo.py --baseline ''        # this tree only

Providers: specstory (the 441 labelled turns of one Cursor user, labels/), and the other users' gold
(tests/data/other_user_turns.jsonl) by runtime: aider, codex, openclaw, claude_code. For each test provider the
model and its thresholds are refitted (bench/reflect_train.py: same priors, penalties and calibration) on the other
providers' turns, and scored on the test provider's turns with `reflect_train.decide` (the model's decision per turn;
what `kg reflect` then writes also needs a lesson, which this does not score).

The training pool is the development providers only (specstory, aider, codex, `DEV` below): OpenClaw and Claude Code
are never trained on and never used to choose anything. Their columns (`--final`) are therefore the model as shipped
refitted on the development data: held out, to be read once at the end of a piece of work.

Last, false alarms: turns with any finding among those with nothing to learn ("quiet"), per 100 quiet turns.

The baseline (--baseline, default main's tree) is the same script run by that tree's Python with its
bench/reflect_train.py (its signals, rules and trainer; numpy needed), in the same run, so both columns see the same
data.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

if os.environ.get("KG_LOPO_TRAIN_DIR"):  # main's trainer, when run for the "current" column
    sys.path.insert(0, os.environ["KG_LOPO_TRAIN_DIR"])

import reflect_train as rt  # noqa: E402

from kg.reflect import default_rules  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEV = ("specstory", "aider", "codex")
HELD = ("openclaw", "claude_code")
SHOW = ("correction", "preference", "knowledge_gap", "feature", "best_practice", "anything")


def provider_turns(data: Path, name: str) -> list[dict]:
    if name == "specstory":
        return rt.load_turns(data, default_rules(model=False))
    return list(rt.dev_turns(data, (name,)))


def counts(turns: list[dict], pred: list[set[str]]) -> dict[str, list[int]]:
    return {c: list(v) for c, v in rt.scores(turns, pred).items()}


def lopo(data: Path, tests: tuple[str, ...]) -> dict[str, dict]:
    """Per test provider: turns, and tp / fp / fn per class from a model that never saw that provider."""
    rows = {p: provider_turns(data, p) for p in (*DEV, *tests)}
    out = {}
    real = rt.dev_turns
    try:
        rt.dev_turns = lambda *a, **k: ()  # the pool is passed whole: no extra rows behind train()'s back
        for test in tests:
            pool = [t for p in DEV if p != test for t in rows[p]]
            models = rt.train(pool)
            thresholds = rt.calibrate(pool)
            pred = [rt.decide(models, t["signals"], thresholds) for t in rows[test]]
            out[test] = {"turns": len(rows[test]), "counts": counts(rows[test], pred)}
    finally:
        rt.dev_turns = real
    return out


def _cell(c: list[int] | None) -> str:
    if c is None:
        return f"{'-':>16}"
    if not c[0] + c[2]:  # no gold turn of the class: only false alarms can be counted
        return f"{'no gold, fp ' + str(c[1]):>16}"
    p, r, f = rt.prf(*c)
    return f"{p:5.2f}{r:5.2f}{f:6.2f}"


def table(results: dict[str, dict], tests: tuple[str, ...]) -> None:
    names = list(results)
    print("leave one provider out: P / R / F1 per class (" + " | ".join(names) + ")")
    head = "".join(f"  {n[:16]:>16}" for n in names)
    for cls in SHOW:
        print(f"\n  {cls:22} {'turns':>5} {'gold':>5}{head}")
        pooled: dict[str, list[int]] = {n: [0, 0, 0] for n in names}
        for test in tests:
            first = results[names[0]][test]
            tp, _, fn = first["counts"][cls]
            cells = []
            for n in names:
                c = results[n].get(test, {}).get("counts", {}).get(cls)
                cells.append(_cell(c))
                if c is not None and test in DEV:
                    pooled[n] = [a + b for a, b in zip(pooled[n], c, strict=True)]
            mark = " (held out)" if test in HELD else ""
            print(f"  {test + mark:22} {first['turns']:5d} {tp + fn:5d}" + "".join(f"  {c}" for c in cells))
        tp, _, fn = pooled[names[0]]
        print(f"  {'dev pooled':22} {'':5} {tp + fn:5d}" + "".join(f"  {_cell(pooled[n])}" for n in names))
    print(f"\n  {'false alarms':22} {'quiet':>5} {'':5}" + "".join(f"  {'per 100 quiet':>16}" for _ in names))
    for test in tests:  # any finding on a turn with nothing to learn, per 100 such turns
        first = results[names[0]][test]
        tp, _, fn = first["counts"]["anything"]
        quiet = first["turns"] - tp - fn
        cells = []
        for n in names:
            c = results[n].get(test, {}).get("counts", {}).get("anything")
            cells.append(f"{'-':>16}" if c is None or not quiet else f"{c[1]:>6} {100 * c[1] / quiet:9.1f}")
        print(f"  {test:22} {quiet:5d} {'':5}" + "".join(f"  {c}" for c in cells))


def run_baseline(tree: Path, tests: tuple[str, ...], data: Path) -> dict[str, dict] | None:
    py = tree / ".venv" / "bin" / "python"
    if not py.exists():
        print(f"(no baseline: {py} not found)", file=sys.stderr)
        return None
    env = {**os.environ, "KG_LOPO_TRAIN_DIR": str(tree / "bench"), "KG_SHARED_DATA": str(data)}
    out = subprocess.run([str(py), str(Path(__file__).resolve()), "--json", "--tests", ",".join(tests)],
                         capture_output=True, text=True, cwd=tree, env=env)
    if out.returncode:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"(no baseline: {tree} failed: {last})", file=sys.stderr)
        return None
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--final", action="store_true",
                    help="also score the held-out providers (OpenClaw, Claude Code): read once, at the end")
    ap.add_argument("--baseline", default=str(REPO.parent / "main"),
                    help="a tree with its own .venv to score beside this one ('' for none)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tests", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    data = rt.shared_data()
    tests = tuple(t for t in args.tests.split(",") if t) or (*DEV, *(HELD if args.final else ()))
    if args.json:
        print(json.dumps(lopo(data, tests)))
        return
    report(data, args.final, args.baseline)


def report(data: Path, final: bool, baseline: str) -> None:
    """The table, with the baseline tree's column when it has a .venv."""
    tests = (*DEV, *(HELD if final else ()))
    results: dict[str, dict] = {}
    if baseline:
        base = run_baseline(Path(baseline), tests, data)
        if base is not None:
            results[f"baseline ({Path(baseline).name})"] = base
    results["this tree"] = lopo(data, tests)
    table(results, tests)


if __name__ == "__main__":
    main()
