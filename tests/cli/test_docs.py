"""Every command has --help and a line in README.md (sqlite-utils keeps the same promise in test_docs.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from kg.cli.app import app
from typer.testing import CliRunner

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _commands(group, prefix=()):
    for name, cmd in sorted(group.commands.items()):
        path = (*prefix, name)
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, path)
        else:
            yield path


COMMANDS = list(_commands(typer.main.get_command(app)))


def test_there_are_commands():
    assert len(COMMANDS) > 10


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_has_help(path):
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_is_in_the_readme(path):
    assert re.search(rf"`kg {' '.join(path)}\b", README), f"`kg {' '.join(path)}` is not listed in README.md"
