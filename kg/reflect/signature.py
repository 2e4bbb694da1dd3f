"""The parts of a failed tool call's pattern key that name where it came from (`kg.reflect.failures`).

`err.<tool>.<class>.<8 hex>`: the tool as a slug, and the program a shell command ran, so that the same
failure of `git` in two folders lands on one key while `git` and `hg` do not.
"""

from __future__ import annotations

import re

from kg.core.text import slugify


def slug(name: str | None) -> str:
    """The tool's key segment: `kg.core.text.slugify`, snake_case, ASCII, uncapped (keys stay as they were)."""
    return slugify(name or "tool", sep="_", cjk=False, limit=None, fallback="tool")


def program_of(command: str | None) -> str:
    """The program a shell command ran (`git` for `cd x && git push 2>&1`), for grouping."""
    if not command:
        return ""
    for part in re.split(r"&&|\|\||;|\|", command):
        words = [w for w in part.strip().split() if "=" not in w.split("/")[0]]
        if not words or words[0] in ("cd", "source", ".", "export", "set", "echo"):
            continue
        prog = words[0].rsplit("/", 1)[-1]
        if prog in ("sudo", "env", "time", "npx", "uvx", "bunx", "poetry", "uv", "bun") and len(words) > 1:
            prog = f"{prog} {words[1]}"
        return prog.lower()
    return ""
