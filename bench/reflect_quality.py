"""Measure `kg reflect` detection against real transcripts.

    .venv/bin/python bench/reflect_quality.py            # everything
    .venv/bin/python bench/reflect_quality.py --quick    # skip the 10 MB throughput runs

- errors: every tool result in transcripts/claude_code, against its `is_error` flag, twice: as shipped (the
  flag is trusted, declined tool calls are not failures) and text-only (the flag hidden), with the failure
  rules of rules/errors.toml (kg.reflect.failures, what `kg reflect` and the live hooks use);
- what users say, per class P / R / F1:
  1. labels/specstory_minsky_user_turns.jsonl (441 turns, 57 sessions of one user): the model retrained in
     5 folds that leave whole sessions out (bench/reflect_train.py), beside the same model scored on the
     turns it was fitted on (train) to show the gap;
  2. tests/data/other_user_turns.jsonl: 282 user turns of other users and agents (Claude Code, Codex,
     OpenClaw/pi, aider; English and Russian), labelled by this project after the signals were written, scored
     with the shipped rules and model. The aider and Codex turns are development data, trained on
     (bench/reflect_train.py DEV_PROVIDERS); OpenClaw/pi and Claude Code are never trained on. A file
     the readers here cannot open is skipped and named. --providers keeps a split by runtime (the gold has been
     read before: develop on some runtimes' turns, read the others once);
  3. tests/data/specstory_labels.jsonl: the three development sessions (corrections, feature requests);
  4. runtimes/ (Claude Code, Codex, OpenClaw/pi, aider; no labels): the model is fitted on Cursor chats and
     the labelled aider and Codex turns; the share of speaking user turns with a finding
     per runtime, and with --sample N, N findings per runtime printed for reading false alarms by hand;
- leave one provider out (bench/reflect_lopo.py): the model refitted without each runtime's turns and scored on
  them, main's tree beside this one; OpenClaw and Claude Code only with --final (held out, read once);
- whole process: `kg reflect FILE --json` on the dense 10 MB file, fresh processes, this tree and main's alternately
  (median wall and CPU; budget 2 s);
- throughput: what `kg reflect` does before it writes (parse, the redaction gate, what the user said, the failed
  tool calls), CPU per phase, on a
  ~10 MB Claude Code JSONL made by repeating the records of the real ones (budget 2 s), in fresh processes,
  alternating with main's tree (--main, default ../main) so the ratio is measured under the same load.

Shared data: $KG_SHARED_DATA, else <repo>/../shared/data.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import reflect_lopo
import reflect_train as rt

from kg.core.policy import packaged
from kg.reflect import TranscriptError, default_rules, read_transcript
from kg.reflect import failures as fl
from kg.reflect.detect import learnings, speaking_turns

REPO = Path(__file__).resolve().parents[1]
DEV_LABELS = REPO / "tests" / "data" / "specstory_labels.jsonl"
OTHER_LABELS = REPO / "tests" / "data" / "other_user_turns.jsonl"
TARGET_BYTES = 10 * 1024 * 1024
BUDGET_S = 2.0
# Label -> finding category.
CATEGORY = {"correction": "correction", "preference": "preference", "knowledge_gap": "knowledge_gap",
            "feature_request": "feature_request", "positive": "best_practice"}


def prf(tp: int, fp: int, fn: int) -> str:
    p = f"{tp / (tp + fp):.3f}" if tp + fp else "n/a"
    r = f"{tp / (tp + fn):.3f}" if tp + fn else "n/a"
    return f"precision {p} recall {r} (tp {tp}, fp {fp}, fn {fn})"


def claude_files(data: Path) -> list[Path]:
    return sorted(p for p in (data / "transcripts" / "claude_code").iterdir() if ".jsonl" in p.name)


def _is_failure(turn, frules) -> bool:
    return fl.is_failure(turn, frules) and not fl.is_declined(turn.text, frules)


def errors(data: Path, frules) -> None:
    counts = {"shipped": [0, 0, 0], "text-only": [0, 0, 0]}
    declined = 0
    for path in claude_files(data):
        for turn in read_transcript(path).turns:
            if turn.role != "tool":
                continue
            truth = bool(turn.is_error)
            declined += truth and not _is_failure(turn, frules) and "doesn't want to proceed" in turn.text
            for mode, t in (("shipped", turn), ("text-only", replace(turn, is_error=None))):
                got = _is_failure(t, frules)
                c = counts[mode]
                c[0] += got and truth
                c[1] += got and not truth
                c[2] += truth and not got
    print("errors vs is_error (tool results in transcripts/claude_code)")
    for mode, (tp, fp, fn) in counts.items():
        print(f"  {mode:9} {prf(tp, fp, fn)}")
    print(f"  ({declined} of the flagged results are tool calls the user declined: not counted as failures)\n")


def held_out(data: Path) -> None:
    turns = rt.load_turns(data, default_rules(model=False))
    models = rt.train(turns)
    thresholds = rt.calibrate(turns)
    train = [rt.decide(models, t["signals"], thresholds) for t in turns]
    sessions = len({t["session"] for t in turns})
    rt.table(f"1. one user, {len(turns)} labelled turns of {sessions} sessions: train (fitted on all of them)",
             rt.scores(turns, train))
    rt.table(f"   held out ({rt.FOLDS}-fold, whole sessions left out; model and thresholds refitted per fold)",
             rt.scores(turns, rt.held_out_predictions(turns)))
    print()


def _norm(text: str) -> str:
    return " ".join(text.split())


provider = rt.provider


def other_users(data: Path, rules, providers: frozenset[str] | None = None) -> None:
    labels = [json.loads(line) for line in OTHER_LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    if providers:  # a provider split: develop on some runtimes' gold, hold the others out
        labels = [lab for lab in labels if provider(lab["file"]) in providers]
    by_file: dict[str, list[dict]] = {}
    for lab in labels:
        by_file.setdefault(lab["file"], []).append(lab)
    gold: list[set[str]] = []
    found: list[set[str]] = []
    runtime: list[str] = []
    skipped: list[str] = []
    unlabelled = 0  # speaking user turns of the same files that nobody labelled, and those with a finding
    unlabelled_found: dict[str, int] = {}
    unmatched = 0
    for name, labs in by_file.items():
        try:
            t = read_transcript(data / name)
        except (TranscriptError, OSError) as exc:
            skipped.append(f"{name} ({str(exc).splitlines()[0][:60]})")
            continue
        # every user turn: a command or harness turn the detector skips is a turn where it found nothing
        texts = {u.index: _norm(u.text)[:120] for u in t.turns if u.role == "user"}
        per_turn: dict[int, set[str]] = {}
        for f in learnings(t, rules):
            per_turn.setdefault(f.turn, set()).add(f.category)
        labelled = {lab["turn"] for lab in labs} | {i for i, x in texts.items() if x in {b["text"] for b in labs}}
        for i in speaking_turns(t, rules):
            if i not in labelled:
                unlabelled += 1
                for c in {*per_turn.get(i, ()), *(["anything"] if per_turn.get(i) else [])}:
                    unlabelled_found[c] = unlabelled_found.get(c, 0) + 1
        for lab in labs:
            turn = lab["turn"] if texts.get(lab["turn"]) == lab["text"] else next(
                (i for i, x in texts.items() if x == lab["text"]), None)
            if turn is None:
                unmatched += 1
                continue
            gold.append({CATEGORY[x] for x in lab["labels"]})
            found.append(per_turn.get(turn, set()))
            runtime.append(t.format)
    which = f" ({', '.join(sorted(providers))} only)" if providers else ""
    seen = sorted(set(providers or {rt.provider(lab["file"]) for lab in labels}) & set(rt.DEV_PROVIDERS))
    trained = f"trained on {', '.join(seen)}'s turns" if seen else "never trained on"
    rt.table(f"2. other users and agents{which}: {len(gold)} labelled turns, shipped rules and model ({trained})",
             _counts(gold, found, [*CATEGORY.values(), "anything"]))
    print("   per runtime (correction; anything)")
    for fmt in sorted(set(runtime)):
        keep = [i for i, r in enumerate(runtime) if r == fmt]
        c = _counts([gold[i] for i in keep], [found[i] for i in keep], ["correction", "anything"])
        cells = "; ".join(f"gold {tp + fn:3d} found {tp + fp:3d} P {p:.2f} R {r:.2f} F1 {f:.2f}"
                          for tp, fp, fn in c.values() for p, r, f in [rt.prf(tp, fp, fn)])
        print(f"   {fmt:12} {len(keep):3d} turns  {cells}")
    rates = ", ".join(f"{c} {unlabelled_found.get(c, 0) / unlabelled:.2f}"
                      for c in ("correction", "preference", "anything")) if unlabelled else "n/a"
    print(f"   label-free: share of the {unlabelled} unlabelled user turns of the same files with a finding: {rates} "
          f"(labelled: correction {sum('correction' in g for g in gold) / max(1, len(gold)):.2f})")
    if skipped or unmatched:
        print(f"   not scored: {len(skipped)} files without a reader here, {unmatched} turns not found")
        for s in skipped:
            print(f"     {s}")
    print()


def _counts(gold: list[set[str]], found: list[set[str]], classes: list[str]) -> dict[str, tuple[int, int, int]]:
    counts = {}
    for cls in classes:
        tp = fp = fn = 0
        for g, q in zip(gold, found, strict=True):
            a = bool(g) if cls == "anything" else cls in g
            b = bool(q) if cls == "anything" else cls in q
            tp, fp, fn = tp + (a and b), fp + (b and not a), fn + (a and not b)
        counts[cls] = (tp, fp, fn)
    return counts


def dev_sessions(data: Path, rules) -> None:
    labels = [json.loads(line) for line in DEV_LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    predicted: dict[tuple[str, int], set[str]] = {}
    for name in sorted({lab["file"] for lab in labels}):
        t = read_transcript(data / "transcripts" / "specstory" / name)
        users = [turn for turn in t.turns if turn.role == "user"]
        found = learnings(t, rules)
        for n, turn in enumerate(users, 1):
            predicted[(name, n)] = {f.category for f in found if f.turn == turn.index}
    print(f"3. the three development sessions ({len(labels)} user turns, tests/data/specstory_labels.jsonl)")
    for label, category in (("correction", "correction"), ("feature", "feature_request")):
        tp = fp = fn = 0
        for lab in labels:
            got = category in predicted[(lab["file"], lab["turn"])]
            truth = lab["label"] == label
            tp, fp, fn = tp + (got and truth), fp + (got and not truth), fn + (truth and not got)
        print(f"   {label:10} {prf(tp, fp, fn)}")
    print()


RUNTIMES = ("aider", "claude_code", "codex", "openclaw")


def runtime_files(data: Path) -> dict[str, list[Path]]:
    """The real transcripts of each runtime under runtimes/ (the formats' own files, not the notes beside them)."""
    out: dict[str, list[Path]] = {}
    for name in RUNTIMES:
        root = data / "runtimes" / name
        files = [p for p in sorted(root.rglob("*")) if p.is_file() and (
            p.suffix == ".jsonl" or (name == "aider" and p.suffix == ".md" and p.name != "README.md"))]
        out[name] = files
    return out


def runtimes(data: Path, rules, sample: int, seed: int = 14, final: bool = False) -> None:
    """Label-free: how often each runtime's user turns get a finding, and (--sample) which, to read by hand."""
    import random

    print("4. runtimes (no labels; of these only the labelled aider and Codex turns were trained on): share of "
          "speaking user turns with a finding")
    print(f"  {'runtime':12} {'files':>5} {'turns':>6} {'correction':>10} {'preference':>10} {'other':>6} "
          f"{'anything':>8}")
    for name, files in runtime_files(data).items():
        if name in reflect_lopo.HELD and not final:
            continue  # held out: not read while developing
        turns = 0
        hit: dict[str, set[tuple[str, int]]] = {"correction": set(), "preference": set(), "other": set(),
                                                "anything": set()}
        found = []
        for path in files:
            try:
                t = read_transcript(path)
            except (TranscriptError, OSError):
                continue
            turns += len(speaking_turns(t, rules))
            for f in learnings(t, rules):
                key = (str(path), f.turn)
                cls = f.category if f.category in ("correction", "preference") else "other"
                hit[cls].add(key)
                hit["anything"].add(key)
                found.append((path, t, f))
        rates = " ".join(f"{len(hit[c]) / max(1, turns):{w}.2f}" for c, w in
                         (("correction", 10), ("preference", 10), ("other", 6), ("anything", 8)))
        print(f"  {name:12} {len(files):5d} {turns:6d} {rates}")
        for path, t, f in random.Random(seed).sample(found, min(sample, len(found))):
            said = _norm(t.turns[f.turn].text)[:160]
            print(f"     [{f.category}] {path.name[:30]} {f.position}: {said!r}")
            print(f"        signals {', '.join(f.signals)}")
            print(f"        lesson {f.summary!r} (key {f.pattern_key})")
    print()


_TIMED = """
import json, sys, time
from dataclasses import replace
from kg.core.policy import packaged
from kg.redaction.redact import load_default
from kg.reflect import default_rules, read_transcript, reflect
from kg.reflect import failures as fl
try:
    from kg.reflect.apply import gated
except ImportError:  # a tree before the lean gate: every text and input redacted, as its kg reflect does
    def gated(t, red):
        return replace(t, turns=tuple(replace(x, text=red.redact(x.text).text,
                       tool_input=red.redact(x.tool_input).text if x.tool_input else x.tool_input) for x in t.turns))
rules, frules, red = default_rules(), fl.load_rules(packaged("errors")), load_default()
clock = time.process_time
start = clock()
t = read_transcript(sys.argv[1])
parsed = clock()
t = gated(t, red)
gate = clock()
import inspect
# as kg reflect calls it: the gate has redacted the turns (a tree with `gated` would otherwise redact them again)
kw = {"gated": True} if "gated" in inspect.signature(reflect).parameters else {}
r = reflect(t, rules, redact=lambda s: red.redact(s).text, **kw)
said = clock()
f = fl.failures(t, frules)
done = clock()
print(json.dumps({"parse": parsed - start, "gate": gate - parsed, "said": said - gate, "failures": done - said,
                  "total": done - start, "turns": len(t.turns), "users": sum(1 for x in t.turns if x.role == "user"),
                  "found": len(r.findings), "failed": len(f.found)}))
"""


def synthetic(data: Path, dense: bool) -> bytes:
    """~10 MB of Claude Code JSONL made by repeating the records of the real ones. Dense: only user and assistant
    records (no progress noise), the worst case for detection."""
    records = []
    for path in claude_files(data):
        raw = path.read_bytes()
        raw = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        lines = [line for line in raw.splitlines() if line.strip()]
        if dense:
            lines = [ln for ln in lines if json.loads(ln).get("type") in ("user", "assistant")]
        records += lines
    body = bytearray()
    while len(body) < TARGET_BYTES:
        for line in records:
            body += line + b"\n"
            if len(body) >= TARGET_BYTES:
                break
    return bytes(body)


def throughput(data: Path, *, dense: bool, main: Path | None, runs: int) -> None:
    """Parse, the redaction gate, what the user said and the failed tool calls, each run in a fresh process; this
    tree and main's alternately, so both see the same load. CPU seconds of each phase (process time: the machine's
    load moves it less than wall time), medians."""
    pythons = {"this": Path(sys.executable)}
    if main is not None and (main / ".venv" / "bin" / "python").exists():
        pythons["main"] = main / ".venv" / "bin" / "python"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "synthetic.jsonl"
        body = synthetic(data, dense)
        path.write_bytes(body)
        got: dict[str, list[dict]] = {name: [] for name in pythons}
        for _ in range(runs):
            for name, py in pythons.items():
                out = subprocess.run([str(py), "-c", _TIMED, str(path)], capture_output=True, text=True,
                                     cwd=tmp, check=True)
                got[name].append(json.loads(out.stdout))
    label = "dense" if dense else "as recorded"
    for name, rows in got.items():
        med = {k: statistics.median(r[k] for r in rows) for k in ("parse", "gate", "said", "failures", "total")}
        ratio = ""
        if name != "main" and "main" in got:
            ratio = f", {med['total'] / statistics.median(r['total'] for r in got['main']):.2f}x main's"
        r0 = rows[0]
        print(f"throughput ({label}, {name}): {len(body) / 1e6:.1f} MB, {r0['turns']} turns ({r0['users']} user), "
              f"{r0['found']} said + {r0['failed']} failures, CPU: parse {med['parse']:.2f} s + redaction gate "
              f"{med['gate']:.2f} s + said {med['said']:.2f} s + failures {med['failures']:.2f} s "
              f"= {med['total']:.2f} s "
              f"median of {runs}{ratio}")


def whole_process(data: Path, *, main: Path | None, runs: int) -> None:
    """`kg reflect FILE --json` (a dry run: parse, the redaction gate, detection, failures, the report) on the dense
    ~10 MB file, each run a fresh process, this tree's kg and main's alternately: median wall and CPU (user + sys of
    the child). Bytecode is written (a warm-up run per tree first), as in a user's install: a shell with
    PYTHONDONTWRITEBYTECODE=1 would otherwise make one tree compile its sources on every run."""
    import os
    import resource

    kgs = {"this": Path(sys.executable).parent / "kg"}
    if main is not None and (main / ".venv" / "bin" / "kg").exists():
        kgs["main"] = main / ".venv" / "bin" / "kg"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "KG_WORKSPACE", "KG_NOW")}
    got: dict[str, list[tuple[float, float]]] = {name: [] for name in kgs}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "synthetic.jsonl"
        path.write_bytes(synthetic(data, True))
        ws = Path(tmp) / "ws"
        subprocess.run([str(kgs["this"]), "init", str(ws)], capture_output=True, check=True, env=env)
        for n in range(runs + 1):
            for name, kg in kgs.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                subprocess.run([str(kg), "--workspace", str(ws), "reflect", str(path), "--json"], capture_output=True,
                               check=True, env=env, cwd=tmp)
                wall = time.perf_counter() - start
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                if n:  # the first run of each writes its bytecode
                    got[name].append((wall, cpu))
    for name, rows in got.items():
        wall = statistics.median(r[0] for r in rows)
        cpu = statistics.median(r[1] for r in rows)
        ratio = ""
        if name != "main" and "main" in got:
            ratio = (f" ({wall / statistics.median(r[0] for r in got['main']):.2f}x main's wall, "
                     f"{cpu / statistics.median(r[1] for r in got['main']):.2f}x its CPU)")
        print(f"whole process (kg reflect --json, dense 10 MB, {name}): wall {wall:.2f} s, CPU {cpu:.2f} s, median of "
              f"{runs}{ratio} (budget {BUDGET_S:.0f} s wall; load {os.getloadavg()[0]:.1f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the 10 MB throughput runs")
    ap.add_argument("--main", type=Path, default=REPO.parent / "main",
                    help="main's worktree (with its .venv), timed in the same run for a ratio")
    ap.add_argument("--runs", type=int, default=5, help="throughput runs per tree (median)")
    ap.add_argument("--no-other", action="store_true",
                    help="skip the other users' gold (while developing: it is the held-out figure, read once)")
    ap.add_argument("--providers", default="",
                    help="score the other users' gold of these runtimes only (comma-separated: aider, claude_code, "
                         "codex, openclaw), to keep a provider split: develop on some, read the others once")
    ap.add_argument("--final", action="store_true",
                    help="score the held-out providers too (OpenClaw, Claude Code: read once, at the end of a piece of "
                         "work); without it the other users' gold is the development runtimes' only")
    ap.add_argument("--no-lopo", action="store_true", help="skip the leave-one-provider-out table (section 5)")
    ap.add_argument("--baseline", default=str(REPO.parent / "main"),
                    help="the tree scored beside this one in the leave-one-provider-out table ('' for none)")
    ap.add_argument("--sample", type=int, default=0, help="print this many findings per runtime (section 4)")
    ap.add_argument("--seed", type=int, default=14,
                    help="which findings --sample draws (a fresh seed for a fresh read)")
    args = ap.parse_args()
    data = rt.shared_data()
    if not (data / "transcripts").is_dir():
        sys.exit(f"no shared data at {data}: set KG_SHARED_DATA to the folder holding transcripts/")
    rules = default_rules()
    frules = fl.load_rules(packaged("errors"))
    errors(data, frules)
    held_out(data)
    if not args.no_other:
        chosen = frozenset(p for p in args.providers.split(",") if p)
        if not args.final:  # the held-out runtimes choose nothing: scored with --final only
            chosen = (chosen or frozenset(rt.DEV_PROVIDERS)) - set(reflect_lopo.HELD)
        other_users(data, rules, chosen or None)
    dev_sessions(data, rules)
    runtimes(data, rules, args.sample, args.seed, args.final)
    if not args.no_lopo:
        print("5. ", end="")
        reflect_lopo.report(data, args.final, args.baseline)
        print()
    if not args.quick:
        throughput(data, dense=False, main=args.main, runs=args.runs)
        throughput(data, dense=True, main=args.main, runs=args.runs)
        whole_process(data, main=args.main, runs=args.runs)


if __name__ == "__main__":
    main()
