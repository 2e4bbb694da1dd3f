"""What making rows anew instead of SETting their lists costs (kg/store/remake.py: a change's evidence, a skill's
triggers and tools, a topic's keywords). Measured with this build and another in the same run (`--kg
before=...`: the baseline), alternating, on copies of one workspace of N synthetic events (bench/common.py) with a
topic index built and a live change, each command a new process with the read server off:
- `kg cycle` (the topic index rebuilt: its rows' keywords are those already, so read and left alone; the change
  verified: its evidence written again);
- `kg skill update` of a skill's triggers (its row made anew);
and, in this process, one change's evidence written in the form before (SET) and this one (`lc_change_pause`:
read, delete, make, its three edges made again), and every topic upserted with the keywords it has (SET before,
a read now) and with others (SET before, made anew with its `about` edges now), each its own transaction,
committed (another trail or other keywords each time). Medians; never asserts.

    .venv/bin/python bench/list_remake.py --kg before=/work/cdx/.venv/bin/kg [--events 10000] [--runs 7]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import build_workspace, compare_builds, median_of, process_env, ratio_rows, table  # noqa: E402

KG = str(Path(sys.executable).parent / "kg")
NOW = datetime(2026, 6, 1, 12)
SET_EVIDENCE = "UNWIND $rows AS r MATCH (c:Change {id: r.id}) SET c.evidence = r.evidence, c.next_check = r.next_check"
SET_TOPICS = ("UNWIND $rows AS r MERGE (t:Meta {key: 'topic:' + CAST(r.name AS STRING)}) "
              "SET t.kind = 'topic', t.id = r.name, t.keywords = r.keywords, t.built_at = $at")


def _once(st, work) -> None:
    """One write, committed (written for real: a rollback in Kùzu 0.11.3 slowed the reads after it)."""
    with st.transaction():
        work()


def _prepare(ws) -> tuple[str, list[dict]]:
    """A live change with its edges (as a promotion makes it) and the topic index built; returns the change's id
    and the topic rows."""
    with ws.store() as st:
        pattern = st._execute_raw("MATCH (p:Node) WHERE p.kind = 'pattern' RETURN p.id AS id LIMIT 1", {})[0]["id"]
        st.run("lc_change_create", id="chg-bench", kind="promotion", target="TOOLS.md", block="kaizen-kg",
               target_kind="tool", text="bench rule", hypothesis="h", prior_block=None, prior_exists=False,
               post_block="- bench rule\n", pattern_key="bench", at=NOW - timedelta(days=8),
               next_check=NOW - timedelta(days=1), evidence=[f"{NOW - timedelta(days=8):%Y-%m-%d} applied (auto)"],
               proposal=None, source="auto")
        for rel in ("change_applies", "change_pattern"):
            st._execute_raw(f"MATCH (c:Change {{id: 'chg-bench'}}), (p:Node {{id: $p}}) "
                            f"CREATE (c)-[:{rel} {{created_at: $at}}]->(p)", {"p": pattern, "at": NOW})
    from kg.memory.topics import topic_rules

    rows = [{"name": n, "keywords": list(k)} for n, k in topic_rules(ws).topics.items()]
    return "chg-bench", rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--kg", action="append", default=[], help="name=path of another build's kg (the baseline)")
    args = ap.parse_args()
    builds = {"this": KG, **dict(x.split("=", 1) for x in args.kg)}
    with tempfile.TemporaryDirectory(prefix="kg-lists-") as tmp:
        base = Path(tmp) / "base"
        ws = build_workspace(base, args.events)
        change, topic_rows = _prepare(ws)
        subprocess.run([KG, "-w", str(base), "skill", "new", "bench-deploy", "--trigger", "deploy"], check=True,
                       capture_output=True, env=process_env())
        subprocess.run([KG, "-w", str(base), "cycle", "--now", NOW.isoformat()], check=True, capture_output=True,
                       env=process_env())  # the topic index and the first verification, in both copies alike
        with ws.store() as st:
            about = st._execute_raw("MATCH (:Node)-[r:about]->(:Meta) RETURN count(r) AS n", {})[0]["n"]
            flip = iter(range(10 ** 6))

            def evidence() -> dict:  # another trail each time (the same one would leave the row alone)
                return {"rows": [{"id": change, "evidence": ["applied", f"checked {next(flip)}"], "next_check": NOW}]}

            def others() -> list[dict]:
                n = next(flip)
                return [{**r, "keywords": [*r["keywords"], f"bench{n}"]} for r in topic_rows]

            inproc = {
                "one change's evidence, SET in place (before)": lambda: _once(st, lambda: st._execute_raw(
                    SET_EVIDENCE, evidence())),
                "one change's evidence, made anew (this)": lambda: _once(st, lambda: st.run("lc_change_pause",
                                                                                             **evidence())),
                "every topic, same keywords, SET (before)": lambda: _once(st, lambda: st._execute_raw(
                    SET_TOPICS, {"rows": topic_rows, "at": NOW})),
                "every topic, same keywords, read and left (this)": lambda: _once(st, lambda: st.run(
                    "memory_topic_upsert", rows=topic_rows, at=NOW)),
                "every topic, other keywords, SET (before)": lambda: _once(st, lambda: st._execute_raw(
                    SET_TOPICS, {"rows": others(), "at": NOW})),
                f"every topic, other keywords, made anew with their {about} about edges (this)": lambda: _once(
                    st, lambda: st.run("memory_topic_upsert", rows=others(), at=NOW)),
            }
            timed = {what: median_of(f, args.runs)[0] for what, f in inproc.items()}

        def commands(i: int, kg: str, w: list[str]) -> list[tuple[str, list[str]]]:
            day = (NOW + timedelta(days=7 * (i + 1))).isoformat()
            return [("kg cycle (a week on: topics, the change verified)", [kg, *w, "cycle", "--now", day]),
                    ("kg skill update --trigger", [kg, *w, "skill", "update", "bench-deploy", "--trigger",
                                                   f"deploy {i}"])]

        samples = compare_builds(base, builds, args.runs, commands)
    names = list(builds)
    out = ratio_rows(samples, names)
    out += [[f"{what}, in process", f"{t * 1000:.2f} ms", *(["-"] * (2 * len(names) - 2))]
            for what, t in timed.items()]
    print(table(f"rows made anew instead of SET lists, {args.events} events, median of {args.runs} (s)",
                ["", *names, *(f"this/{n}" for n in names[1:])], out))


if __name__ == "__main__":
    main()
