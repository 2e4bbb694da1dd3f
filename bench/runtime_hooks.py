"""Every hook payload the shared data gives, fed to the hooks `kg install RUNTIME` writes, as the runtime runs them.

Claude Code and Codex: the exact command of each hook in the installed config, run by `sh -c` from the project with
the payload on stdin: SessionStart for each source, every failed tool call of the Claude Code transcripts as
PostToolUseFailure, SessionEnd for each reason, Codex's Stop (stop_hook_active false and true, no transcript),
and odd payloads (not JSON, empty, over-long or path-like session ids, a transcript that is none). Checked: exit
codes as the runtime reads them (2 would block, or make the agent go on after Stop), stdout JSON shape, no
traceback, the hook's time against its configured timeout, and that nothing changes outside the project (HOME
and the run's folder). OpenClaw (with `node`): the installed handler.js imported and awaited with each event
(`KG_HOOK_WAIT=1`). Prints what it found; never asserts (tests/integration/test_review_p16.py guards the odd
payloads).

    .venv/bin/python bench/runtime_hooks.py [claude-code|codex|openclaw] [--dir /tmp/kg-hooks]
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

DATA = Path("/work/shared/data/runtimes")
KG = str(Path(sys.executable).with_name("kg"))
runtime = sys.argv[1] if len(sys.argv) > 1 else "claude-code"
base = Path(sys.argv[sys.argv.index("--dir") + 1] if "--dir" in sys.argv else f"/tmp/kg-hooks-{runtime}")
if runtime == "openclaw":
    import openclaw_hooks  # noqa: F401 - runs it

    raise SystemExit(0)
shutil.rmtree(base, ignore_errors=True)
base.mkdir(parents=True)
home = base / "home"
ws = base / "project"
home.mkdir()
ws.mkdir()
env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"HOME": str(home), "KG_SERVER": "0"}
subprocess.run([KG, "-w", str(ws), "init"], env=env, cwd=ws, capture_output=True, check=True)
subprocess.run([KG, "-w", str(ws), "install", runtime], env=env, cwd=ws, capture_output=True, check=True)


def snap(root, skip):
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not any(p.is_relative_to(s) for s in skip):
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def commands(runtime):
    cfg = json.loads(
        (ws / (".claude/settings.local.json" if runtime == "claude-code" else ".codex/hooks.json")).read_text()
    )
    return {
        ev: [(h["command"], h.get("timeout")) for m in groups for h in m["hooks"]]
        for ev, groups in cfg["hooks"].items()
    }


cmds = commands(runtime)
payloads = []  # (event, payload)
common = {"cwd": str(ws), "permission_mode": "default"}
if runtime == "claude-code":
    tdir = home / ".claude" / "projects" / ("-" + str(ws).strip("/").replace("/", "-"))
    tdir.mkdir(parents=True)
    for t in sorted((DATA / "claude_code" / "transcripts").glob("*.jsonl")):
        shutil.copy(t, tdir / t.name)
        tp, sid = str(tdir / t.name), t.stem
        for src in ("startup", "resume", "clear", "compact"):
            payloads.append(
                (
                    "SessionStart",
                    {
                        **common,
                        "session_id": sid,
                        "transcript_path": tp,
                        "hook_event_name": "SessionStart",
                        "source": src,
                        "model": "claude-sonnet",
                    },
                )
            )
        uses = {}
        for line in t.read_text().splitlines():
            r = json.loads(line)
            c = (r.get("message") or {}).get("content")
            if isinstance(c, list):
                for b in c:
                    if b.get("type") == "tool_use":
                        uses[b["id"]] = b
                    if b.get("type") == "tool_result" and b.get("is_error"):
                        u = uses.get(b["tool_use_id"], {})
                        err = (
                            b["content"]
                            if isinstance(b["content"], str)
                            else " ".join(x.get("text", "") for x in b["content"] if isinstance(x, dict))
                        )
                        payloads.append(
                            (
                                "PostToolUseFailure",
                                {
                                    **common,
                                    "session_id": sid,
                                    "transcript_path": tp,
                                    "hook_event_name": "PostToolUseFailure",
                                    "tool_name": u.get("name", "Bash"),
                                    "tool_input": u.get("input", {}),
                                    "tool_use_id": b["tool_use_id"],
                                    "error": err,
                                    "is_interrupt": "interrupted" in err.lower(),
                                },
                            )
                        )
        for reason in ("clear", "logout", "prompt_input_exit", "bypass_permissions_disabled", "other"):
            payloads.append(
                (
                    "SessionEnd",
                    {
                        **common,
                        "session_id": sid,
                        "transcript_path": tp,
                        "hook_event_name": "SessionEnd",
                        "reason": reason,
                    },
                )
            )
else:
    tdir = home / ".codex" / "sessions" / "2026" / "05" / "11"
    tdir.mkdir(parents=True)
    for t in sorted((DATA / "codex" / "transcripts").glob("*.jsonl")):
        shutil.copy(t, tdir / t.name)
        tp = str(tdir / t.name)
        sid = json.loads(t.read_text().splitlines()[0])["payload"]["id"]
        last = None
        for line in t.read_text().splitlines():
            r = json.loads(line)
            if r.get("type") == "event_msg" and r["payload"].get("type") == "agent_message":
                last = r["payload"].get("message")
        for src in ("startup", "resume", "clear", "compact"):
            payloads.append(
                (
                    "SessionStart",
                    {
                        **common,
                        "session_id": sid,
                        "transcript_path": tp if src != "clear" else None,
                        "hook_event_name": "SessionStart",
                        "model": "gpt-5",
                        "source": src,
                    },
                )
            )
        for active in (False, True):
            payloads.append(
                (
                    "Stop",
                    {
                        **common,
                        "session_id": sid,
                        "turn_id": "t1",
                        "transcript_path": tp,
                        "hook_event_name": "Stop",
                        "model": "gpt-5",
                        "last_assistant_message": last,
                        "stop_hook_active": active,
                    },
                )
            )
        payloads.append(
            (
                "Stop",
                {
                    **common,
                    "session_id": sid,
                    "turn_id": "t2",
                    "transcript_path": None,
                    "hook_event_name": "Stop",
                    "model": "gpt-5",
                    "last_assistant_message": None,
                    "stop_hook_active": False,
                },
            )
        )
        payloads.append(
            (
                "SessionEnd",
                {
                    **common,
                    "session_id": sid,
                    "transcript_path": tp,
                    "hook_event_name": "SessionEnd",
                    "reason": "other",
                },
            )
        )
# odd input every runtime may send
for ev in cmds:
    payloads.append((ev, "not json at all"))
    payloads.append((ev, ""))
    payloads.append(
        (ev, {"hook_event_name": ev, "session_id": "x" * 300, "transcript_path": "/etc/passwd", "cwd": "/"})
    )
    payloads.append(
        (
            ev,
            {
                "hook_event_name": ev,
                "session_id": "../../../etc",
                "transcript_path": str(home / "missing.jsonl"),
                "cwd": str(ws),
                "unknown_key": [1, 2],
            },
        )
    )

before_home = snap(home, [])
before_base = snap(base, [ws, home])
problems, times = [], {}
for ev, p in payloads:
    for cmd, timeout in cmds.get(ev, []):
        data = p if isinstance(p, str) else json.dumps(p)
        t0 = time.monotonic()
        r = subprocess.run(["sh", "-c", cmd], input=data, capture_output=True, text=True, env=env, cwd=ws, timeout=300)
        dt = time.monotonic() - t0
        times.setdefault(ev, []).append(dt)
        tag = f"{ev} {str(p)[:80]!r}"
        if "Traceback" in r.stderr:
            problems.append(f"TRACEBACK {tag}: {r.stderr[-400:]}")
        if r.returncode == 2:
            problems.append(f"EXIT 2 {tag}: {r.stderr[-300:]}")
        elif r.returncode != 0 and not (
            r.returncode == 1 and isinstance(p, str) and p.strip()
        ):  # 1: the rule for bad input
            problems.append(f"EXIT {r.returncode} {tag}: {r.stderr[-300:]}")
        if timeout and dt > timeout:
            problems.append(f"SLOW {dt:.1f}s > {timeout}s {tag}")
        out = r.stdout.strip()
        if out:
            try:
                j = json.loads(out)
            except ValueError:
                if ev not in ("SessionStart",):
                    problems.append(f"PLAIN STDOUT {tag}: {out[:200]}")
                continue
            if ev == "Stop" and runtime == "codex":
                if j.get("decision") == "block" or (
                    set(j) - {"continue", "stopReason", "suppressOutput", "systemMessage"}
                ):
                    problems.append(f"STOP JSON {tag}: {out[:200]}")
            if ev == "SessionStart":
                h = j.get("hookSpecificOutput") or {}
                if h.get("hookEventName") != "SessionStart" or not isinstance(h.get("additionalContext"), str):
                    problems.append(f"SESSIONSTART JSON {tag}: {out[:200]}")
            if j.get("decision") == "block":
                problems.append(f"BLOCK {tag}: {out[:200]}")
if snap(home, []) != before_home:
    problems.append("HOME CHANGED: " + str(set(snap(home, []).items()) ^ set(before_home.items()))[:500])
if snap(base, [ws, home]) != before_base:
    problems.append("OUTSIDE CHANGED")
print(runtime, "payloads", len(payloads), "problems", len(problems))
for x in problems[:40]:
    print(" -", x)
for ev, ts in times.items():
    print(f"  {ev}: n={len(ts)} median {sorted(ts)[len(ts) // 2]:.2f}s max {max(ts):.2f}s")
r = subprocess.run([KG, "-w", str(ws), "list", "--limit", "200", "--json"], env=env, capture_output=True, text=True)
rows = json.loads(r.stdout)
print(
    "  graph entries",
    len(rows),
    "sessions files",
    sorted(p.name for p in (ws / "memory" / "sessions").glob("*.md"))[:8],
)
