"""What near-duplicate attach makes of real input: the patterns (≥2 members) real agent transcripts' errors and
corrections form, a hand-checkable sample of those merges, and what a conversation imported as memory chains
into patterns (≥3 members) and what `kg cycle` would promote from it (QA4 #10).

    .venv/bin/python bench/recurrence_quality.py                         # this tree
    .venv/bin/python bench/recurrence_quality.py --base /work/main       # this tree and another, in one run
    .venv/bin/python bench/recurrence_quality.py --base DIR --sample 40 --conversations 0,1

1. **Agent transcripts**: every real transcript in ../shared/data/runtimes/ (Claude Code, Codex, OpenClaw, aider)
   and ../shared/data/transcripts/ (Claude Code, SpecStory) is reflected on (kg's real reader, `kg reflect`);
   its errors and corrections are logged as an agent's own `kg log` / `kg ingest` gives them, without the
   Pattern-Key reflection would derive (with one, attach goes by key and near-duplicates never decide), all
   into one workspace, one kg session per file, in time order, as one user's memory. Reported:
   events logged, patterns, patterns of ≥2 members and the events in them; the sample lists each such pattern's
   members (first 90 characters) for a person to judge "the same mistake or not"; with --base, the pairs of
   events one tree keeps in one pattern and the other does not (the same input gives the same ids in both).
2. **Intake cases** (fresh workspace each, `ws.log`): pairs that must stay one pattern ("Error: ..." beside the
   same failure without the label) and pairs that must not (two releases' facts), as the issue states them.
3. **LoCoMo conversations** imported as memory (`kg ingest --thread`'s path, `ws.log_many(thread=True)`, one
   session per LoCoMo session, turns as `learning` entries "Speaker: text", source "conversation"): patterns of
   ≥3 members, the largest, and what `kg cycle --dry-run` at the day after the last session would promote.

Each tree runs in its own process with its own venv (DIR/.venv/bin/python), on the same data, in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("KG_SHARED_DATA", REPO.parent / "shared" / "data"))
RT = DATA / "runtimes"
LOCOMO = DATA / "locomo" / "locomo_dev.json"

# (source, files): the real transcripts, by runtime
SOURCES = [
    ("claude-code", sorted((RT / "claude_code" / "transcripts").glob("*.jsonl"))),
    ("codex", sorted((RT / "codex" / "transcripts").glob("*.jsonl"))),
    ("openclaw", sorted((RT / "openclaw" / "transcripts").rglob("*.jsonl"))),
    ("aider", sorted(p for p in (RT / "aider").rglob("*.md") if p.name != "README.md")),
    ("claude-code (transcripts/)", sorted((DATA / "transcripts" / "claude_code").glob("*.jsonl*"))),
    ("specstory (transcripts/)", sorted(p for p in (DATA / "transcripts" / "specstory").glob("*.md")
                                        if p.name[:1].isdigit())),
]

# (name, entries, patterns the pair must make): the cases (QA4 #10, the w-ftext landing's breakage)
CASES = [
    ("Error: label + same failure", "error",
     ["Error: connection refused by postgres on port 5432",
      "connection refused by postgres on port 5432 during migrate"], 1),
    ("Note: label + same learning", "learning",
     ["Note: run migrations before tests", "run migrations on the test database before tests"], 1),
    ("same error, two branches", "error",
     ["git push failed: no upstream for branch feature-3", "git push failed: no upstream for branch feature-7"], 1),
    ("two releases' facts", "learning",
     ["deploy release-1.2 broke login", "deploy release-1.3 fixed login"], 2),
    ("two versions' facts", "learning",
     ["upgrade to lib v2.4.1 breaks auth", "upgrade to lib v2.4.0 is fine for auth"], 2),
]


def _patterns(ws: Any) -> list[dict[str, Any]]:
    """Every pattern with its member events' texts, oldest member first."""
    with ws.store() as st:
        rows = st.execute("MATCH (p:Node)-[:derived_from]->(e:Node) WHERE p.kind = 'pattern' AND e.kind = 'event' "
                          "RETURN p.id AS p, p.pattern_key AS key, e.id AS e, e.text AS text, "
                          "e.created_at AS at, e.entry_type AS type")
        events = st.execute("MATCH (e:Node) WHERE e.kind = 'event' RETURN count(e) AS n")[0]["n"]
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        p = out.setdefault(r["p"], {"key": r["key"], "members": []})
        p["members"].append((str(r["at"]), r["e"], r["type"], r["text"]))
    for p in out.values():
        p["members"].sort()
    return [{"events": events}, *sorted(out.values(), key=lambda p: (-len(p["members"]), p["key"]))]


def agent_side(tmp: Path) -> dict[str, Any]:
    import kg
    from kg.reflect.apply import reflect_file

    ws = kg.init_workspace(tmp / "agent")
    per: list[list[Any]] = []
    day = datetime(2026, 3, 1, 9, 0)
    with ws:
        for source, files in SOURCES:
            n = unread = 0
            for i, path in enumerate(files):
                day += timedelta(hours=6)
                try:
                    found = reflect_file(ws, str(path), now=day.isoformat(timespec="minutes")).findings
                except Exception:  # noqa: BLE001 - a transcript kg cannot read is counted, not fatal to the measure
                    unread += 1
                    continue
                # as an agent's own `kg log` / `kg ingest` gives them: no Pattern-Key, near-duplicate attach decides
                items = [{"kind": f["kind"], "summary": f["summary"], "category": f.get("category"),
                          "area": f.get("area"), "priority": f.get("priority") or "medium",
                          "at": (day + timedelta(seconds=j)).isoformat()}
                         for j, f in enumerate(f for f in found if f["kind"] in ("error", "learning"))]
                if items:
                    ws.log_many(items, session=f"{source.split()[0]}-{i}", now=items[0]["at"])
                n += len(items)
            per.append([source, len(files), unread, n])
    found = _patterns(ws)
    return {"events": found[0]["events"], "patterns": found[1:], "per_source": per}


def cases_side(tmp: Path) -> list[list[Any]]:
    import kg

    out = []
    for i, (name, kind, texts, want) in enumerate(CASES):
        ws = kg.init_workspace(tmp / f"case{i}")
        for j, text in enumerate(texts):
            ws.log(kind, text, now=f"2026-04-0{j + 1}T10:00")
        found = _patterns(ws)[1:]
        loose = len(texts) - sum(len(p["members"]) for p in found)
        out.append([name, want, len(found) + loose])
    return out


def locomo_side(tmp: Path, conversations: list[int]) -> list[dict[str, Any]]:
    import kg
    from kg.lifecycle.api import cycle

    samples = json.loads(LOCOMO.read_text(encoding="utf-8"))
    out = []
    for c in conversations:
        conv = samples[c]["conversation"]
        ws = kg.init_workspace(tmp / f"locomo{c}")
        numbers = sorted(int(k.split("_")[1]) for k in conv if k.startswith("session_")
                         and not k.endswith("date_time") and isinstance(conv[k], list))
        last = None
        turns = 0
        with ws:
            for number in numbers:
                start = datetime.strptime(conv[f"session_{number}_date_time"].strip(), "%I:%M %p on %d %B, %Y")
                items = [{"kind": "learning", "summary": f"{t['speaker']}: {t['text']}".strip(), "tags": [t["dia_id"]],
                          "at": (start + timedelta(seconds=30 * j)).isoformat(), "source": "conversation"}
                         for j, t in enumerate(conv[f"session_{number}"])]
                turns += len(items)
                ws.log_many(items, session=f"c{c}-s{number}", thread=True, now=items[0]["at"])
                last = start
        found = _patterns(ws)[1:]
        report = cycle(ws, (last + timedelta(days=1)).isoformat(timespec="minutes"), dry_run=True)
        out.append({"conversation": c, "turns": turns, "patterns": found,
                    "promoted": [p.get("text") for p in report.promoted]})
    return out


def measure(conversations: list[int]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        return {"agent": agent_side(Path(tmp)), "cases": cases_side(Path(tmp)),
                "locomo": locomo_side(Path(tmp), conversations)}


def _in(tree: Path, conversations: list[int]) -> dict[str, Any]:
    py = tree / ".venv" / "bin" / "python"
    done = subprocess.run([str(py), str(Path(__file__).resolve()), "--json", "--conversations",
                           ",".join(map(str, conversations))], cwd=tree, capture_output=True, text=True,
                          env={**os.environ, "KG_SHARED_DATA": str(DATA)})
    if done.returncode:
        raise SystemExit(f"{tree}: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def _short(text: str, n: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _pairs(patterns: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """Every two events one pattern holds, as (earlier id, later id)."""
    out = set()
    for p in patterns:
        ids = sorted(m[1] for m in p["members"])
        out |= {(x, y) for i, x in enumerate(ids) for y in ids[i + 1:]}
    return out


def report(results: dict[str, dict[str, Any]], sample: int) -> None:
    names = list(results)
    rows = []
    for name in names:
        a = results[name]["agent"]
        multi = [p for p in a["patterns"] if len(p["members"]) >= 2]
        rows.append([name, a["events"], len(a["patterns"]), len(multi), sum(len(p["members"]) for p in multi),
                     max((len(p["members"]) for p in a["patterns"]), default=0)])
    print(table("Agent transcripts' findings (kg reflect) logged without a Pattern-Key into one workspace",
                ["tree", "events", "patterns", "patterns ≥2", "events in them", "largest"], rows))
    print(table("Per source (this tree)", ["source", "files", "unreadable", "logged"],
                results[names[0]]["agent"]["per_source"]))
    rows = []
    for i, case in enumerate(CASES):
        rows.append([case[0], case[3], *(results[n]["cases"][i][2] for n in names)])
    print(table("Intake cases: patterns (or loose events) the pair makes", ["case", "want", *names], rows))
    rows = []
    for name in names:
        for conv in results[name]["locomo"]:
            big = [p for p in conv["patterns"] if len(p["members"]) >= 3]
            rows.append([name, conv["conversation"], conv["turns"], len(conv["patterns"]), len(big),
                         sum(len(p["members"]) for p in conv["patterns"]),
                         max((len(p["members"]) for p in conv["patterns"]), default=0), len(conv["promoted"])])
    print(table("LoCoMo conversations imported as memory (log_many --thread)",
                ["tree", "conv", "turns", "patterns", "patterns ≥3", "turns in patterns", "largest",
                 "cycle promotes"], rows))
    if len(names) == 2:  # the same input gives the same ids in both trees: which pairs each keeps together
        a, b = (_pairs(results[n]["agent"]["patterns"]) for n in names)
        texts = {m[1]: m[3] for n in names for p in results[n]["agent"]["patterns"] for m in p["members"]}
        for label, only in ((f"together in {names[1]} only (split here)", b - a),
                            (f"together in {names[0]} only (joined here)", a - b)):
            print(f"\n== agent-side pairs {label}: {len(only)}; the first members of each, up to {sample} ==")
            seen: set[tuple[str, str]] = set()
            for x, y in sorted(only):
                key = (_short(texts[x], 60), _short(texts[y], 60))
                if key in seen:
                    continue
                seen.add(key)
                if len(seen) > sample:
                    break
                print(f"    {x} {key[0]}\n      ~ {y} {key[1]}")
    for name in names:
        print(f"\n== {name}: agent-side merges (patterns of ≥2 members, largest first; up to {sample}) ==")
        for p in [p for p in results[name]["agent"]["patterns"] if len(p["members"]) >= 2][:sample]:
            print(f"- {p['key']} ({len(p['members'])})")
            for _, eid, typ, text in p["members"][:6]:
                print(f"    {eid} [{typ}] {_short(text)}")
        for conv in results[name]["locomo"]:
            big = [p for p in conv["patterns"] if len(p["members"]) >= 3]
            print(f"\n== {name}: LoCoMo {conv['conversation']} patterns of ≥3 members (up to 5 of {len(big)}) ==")
            for p in big[:5]:
                print(f"- ({len(p['members'])})")
                for _, _, _, text in p["members"][:5]:
                    print(f"    {_short(text)}")
            print(f"  cycle would promote: {[_short(t, 70) for t in conv['promoted']] or 'nothing'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, help="another tree (with its own .venv) measured in the same run")
    ap.add_argument("--conversations", default="0,1", help="LoCoMo conversations, e.g. 0,1")
    ap.add_argument("--sample", type=int, default=30, help="agent-side patterns listed per tree")
    ap.add_argument("--json", action="store_true", help="(internal) measure this tree, print JSON")
    args = ap.parse_args()
    convs = [int(x) for x in args.conversations.split(",") if x.strip()]
    if args.json:
        print(json.dumps(measure(convs), default=str))
        return 0
    results = {"this": _in(REPO, convs)}
    if args.base:
        results[f"base ({args.base.name})"] = _in(args.base.resolve(), convs)
    report(results, args.sample)
    return 0


if __name__ == "__main__":
    sys.exit(main())
