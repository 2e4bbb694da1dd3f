"""Redaction quality and speed: recall and false redaction per provider on realistic labelled cases, every
redaction made on real agent transcripts, 10 MB in-process, and a whole `kg log` process against main's code.

    .venv/bin/python bench/redact_quality.py [--verbose] [--size-mb 10] [--runs 7] [--no-speed | --speed-only]
        [--main ../main]

Sets (a secret counts as caught when it no longer occurs in the output, so a tail left behind is a miss; a
non-secret counts as falsely redacted when the output differs from the input at all):
- gitleaks, detect-secrets: those scanners' own per-rule true and false positives (tests/data/secrets,
  attributed there). Positives that are placeholders by kg's definition (`SKxxxx...`) are counted apart.
- gitleaks-generated: gitleaks' generated true positives, made as its rule tests make them (a value drawn from
  the rule file's `secrets.NewSecret(regex)`, put into its `GenerateSampleSecrets` shapes), fixed seed. kg's
  provider rules are converted from the same rule files, so these say more about the shapes of text than about
  unseen formats; "literal only" leaves them out.
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
import resource
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
BENCH = str(REPO / "bench")


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


FIELDS = {"summary": "git push failed: no upstream branch set for feature/login-retry",
          "details": "Ran `git push` from the worktree; git said: fatal: The current branch has no upstream branch. "
                     "To push the current branch and set the remote as upstream, use --set-upstream.",
          "action": "Use `git push -u origin HEAD` the first time a branch is pushed.",
          "area": "tooling", "tags": ["git", "push"]}
# Run in each side's venv (this branch, main), so both are timed in the same run on the same text; CPU time of the
# process (time.process_time), which a loaded machine disturbs far less than wall time. Prints JSON:
# the import, the rules' load and the first kg log's fields in a fresh process (what every `kg log` pays), a warm
# kg log (median of 200), and the big text (median of `runs`).
SPEED_PROBE = """
import json, statistics, sys, time
t0 = time.process_time()
from kg.redaction.redact import load_default
t1 = time.process_time()
r = load_default()
t2 = time.process_time()
fields = json.loads(sys.argv[2])
r.redact_many(fields)
t3 = time.process_time()
warm = []
for _ in range(200):
    s = time.process_time(); r.redact_many(fields); warm.append(time.process_time() - s)
text = open(sys.argv[1], encoding="utf-8").read()
big = []
worst = None
if int(sys.argv[3]):
    r.redact(text[:100000])
    for _ in range(int(sys.argv[3])):
        s = time.process_time(); r.redact(text); big.append(time.process_time() - s)
    sys.path.insert(0, sys.argv[4])
    from redact_cases import adversarial
    worst = 0.0
    for case in adversarial():
        s = time.process_time(); r.redact(case); worst = max(worst, time.process_time() - s)
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "first": t3 - t2, "warm": statistics.median(warm),
                  "big": statistics.median(big) if big else None, "worst": worst}))
"""


def speed(size_mb: float, main: Path | None, runs: int, big_runs: int) -> None:
    parts = [read_text(p) for p in transcript_files(DATA)]
    parts.append((DATA / "locomo" / "locomo_dev.json").read_text(encoding="utf-8"))
    text = "".join(parts)
    size = int(size_mb * 1_000_000)
    while len(text) < size:
        text += text
    text = text[:size]
    venvs = {"this branch": REPO / ".venv" / "bin" / "python"}
    if main is not None and (main / ".venv" / "bin" / "python").exists():
        venvs["main"] = main.resolve() / ".venv" / "bin" / "python"  # absolute: `kg log` runs in a temp dir
    samples: dict[str, list[dict]] = {name: [] for name in venvs}
    logs: dict[str, list[float]] = {name: [] for name in venvs}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "text.txt"
        path.write_text(text, encoding="utf-8")
        envs = {side: _user_env(Path(tmp), side) for side in venvs}
        for side, python in venvs.items():  # one untimed run per side writes its rules cache and bytecode
            # cwd: a `-c` script imports from the current folder first, so from a checkout's root every side
            # would measure that checkout's kg
            subprocess.run([str(python), "-c", SPEED_PROBE, str(path), json.dumps(FIELDS), "0", BENCH],
                           env=envs[side], capture_output=True, text=True, check=True, cwd=tmp)
            _kg_log(python, envs[side])
        for i in range(runs):  # alternate, so load on the machine hits both alike
            for side, python in venvs.items():
                env = envs[side]
                out = subprocess.run([str(python), "-c", SPEED_PROBE, str(path), json.dumps(FIELDS),
                                      str(big_runs if i < 1 else 0), BENCH], env=env, capture_output=True, text=True,
                                     check=True, cwd=tmp)
                samples[side].append(json.loads(out.stdout))
                logs[side].append(_kg_log(python, env))
    med = {side: {key: statistics.median(v[key] for v in rows if v[key] is not None)
                  for key in ("import", "load", "first", "warm", "big", "worst")} for side, rows in samples.items()}
    sides = list(venvs)
    print(f"\n{'speed, CPU (medians of ' + str(runs) + ' fresh processes per side)':<58}"
          + "".join(f"{side:>14}" for side in sides) + ("      ratio" if len(sides) == 2 else ""))
    rows = [(f"{size_mb:g} MB of real transcripts, in process (s, median of {big_runs})", "big", 1, "s"),
            ("slowest adversarial input, about 1 MB, in process (s)", "worst", 1, "s"),
            ("a kg log's 5 fields, warm, in process (ms)", "warm", 1e3, "ms"),
            ("  first kg log's fields in a fresh process (ms)", "first", 1e3, "ms"),
            ("  loading the rules (cache) per process (ms)", "load", 1e3, "ms"),
            ("  importing kg.redaction.redact (ms)", "import", 1e3, "ms")]
    for label, key, scale, _unit in rows:
        values = [med[side][key] * scale for side in sides]
        ratio = f"{values[0] / values[1]:>10.2f}x" if len(values) == 2 and values[1] else ""
        print(f"{label:<58}" + "".join(f"{v:>14.3f}" for v in values) + ratio)
    values = [1e3 * statistics.median(logs[side]) for side in sides]
    ratio = f"{values[0] / values[1]:>10.2f}x" if len(values) == 2 else ""
    print(f"{'whole kg log process, CPU (ms)':<58}" + "".join(f"{v:>14.0f}" for v in values) + ratio)
    paid = {side: (med[side]["load"] + med[side]["first"]) * 1e3 for side in sides}
    print("a fresh kg log pays for redaction (load + first fields): "
          + ", ".join(f"{side} {v:.2f} ms" for side, v in paid.items()))
    print(f"targets: {size_mb:g} MB <= 1 s; a kg log pays <= 2 ms for redaction. CPU times of the process; the machine "
          f"is shared and loaded, so read the ratio too.")


def _user_env(tmp: Path, side: str) -> dict[str, str]:
    """The environment a user's `kg` runs in: Python writes and reads compiled bytecode (this environment sets
    PYTHONDONTWRITEBYTECODE, which makes every process compile every module it imports: 20-50 ms more per
    process), kept under `tmp` (PYTHONPYCACHEPREFIX) so no tree is written to; each side has its own rules cache."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    name = side.replace(" ", "_")
    return {**env, "KG_CACHE_DIR": str(tmp / "cache" / name), "PYTHONPYCACHEPREFIX": str(tmp / "pycache" / name)}


def _kg_log(python: Path, env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one whole `kg log` process."""
    kg = python.parent / "kg"
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        env = {**env, "KG_WORKSPACE": tmp}
        subprocess.run([str(kg), "init"], env=env, capture_output=True, check=True, cwd=tmp)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([str(kg), "log", "error", FIELDS["summary"], "--details", FIELDS["details"], "--action",
                        FIELDS["action"], "--area", "tooling", "--tags", "git,push", "--now", "2026-03-02T10:00"],
                       env=env, capture_output=True, check=True, cwd=tmp)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        _wait_for_applier(Path(tmp) / "memory" / ".kg")
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _wait_for_applier(kg_dir: Path, limit: float = 60.0) -> None:
    """Wait (bounded) for the detached applier `kg log` leaves behind to let go of its slot (`applier.lock`), so it
    neither writes into a folder being removed nor takes CPU from the next sample."""
    import fcntl

    try:
        fd = os.open(kg_dir / "applier.lock", os.O_RDONLY)
    except OSError:
        return
    try:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except OSError:
                time.sleep(0.05)
    finally:
        os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="every provider, every miss and false redaction")
    parser.add_argument("--show-held-out", action="store_true", help="with --verbose: held-out providers' cases too")
    parser.add_argument("--size-mb", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=7, help="fresh-process runs per side")
    parser.add_argument("--big-runs", type=int, default=3, help="runs of the big text per side (in one process)")
    parser.add_argument("--main", type=Path, default=REPO.parent / "main", help="main's worktree, for the A/B")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--speed-only", action="store_true", help="only the speed table")
    args = parser.parse_args()
    if args.speed_only:
        speed(args.size_mb, args.main, args.runs, args.big_runs)
        return
    start = time.perf_counter()
    redactor = load_default()
    print(f"rules: {len(redactor.rules)} (loaded in {1e3 * (time.perf_counter() - start):.1f} ms)\n")
    realistic = [0, 0, 0, 0]
    combined: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    literal: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    for name in REALISTIC_SETS:
        stats = score(redactor, realistic_cases(name), args.verbose, name, args.show_held_out)
        for i, v in enumerate(summarise(name, stats, args.verbose)):
            realistic[i] += v
        for provider, row in stats.items():
            for target in (combined, literal) if name != "gitleaks-generated" else (combined,):
                target[provider] = [a + b for a, b in zip(target[provider], row, strict=True)]
    print()
    summarise("literal only", literal, False)
    summarise("ALL realistic", combined, False)
    generated = [{"provider": p, "text": t, "secret": s} for p, t, s in list(provider_cases(redactor)) + LABELLED]
    generated += [{"provider": "(ordinary agent text)", "text": t, "secret": None} for t in ORDINARY]
    summarise("generated", score(redactor, generated, args.verbose, "generated", args.show_held_out), False)
    lines, damaged = transcripts(redactor, args.verbose)
    s, c, n, d = realistic
    print(f"\nrealistic (gitleaks literal + generated + detect-secrets): recall {_pct(c, s)} of {s}; "
          f"false redaction {_pct(d, n)} of {n}"
          f"; with the transcripts' lines: {_pct(d + damaged, n + lines)} of {n + lines}")
    print("targets: recall >= 97 % over >= 80 providers, false redaction <= 3 %")
    if not args.no_speed:
        speed(args.size_mb, args.main, args.runs, args.big_runs)


if __name__ == "__main__":
    main()
