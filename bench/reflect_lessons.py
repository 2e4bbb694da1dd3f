"""Are `kg reflect`'s lessons usable? Every finding on every real transcript in shared/data, with the shapes that make a
lesson unusable counted.

    .venv/bin/python bench/reflect_lessons.py                    # counts per runtime, this tree beside main's
    .venv/bin/python bench/reflect_lessons.py --list             # and every lesson, flagged, to read by hand
    .venv/bin/python bench/reflect_lessons.py --baseline ''      # this tree only

A lesson is usable when an agent could follow it without the transcript: it says what to do or what is true, in
whole words, about something it names. The shapes counted here are the ones that fail that on sight (no labels say
which lesson is good; read the --list to judge the rest):

- question: the lesson is still a question ("Check this first: ...?", "What do you think we should do ...")
- cut: a path or a word cut in the middle ("…me/node/.openclaw/…", `git commit -m "f…`)
- filler: nothing a pattern key can hold (the words name nothing)
- pasted: the lesson is pasted output or markup (a shell prompt, a heading, an italic line, an unclosed quote)

Transcripts: transcripts/ (SpecStory chats, Claude Code) and the runtimes' transcript files (runtimes/<runtime>/,
not the notes beside them). Findings as `kg reflect` lists them (deduplicated, capped, redacted: kg.reflect.reflect),
and the failed tool calls' summaries (kg.reflect.failures). The baseline is the same script run by that tree's Python.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import reflect_train as rt

from kg.core.policy import packaged
from kg.reflect import TranscriptError, default_rules, read_transcript
from kg.reflect import failures as fl
from kg.reflect.detect import reflect

REPO = Path(__file__).resolve().parents[1]
RUNTIMES = ("aider", "claude_code", "codex", "openclaw")
_OPENER = re.compile(
    r"^\W*((what|why|how|which|who)\b|(is there|are there|did|does|do|didn't|didnt|doesn't|doesnt|have|has|haven't|"
    r"hasn't|can|could|would|will|should|is|are|was|were|isn't|aren't|wasn't) (you|we|i|it|this|that|they|the|all)\b|"
    r"(что|почему|зачем|как|где|куда|когда|кто|какой|какая|какие|удалось|разве)\b)", re.I)
_QUESTION_END = re.compile(r"[?？]\W*$|(吗|呢)\W*$")
_ELLIPSIS = re.compile(r"(\S*)…(\S*)")
_PASTED = re.compile(r"^\W*(\*[^*]|#|➜|\$ |>|\(`|`[^`]*$)|➜|^\W*[\w.-]+ ➜")
_CHECK = re.compile(r"^Check this first:|^Check: ")


def transcripts(data: Path) -> list[tuple[str, Path]]:
    out = [("specstory", p) for p in sorted((data / "transcripts" / "specstory").glob("*.md"))]
    out += [("claude_code", p) for p in sorted((data / "transcripts" / "claude_code").iterdir())
            if ".jsonl" in p.name]
    for name in RUNTIMES:
        root = data / "runtimes" / name
        out += [(name, p) for p in sorted(root.rglob("*")) if p.is_file() and (
            p.suffix == ".jsonl" or (name == "aider" and p.suffix == ".md" and p.name != "README.md"))]
    return out


def _cut(lesson: str, source: str) -> bool:
    """A word or path cut in the middle: the piece touching "…" is not whole in the text it came from (a word's
    start cut off on the left, a word's end cut off on the right)."""
    if "…" in source:
        return False  # the text it came from holds the ellipsis itself
    for m in _ELLIPSIS.finditer(lesson):
        left, right = m.group(1).strip("`'\"(["), m.group(2).strip("`'\")].,:")
        if left.endswith(("/", "\\")):
            left = ""  # cut after a path separator: whole segments
        whole = re.search(re.escape(left) + r"(?![\w])", source)
        if left and re.search(re.escape(left) + r"[\w]", source) and not whole:
            return True
        if right and not right.startswith(("/", "\\")) and re.search(r"[\w]" + re.escape(right), source) and not \
                re.search(r"(?<![\w])" + re.escape(right), source):
            return True
    return False


def shapes(lesson: str, key: str | None, said: bool, source: str = "") -> list[str]:
    """The unusable shapes a lesson has (empty: none seen). `source`: the text it was made from."""
    out = []
    body = lesson.split("): ", 1)[-1] if lesson.startswith("Check this before") else lesson
    if said and (_CHECK.search(lesson) or _QUESTION_END.search(body) or _OPENER.search(body)):
        out.append("question")
    if _cut(lesson, source):
        out.append("cut")
    if said and key is None:
        out.append("filler")
    if _PASTED.search(body):
        out.append("pasted")
    return out


def collect(data: Path) -> list[dict]:
    rules = default_rules()
    frules = fl.load_rules(packaged("errors"))
    from reflect_heldout import held_out_turns

    held = held_out_turns()  # the fresh held-out aider turns: not read before their one final score
    rows = []
    for runtime, path in transcripts(data):
        try:
            t = read_transcript(path)
        except (TranscriptError, OSError, ValueError):
            continue
        name = str(path.relative_to(data))
        for f in reflect(t, rules).findings:
            if (name, f.turn) in held:
                continue
            said = " ".join(t.turns[f.turn].text.split())
            before = next((" ".join(x.text.split()) for x in reversed(t.turns[:f.turn]) if x.role == "assistant"), "")
            rows.append({"runtime": runtime, "file": name, "turn": f.turn, "category": f.category, "said": said[:160],
                         "lesson": f.summary, "key": f.pattern_key,
                         "shapes": shapes(f.summary, f.pattern_key, True, f"{said}\n{before}")})
        for f in fl.failures(t, frules).found:
            if (name, f.turn) in held:
                continue
            s = f.summary(frules.summary_chars)
            source = " ".join(f"{f.command or ''}\n{f.line or ''}".split())
            rows.append({"runtime": runtime, "file": name, "turn": f.turn, "category": "error", "said": "",
                         "lesson": s, "key": None, "shapes": shapes(s, None, False, source)})
    return rows


def counts(rows: list[dict]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        group = "errors" if r["category"] == "error" else r["runtime"]
        c = out.setdefault(group, {"findings": 0, "flagged": 0, "question": 0, "cut": 0, "filler": 0, "pasted": 0})
        c["findings"] += 1
        c["flagged"] += bool(r["shapes"])
        for s in r["shapes"]:
            c[s] += 1
    return out


def run_baseline(tree: Path, data: Path) -> dict | None:
    py = tree / ".venv" / "bin" / "python"
    if not py.exists():
        print(f"(no baseline: {py} not found)", file=sys.stderr)
        return None
    env = {**os.environ, "KG_SHARED_DATA": str(data)}
    out = subprocess.run([str(py), str(Path(__file__).resolve()), "--json"], capture_output=True, text=True,
                         cwd=tree, env=env)
    if out.returncode:
        print(f"(no baseline: {(out.stderr.strip().splitlines() or ['no output'])[-1]})", file=sys.stderr)
        return None
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print every lesson with its flags, to read by hand")
    ap.add_argument("--baseline", default=str(REPO.parent / "main"),
                    help="a tree with its own .venv whose lessons are counted beside ('' for none)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    data = rt.shared_data()
    rows = collect(data)
    if args.json:
        print(json.dumps(rows))
        return
    trees = {}
    if args.baseline:
        base = run_baseline(Path(args.baseline), data)
        if base is not None:
            trees[f"baseline ({Path(args.baseline).name})"] = base
    trees["this tree"] = rows
    cols = ("findings", "flagged", "question", "cut", "filler", "pasted")
    for label, got in trees.items():
        print(f"{label}: lessons with an unusable shape, per runtime (errors: failed tool calls, all runtimes)")
        print(f"  {'group':12}" + "".join(f" {c:>9}" for c in cols))
        total = dict.fromkeys(cols, 0)
        for group, c in sorted(counts(got).items()):
            print(f"  {group:12}" + "".join(f" {c[k]:9d}" for k in cols))
            total = {k: total[k] + c[k] for k in cols}
        print(f"  {'all':12}" + "".join(f" {total[k]:9d}" for k in cols) + "\n")
    if args.list:
        for r in rows:
            flag = f" <{','.join(r['shapes'])}>" if r["shapes"] else ""
            print(f"[{r['category']}] {r['file'][-50:]} turn {r['turn']} key={r['key']}{flag}")
            if r["said"]:
                print(f"    said:   {r['said']}")
            print(f"    lesson: {r['lesson']}")


if __name__ == "__main__":
    main()
