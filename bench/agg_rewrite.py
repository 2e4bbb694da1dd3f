"""What the pattern-occurrence table's guard against kuzu 0.11.3's checkpoint costs (kg/store/aggregates.py): a
row written again is deleted and made anew instead of SET, and every open scans the table once for torn rows.
Measured with this build and another in the same run (`--kg before=...`: the baseline), alternating, on copies of
one workspace of N synthetic events (bench/common.py), each command a new process with the read server off:
- `kg log --wait` of an event joining the pattern with the most members (its row rewritten: the write path);
- `kg log --wait` of an event that joins no pattern (no row written: the open's scan alone);
- `kg status --json` (a reader's open, its scan, the reads the aggregate answers);
and, in this process, the largest pattern's row written again in the form before (SET) and this one (delete and
make), then every row in one batch (a decay pass's refresh of many) in both forms, each in a transaction rolled
back, and the scan itself (`agg_occ_torn`). Medians; never asserts.

    .venv/bin/python bench/agg_rewrite.py --kg before=/work/cdx/.venv/bin/kg [--events 100000] [--runs 9]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import build_workspace, compare_builds, median_of, ratio_rows, table  # noqa: E402

from kg.store import aggregates  # noqa: E402

KG = str(Path(sys.executable).parent / "kg")
NOW = "2026-06-01T12:00:00"


# the form before: the row's lists SET in place, its spans cleared and written again
SET_IN_PLACE = ("MATCH (a:PatternOcc {id: $id}) SET a.first = $first, a.last = $last, a.at = $at, a.sess = $sess, "
                "a.st = $st, a.ev = $ev, a.xev = $xev")
CLEAR_SPANS = "MATCH (a:PatternOcc {id: $id})-[s:ready_span]->(:Node) DELETE s"
SET_MANY = ("UNWIND $rows AS r MATCH (a:PatternOcc {id: r.id}) SET a.first = r.first, a.last = r.last, a.at = r.at, "
            "a.sess = r.sess, a.st = r.st, a.ev = r.ev, a.xev = r.xev")
CLEAR_MANY = "UNWIND $ids AS i MATCH (a:PatternOcc {id: i})-[s:ready_span]->(:Node) DELETE s"


def _rewrite_all(st, form: str) -> None:
    """Every pattern's row written again in one batch (a decay pass's `refresh` of many), in a transaction rolled
    back: the rows and spans computed once, then the statements of one form."""
    from kg.store import spans

    ids = [r["id"] for r in st.run("agg_occ_all")]
    fields = {r["id"]: r for r in st.run("spn_pattern_many", ids=ids)}
    members: dict[str, list] = {i: [] for i in ids}
    for r in st._execute_raw(st.query("agg_occurrences_many").text, {"ids": ids}):
        members[r["pid"]].append((r["eid"], r["at"], r["session"], r["status"], r["tags"]))
    rows = [aggregates._row(i, *aggregates._counted(members[i])) for i in ids]
    span_rows = [spans.span_row(r["id"], x, fields[r["id"]]["status"], fields[r["id"]]["priority"])
                 for r in rows for x in spans.spans_of_row(r)]
    st._execute_raw("BEGIN TRANSACTION", {})
    try:
        if form.startswith("SET"):
            st._execute_raw(SET_MANY, {"rows": rows})
            st._execute_raw(CLEAR_MANY, {"ids": ids})
        else:
            st.run("agg_occ_delete_many", ids=ids)
            st.run("agg_occ_new_many", rows=rows)
        st.run("spn_add_many", rows=span_rows)
    finally:
        st._execute_raw("ROLLBACK", {})


def _rewrite(st, pid: str, form: str) -> None:
    """One pattern's row written again in one form, inside a transaction rolled back (the graph unchanged)."""
    from kg.store import spans

    members = [(r["eid"], r["at"], r["session"], r["status"], r["tags"]) for r in st.run("agg_occurrences_of", id=pid)]
    counted, excluded = aggregates._counted(members)
    row = aggregates._row(pid, counted, excluded)
    st._execute_raw("BEGIN TRANSACTION", {})
    try:
        if form.startswith("SET"):
            st._execute_raw(SET_IN_PLACE, row)
            st._execute_raw(CLEAR_SPANS, {"id": pid})
        else:
            st.run("agg_occ_delete", id=pid)
            st.run("agg_occ_new", **row)
            st.run("agg_occ_link", id=pid)
        spans.write(st, pid, row)
    finally:
        st._execute_raw("ROLLBACK", {})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--kg", action="append", default=[], help="name=path of another build's kg (the baseline)")
    args = ap.parse_args()
    builds = {"this": KG, **dict(x.split("=", 1) for x in args.kg)}
    with tempfile.TemporaryDirectory(prefix="kg-agg-") as tmp:
        base = Path(tmp) / "base"
        ws = build_workspace(base, args.events)
        with ws.store() as st:
            aggregates.rebuild(st)  # (the helper's bulk load writes around the aggregates)
            rows = st._execute_raw("MATCH (a:PatternOcc) RETURN a.id AS id, size(a.at) AS n ORDER BY n DESC", {})
            key = st._execute_raw("MATCH (p:Node {id: $id}) RETURN p.pattern_key AS k", {"id": rows[0]["id"]})[0]["k"]
            scan, _ = median_of(lambda: st.run("agg_occ_torn"), args.runs)
            rewrite = {form: median_of(lambda f=form: _rewrite(st, rows[0]["id"], f), args.runs)[0]
                       for form in ("SET in place (before)", "delete and make (this)")}
            batch = {form: median_of(lambda f=form: _rewrite_all(st, f), args.runs)[0]
                     for form in ("SET in place (before)", "delete and make (this)")}

        def commands(i: int, kg: str, w: list[str]) -> list[tuple[str, list[str]]]:
            return [("kg log --wait, joins the largest pattern",
                     [kg, *w, "log", "error", f"bench join {i}", "--pattern-key", key, "--now", NOW, "--wait"]),
                    ("kg log --wait, no pattern",
                     [kg, *w, "log", "learning", f"bench plain note {i}", "--no-link", "--now", NOW, "--wait"]),
                    ("kg status --json", [kg, *w, "status", "--json", "--now", NOW])]

        samples = compare_builds(base, builds, args.runs, commands)
    names = list(builds)
    out = ratio_rows(samples, names)
    out += [[f"row rewrite, {form}, in process", f"{t * 1000:.2f} ms", *(["-"] * (2 * len(names) - 2))]
            for form, t in rewrite.items()]
    out += [[f"every row rewritten in one batch, {form}, in process", f"{t * 1000:.1f} ms",
             *(["-"] * (2 * len(names) - 2))] for form, t in batch.items()]
    out.append([f"agg_occ_torn scan ({len(rows)} rows, {sum(r['n'] for r in rows)} times)", f"{scan * 1000:.2f} ms",
                *(["-"] * (2 * len(names) - 2))])
    print(table(f"pattern-occurrence guard, {args.events} events, {len(rows)} patterns (largest: {rows[0]['n']} "
                f"members), median of {args.runs} (s)", ["", *names, *(f"this/{n}" for n in names[1:])], out))


if __name__ == "__main__":
    main()
