"""What deciding conflicts outside a cycle costs (QA4 #7: `kg conflicts` and `kg export memory` settle the
contradictions no decision covers yet, `kg.lifecycle.settling.outside`). Measured with this build and another in
the same run (`--kg before=...`: the baseline), alternating, on copies of one workspace of N synthetic events
(bench/common.py) plus P principles added by hand, every second one the opposite of the one before (P/2
contradicting pairs), with a cycle run once (every pair decided) and one more pair added after it (what the
commands now decide, the baseline does not). Each command a new process with the read server off. Medians;
never asserts. The reads beside them (`kg inject -m`, `kg status`) judge that pair as `kg conflicts` would, storing
nothing (the baseline showed both sides and listed none); each build keeps one copy, so after the first round the
pair is decided and the reads still look for contradictions no decision covers (the same queries either way).

    .venv/bin/python bench/conflicts_outside.py --kg before=/work/base40/.venv/bin/kg [--events N] [--runs 7] [--cpu]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import build_workspace, compare_builds, cpu_process, process_env, ratio_rows, table, timed_process  # noqa: E402

KG = str(Path(sys.executable).parent / "kg")
NOW = "2026-06-01T12:00"
SUBJECTS = ["pnpm", "yarn", "tabs", "squash merges", "docker compose", "feature flags", "type hints", "rebase",
            "force push", "snapshot tests", "global installs", "sudo", "vendored deps", "emoji in commits",
            "long lines", "print debugging", "mocks", "retries", "hot reload", "monorepos"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--principles", type=int, default=40)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--cpu", action="store_true", help="CPU seconds of each process (user + system), not wall")
    ap.add_argument("--kg", action="append", default=[], help="name=path of another build's kg (the baseline)")
    args = ap.parse_args()
    builds = {"this": KG, **dict(x.split("=", 1) for x in args.kg)}

    def kg(*argv: str, base: Path) -> None:
        subprocess.run([KG, "-w", str(base), *argv], check=True, capture_output=True, env=process_env())

    with tempfile.TemporaryDirectory(prefix="kg-conflicts-") as tmp:
        base = Path(tmp) / "base"
        build_workspace(base, args.events)
        for i in range(args.principles // 2):
            subject = f"{SUBJECTS[i % len(SUBJECTS)]} in area {i}"
            kg("node", "add", "principle", f"always use {subject}", "--now", "2026-05-30T09:00", base=base)
            kg("node", "add", "principle", f"never use {subject}", "--now", "2026-05-31T09:00", base=base)
        kg("cycle", "--now", NOW, base=base)
        kg("node", "add", "principle", "always run the linter before pushing", "--now", NOW, base=base)
        kg("node", "add", "principle", "never run the linter before pushing", "--now", NOW, base=base)

        def commands(_: int, kg_path: str, w: list[str]) -> list[tuple[str, list[str]]]:
            return [("kg inject -m", [kg_path, *w, "inject", "-m", "run the linter before pushing", "--now", NOW]),
                    ("kg status", [kg_path, *w, "status", "--now", NOW]),
                    ("kg conflicts --json", [kg_path, *w, "conflicts", "--json"]),
                    ("kg export memory", [kg_path, *w, "export", "memory", "--now", NOW]),
                    ("kg export memory --dry-run", [kg_path, *w, "export", "memory", "--dry-run", "--now", NOW])]

        samples = compare_builds(base, builds, args.runs, commands, cpu_process if args.cpu else timed_process)
    names = list(builds)
    print(table(f"{args.events} events, {args.principles} hand-added principles ({args.principles // 2} pairs "
                "decided by a cycle, one pair added after it), each command a new process, median of "
                f"{args.runs} ({'CPU ' if args.cpu else ''}s)", ["command", *names, *(f"this/{n}" for n in names[1:])],
                ratio_rows(samples, names)))


if __name__ == "__main__":
    main()
