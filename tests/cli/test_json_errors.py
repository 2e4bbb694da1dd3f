"""With `--json`, a failure is also one JSON object on stdout, `{"error": ..., "exit_code": ...}`: an agent that
parses stdout as JSON got an empty string (a QA pass: `kg show NOPE-1 --json`, `kg score 11 5 5 5 5 --json` and
some forty others printed only their `Error:` line). The Error line on stderr and the exit code stay as they were;
a hook a runtime runs (`--runtime`) keeps its own stdout."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest


def _kg(ws, capsys):
    """`kg.cli.app.run`, the in-process path every command line takes (`kg` and the read server alike)."""
    from kg.cli.app import run

    def call(args: str | list[str], workspace: bool = True):
        argv = shlex.split(args) if isinstance(args, str) else list(args)
        code = run(["-w", str(ws.root), *argv] if workspace else argv)
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.mark.parametrize("args", [
    "show NOPE-1",  # the library's errors (KgError), 2
    "resolve X --status bogus",
    "list --since garbage",
    "approve 99",
    "export graph --format bogus",
    "reflect /nonexist",
    "score 11 5 5 5 5",
    "list --limit many",  # click's usage errors, 2
    "status --bogus",
    "status --now yesterday-ish",  # the global option's own check (cli/app.py)
])
def test_a_failure_with_json_is_also_a_json_object(ws, capsys, args):
    kg = _kg(ws, capsys)
    code, out, err = kg(args)
    assert code == 2 and out == "" and err.splitlines()[-1].startswith("Error: ")
    said = err.splitlines()[-1].removeprefix("Error: ")
    code_j, out_j, err_j = kg(f"{args} --json")
    assert (code_j, err_j) == (code, err)  # the Error line and the exit code as without --json
    assert json.loads(out_j) == {"error": said, "exit_code": code}


def test_an_operational_failure_keeps_its_exit_code(tmp_path, capsys):
    from kg.cli.app import run

    code = run(["-w", str(tmp_path), "status", "--json"])  # no workspace there
    out, err = capsys.readouterr()
    assert code == 2 and err.startswith("Error: ")
    assert json.loads(out) == {"error": err.strip().removeprefix("Error: "), "exit_code": 2}
    (tmp_path / "blocker").write_text("a file where the workspace's folder goes\n", encoding="utf-8")
    code = run(["init", str(tmp_path / "blocker" / "ws"), "--json"])
    out, err = capsys.readouterr()
    assert code == 1 and err.startswith("Error: cannot create the workspace"), err  # the file system's refusal
    assert json.loads(out) == {"error": err.strip().removeprefix("Error: "), "exit_code": 1}


def test_a_command_that_printed_its_own_document_prints_no_second(ws, capsys):
    """`kg why` prints its `"found": false` document, then fails: stdout stays that one document."""
    code, out, err = _kg(ws, capsys)(["why", "nothing kg wrote", "--json"])
    assert code == 2 and err.startswith("Error: kg did not write this line")
    assert json.loads(out)["found"] is False


def test_json_after_a_double_dash_is_an_argument_not_the_option(ws, capsys):
    code, out, _ = _kg(ws, capsys)(["show", "--", "--json"])
    assert code == 2 and out == ""


def test_a_hook_a_runtime_runs_keeps_its_own_stdout(ws, capsys, monkeypatch):
    """Under `--runtime` the hook's stdout is the runtime's (its output format): a failure there is one Error
    line and exit 1 (cli/hooks.py `hook_errors`), with nothing added on stdout; without `--runtime` (a person
    trying the hook) it answers as every command does."""
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("not a JSON payload"))
    code, out, err = _kg(ws, capsys)("hook post-tool-use --runtime claude-code --json")
    assert (code, out) == (1, "") and err.startswith("Error: ")
    code, out, err = _kg(ws, capsys)("hook session-start --runtime claude-code --json --bogus")
    assert (code, out) == (1, "") and err.startswith("Error: ")
    code, out, err = _kg(ws, capsys)("hook session-start --json --bogus")
    assert code == 2 and json.loads(out) == {"error": "No such option: --bogus", "exit_code": 2}


def test_the_installed_command_says_it_too(ws):
    kg = Path(sys.executable).with_name("kg")
    done = subprocess.run([str(kg), "-w", str(ws.root), "show", "NOPE-1", "--json"], capture_output=True,
                          text=True, timeout=120, env={**os.environ})
    assert done.returncode == 2 and done.stderr.startswith("Error: no node 'NOPE-1'")
    assert json.loads(done.stdout) == {"error": done.stderr.strip().removeprefix("Error: "), "exit_code": 2}
