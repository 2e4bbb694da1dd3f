"""The marked block `kg install codex` writes in AGENTS.md (how the agent calls kg), through the one block editor,
and the markers of kg before that editor. Pure."""

from __future__ import annotations

from typing import Any

from kg.lifecycle import blocks

AGENTS_BLOCK = "install-codex"  # <!-- kaizen-kg:begin install-codex --> in AGENTS.md
# the AGENTS.md markers of kg before the one block editor; an install or uninstall turns them into the block's
LEGACY_BEGIN = "<!-- kaizen-kg:begin (kg install codex; remove with kg uninstall codex) -->"
LEGACY_END = "<!-- kaizen-kg:end -->"


# -- marked text blocks (pure) ---------------------------------------------------------------------------------
def upgrade_legacy(text: str) -> str:
    """AGENTS.md with an older kg's markers given the one block format (the text between them is kept). Pure."""
    start = text.find(LEGACY_BEGIN)
    stop = text.find(LEGACY_END, start + 1) if start >= 0 else -1
    if start < 0 or stop < 0:
        return text
    return (text[:start] + blocks.BEGIN.format(name=AGENTS_BLOCK) + text[start + len(LEGACY_BEGIN):stop]
            + blocks.END.format(name=AGENTS_BLOCK) + text[stop + len(LEGACY_END):])


def agents_plan(text: str | None, body: str | None, state: dict[str, Any], *, force: bool = False,
                fix: str = "then run the command again") -> blocks.SyncPlan:
    """Bring AGENTS.md's kg block to `body` (None: take it out) through the block editor. Installing again
    re-adds a block a person removed; an edit inside the block is flagged and kept, unless `force`."""
    text = upgrade_legacy(text) if text is not None else None
    present = text is not None and AGENTS_BLOCK in blocks.names(text)
    return blocks.plan_sync(text, AGENTS_BLOCK, body, expected_hash=(state.get("hash") or None) if present else None,
                            glue=str(state.get("glue") or ""), created_file=bool(state.get("created_file")),
                            force=force, fix=fix)


AGENTS_BODY = """## kaizen-kg (learning memory)

This project keeps what agents learn in kaizen-kg (`kg`). Codex's hooks (`.codex/hooks.json`) open each session
with kg's brief and, after every turn, log the failed commands and the user's corrections from the rollout: do
not log those yourself, or each would count twice. Please:
- Read the brief at the start (pending high-priority items, verifications due, proposals waiting for the user,
  the watch list). If the session did not open with a "# kaizen-kg brief", the hooks are off: run
  `{kg} hook session-start --start-session`, and log failures and corrections yourself as below.
- When you learn what the rollout does not show (a workaround, a fact about this project), run
  `{kg} log learning "what you learned" --category insight`.
- Hooks off only: a command that failed in a way worth remembering,
  `{kg} log error "what failed" --error "the message" --context "the command"`; the user corrects you or
  states a preference, `{kg} log learning "what you learned" --category correction` (or `--category preference`).
- Before a task, `{kg} search "words of the task"` finds what was learned before;
  `{kg} inject --message "the task"` gives a ready memory block.
- Show waiting proposals (`{kg} propose`) to the user. When they say "approve N" run `{kg} approve N`;
  "skip N" → `{kg} skip N --reason "their reason"`.
- Hooks off only, at the end of a session: `{kg} hook session-end --transcript PATH`
  (or `{kg} session end --summary "what was done"`).
"""
