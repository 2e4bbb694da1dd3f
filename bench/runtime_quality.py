"""How well each runtime's sessions flow into the graph: error detection per failed tool call, duplicates
across the live hook and reflections, distinct pattern keys per recurring failure, and hook latency.

    .venv/bin/python bench/runtime_quality.py               # everything
    .venv/bin/python bench/runtime_quality.py --runs 3 --skip-latency

1. **Detection** (strict: one finding per failed call). Gold is counted from the raw files, independently of
   kg's readers, by each format's own failure marking (../shared/data/runtimes/INDEX.md): Claude Code
   `tool_result.is_error`; Codex outputs with `Process exited with code N` (N≠0) or `metadata.exit_code`≠0;
   OpenClaw `isError`, `details.status: "error"`, `details.exitCode`≠0 or "(Command exited with code N)"; aider
   `> ` blocks with "failed to match!" / "did not conform". A finding matches the nearest unmatched gold failure
   within 10 lines (Codex reports one failure twice, in a poll's output and an `exec_command_end` event; kg
   keeps the first). "declined" counts what kg judged not a failure: the user declined or interrupted the
   call. A gold failure that printed nothing but exit status 1 is counted apart ("exit 1, no output": mostly a
   search that found nothing, which kg leaves out by rules/errors.toml [answers]). The live hook's payloads carry
   the session id and transcript path Claude Code sends. ../shared/data/transcripts/claude_code (never looked at
   while writing the rules) is reported apart, as held-out data.
2. **Duplicates per failed call**: a fresh workspace per transcript; the live hook (Claude Code's
   PostToolUseFailure payload, built from the transcript's own calls) logs each failure of the first half,
   reflection runs on the first half, the transcript grows to its end (a resume), the live hook logs the rest,
   reflection runs again, and once more. Duplicates = (error events − failures) / failures (target 0).
3. **Keys per recurring failure**: failures a human calls "the same mistake" (groups below, by tool and
   message), and the issue's cases (one `git push` without upstream on three branches ...): distinct pattern
   keys per group (target 1).
4. **Hook latency per event** (whole process, as the runtime runs it): the installed hook commands with their
   payloads; OpenClaw's handler under node (the time until the handler has returned). Baselines in the same
   run: `kg --help` and `node -e ""`.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import median_of, table

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("KG_SHARED_DATA", REPO.parent / "shared" / "data"))
RT = DATA / "runtimes"
KG = str(Path(sys.executable).parent / "kg")
RUNTIME_FILES = {
    "claude-code": sorted((RT / "claude_code" / "transcripts").glob("*.jsonl")),
    "codex": sorted((RT / "codex" / "transcripts").glob("*.jsonl")),
    "openclaw": sorted((RT / "openclaw" / "transcripts").rglob("*.jsonl")),
    "aider": sorted((RT / "aider").rglob("*.md")),
    "claude-code (held out)": sorted((DATA / "transcripts" / "claude_code").glob("*.jsonl*")),
}
SKIPPED: dict[Path, str] = {}  # files that are no transcript (a folder's README.md, notes): said once, at the end


@functools.cache
def _transcript(path: Path):
    """The file read as `kg reflect` reads it, or None (kept in SKIPPED with the reason) when it is no transcript:
    the data folders hold READMEs and notes beside the transcripts, and one of them ended the whole run."""
    from kg.reflect.parse import TranscriptError, read_transcript

    try:
        return read_transcript(path)
    except TranscriptError as exc:
        SKIPPED[path] = str(exc).removeprefix(str(path)).strip().split(": kg reflect reads")[0]
        return None


def transcripts(paths) -> list[Path]:
    """The paths that are transcripts, in order."""
    return [p for p in paths if _transcript(p) is not None]


# -- 1. gold from the raw files ------------------------------------------------------------------------------------
def _lines(path: Path) -> list[str]:
    import gzip

    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace").splitlines()


def _json(line: str) -> dict:
    i = line.find("{")
    try:
        return json.loads(line[i:]) if i >= 0 else {}
    except json.JSONDecodeError:
        return {}


def gold(runtime: str, path: Path) -> list[int]:
    """Line numbers of the failed calls, by the format's own marking."""
    out = []
    lines = _lines(path)
    if runtime.startswith("claude-code"):
        for n, line in enumerate(lines, 1):
            content = (_json(line).get("message") or {}).get("content")
            out += [n for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
                    and b.get("is_error")] if isinstance(content, list) else []
    elif runtime == "codex":
        for n, line in enumerate(lines, 1):
            p = _json(line).get("payload") or {}
            if p.get("type") in ("function_call_output", "custom_tool_call_output"):
                text = p.get("output") if isinstance(p.get("output"), str) else json.dumps(p.get("output"))
                m = re.search(r"Process exited with code (\d+)", text or "")
                meta = re.search(r'"exit_code":\s*(\d+)', text or "")
                if (m and m.group(1) != "0") or (meta and meta.group(1) != "0"):
                    out.append(n)
    elif runtime == "openclaw":
        for n, line in enumerate(lines, 1):
            m = (_json(line).get("message") or {})
            if m.get("role") != "toolResult":
                continue
            d = m.get("details") if isinstance(m.get("details"), dict) else {}
            text = json.dumps(m.get("content"))
            if (m.get("isError") or d.get("status") == "error" or d.get("exitCode") not in (None, 0)
                    or re.search(r"Command exited with code [1-9]", text)):
                out.append(n)
    else:
        start = None
        hit = False
        for n, line in enumerate([*lines, ""], 1):
            if line.startswith(">"):
                start = start or n
                hit = hit or bool(re.search(r"failed to match!|did not conform to the edit format", line))
                continue
            if start and hit:
                out.append(start)
            start, hit = None, False
    return out


def silent(runtime: str, path: Path) -> set[int]:
    """Gold failures that printed nothing but an exit status of 1 (Codex's empty `Output:`, OpenClaw's bare
    "Command exited with code 1"): mostly a search that found nothing, whose answer that is (rules/errors.toml
    [answers] leaves out such a call when its command is a search); counted apart, not as misses."""
    out = set()
    for n in gold(runtime, path):
        line = _lines(path)[n - 1]
        p = _json(line).get("payload") or (_json(line).get("message") or {})
        text = p.get("output") if runtime == "codex" else json.dumps(p.get("content"))
        text = text if isinstance(text, str) else json.dumps(text)
        if (runtime == "codex" and re.search(r"Process exited with code 1\b", text)
                and re.search(r"Output:\s*$", text)) or \
                (runtime == "openclaw" and re.fullmatch(r'\[\{"type": "text", "text": "Command exited with code 1"\}\]',
                                                        text.strip())):
            out.add(n)
    return out


def detection(rules) -> list[list[str]]:
    from kg.reflect.failures import failures

    rows = []
    for runtime, files in RUNTIME_FILES.items():
        tp = found_n = gold_n = declined = quiet = 0
        files = transcripts(files)
        for path in files:
            hush = silent(runtime, path)
            want = [n for n in gold(runtime, path) if n not in hush]
            quiet += len(hush)
            res = failures(_transcript(path), rules)
            declined += res.declined
            got = [int(f.position.split()[-1]) for f in res.found if f.position.split()[-1].isdigit()]
            free = list(want)
            for line in got:
                near = sorted((abs(g - line), g) for g in free if abs(g - line) <= 10)
                hit = near[0][1] if near else None
                if hit is not None:
                    free.remove(hit)
                    tp += 1
            found_n += len(got)
            gold_n += len(want)
        p = tp / found_n if found_n else 1.0
        r = tp / gold_n if gold_n else 1.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        rows.append([runtime, str(len(files)), str(gold_n), str(quiet), str(found_n), str(tp), str(declined),
                     f"{p:.2f}", f"{r:.2f}", f"{f1:.2f}"])
    return rows


# -- 2. duplicates --------------------------------------------------------------------------------------------------
def claude_payloads(path: Path) -> list[tuple[int, dict]]:
    uses, out = {}, []
    for n, line in enumerate(_lines(path), 1):
        rec = _json(line)
        content = (rec.get("message") or {}).get("content")
        for b in content if isinstance(content, list) else []:
            if b.get("type") == "tool_use":
                uses[b["id"]] = b
            elif b.get("type") == "tool_result" and b.get("is_error") and b.get("tool_use_id") in uses:
                use = uses[b["tool_use_id"]]
                text = b["content"] if isinstance(b["content"], str) else "\n".join(
                    x.get("text", "") for x in b["content"] if isinstance(x, dict))
                if use["name"] == "Bash" and not text.startswith("Exit code"):
                    text = "Exit code 1\n" + text
                out.append((n, {"hook_event_name": "PostToolUseFailure", "tool_name": use["name"],
                                "tool_input": use["input"], "tool_use_id": use["id"], "error": text,
                                "is_interrupt": False, "session_id": rec.get("sessionId") or path.stem,
                                "transcript_path": str(path)}))
    return out


def duplicates(rules) -> list[list[str]]:
    import kg
    from kg.reflect.apply import reflect_file
    from kg.reflect.failures import failures
    from kg.reflect.parse import read_transcript
    from kg.runtimes import hooks

    rows = []
    for runtime, files in RUNTIME_FILES.items():
        files = transcripts(files)
        if runtime == "aider":
            files = [p for p in files if p.stat().st_size < 300_000]
        fails = events = live = 0
        for path in files:
            with tempfile.TemporaryDirectory() as tmp:
                ws = kg.init_workspace(Path(tmp) / "ws")
                name = path.name[:-3] if path.name.endswith(".gz") else path.name
                copy = Path(tmp) / name
                lines = _lines(path)
                half = len(lines) // 2
                copy.write_text("\n".join(lines[:half]) + "\n", encoding="utf-8")
                payloads = claude_payloads(path) if runtime.startswith("claude-code") else []
                for n, payload in payloads:
                    if n <= half:
                        live += bool(hooks.post_tool_use(ws, payload, "2026-07-01T09:00")["logged"])
                reflect_file(ws, str(copy), apply=True, now="2026-07-01T10:00")
                copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
                for n, payload in payloads:
                    if n > half:
                        live += bool(hooks.post_tool_use(ws, payload, "2026-07-02T09:00")["logged"])
                reflect_file(ws, str(copy), apply=True, now="2026-07-02T10:00")
                reflect_file(ws, str(copy), apply=True, now="2026-07-02T11:00")
                fails += len(failures(read_transcript(copy), rules).found)
                events += sum(1 for e in ws.list(type="event", limit=5000) if e.get("entry_type") == "error")
        dup = (events - fails) / fails if fails else 0.0
        rows.append([runtime, str(fails), str(live), str(events), f"{dup:.2f}"])
    return rows


# -- 3. keys per recurring failure ---------------------------------------------------------------------------------
GROUPS = [  # (name, runtime folder glob, tool regex, error regex): what a human calls one mistake
    ("CC: edit before read (Edit)", "claude_code/transcripts/*.jsonl", "^Edit$", "has not been read yet"),
    ("CC: edit before read (Write)", "claude_code/transcripts/*.jsonl", "^Write$", "has not been read yet"),
    ("CC: ls of a missing folder", "claude_code/transcripts/*.jsonl", "^Bash$", "cannot access 'types/'"),
    ("CC: next build 'generate is not a function'", "claude_code/transcripts/*.jsonl", "^Bash$", "Build error"),
    ("Codex: rg with no match (exit 1, no output)", "codex/transcripts/*.jsonl", "exec_command", r"^\s*$"),
    ("OpenClaw: read of a missing memory file", "openclaw/transcripts/*.jsonl", "^read$", "ENOENT"),
    ("pi: grep with no match (exit 1, no output)", "openclaw/transcripts/pi-coding-agent/*.jsonl", "^bash$",
     r"^\s*$"),
    ("aider: one SEARCH/REPLACE block failed", "aider/**/*.md", "^edit$", "# 1 SEARCH/REPLACE block failed"),
]
CASES = [  # the cases: (name, [(tool, command, output)])
    ("git push, no upstream, 3 branches", [("Bash", "git push", f"Exit code 128\nfatal: The current branch {b} has no "
                                            "upstream branch.\nTo push the current branch and set the remote as "
                                            f"upstream, use\n\n    git push --set-upstream origin {b}\n")
                                           for b in ("feat/login", "fix/JIRA-12_typo", "main-2")]),
    ("pytest 1 failed, 20 passed", [("Bash", "pytest -q", f"Exit code 1\n{'.' * 20}F\nFAILED tests/test_{n}.py::"
                                     f"test_x - AssertionError\n1 failed, 20 passed in {t}s")
                                    for n, t in (("a", "0.52"), ("a", "1.20"), ("a", "0.61"))]),
    ("cargo build, noise first", [("Bash", "cargo build --release", f"Exit code 101\n   Compiling serde v1.0.{n}\n"
                                   f"   Compiling app v0.1.0 (/tmp/tmp{n}x/app)\nerror[E0425]: cannot find value "
                                   f"`x` in this scope\n --> src/main.rs:{n}:5") for n in (3, 14, 159)]),
    ("git push rejected, 3 branches", [("Bash", "git push", f"Exit code 1\n ! [rejected]        {b} -> {b} (fetch "
                                        f"first)\nerror: failed to push some refs to 'github.com:o/r.git'")
                                       for b in ("main", "dev", "feat/x")]),
]


def keys_per_group(rules) -> list[list[str]]:
    from kg.reflect.failures import analyse, failures

    rows = []
    for name, pattern, tool, text in GROUPS:
        keys, n = set(), 0
        for path in transcripts(sorted(RT.glob(pattern))):
            for f in failures(_transcript(path), rules).found:
                if re.search(tool, f.tool) and re.search(text, f.line or ""):
                    keys.add(f.pattern_key)
                    n += 1
        rows.append([name, str(n), str(len(keys))])
    for name, calls in CASES:
        keys = {analyse(t, out, cmd, rules).pattern_key for t, cmd, out in calls}
        rows.append([name + " (issue)", str(len(calls)), str(len(keys))])
    return rows


# -- 4. hook latency ---------------------------------------------------------------------------------------------
def latency(runs: int) -> list[list[str]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", "kg", "cli", "rules"], cwd=REPO, check=True)
    rows = []

    def timed(cmd: str, payload: str = "", cwd: Path = REPO) -> float:
        return median_of(lambda: subprocess.run(cmd, shell=True, input=payload, capture_output=True, text=True,
                                                cwd=cwd, env=env, check=False), runs)[0]

    base = timed(f"{KG} --help")
    rows.append(["baseline", "kg --help", f"{base * 1000:.0f}", "1.00"])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        subprocess.run([KG, "init", str(root)], capture_output=True, env=env, check=True)
        for rt in ("claude-code", "codex", "openclaw"):
            subprocess.run([KG, "-w", str(root), "install", rt], capture_output=True, env=env, check=True)
        cc = json.loads((root / ".claude" / "settings.local.json").read_text())["hooks"]
        cx = json.loads((root / ".codex" / "hooks.json").read_text())["hooks"]
        cc_t = RT / "claude_code" / "transcripts" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
        cx_t = RT / "codex" / "transcripts" / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
        payload = claude_payloads(cc_t)[1][1]

        def cmd(hooks: dict, event: str) -> str:
            return hooks[event][0]["hooks"][0]["command"]

        fail = [0]

        def failure() -> str:
            fail[0] += 1
            return json.dumps({**payload, "tool_use_id": f"bench-{fail[0]}"})

        cases = [
            ("claude-code", "SessionStart", cmd(cc, "SessionStart"), lambda: json.dumps(
                {"hook_event_name": "SessionStart", "source": "startup"})),
            ("claude-code", "PostToolUseFailure", cmd(cc, "PostToolUseFailure"), failure),
            ("claude-code", "SessionEnd (3-failure transcript)", cmd(cc, "SessionEnd"), lambda: json.dumps(
                {"hook_event_name": "SessionEnd", "reason": "other", "transcript_path": str(cc_t)})),
            ("codex", "SessionStart", cmd(cx, "SessionStart"), lambda: json.dumps(
                {"hook_event_name": "SessionStart", "source": "startup"})),
            ("codex", "Stop (730 KB rollout, nothing new)", cmd(cx, "Stop"), lambda: json.dumps(
                {"hook_event_name": "Stop", "stop_hook_active": False, "transcript_path": str(cx_t)})),
            ("codex", "SessionEnd (answers, work detached)", cmd(cx, "SessionEnd"), lambda: json.dumps(
                {"hook_event_name": "SessionEnd", "reason": "other", "transcript_path": str(cx_t)})),
        ]
        for runtime, event, command, make in cases:
            t = median_of(lambda c=command, m=make: subprocess.run(c, shell=True, input=m(), capture_output=True,
                                                                   text=True, cwd=root, env=env, check=False), runs)[0]
            rows.append([runtime, event, f"{t * 1000:.0f}", f"{t / base:.2f}"])
        if shutil.which("node"):
            runner = Path(tmp) / "run.mjs"
            runner.write_text('const [, , file, ev] = process.argv;\nconst mod = await import("file://" + file);\n'
                              "const t = performance.now();\nawait mod.default(JSON.parse(ev));\n"
                              "process.stdout.write(String(performance.now() - t));\n", encoding="utf-8")
            handler = root / "hooks" / "kaizen-kg" / "handler.js"
            oc_t = RT / "openclaw" / "transcripts" / "f967d602-325a-4a45-8d54-ee17484cfd96.jsonl"
            node_base = timed('node -e ""')
            rows.append(["baseline", 'node -e ""', f"{node_base * 1000:.0f}", f"{node_base / base:.2f}"])
            events = [("agent:bootstrap (saved brief)", {"type": "agent", "action": "bootstrap", "messages": [],
                                                         "context": {"bootstrapFiles": []}}),
                      ("command:new", {"type": "command", "action": "new", "messages": [],
                                       "context": {"previousSessionEntry": {"sessionFile": str(oc_t)}}})]
            for name, event in events:
                inside: list[float] = []

                def once(e: dict = event, inside: list[float] = inside) -> None:
                    done = subprocess.run(["node", str(runner), str(handler), json.dumps(e)], capture_output=True,
                                          text=True, env=env, check=False)
                    inside.append(float(done.stdout or "nan"))

                whole = median_of(once, runs)[0]
                inside.sort()
                rows.append(["openclaw", f"{name}: handler returns", f"{inside[len(inside) // 2]:.1f}", "-"])
                rows.append(["openclaw", f"{name}: node process", f"{whole * 1000:.0f}", f"{whole / base:.2f}"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--skip-latency", action="store_true")
    args = ap.parse_args()
    from kg.core.policy import packaged
    from kg.reflect.failures import load_rules

    rules = load_rules(packaged("errors"))
    print(table("Error detection per failed tool call (strict: one finding per call)",
                ["runtime", "files", "gold", "exit 1, no output", "found", "matched", "declined", "P", "R",
                 "F1"], detection(rules)))
    print(table("Duplicates per failed call: live hook + reflection + reflection after resume + again",
                ["runtime", "failures", "live-logged", "error events", "dup/failure"], duplicates(rules)))
    print(table("Distinct pattern keys per recurring failure (target 1)", ["failure", "occurrences", "keys"],
                keys_per_group(rules)))
    for path, why in sorted(SKIPPED.items()):
        print(f"skipped (not a transcript): {path.relative_to(DATA) if path.is_relative_to(DATA) else path}: {why}")
    if not args.skip_latency:
        print(table(f"Hook latency per event, whole process (median of {args.runs}, ms; ratio to kg --help)",
                    ["runtime", "event", "ms", "× kg --help"], latency(args.runs)))


if __name__ == "__main__":
    main()
