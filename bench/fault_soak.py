"""Issue 20's large fault run: kill -9 trials per scenario, reader latency while 8 agents log, and fuzzed
bad-input invocations. Prints tables; never asserts (the CI suite, tests/integration/test_fault.py and
tests/cli/test_fuzz.py, runs the small version).

    .venv/bin/python bench/fault_soak.py [--trials 20] [--agents 8] [--reads 15] [--fuzz 1000] [--seed 20]

- kill trials: `kg log --wait`, the detached applier a `kg log` leaves, `kg cycle`, `kg import trail`, a
  `with ws:` batch and a reader draining a backlog are each killed with SIGKILL at a random moment; then the
  workspace must open, every acknowledged id must be in the graph (not lost) and no summary stored twice
  (not duplicated);
- reader latency: `kg search`, `kg status` and `kg hook session-start` wall time with N agents each logging in
  a loop (every `kg log` answers and leaves a detached applier), against no agent logging and against a
  command with no graph (baselines, same run), and `kg cycle` / `kg graph report` failures under that load
  (bench/reader_latency.py);
- fuzz: random bad arguments over the command paths, run in-process through the console entry's `run`;
  counted are exit codes other than 0 and 2, and answers without an `Error:` line.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "integration"))
import fault_trials  # noqa: E402
import reader_latency  # noqa: E402
from common import table  # noqa: E402

BAD_TEXT = ["caf\udce9", "\udcff", "../../AGENTS", "/abs/path", "../../../../usr/**/*", "'; MATCH (n) DETACH "
            "DELETE n; //", "$id", "", " ", "x" * 5000, "\u202e", "LRN-20261201-" + "9" * 25, "-", "%s%n", "{{x}}"]
BAD_NUMBER = ["99999999999999999999", "-99999999999999999999", "1e999999", "nan", "0x10", "", "-1", "0",
              str(2**63), str(-(2**63) - 1)]
BAD_DATE = ["9999-12-31T23:59:59", "0001-01-01", "2026-02-30", "yesterday", "", "\udce9", "99999999d",
            "10000-01-01", "2026-12-01T10:00:00+99:00"]


def fuzz_argv(rng: random.Random) -> list[str]:
    t, n, d = (lambda: rng.choice(BAD_TEXT)), (lambda: rng.choice(BAD_NUMBER)), (lambda: rng.choice(BAD_DATE))
    makers = [
        lambda: ["log", rng.choice(["learning", "error", "feature", t()]), t()],
        lambda: ["log", "error", "x", "--session", t()],
        lambda: ["log", "learning", "x", "--pattern-key", t(), "--priority", t()],
        lambda: ["show", t()], lambda: ["list", "--limit", n()], lambda: ["list", "--since", d()],
        lambda: ["trends", n()], lambda: ["search", t(), "--session", t()], lambda: ["search", t(), "--limit", n()],
        lambda: ["session", "end", "--session", t()], lambda: ["session", "end", "--summary", t()],
        lambda: ["pref", "set", t(), t()], lambda: ["pref", "get", t()], lambda: ["skill", "show", t()],
        lambda: ["why", t()], lambda: ["--now", d(), "status"], lambda: ["--now", d(), "cycle", "--dry-run"],
        lambda: ["resolve", t(), "--status", t()], lambda: ["edge", "add", t(), t(), t()],
        lambda: ["node", "add", t(), t()], lambda: ["graph", "path", t(), t()], lambda: ["patterns", "--min", n()],
        lambda: ["reflect", rng.choice(["/dev/zero", "/dev/null", t()])], lambda: ["export", "trail", "--out", t()],
    ]
    return rng.choice(makers)()


def run_fuzz(ws: Path, count: int, seed: int) -> tuple[int, int, dict[int, int], list[str]]:
    import os

    from kg.cli.app import run

    rng = random.Random(seed)
    outside, no_error, codes, examples = 0, 0, {}, []
    os.chdir(ws)  # relative --out names land in the scratch workspace, not the checkout
    for _ in range(count):
        argv = fuzz_argv(rng)
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = run(["-w", str(ws), *argv])
        codes[code] = codes.get(code, 0) + 1
        if code not in (0, 2) or "unexpected failure" in err.getvalue():
            outside += 1
            examples.append(f"{argv!r} -> {code}: {err.getvalue().strip()[-160:]}")
        elif code == 2 and "Error: " not in err.getvalue():
            no_error += 1
            examples.append(f"{argv!r} -> 2 without an Error line")
    return count, outside, codes, examples[:10] + ([f"(no Error line: {no_error})"] if no_error else [])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=20, help="kill trials per scenario")
    ap.add_argument("--agents", type=int, default=8)
    ap.add_argument("--reads", type=int, default=15)
    ap.add_argument("--fuzz", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="kg-soak-") as tmp:
        root = Path(tmp)
        rows, notes = [], []
        for scenario in fault_trials.SCENARIOS:
            ws = root / f"kill-{scenario}"
            fault_trials.kg(root, "init", str(ws))
            tally = fault_trials.Tally()
            started = time.perf_counter()
            for n in range(args.trials):
                fault_trials.trial(ws, scenario, rng, tally, f"s{args.seed}{scenario}{n}x{rng.randrange(10**6)}")
            rows.append(tally.row(scenario) + [f"{time.perf_counter() - started:.0f}"])
            notes += tally.notes
        print(table("kill -9 trials", ["scenario", "trials", "acknowledged", "lost", "duplicated", "bricked",
                                       "seconds"], rows))
        for note in notes[:20]:
            print("  ", note)

        ws = root / "readers"
        fault_trials.kg(root, "init", str(ws))
        if not args.reads:  # --reads 0: no latency run (bench/reader_latency.py makes it alone)
            ws = None
        for i in range(30 if ws else 0):
            fault_trials.kg(ws, "log", "error", f"deploy step {i} failed on staging", "--wait")
        lat, heavy = [], []
        for n in (0, args.agents) if ws else ():
            stats, held = reader_latency.merge([reader_latency.measure(ws, n, args.reads, heavy=2)])
            stats.pop("backlog")
            base = stats["no-graph"]["p50"]
            lat += [[str(n), cmd, f"{d['p50']:.2f}", f"{d['p95']:.2f}", f"{d['max']:.2f}",
                     f"{d['failed']}/{args.reads}", f"{d['pending']:g}", f"{d['p50'] / base:.1f}"]
                    for cmd, d in stats.items()]
            heavy += [[str(n), name, f"{failed}/2", str(is_held)] for name, (failed, is_held, *_) in held.items()]
        if lat:
            print(table("reader latency (seconds, whole processes) while N agents log (bench/reader_latency.py)",
                        ["agents", "command", "p50", "p95", "max", "failed", "pending p50", "p50 / no-graph"],
                        lat))
            print(table("heavy commands under the same load", ["agents", "command", "failed", "'graph is held'"],
                        heavy))

        ws = root / "fuzz"
        fault_trials.kg(root, "init", str(ws))
        fault_trials.kg(ws, "log", "learning", "a first entry", "--wait")
        count, outside, codes, examples = run_fuzz(ws, args.fuzz, args.seed)
        print(table("fuzzed bad-input invocations", ["invocations", "exit not 0/2", "exit codes"],
                    [[str(count), str(outside), ", ".join(f"{k}: {v}" for k, v in sorted(codes.items()))]]))
        for e in examples:
            print("  ", e)


if __name__ == "__main__":
    main()
