"""Every rule file loaded as the commands load it, so that `kg doctor` refuses what a command would refuse.

Each rule file is turned into its policy object lazily, by the command that needs it: a bad key in
`[rules.lifecycle]` of kg.toml passed `kg doctor` (which loaded only rules/policy.toml) and failed every `kg cycle`.
`problem` runs the same loaders, in a probe of its own, so that nothing it loads is cached on the workspace, and
says where the bad value is (kg.toml's line) and how to fix it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kg.core.errors import RulesError
from kg.core.policy import RuleSet, packaged_names


class _Probe:
    """What the loaders read of a workspace (`rules`, `policy`, a `__dict__` for their caches)."""

    def __init__(self, rules: RuleSet):
        self.rules = rules

    @property
    def policy(self) -> Any:
        return self.rules.policy


def _loaders() -> list[Any]:
    """The functions the commands build their rules with (each imported where it lives)."""
    from kg.graph.decisions import rules_of
    from kg.lifecycle.policy import load as lifecycle
    from kg.memory.expand import expand_rules
    from kg.memory.query import fts_rules
    from kg.memory.rules import memory_rules, topic_rules
    from kg.reflect.apply import failure_rules
    from kg.reflect.rules import load_rules
    from kg.runtimes.hooks import load_rules as hook_rules
    from kg.serve.server import settings as serve_settings

    return [lambda ws: ws.policy, hook_rules, lifecycle, lambda ws: rules_of(ws.rules), memory_rules, topic_rules,
            fts_rules, expand_rules, failure_rules, lambda ws: ws.rules.redactor, serve_settings,
            lambda ws: load_rules(ws.rules.raw("reflect"), source="rules/reflect.toml",
                                  model=ws.rules.raw("reflect_model"))]


def problem(rules: RuleSet) -> str | None:
    """The first thing wrong with the rules (every rule file, its overrides applied, built into its policy object),
    worded with kg.toml's line and a fix; None when all load."""
    probe = _Probe(rules)
    try:
        for name in packaged_names():
            rules.raw(name)
        for load in _loaders():
            load(probe)
    except RulesError as exc:
        return explain(rules.worded(str(exc)), Path(rules.workspace_source))
    except (TypeError, ValueError, AttributeError, LookupError, OverflowError, re.error) as exc:
        # a value no check above knows how to refuse: said as the rules' problem, never a crash of doctor or a hook
        return (f"{rules.workspace_source}: the rules it sets could not be built ({type(exc).__name__}: {exc}). Fix: "
                "undo the last change to its [rules.NAME] tables, or move it aside to run on the packaged rules")
    return None


# What tomllib says, and the usual slip behind it; a message not listed gets no guess.
_SYNTAX_HINTS = (("Expected ']' at the end of a table declaration", "a table header needs its closing ']'"),
                 ("Unterminated string", "a string needs its closing quote"),
                 ("Invalid value", "a string value needs its quotes"),
                 ("Unclosed array", "a list needs its closing ']'"),
                 ("Cannot overwrite a value", "a key is set twice"),
                 ("Cannot declare", "a table is declared twice"))

_WHERE = re.compile(r"^(?P<source>.+?)(?: \[rules\.(?P<name>[\w-]+)\])?: (?P<key>[\w.\-\[\]]+): ")


def explain(message: str, toml: Path) -> str:
    """`message` with the line of kg.toml that set the value it refuses, and what to do about it."""
    if "not valid TOML" in message:
        hint = next((f" ({h})" for said, h in _SYNTAX_HINTS if said in message), "")
        return f"{message}. Fix the syntax there{hint}, or move {toml.name} aside to run on the packaged rules"
    m = _WHERE.match(message)
    line = None
    if m:
        name = m["name"] or Path(m["source"]).stem  # a builder names the packaged file: rules/lifecycle.toml
        key = re.sub(r"\[\d+\]", "", m["key"])  # a list's item (generalise[0]): the line of the list
        line = line_of(_text(toml), ["rules", name, *_parts(key)])
    where = f" ({toml.name} line {line})" if line else ""
    fix = ("remove that line or rename the key to one of the known keys" if "unknown key" in message else
           "set the value the message asks for, or remove that line to keep the packaged default")
    return f"{message}{where}. Fix: {fix}"


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return ""


def _parts(dotted: str) -> list[str]:
    return [p.strip().strip("\"'") for p in dotted.split(".") if p.strip()]


_KEY = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")


def line_of(text: str, key: list[str]) -> int | None:
    """The line (from 1) where the TOML `text` sets `key`, a dotted path from the top ([table] headers and dotted
    keys followed); None when no line sets it alone (an inline table, an array of tables)."""
    table: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            table = _parts(stripped.strip("[]"))
            if table == key:
                return number
            continue
        m = _KEY.match(line)
        if m and table + _parts(m[1]) == key:
            return number
    return None


def salvaged_store(toml: Path) -> Any:
    """The [store] table of a kg.toml that does not parse as a whole, parsed alone (None when it has none, or it
    does not parse either): a typo in a [rules.NAME] table must not send a team workspace's captures to a local
    graph of its own."""
    import tomllib

    lines = _text(toml).splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "[store]":
            end = next((j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("[")), len(lines))
            try:
                return tomllib.loads("\n".join(lines[i:end])).get("store")
            except tomllib.TOMLDecodeError:
                return None
    return None


def checked_before(rules: RuleSet, kg_dir: Path) -> str | None:
    """`problem(rules)`, skipped when these very rule files loaded before: loading them all costs a hook about
    0.27 s (bench/hook_config.py), and kg.toml changes rarely. The stamp is kg.toml's bytes and the size and time
    of every rule file (packaged and --rules), kept in the workspace's cache folder once they loaded."""
    import hashlib
    from importlib import resources

    digest = hashlib.sha256(Path(rules.workspace_source).read_bytes() if Path(rules.workspace_source).is_file()
                            else b"")
    folders = [Path(str(resources.files("kg.rules")))] + ([rules.rules_dir] if rules.rules_dir else [])
    for folder in folders:
        for path in sorted(folder.glob("*.toml")):
            st = path.stat()
            digest.update(f"{path}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    stamp, mark = digest.hexdigest(), kg_dir / "cache" / "rules-checked"
    try:
        if mark.read_text(encoding="utf-8") == stamp:
            return None
    except (OSError, UnicodeDecodeError):
        pass
    found = problem(rules)
    if found is None:
        from kg.core.errors import UnusableFile

        try:
            from kg.core.files import write_atomic

            mark.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(mark, stamp.encode())
        except OSError:
            pass  # checked again next time
        except UnusableFile as exc:  # a link out of memory/.kg (QA3 #1): said once, checked again next time
            from kg.redaction.cache import unwritable

            unwritable(exc)
    return found
