"""The real console entry with standard streams a caller left odd (QA11 #2, #5): fd 1 closed (a daemon, a hook
runner) made `kg log` print a traceback and exit 1 after its entry was logged, so a caller retried and logged it
twice; a stream encoding that cannot say an emoji (PYTHONIOENCODING=latin-1, a legacy locale) failed every command,
`kg log` after saving its entry. Both now answer as usual."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KG = str(Path(sys.executable).parent / "kg")


def _kg(root: Path, *args: str, env: dict[str, str] | None = None, **streams) -> subprocess.CompletedProcess:
    return subprocess.run([KG, "-w", str(root), *args], text=True, timeout=300,
                          env={**os.environ, "KG_NOW": "2026-12-01T10:00:00", **(env or {})}, **streams)


def _closed(root: Path, fd: int, *args: str) -> subprocess.CompletedProcess:
    """`kg ARGS` with descriptor `fd` closed, as `kg ... >&-` runs it (the other streams kept for the test)."""
    script = f"import os, sys; os.close({fd}); os.execv(sys.argv[1], sys.argv[1:])"
    keep = {1: "stderr", 2: "stdout"}[fd]
    return subprocess.run([sys.executable, "-c", script, KG, "-w", str(root), *args], text=True, timeout=300,
                          env={**os.environ, "KG_NOW": "2026-12-01T10:00:00"}, capture_output=False,
                          **{keep: subprocess.PIPE}, stdin=subprocess.DEVNULL)


def test_a_closed_stdout_or_stderr_is_no_failure_and_logs_once(ws):
    for fd, text in ((1, "logged with stdout closed"), (2, "logged with stderr closed")):
        r = _closed(ws.root, fd, "log", "learning", text)
        said = r.stderr if fd == 1 else r.stdout
        assert r.returncode == 0 and "Traceback" not in said and "unexpected failure" not in said, said
    hook = _closed(ws.root, 1, "hook", "session-start", "--runtime", "claude-code")
    assert hook.returncode == 0 and "Traceback" not in hook.stderr, hook.stderr
    listed = _kg(ws.root, "list", "--json", capture_output=True)
    assert sorted(e["text"] for e in json.loads(listed.stdout) if e["kind"] == "event") == [
        "logged with stderr closed", "logged with stdout closed"]


def test_a_stream_encoding_without_emoji_replaces_them(ws):
    for env in ({"PYTHONIOENCODING": "latin-1"}, {"PYTHONIOENCODING": "ascii", "KG_SERVER": "0"}):
        r = _kg(ws.root, "log", "learning", f"logged under {env['PYTHONIOENCODING']}", env=env, capture_output=True)
        assert r.returncode == 0 and "LRN-20261201-" in r.stdout and "unexpected failure" not in r.stderr, r.stderr
        s = _kg(ws.root, "status", env={**env, "KG_SERVER": "0"}, capture_output=True)
        assert s.returncode == 0 and "Nodes:" in s.stdout, s.stderr


def test_utf8_arguments_under_the_c_locale_are_read_as_utf8(ws):
    """Under LC_ALL=C with UTF-8 mode off, Python decodes arguments as ASCII: valid UTF-8 text was refused as
    "not valid UTF-8" (QA11 #4). Bytes that are not UTF-8 are still refused, with exit 2."""
    c = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0", "KG_SERVER": "0"}
    r = _kg(ws.root, "log", "learning", "ünïcode and 中文 under C", env=c, capture_output=True)
    assert r.returncode == 0, r.stderr
    listed = _kg(ws.root, "list", "--json", capture_output=True)
    assert [e["text"] for e in json.loads(listed.stdout) if e["kind"] == "event"] == ["ünïcode and 中文 under C"]
    bad = subprocess.run([KG.encode(), b"-w", os.fsencode(ws.root), b"log", b"learning", b"bad \xe9 byte"],
                         capture_output=True, timeout=300, env={**os.environ, **c})
    assert bad.returncode == 2 and b"is not valid UTF-8 text" in bad.stderr, bad.stderr


def test_stdout_that_cannot_be_written_is_said_as_such_served_or_not(ws):
    """`kg log ... >/dev/full` said "unexpected failure: OSError: No space left on device, please report" after
    the entry was saved (read as the workspace's disk being full and the log having failed), and `kg list >/dev/full`
    exited 1 run here but 0, its output silently lost, when the read server answered (QA11 #3)."""
    with open("/dev/full", "w") as full:
        logged = _kg(ws.root, "log", "learning", "logged into a full stdout", stdout=full, stderr=subprocess.PIPE)
        said = logged.stderr
        assert logged.returncode == 1 and "could not write to standard output (No space left on device)" in said
        assert "unexpected failure" not in said and "report" not in said and said.count("Error:") == 1, said
        assert _kg(ws.root, "serve", "start", env={"KG_SERVER": "1"}, capture_output=True).returncode == 0
        for env in ({"KG_SERVER": "1"}, {"KG_SERVER": "0"}):  # answered by the server, then here
            r = _kg(ws.root, "list", env=env, stdout=full, stderr=subprocess.PIPE)
            assert r.returncode == 1 and r.stderr.startswith("Error: could not write to standard output"), (env, r)
            assert r.stderr.count("\n") == 1, r.stderr
            if env["KG_SERVER"] == "1":  # it answered: it is still there
                assert "Stopped" in _kg(ws.root, "serve", "stop", env=env, capture_output=True).stdout
        j = _kg(ws.root, "status", "--json", env={"KG_SERVER": "0"}, stdout=full, stderr=subprocess.PIPE)
        assert j.returncode == 1 and j.stderr.count("Error:") == 1 and "Exception" not in j.stderr, j.stderr
    listed = _kg(ws.root, "list", "--json", capture_output=True)
    assert [e["text"] for e in json.loads(listed.stdout) if e["kind"] == "event"] == ["logged into a full stdout"]
