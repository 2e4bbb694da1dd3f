"""Redaction quality and speed: recall and false redaction per provider on realistic labelled cases, every
redaction made on real agent transcripts, 10 MB in-process, and a whole `kg log` process against main's code.

    .venv/bin/python bench/redact_quality.py [--verbose] [--size-mb 10] [--no-speed] [--main ../main]

Sets (a secret counts as caught when it no longer occurs in the output, so a tail left behind is a miss; a
non-secret counts as falsely redacted when the output differs from the input at all):
- gitleaks, detect-secrets: those scanners' own per-rule true and false positives (tests/data/secrets,
  attributed there). Positives that are placeholders by kg's definition (`SKxxxx...`) are counted apart.
- generated: secrets generated from kg's own rule regexes in five shapes of agent text, plus hand-written
  agent text (bench/redact_cases.py). These say a rule matches its own format, not that recall is high.
- transcripts: every redaction the rules make on the real transcripts and runtime payloads in shared/data,
  each judged by hand in tests/data/secrets/transcript_redactions.jsonl (by a hash, never the value);
  one that is not a secret is a false redaction, one not yet judged is printed and counted as unjudged.
Held-out providers (one in four, by a hash of the name) were not looked at while tuning; printed apart.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redact_cases import (  # noqa: E402
    CASES_DIR,
    LABELLED,
    ORDINARY,
    REALISTIC_SETS,
    held_out,
    provider_cases,
    read_text,
    realistic_cases,
    transcript_files,
)

from kg.redaction.redact import load_default  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("KG_SHARED_DATA", REPO.parent / "shared" / "data"))


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def score(redactor, cases, verbose: bool, label: str, show_held_out: bool = False) -> dict[str, list[int]]:
    """Per provider: [secrets, caught, non-secrets, damaged, placeholders, placeholders caught]. Misses and false
    redactions of held-out providers are printed only with `show_held_out` (look at them after tuning)."""
    stats: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    for case in cases:
        provider, text, secret = case["provider"], case["text"], case["secret"]
        out = redactor.redact(text).text
        verbose_here = verbose and (show_held_out or not held_out(provider))
        row = stats[provider]
        if secret is None:
            row[2] += 1
            if out != text:
                row[3] += 1
                if verbose_here:
                    print(f"  FALSE {label}/{provider}: {text[:160]!r}\n     -> {out[:160]!r}")
        elif case.get("placeholder"):
            row[4] += 1
            row[5] += secret not in out
        else:
            row[0] += 1
            if secret not in out:
                row[1] += 1
            elif verbose_here:
                print(f"  MISS  {label}/{provider}: {text[:160]!r}\n     -> {out[:160]!r}")
    return stats


def summarise(label: str, stats: dict[str, list[int]], verbose: bool) -> tuple[int, int, int, int]:
    totals = {"dev": [0, 0, 0, 0], "held-out": [0, 0, 0, 0]}
    for provider, (s, c, n, d, *_rest) in sorted(stats.items()):
        split = "held-out" if held_out(provider) else "dev"
        for i, v in enumerate((s, c, n, d)):
            totals[split][i] += v
        if verbose or c < s or d:
            print(f"  {label:<15} {provider:<22} {split:<8} {c:>4}/{s:<4} {_pct(c, s):>8}   "
                  f"false {d:>3}/{n:<4} {_pct(d, n):>8}")
    s, c, n, d = (sum(t[i] for t in totals.values()) for i in range(4))
    providers = [p for p, row in stats.items() if row[0]]
    full = sum(stats[p][1] == stats[p][0] for p in providers)
    ph, phc = sum(r[4] for r in stats.values()), sum(r[5] for r in stats.values())
    print(f"{label:<15} recall {_pct(c, s):>8} ({c}/{s}) over {len(providers)} providers ({full} all caught); "
          f"false redaction {_pct(d, n):>7} ({d}/{n})" + (f"; placeholders redacted {phc}/{ph}" if ph else ""))
    for split, (ss, cc, nn, dd) in totals.items():
        print(f"  {split:<9} recall {_pct(cc, ss):>8} ({cc}/{ss}); false redaction {_pct(dd, nn):>7} ({dd}/{nn})")
    return s, c, n, d


def transcripts(redactor, verbose: bool) -> tuple[int, int]:
    """Every redaction on the real transcripts, with its verdict; returns (lines, falsely redacted lines)."""
    verdicts = {}
    reviewed = CASES_DIR / "transcript_redactions.jsonl"
    if reviewed.exists():
        for line in reviewed.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                verdicts[row["id"]] = row["verdict"]
    lines = damaged = 0
    by_verdict: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    unjudged = []
    for path in transcript_files(DATA):
        for number, line in enumerate(read_text(path).splitlines(), 1):
            if not line.strip():
                continue
            lines += 1
            result = redactor.redact(line)
            if not result.kinds:
                continue
            false_here = False
            for start, end, kind in redactor.spans(line):
                ident = hashlib.sha256(f"{kind}\0{line[start:end]}".encode()).hexdigest()[:16]
                verdict = verdicts.get(ident, "unjudged")
                by_verdict[verdict] += 1
                kinds[kind] += 1
                false_here |= verdict == "not a secret"
                if verdict == "unjudged" or verbose:
                    where = f"{path.relative_to(DATA)}:{number}"
                    unjudged.append((ident, kind, where, line[max(0, start - 50):start], line[start:end],
                                     line[end:end + 30], verdict))
            damaged += false_here
    total = sum(by_verdict.values())
    print(f"{'transcripts':<15} {lines} lines of real agent text: {total} redactions "
          f"({', '.join(f'{v} {k}' for k, v in sorted(by_verdict.items()))}); "
          f"kinds: {', '.join(f'{k} {v}' for k, v in kinds.most_common())}")
    print(f"  lines falsely redacted: {damaged} ({_pct(damaged, lines)})")
    for ident, kind, where, before, value, after, verdict in unjudged:
        print(f"  [{verdict}] {ident} {kind} {where}: ...{before!r} [[{value[:80]}]] {after!r}")
    return lines, damaged


def median_time(func, runs: int = 3) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


FIELDS = {"summary": "git push failed: no upstream branch set for feature/login-retry",
          "details": "Ran `git push` from the worktree; git said: fatal: The current branch has no upstream branch. "
                     "To push the current branch and set the remote as upstream, use --set-upstream.",
          "action": "Use `git push -u origin HEAD` the first time a branch is pushed.",
          "area": "tooling", "tags": ["git", "push"]}
# What a fresh process pays for redaction: import kg.redaction.redact, load the rules, redact one kg log's fields.
PROCESS_PROBE = """
import json, sys, time
import kg  # paid by every kg command whether it redacts or not
t0 = time.perf_counter()
from kg.redaction.redact import load_default
r = load_default()
r.redact_many(json.loads(sys.argv[1]))
print(time.perf_counter() - t0)
"""


def speed(redactor, size_mb: float, main: Path | None, runs: int) -> None:
    parts = [read_text(p) for p in transcript_files(DATA)]
    parts.append((DATA / "locomo" / "locomo_dev.json").read_text(encoding="utf-8"))
    text = "".join(parts)
    size = int(size_mb * 1_000_000)
    while len(text) < size:
        text += text
    text = text[:size]
    redactor.redact(text[:100_000])  # compile the rules the text needs
    big = median_time(lambda: redactor.redact(text))
    base = median_time(lambda: text.lower())
    redactor.redact_many(FIELDS)
    log = median_time(lambda: [redactor.redact_many(FIELDS) for _ in range(200)], runs=5) / 200
    print(f"\n{'case':<44} {'median':>10} {'baseline':>10} {'ratio':>6}")
    print(f"{f'{size_mb:g} MB of real transcripts, in process':<44} {big:>8.3f} s {base:>8.3f} s {big / base:>5.0f}x"
          "   (baseline: str.lower of the same text)")
    print(f"{'a kg log (5 fields), in process, warm':<44} {log * 1e3:>7.3f} ms")
    venvs = {"this branch": REPO / ".venv" / "bin" / "python"}
    if main is not None and (main / ".venv" / "bin" / "python").exists():
        venvs["main"] = main / ".venv" / "bin" / "python"
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "KG_CACHE_DIR": cache}
        probe = {name: [] for name in venvs}
        logs = {name: [] for name in venvs}
        for _ in range(runs):  # alternate, so load on the machine hits both alike
            for name, python in venvs.items():
                out = subprocess.run([str(python), "-c", PROCESS_PROBE, json.dumps(FIELDS)], env=env,
                                     capture_output=True, text=True, check=True)
                probe[name].append(float(out.stdout))
                logs[name].append(_kg_log(python, env))
        for name in venvs:
            print(f"{f'redaction in a fresh process ({name})':<44} {1e3 * statistics.median(probe[name]):>7.2f} ms"
                  f"   (import + rules + one kg log's fields)")
        for name in venvs:
            ratio = ""
            if name != "main" and "main" in logs:
                ratio = f" {statistics.median(logs[name]) / statistics.median(logs['main']):>5.2f}x of main"
            print(f"{f'whole kg log process ({name})':<44} {1e3 * statistics.median(logs[name]):>7.0f} ms{ratio}")
    print(f"targets: 10 MB <= 1 s; a kg log pays <= 2 ms for redaction (medians of {runs} alternating runs)")


def _kg_log(python: Path, env: dict[str, str]) -> float:
    kg = python.parent / "kg"
    with tempfile.TemporaryDirectory() as tmp:
        env = {**env, "KG_WORKSPACE": tmp}
        subprocess.run([str(kg), "init"], env=env, capture_output=True, check=True, cwd=tmp)
        start = time.perf_counter()
        subprocess.run([str(kg), "log", "error", FIELDS["summary"], "--details", FIELDS["details"], "--action",
                        FIELDS["action"], "--area", "tooling", "--tags", "git,push", "--now", "2026-03-02T10:00"],
                       env=env, capture_output=True, check=True, cwd=tmp)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="every provider, every miss and false redaction")
    parser.add_argument("--show-held-out", action="store_true", help="with --verbose: held-out providers' cases too")
    parser.add_argument("--size-mb", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=7, help="whole-process runs per side")
    parser.add_argument("--main", type=Path, default=REPO.parent / "main", help="main's worktree, for the A/B")
    parser.add_argument("--no-speed", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    redactor = load_default()
    print(f"rules: {len(redactor.rules)} (loaded in {1e3 * (time.perf_counter() - start):.1f} ms)\n")
    realistic = [0, 0, 0, 0]
    for name in REALISTIC_SETS:
        stats = score(redactor, realistic_cases(name), args.verbose, name, args.show_held_out)
        for i, v in enumerate(summarise(name, stats, args.verbose)):
            realistic[i] += v
    generated = [{"provider": p, "text": t, "secret": s} for p, t, s in list(provider_cases(redactor)) + LABELLED]
    generated += [{"provider": "(ordinary agent text)", "text": t, "secret": None} for t in ORDINARY]
    summarise("generated", score(redactor, generated, args.verbose, "generated", args.show_held_out), False)
    lines, damaged = transcripts(redactor, args.verbose)
    s, c, n, d = realistic
    print(f"\nrealistic (gitleaks + detect-secrets): recall {_pct(c, s)} of {s}; false redaction {_pct(d, n)} of {n}"
          f"; with the transcripts' lines: {_pct(d + damaged, n + lines)} of {n + lines}")
    print("targets: recall >= 97 % over >= 80 providers, false redaction <= 3 %")
    if not args.no_speed:
        speed(redactor, args.size_mb, args.main, args.runs)


if __name__ == "__main__":
    main()
