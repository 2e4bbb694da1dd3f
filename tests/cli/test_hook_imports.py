"""The post-tool-use hook runs after every tool call, so it loads only what it needs to log a failure: not
detection, linking or rapidfuzz (a real Claude Code tool call from /work/shared/data/runtimes, run through the
real `kg` entry point in its own process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TRANSCRIPTS = Path("/work/shared/data/runtimes/claude_code/transcripts")
PROBE = ("import atexit, sys\n"
         "atexit.register(lambda: sys.stderr.write('MODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
         "from kg.cli.entry import main\n"
         "sys.argv = ['kg', '-w', sys.argv[1], 'hook', 'post-tool-use']\n"
         "main()\n")


def _payloads() -> list[dict]:
    """PostToolUse payloads as Claude Code sends them, built from a real transcript's tool calls."""
    out = []
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        uses: dict[str, dict] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            content = (entry.get("message") or {}).get("content")
            for part in content if isinstance(content, list) else []:
                if part.get("type") == "tool_use":
                    uses[part["id"]] = part
                elif part.get("type") == "tool_result" and part.get("tool_use_id") in uses:
                    use = uses[part["tool_use_id"]]
                    out.append({"session_id": entry.get("sessionId"), "transcript_path": str(path),
                                "cwd": entry.get("cwd"), "hook_event_name": "PostToolUse", "tool_name": use["name"],
                                "tool_input": use["input"], "tool_response": entry.get("toolUseResult"),
                                "tool_use_id": use["id"], "is_error": bool(part.get("is_error"))})
    return out


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="needs /work/shared/data/runtimes")
def test_post_tool_use_hook_loads_no_detection(ws):
    payloads = _payloads()
    failed = next(p for p in payloads if p.pop("is_error"))
    ok = next(p for p in payloads if not p.pop("is_error", False))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    for payload in (failed, ok):
        r = subprocess.run([sys.executable, "-c", PROBE, str(ws.root)], input=json.dumps(payload), text=True,
                           capture_output=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        modules = next(line for line in r.stderr.splitlines() if line.startswith("MODULES ")).split()[1:]
        assert "kg.reflect.failures" in modules and (payload is ok or "kg.reflect.apply" in modules)
        heavy = [m for m in modules if m in ("kg.reflect.detect", "kg.reflect.linking", "kg.graph.linking")
                 or m.split(".")[0] == "rapidfuzz" or m.endswith(".linking")]
        assert heavy == [], heavy
