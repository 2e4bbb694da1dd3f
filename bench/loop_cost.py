"""What the loop's decisions cost the user: the occurrences (mistakes) the simulated user saw over the history,
per effect class, under kg's policy and under a policy with `--set` overrides, on the same seeded histories
(bench/loop_replay.py's fast replay). loop_sim.py scores decisions (right at the end, reverted, left applied);
this counts what they cost: a rule taken out for a check lets its mistakes back for those days.

Both policies see paired draws (loop_sim.day_events `paired`): each pattern's day from its own random stream, so
they meet the same luck wherever their rules agree, and a difference is what the policies did, not a shifted
stream. `--stream` draws as loop_sim.py does by default (one stream; the figures before this option).

    python bench/loop_cost.py --seeds 10,11,12 --mix 60/30/10
    python bench/loop_cost.py --seeds 10,11,12 --set verification.history_level=0   # beside an override
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import loop_sim  # noqa: E402
from loop_replay import replay_history  # noqa: E402
from loop_sim import load_policy  # noqa: E402


def occurrences(seeds: list[int], sets: list[str], **opts) -> tuple[dict[str, int], dict]:
    """Occurrences per effect class, and loop_sim's kg column (the issue's end-state figures) on the same runs."""
    policy = load_policy(sets)
    hist = [replay_history(seed, policy=policy, **opts) for seed in seeds]
    return loop_sim.occurrences(hist), loop_sim.kg_summary(hist, opts["days"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="10,11,12")
    ap.add_argument("--mix", default="60/30/10")
    ap.add_argument("--drift", type=float, default=0.0)
    ap.add_argument("--burst", type=float, default=0.0)
    ap.add_argument("--stream", action="store_true", help="one random stream for every draw (the former figures)")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="the other policy: rules/lifecycle.toml with these values")
    a = ap.parse_args(argv)
    opts = dict(n=40, days=120, mix=tuple(float(x) / 100 for x in a.mix.split("/")), rate=(0.1, 1.0),
                drift=a.drift, burst=a.burst, delay=3, paired=not a.stream)
    seeds = [int(s) for s in a.seeds.split(",")]
    rows = {"kg (rules/)": occurrences(seeds, [], **opts)}
    if a.set:
        rows["with " + " ".join(a.set)] = occurrences(seeds, a.set, **opts)
    print(f"occurrences the user saw, seeds {a.seeds}, mix {a.mix}, drift {a.drift}, burst {a.burst}, "
          f"{'one stream' if a.stream else 'paired draws'}")
    print("| policy | effective | ineffective | harmful | total | right at end % | effective reverted % (n / at end) "
          "| bad left % | label % | median days | checks / effective days out |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, (c, k) in rows.items():
        print(f"| {name} | {c.get('effective', 0)} | {c.get('ineffective', 0)} | {c.get('harmful', 0)} | "
              f"{sum(c.values())} | {k['end_right']} | {k['effective_reverted']} ({k['effective_reverted_n']} / "
              f"{k['effective_permanent_n']}) | {k['bad_left_applied']} | {k['label_right']} | {k['median_days']} | "
              f"{k['checks']} / {k['effective_out_days']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
