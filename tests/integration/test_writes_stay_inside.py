"""kg writes nothing outside the workspace by default: the parsed secret rules are kept in the workspace's
memory/.kg/cache (an explicit KG_CACHE_DIR may name another folder), never under HOME or XDG_CACHE_HOME."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

KG = str(Path(sys.executable).with_name("kg"))
TRANSCRIPTS = Path("/work/shared/data/runtimes/claude_code/transcripts")


def _env(tmp_path: Path) -> dict[str, str]:
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    home.mkdir()
    xdg.mkdir()
    return {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "XDG_"))} | {
        "HOME": str(home), "XDG_CACHE_HOME": str(xdg), "KG_SERVER": "0", "KG_NOW": "2026-12-03T10:00"}


def _failure(transcript: Path) -> dict:
    """The first failed tool call recorded in a real Claude Code transcript, as its PostToolUseFailure payload."""
    uses: dict[str, dict] = {}
    for line in transcript.read_text().splitlines():
        content = (json.loads(line).get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                uses[block["id"]] = block
            if block.get("type") == "tool_result" and block.get("is_error"):
                error = block["content"] if isinstance(block["content"], str) else " ".join(
                    part.get("text", "") for part in block["content"] if isinstance(part, dict))
                use = uses.get(block["tool_use_id"], {})
                return {"tool_name": use.get("name", "Bash"), "tool_input": use.get("input", {}), "error": error,
                        "tool_use_id": block["tool_use_id"]}
    raise AssertionError(f"no failed tool call in {transcript}")


def _applied(project: Path) -> None:
    """Wait until the logs' detached applier let go of its slot with the journal empty: until then it renames
    journal.jsonl to a draining file and removes it, so two listings of the workspace taken one after the other
    could differ (it was still running after the four logs answered in one run of three, at load ~10)."""
    import time

    from kg.ingest.background import applier_running
    from kg.ingest.journal import Journal

    kg_dir = project / "memory" / ".kg"
    journal = Journal(kg_dir, timeout=30.0)  # (only looked at: it takes no lock)
    deadline = time.monotonic() + 300
    while applier_running(kg_dir) or journal.has_pending():
        assert time.monotonic() < deadline, "the detached applier never finished"
        time.sleep(0.02)


def test_a_fresh_home_and_cache_home_stay_empty_through_init_log_search_and_the_hooks(tmp_path):
    env = _env(tmp_path)
    project = tmp_path / "project"
    transcript = next(p for p in sorted(TRANSCRIPTS.glob("*.jsonl")) if p.stem.startswith("fe5e"))
    kept = tmp_path / "transcripts" / transcript.name  # where the runtime keeps it: not HOME, so HOME starts empty
    kept.parent.mkdir()
    shutil.copy(transcript, kept)
    common = {"session_id": transcript.stem, "transcript_path": str(kept), "cwd": str(project)}

    def kg(*args: str, stdin: dict | None = None) -> subprocess.CompletedProcess[str]:
        r = subprocess.run([KG, "-w", str(project), *args], env=env, cwd=tmp_path, capture_output=True, text=True,
                           input=json.dumps(stdin) if stdin is not None else None, timeout=300)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr[-500:])
        return r

    kg("init")
    kg("log", "error", "docker permission denied on the socket; token ghp_" + "a1B2c3D4e5" * 4)
    assert "docker" in kg("search", "docker permission").stdout
    kg("hook", "session-start", stdin={**common, "hook_event_name": "SessionStart", "source": "startup"})
    kg("hook", "post-tool-use", stdin={**common, "hook_event_name": "PostToolUseFailure", **_failure(kept)})
    kg("hook", "session-end", stdin={**common, "hook_event_name": "SessionEnd", "reason": "other"})
    outside = [str(p) for name in ("home", "xdg") for p in (tmp_path / name).rglob("*")]
    assert outside == []
    cached = list((project / "memory" / ".kg" / "cache").glob("secret-rules-*.marshal"))
    assert len(cached) == 1 and cached[0].stat().st_mode & 0o077 == 0  # kept, private to its owner
    assert "ghp_" + "a1B2c3D4e5" not in kg("list", "--json").stdout  # the cached rules still redact


def test_a_process_with_no_workspace_parses_in_memory_and_writes_nowhere(tmp_path):
    """The library's gate used with no workspace (and the CLI's error path, which redacts its message)."""
    env = _env(tmp_path)
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    secret = "ghp_" + "a1B2c3D4e5" * 4
    code = f"from kg.redaction.redact import redact_text; print(redact_text({secret!r}))"
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=nowhere, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and secret not in r.stdout and "REDACTED" in r.stdout, r.stderr
    r = subprocess.run([KG, "search", "token " + secret], env=env, cwd=nowhere, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 2 and r.stderr.startswith("Error: ") and "Traceback" not in r.stderr
    assert sorted(tmp_path.rglob("*")) == sorted([tmp_path / "home", tmp_path / "xdg", nowhere])


def test_an_explicit_cache_dir_is_still_used(tmp_path):
    env = _env(tmp_path) | {"KG_CACHE_DIR": str(tmp_path / "chosen" / "kg")}
    project = tmp_path / "project"
    subprocess.run([KG, "init", str(project)], env=env, capture_output=True, check=True, timeout=300)
    subprocess.run([KG, "-w", str(project), "log", "error", "a failure"], env=env, capture_output=True, check=True,
                   timeout=300)
    assert list((tmp_path / "chosen" / "kg").glob("secret-rules-*.marshal"))
    assert not (project / "memory" / ".kg" / "cache").exists()


def test_processes_that_race_to_write_the_workspaces_cache_leave_one_whole_file(tmp_path):
    """Four `kg log` processes started at once on a workspace with no cache yet: each parses and writes the cache
    atomically (a temporary file per process, renamed over); one whole, sealed file is left and no temporary file."""
    from kg.redaction import cache

    env = _env(tmp_path)
    project = tmp_path / "project"
    subprocess.run([KG, "init", str(project)], env=env, capture_output=True, check=True, timeout=300)
    folder = project / "memory" / ".kg" / "cache"
    shutil.rmtree(folder, ignore_errors=True)
    runs = [subprocess.Popen([KG, "-w", str(project), "log", "learning", f"racer {i}", "--no-link"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for i in range(4)]
    for run in runs:
        assert run.wait(timeout=300) == 0, run.stderr.read() if run.stderr else ""
    _applied(project)  # (the logs answered before applying: their detached applier moves the journal about)
    files = sorted(p.name for p in folder.iterdir())
    assert len(files) == 1 and files[0].startswith("secret-rules-") and files[0].endswith(".marshal"), files
    assert cache._read_cache(folder / files[0], "secrets.toml") is not None  # sealed: exactly what was written
    assert sorted(tmp_path.rglob("*")) == sorted([tmp_path / "home", tmp_path / "xdg", *project.rglob("*"), project])
