"""kg's part of `.codex/config.toml` (`kg install codex`): the `hooks` feature flag and kg's MCP server, each
in a block written by the one block editor (`kg/lifecycle/blocks.py`) with TOML comment markers:

    [features]
    # kaizen-kg:begin codex-hooks
    hooks = true
    # kaizen-kg:end codex-hooks

Text outside the blocks stays byte for byte; a person's edit inside one is flagged and kept; damaged markers
are flagged. Where the file has a [features] table already, the flag's block goes right under its header (TOML
allows a table once); otherwise the block holds the table. Pure: text in, text and plans out.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from typing import Any

from kg.core.errors import UsageError
from kg.lifecycle import blocks
from kg.runtimes.openclaw_hook import SERVER_NAME

HOOKS_BLOCK, MCP_BLOCK = "codex-hooks", "codex-mcp"
NAMES = (HOOKS_BLOCK, MCP_BLOCK)
FIX = "delete the block, marker lines included, to let kg write it again"
# the markers of kg before the one block editor: an install or uninstall takes them (and what they hold) out
LEGACY_BEGIN, LEGACY_END = ("# >>> kaizen-kg (kg install codex; remove with kg uninstall codex) >>>",
                             "# <<< kaizen-kg <<<")
LEGACY_MARK = "  # kaizen-kg"
_FEATURES = re.compile(r"(?m)^[ \t]*\[[ \t]*features[ \t]*\][ \t]*(#.*)?\r?$")


def strip_legacy(text: str) -> str:
    """`text` without an older kg's block and marked lines (kg wrote them; nothing of the person's is in them)."""
    start, stop = text.find(LEGACY_BEGIN), text.find(LEGACY_END)
    if start >= 0 and stop > start:
        before, after = text[:start].rstrip("\n"), text[stop + len(LEGACY_END):].lstrip("\n")
        text = before + "\n\n" + after if before and after else (before + "\n" if before else "") + after
    return "".join(line for line in text.splitlines(keepends=True) if not line.rstrip("\r\n").endswith(LEGACY_MARK))


def without_blocks(text: str) -> str:
    """`text` with kg's blocks cut out (a damaged one stays: the editor flags it). A person's text on a marker's
    line stays, as every block removal keeps it (`blocks.without`): `[features] # kaizen-kg:begin codex-hooks` cut
    whole read as a file without [features], and kg then wrote a second one (invalid TOML, the install refused)."""
    for name in NAMES:
        try:
            span = blocks.find(text, name, blocks.TOML)
        except blocks.BlockError:
            continue
        if span is not None:
            text = blocks.without(text, span)
    return text


def hooks_off(config: Mapping[str, Any]) -> str | None:
    """How a parsed config.toml turns Codex's hooks off (`[features] hooks = false`, or the deprecated
    `codex_hooks`), or None. Pure."""
    features = config.get("features")
    if not isinstance(features, Mapping):
        return None
    key = next((k for k in ("hooks", "codex_hooks") if features.get(k) is False), None)
    return f"[features] {key} = false" if key else None


def wanted(text: str, argv: list[str] | None) -> tuple[dict[str, tuple[str | None, str]], list[str]]:
    """What each of kg's blocks should hold (its lines, or None for no block; and the table header it goes
    under), judged on the file without kg's blocks; and notes for the person."""
    base = without_blocks(text)
    try:
        current = tomllib.loads(base)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f".codex/config.toml is not valid TOML ({exc}); fix it, then run the install again") \
            from None
    notes: list[str] = []
    hooks: tuple[str | None, str] = (None, "")
    features = current.get("features")
    if features is None:
        hooks = ("[features]\nhooks = true\n", "")
    elif not isinstance(features, dict):
        raise UsageError(".codex/config.toml: `features` must be a table ([features]); fix it, then run the "
                         "install again")
    elif "hooks" not in features and "codex_hooks" not in features:  # codex_hooks: the deprecated alias
        header = _FEATURES.search(base)
        if header:
            hooks = ("hooks = true\n", header.group(0).rstrip("\r"))
        else:
            notes.append("set `hooks = true` in [features] yourself: kg found no `[features]` header line to put "
                         "it under")
    elif off := hooks_off(current):
        # The person's own `false` is kept: it is outside kg's blocks, which is theirs, and it turns off every hook
        # of theirs, not only kg's (perhaps on purpose). But kg's hooks will not run, and an install that said
        # "update features.hooks" with no note left them believing otherwise (QA1 #3).
        notes.append(f"Codex hooks are turned off here ({off}): kg's hooks (.codex/hooks.json) will not run; set it "
                     "to true (or delete the line: Codex turns hooks on by default) for the brief, the reflection "
                     "and the error log")
    mcp: tuple[str | None, str] = (None, "")
    if argv:
        if SERVER_NAME in (current.get("mcp_servers") or {}):
            notes.append(f"[mcp_servers.{SERVER_NAME}] is set outside kg's block: left as it is")
        else:
            mcp = (f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(argv[0])}\n"
                   "args = [" + ", ".join(json.dumps(a) for a in argv[1:]) + "]\n", "")
    return {HOOKS_BLOCK: hooks, MCP_BLOCK: mcp}, notes


def sync(text: str | None, argv: list[str] | None, states: Mapping[str, Mapping[str, Any]], *,
         install: bool = True, force: bool = False,
         fix: str = FIX) -> tuple[str | None, dict[str, blocks.SyncPlan], list[str]]:
    """The file with kg's blocks as an install (`install`) or uninstall wants them, the editor's plan for each
    block, and notes. `states` is what kg last wrote in each block (its hash and glue, by block name). A block a
    person removed is added again by an install; one they edited is flagged and kept, unless `force`."""
    new = strip_legacy(text) if text is not None else None
    want, notes = wanted(new or "", argv) if install else ({n: (None, "") for n in NAMES}, [])
    plans: dict[str, blocks.SyncPlan] = {}
    for name in NAMES:
        desired, section = want[name]
        state = states.get(name) or {}
        if desired is not None and new is not None and blocks.newline_of(new) == "\r\n":
            desired = desired.replace("\n", "\r\n")
        present = new is not None and name in blocks.names(new, blocks.TOML)
        plan = blocks.plan_sync(new, name, desired, expected_hash=(state.get("hash") or None) if present else None,
                                glue=str(state.get("glue") or ""), created_file=bool(state.get("created_file")),
                                section=section, force=force, fix=fix, markers=blocks.TOML)
        plans[name] = plan
        if plan.action == "flag":
            notes.append(f"kg's block {name} was left as it is: {plan.reason}")
        elif plan.action != "none":
            new = plan.text
    if install and new is not None and new != text:
        try:
            tomllib.loads(new)
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f".codex/config.toml would not be valid TOML with kg's blocks ({exc}); fix the file, "
                             "then run the install again") from None
    return new, plans, notes
