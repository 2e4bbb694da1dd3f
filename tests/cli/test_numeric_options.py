"""Every whole-number or decimal option of every command refuses a negative value with exit 2 and a message
naming the option (a QA pass: `kg patterns --min -1` exited 0 and listed everything, where every other numeric
option refused). The commands are found by walking the real app, so a new option is checked too."""

from __future__ import annotations

import typer
from kg.cli.app import app

# commands that start or change something outside the workspace (a server, a crontab, a runtime's settings)
OUTSIDE = {"serve", "server", "schedule", "install", "uninstall", "mcp"}


def _numeric_options() -> list[tuple[list[str], int, str]]:
    """(command path, its required arguments, option) for every int or float option."""
    found = []

    def walk(cmd, path: list[str]) -> None:
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            if not path and name in OUTSIDE:
                continue
            walk(sub, [*path, name])
        args = [p for p in cmd.params if p.param_type_name == "argument" and p.required]
        for p in cmd.params:
            if p.param_type_name == "option" and not p.is_flag and p.type.name in ("int", "float", "integer"):
                found.append((path, len(args), p.opts[0]))
    walk(typer.main.get_command(app), [])
    return found


def test_every_numeric_option_refuses_a_negative_value(ws, run_kg):
    options = _numeric_options()
    assert (["patterns"], 0, "--min") in options and len(options) >= 10, options
    wrong = []
    for path, nargs, opt in options:
        r = run_kg([*path, *(f"x{i}" for i in range(nargs)), opt, "-1"])
        if r.exit_code != 2 or not r.stderr.startswith("Error: ") or "Traceback" in r.stderr:
            wrong.append((" ".join(path), opt, r.exit_code, r.stderr[-200:]))
    assert not wrong, wrong


def test_patterns_min_says_what_it_accepts(run_kg):
    r = run_kg("patterns --min 0")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == "Error: --min must be at least 1 (a pattern is seen once or more), not 0\n"
    assert run_kg("patterns --min 1").exit_code == 0
