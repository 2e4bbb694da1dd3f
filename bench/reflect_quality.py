"""Measure `kg reflect` detection against real transcripts.

    python bench/reflect_quality.py

- errors: every tool result in transcripts/claude_code, against its `is_error` flag,
  twice: as shipped (the flag is trusted, declined tool calls are not failures) and
  text-only (the flag hidden, as for OpenAI-style transcripts that carry none);
- corrections and feature requests: user turns of transcripts/specstory against the
  hand labels in tests/data/specstory_labels.jsonl;
- throughput: parse + detect of a ~10 MB Claude Code JSONL made by repeating the
  records of the real ones.

Shared data: $KG_SHARED_DATA, else <repo>/../shared/data.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from kg.reflect import default_rules, is_error_result, read_transcript, reflect

REPO = Path(__file__).resolve().parents[1]
LABELS = REPO / "tests" / "data" / "specstory_labels.jsonl"
TARGET_BYTES = 10 * 1024 * 1024


def shared_data() -> Path:
    env = os.environ.get("KG_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def prf(tp: int, fp: int, fn: int) -> str:
    p = f"{tp / (tp + fp):.3f}" if tp + fp else "n/a"
    r = f"{tp / (tp + fn):.3f}" if tp + fn else "n/a"
    return f"precision {p} recall {r} (tp {tp}, fp {fp}, fn {fn})"


def claude_files(data: Path) -> list[Path]:
    return sorted(p for p in (data / "transcripts" / "claude_code").iterdir() if ".jsonl" in p.name)


def errors(data: Path, rules) -> None:
    counts = {"shipped": [0, 0, 0], "text-only": [0, 0, 0]}
    declined = 0
    for path in claude_files(data):
        for turn in read_transcript(path).turns:
            if turn.role != "tool":
                continue
            truth = bool(turn.is_error)
            declined += truth and not is_error_result(turn, rules) and "doesn't want to proceed" in turn.text
            for mode, t in (("shipped", turn), ("text-only", replace(turn, is_error=None))):
                got = is_error_result(t, rules)
                c = counts[mode]
                c[0] += got and truth
                c[1] += got and not truth
                c[2] += truth and not got
    print("errors vs is_error (tool results in transcripts/claude_code)")
    for mode, (tp, fp, fn) in counts.items():
        print(f"  {mode:9} {prf(tp, fp, fn)}")
    print(f"  ({declined} of the flagged results are tool calls the user declined: not counted as failures)")


def learnings(data: Path, rules) -> None:
    labels = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    predicted: dict[tuple[str, int], set[str]] = {}
    for name in sorted({lab["file"] for lab in labels}):
        t = read_transcript(data / "transcripts" / "specstory" / name)
        users = [turn for turn in t.turns if turn.role == "user"]
        found = reflect(t, rules).findings
        for n, turn in enumerate(users, 1):
            predicted[(name, n)] = {f.category for f in found if f.turn == turn.index}
            lab = next(x for x in labels if x["file"] == name and x["turn"] == n)
            if not turn.text.strip().startswith(lab["text"][:30]):
                sys.exit(f"labels out of step with {name} user turn {n}: {lab['text']!r}")
    print(f"learnings vs hand labels ({len(labels)} user turns in transcripts/specstory)")
    for label, category in (("correction", "correction"), ("feature", "feature_request")):
        tp = fp = fn = 0
        for lab in labels:
            got = category in predicted[(lab["file"], lab["turn"])]
            truth = lab["label"] == label
            tp += got and truth
            fp += got and not truth
            fn += truth and not got
        print(f"  {label:10} {prf(tp, fp, fn)}")


def throughput(data: Path, rules, *, dense: bool) -> None:
    """Dense: only user and assistant records (no progress noise), the worst case for detection."""
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
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "synthetic.jsonl"
        path.write_bytes(bytes(body))
        start = time.perf_counter()
        t = read_transcript(path)
        parsed = time.perf_counter()
        r = reflect(t, rules)
        done = time.perf_counter()
    print(
        f"throughput ({'dense' if dense else 'as recorded'}): {len(body) / 1e6:.1f} MB, "
        f"{len(t.turns)} turns, {len(r.findings)} findings: "
        f"parse {parsed - start:.2f} s + detect {done - parsed:.2f} s = {done - start:.2f} s (budget 10 s)"
    )


def main() -> None:
    data = shared_data()
    if not (data / "transcripts").is_dir():
        sys.exit(f"no shared data at {data}: set KG_SHARED_DATA to the folder holding transcripts/")
    rules = default_rules()
    errors(data, rules)
    learnings(data, rules)
    throughput(data, rules, dense=False)
    throughput(data, rules, dense=True)


if __name__ == "__main__":
    main()
