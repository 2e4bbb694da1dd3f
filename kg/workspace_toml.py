"""A workspace's kg.toml, read when the workspace is opened (kg/workspace.py): its `[rules.NAME]` overrides, checked
against the packaged rule files, its `[store]` (kg/store/team.py) and `[clock]` (kg/workspace_zone.py) tables, and
the rules the workspace then works with.

A kg.toml that cannot be read, or whose rules a command would refuse (every rule file is built at the open, as the
commands build it: kg/core/rulecheck.py), refuses the workspace (exit 2, kg.toml's line named), except with
`fallback` (`kg doctor`, and the hooks, which must not lose a capture to a typo in kg.toml): then the packaged
rules are used, `ws.rules_problem` says what is wrong and how to fix it, and `ws.ran_on` what the workspace
then works with (a bad `[clock]` alone keeps kg.toml's rules: kg/workspace_zone.py `open_zone`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from kg.core.errors import RulesError
from kg.core.policy import RuleSet


def read_overrides(ws: Any) -> dict[str, Any]:
    """kg.toml's `[rules.NAME]` tables; its [store] and [clock] tables go to `ws._store_conf` and `ws._clock_conf`
    (set before an unknown table is refused: a fallback open keeps them)."""
    path = ws.root / "kg.toml"
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # a BOM (Windows editors) is no error
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RulesError(f"{path}: not valid TOML: {exc}") from None
    unknown = set(data) - {"rules", "store", "clock"}  # [store] url: kg/store/team.py; [clock] zone
    ws._store_conf, ws._clock_conf = data.get("store"), data.get("clock")
    if unknown:
        raise RulesError(f"{path}: unknown table(s) {', '.join(sorted(unknown))}; only [rules.NAME] "
                         "tables, [store] and [clock] are read")
    rules = data.get("rules", {})
    if not isinstance(rules, dict):
        raise RulesError(f"{path}: rules must be a table of [rules.NAME] tables")
    from kg.core.policy import overridable, package_only, packaged_names

    known = packaged_names()
    for name, table in rules.items():
        if refused := package_only(name, f"{path}: [rules.{name}]"):
            raise refused
        if name not in known:
            raise RulesError(f"{path}: unknown table [rules.{name}]; the rule files are "
                             f"{', '.join(overridable())}")
        if not isinstance(table, dict):
            raise RulesError(f"{path}: rules.{name} must be a table ([rules.{name}])")
    return rules


def open_rules(ws: Any, rules_dir: Path | None, fallback: bool) -> None:
    """`ws.rules`: the packaged rules, `rules_dir`'s over them, kg.toml's over both; with `fallback`, the packaged
    (and `rules_dir`'s) alone when kg.toml's are wrong, said in `ws.rules_problem`."""
    source = str(ws.root / "kg.toml")
    try:
        overrides = read_overrides(ws)
    except RulesError as exc:
        if not fallback:
            raise
        from kg.core.rulecheck import explain, salvaged_store

        overrides, ws.rules_problem = {}, explain(str(exc), ws.root / "kg.toml")
        ws._store_conf, ws._toml_broken = salvaged_store(ws.root / "kg.toml"), True
        ws.ran_on = "the packaged rules"
    ws.rules = RuleSet(rules_dir=rules_dir, workspace_overrides=overrides, workspace_source=source)
    if overrides:  # every rule file built as the commands build it (cached once they load): refused at the open
        from kg.core.rulecheck import checked_before

        found = checked_before(ws.rules, ws.kg_dir)
        if found and not fallback:  # not later, by the one command that reads the bad value (nor by the read
            raise RulesError(found)  # server, whose hooks would then lose their fallback)
        if found:
            ws.rules_problem = found
            ws.rules = RuleSet(rules_dir=rules_dir, workspace_source=source)
            ws.ran_on = "the packaged rules"
