"""An agent's prompt the user pasted into their message ("... follow the prompt below - You are the Analyzer Agent
(...). Your goals: ..."): the instructions of another agent, not the user's own words.

Read as the user's, its orders ("YOU DO NOT write final code", "ALWAYS check ...") made corrections and lessons of a
prompt copied from elsewhere (QA7 c, an aider session). The user's words end where it starts: a system prompt's
opening (rules/reflect.toml [quoting] pasted_prompt, "You are the X Agent") followed by at least
pasted_prompt_min_lines more lines.
"""

from __future__ import annotations

import re


def cut_pasted_prompt(text: str, opening: re.Pattern[str] | None, min_lines: int) -> str:
    """`text` with a pasted prompt blanked, line for line (the offsets of the user's lines before it still point into
    the message); unchanged when there is no such opening, or too few lines follow it to be a pasted prompt."""
    if opening is None:
        return text
    for m in opening.finditer(text):
        rest = text[m.start():]
        if sum(1 for line in rest.splitlines() if line.strip()) > min_lines:
            return text[: m.start()] + "\n" * rest.count("\n")
    return text
