"""Redaction quality and speed: recall and false redaction per provider, held-out split, 10 MB timing.

    .venv/bin/python bench/redact_quality.py [--verbose] [--size-mb 10]

A secret counts as caught when no character run of it longer than 4 characters... no: when the secret no
longer occurs in the output (whole-secret replacement; a tail left behind is a miss). A non-secret counts as
falsely redacted when the output differs from the input at all. Cases: `bench/redact_cases.py`. Held-out
providers (one in four, by a hash of the name) were not looked at while tuning the rules; their figures are
printed apart. Speed: median of 3 runs over `--size-mb` of real transcripts and LoCoMo dialogue, against
`str.lower()` of the same text (the cheapest full pass) measured in the same run; and a typical `kg log`
(summary, details, action, tags) redacted field by field.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redact_cases import LABELLED, ORDINARY, held_out, provider_cases, transcript_lines  # noqa: E402

from kg.redact import load_default  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("KG_SHARED_DATA", REPO.parent / "shared" / "data"))


def median_time(func, runs: int = 3) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def quality(redactor, verbose: bool) -> None:
    cases = list(provider_cases(redactor)) + LABELLED
    stats: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # secrets, caught, ordinary, damaged
    misses, damages = [], []
    for provider, text, secret in cases:
        out = redactor.redact(text).text
        row = stats[provider]
        if secret is not None:
            row[0] += 1
            if secret not in out:
                row[1] += 1
            else:
                misses.append((provider, text, out))
        else:
            row[2] += 1
            if out != text:
                row[3] += 1
                damages.append((provider, text, out))
    for text in ORDINARY:
        row = stats["(ordinary agent text)"]
        row[2] += 1
        out = redactor.redact(text).text
        if out != text:
            row[3] += 1
            damages.append(("ordinary", text, out))
    lines = transcript_lines(DATA)
    row = stats["(real transcript lines)"]
    for text in lines:
        row[2] += 1
        out = redactor.redact(text).text
        if out != text:
            row[3] += 1
            damages.append(("transcript", text[:200], out[:200]))

    print(f"{'provider':<28} {'split':<8} {'secrets':>7} {'recall':>7} {'non-secrets':>11} {'falsely red.':>12}")
    totals = {"dev": [0, 0, 0, 0], "held-out": [0, 0, 0, 0], "ordinary": [0, 0, 0, 0]}
    for provider in sorted(stats):
        s, c, n, d = stats[provider]
        split = "ordinary" if provider.startswith("(") else ("held-out" if held_out(provider) else "dev")
        for i, v in enumerate((s, c, n, d)):
            totals[split][i] += v
        if verbose or provider.startswith("(") or (s and c < s) or d:
            print(f"{provider:<28} {split:<8} {s:>7} {_pct(c, s):>7} {n:>11} {_pct(d, n):>12}")
    providers = [p for p in stats if not p.startswith("(") and stats[p][0]]
    full = [p for p in providers if stats[p][1] == stats[p][0]]
    print(f"\nproviders with secrets: {len(providers)}; all caught: {len(full)} "
          f"(held-out: {sum(held_out(p) for p in providers)})")
    for split, (s, c, n, d) in totals.items():
        print(f"  {split:<9} recall {_pct(c, s):>7} of {s:>5} secrets; false redaction {_pct(d, n):>7} of {n:>5}")
    s = sum(totals[k][0] for k in totals)
    c = sum(totals[k][1] for k in totals)
    n = sum(totals[k][2] for k in totals)
    d = sum(totals[k][3] for k in totals)
    print(f"  {'all':<9} recall {_pct(c, s):>7} of {s:>5} secrets; false redaction {_pct(d, n):>7} of {n:>5}")
    print("targets: recall >= 97 % over >= 80 providers, false redaction <= 3 %")
    if verbose:
        for provider, text, out in misses[:60]:
            print(f"MISS {provider}: {text!r}\n  -> {out!r}")
        for provider, text, out in damages[:60]:
            print(f"DAMAGE {provider}: {text!r}\n  -> {out!r}")


def speed(redactor, size_mb: float) -> None:
    parts = [p.read_text(encoding="utf-8", errors="replace")
             for p in sorted((DATA / "transcripts").rglob("*")) if p.is_file() and p.suffix in (".md", ".jsonl")]
    parts.append((DATA / "locomo" / "locomo_dev.json").read_text(encoding="utf-8"))
    text = "".join(parts)
    size = int(size_mb * 1_000_000)
    while len(text) < size:
        text += text
    text = text[:size]
    redactor.redact(text[:100_000])  # compile the rules the text needs
    big = median_time(lambda: redactor.redact(text))
    base = median_time(lambda: text.lower())
    fields = {"summary": "git push failed: no upstream branch set for feature/login-retry",
              "details": "Ran `git push` from the worktree; git said: fatal: The current branch has no upstream "
                         "branch. To push the current branch and set the remote as upstream, use --set-upstream.",
              "action": "Use `git push -u origin HEAD` the first time a branch is pushed.",
              "area": "tooling", "tags": ["git", "push"]}
    redactor.redact_many(fields)
    log = median_time(lambda: [redactor.redact_many(fields) for _ in range(200)], runs=5) / 200
    print(f"\n{'case':<36} {'median':>12} {'baseline':>12} {'ratio':>7}")
    print(f"{f'{size_mb:g} MB of real transcripts':<36} {big:>10.3f} s {base:>10.3f} s {big / base:>6.0f}x")
    print(f"{'a typical kg log (5 fields)':<36} {log * 1e3:>9.3f} ms")
    print("targets: 10 MB <= 1 s; a kg log <= 2 ms")


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="every provider, and the misses and damages")
    parser.add_argument("--size-mb", type=float, default=10.0)
    parser.add_argument("--no-speed", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    redactor = load_default()
    print(f"rules: {len(redactor.rules)} (loaded in {1e3 * (time.perf_counter() - start):.0f} ms)\n")
    quality(redactor, args.verbose)
    if not args.no_speed:
        speed(redactor, args.size_mb)


if __name__ == "__main__":
    main()
