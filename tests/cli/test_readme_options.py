"""README's Commands tables name options (`kg list ... --since 7d --limit`): each must exist on a command the row
names (or be a global option), so the README never teaches an option kg would refuse. test_docs.py checks the
other direction (every command is listed)."""

from __future__ import annotations

import re
from pathlib import Path

import typer
from kg.cli.app import app

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
ROOT = typer.main.get_command(app)


def _options(group, prefix=()):
    for name, cmd in group.commands.items():
        path = " ".join((*prefix, name))
        yield path, {o for p in cmd.params for o in (*p.opts, *getattr(p, "secondary_opts", []))}
        if hasattr(cmd, "commands"):
            yield from _options(cmd, (*prefix, name))


OPTIONS = dict(_options(ROOT))
GLOBAL = {o for p in ROOT.params for o in p.opts}
START = README.index("## Commands")
ROWS = [line for line in README[START:README.index("\n## ", START + 1)].splitlines() if line.startswith("| `kg ")]


def _named(row: str) -> list[str]:
    """The commands a row names: the longest known prefix of each `kg ...` in it."""
    out = []
    for m in re.finditer(r"`kg ([^`]*)`", row):
        words = m.group(1).replace("\\|", " ").split()
        out += [p for p in (" ".join(words[:k]) for k in range(len(words), 0, -1)) if p in OPTIONS][:1]
    return out


def test_the_commands_tables_are_found():
    assert len(ROWS) > 40 and all(_named(r) for r in ROWS)


def test_every_option_the_readme_names_exists():
    wrong = []
    for row in ROWS:
        named = _named(row)
        allowed = GLOBAL.union(*(OPTIONS[c] for c in named))
        wrong += [f"{named[0]}: {o}" for o in sorted(set(re.findall(r"(?<![\w/-])(--[a-z][a-z-]*|-[a-zA-Z])(?![\w-])",
                                                                       row))) if o not in allowed]
    assert not wrong, "README names options these commands do not have: " + "; ".join(wrong)


def _command(words: list[str]) -> tuple[str | None, list[str]]:
    """The longest known command that `words` start with (after global options), and the words after it."""
    i = 0
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in ("-w", "--workspace", "--rules", "--now") else 1
    words = words[i:]
    k = next((k for k in range(len(words), 0, -1) if " ".join(words[:k]) in OPTIONS), 0)
    return (" ".join(words[:k]) if k else None), words[k:]


def test_every_command_the_readme_names_anywhere_exists():
    """Prose named `kg export cypher`, a command kg does not have (it is `kg export graph --format cypher`)."""
    wrong = []
    for span in sorted(set(re.findall(r"`kg ([^`]*)`", README))):
        words = span.replace("\\|", " ").split()
        if not words or words[0].startswith("-") and len(words) == 1:
            continue  # a global option alone: `kg --version`
        name, rest = _command(words)
        group = ROOT if name is None else ROOT.get_command(None, name.split()[0])
        for part in name.split()[1:] if name else ():
            group = group.commands[part]
        if name is None or (hasattr(group, "commands") and rest and re.fullmatch(r"[a-z][a-z-]+", rest[0])):
            wrong.append(f"kg {span}")
    assert not wrong, "README names commands kg does not have: " + "; ".join(wrong)


def test_each_command_of_a_row_has_the_options_written_after_it():
    """A row naming several commands (`kg schedule install`, ..., `kg schedule status` `[--cron|--systemd]`) gave
    status options only install and uninstall take."""
    wrong = []
    for row in ROWS:
        current = None
        for part in re.split(r"(`kg [^`]*`)", row.split(" | ")[0]):
            m = re.fullmatch(r"`kg ([^`]*)`", part)
            text = part
            if m:
                current, rest = _command(m.group(1).replace("\\|", " ").split())
                text = " ".join(rest)
            if current is None:
                continue
            wrong += [f"{current}: {o}" for o in re.findall(r"(?<![\w/-])(--[a-z][a-z-]*|-[a-zA-Z])(?![\w-])", text)
                      if o not in GLOBAL | OPTIONS[current]]
    assert not wrong, "README gives commands options they do not take: " + "; ".join(wrong)


# Options every command has, said once in "Conventions every command follows" (and --help).
CONVENTIONS = {"--help", "--json", "--now"}


def test_every_option_of_every_command_is_in_the_readme():
    """The other direction: an option kg takes that the README never names is an option nobody finds (a QA pass:
    `kg score --notes`, `kg skill check --tool-calls --new-workflow`, `kg hook session-start --write`)."""
    def walk(group, prefix=()):
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):
                yield from walk(cmd, (*prefix, name))
            else:
                yield " ".join((*prefix, name)), cmd

    unnamed = [f"kg {path} {p.opts[0]}" for path, cmd in walk(ROOT) for p in cmd.params
               if p.param_type_name == "option" and p.opts[0] not in CONVENTIONS
               and not re.search(rf"(?<![\w-]){re.escape(p.opts[0])}(?![\w-])", README)]
    assert not unnamed, "README never names these options: " + "; ".join(unnamed)
