"""Stable signatures for tool failures, so one failure recurs under one pattern key.

The key is `err.<tool>.<class>.<8 hex>`: the tool, an error class from the rules,
and a hash of the program that ran and the salient error line with paths, numbers,
ids, quoted strings and hex normalised away. Two sessions hitting the same failure
in different folders, with different line numbers or ids, get the same key.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .rules import ErrorClass

_EXIT = re.compile(r"(?i)\b(?:exit code|exit status|exited with(?: code)?|return ?code)[ :=]*(-?\d+)")
_SALIENT = re.compile(
    r"(?i)\b(error|fatal|failed|failure|exception|denied|not found|no such|cannot|can't|could not|"
    r"unable|invalid|refused|timed out|timeout|undefined|missing)\b"
)
_NOISE_LINE = re.compile(r"(?i)^\s*(exit code -?\d+|compiling \d+ files?|generated \S+ app|running \S+)\s*$")
_SHELL_TOOL = re.compile(r"bash|shell|terminal|exec|run|command|^sh$")
_TAGS = re.compile(r"</?[a-z_]+>")
# Normalisers, applied in order; each replaces volatile parts with a placeholder.
_NORMALISE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE), "<id>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:[/\\][\w.@+-]+)+[/\\]?"), "<path>"),
    (
        re.compile(r"\b[\w.-]+\.(py|js|ts|tsx|jsx|ex|exs|rb|go|rs|java|c|h|cpp|md|json|toml|ya?ml|sh|txt)\b"),
        "<file>",
    ),
    (re.compile(r"\b0x[0-9a-f]+\b", re.IGNORECASE), "<hex>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b", re.IGNORECASE), "<hex>"),
    (re.compile(r"\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`"), "<str>"),
    (re.compile(r"\b\d+(\.\d+)*\b"), "<n>"),
    (re.compile(r"\s+"), " "),
)


@dataclass(frozen=True)
class ErrorSignature:
    tool: str
    error_class: str
    program: str
    message: str  # the salient error line, normalised
    exit_code: int | None

    @property
    def pattern_key(self) -> str:
        digest = hashlib.sha256(
            f"{self.tool}\x1f{self.error_class}\x1f{self.program}\x1f{self.message}".encode()
        )
        return f"err.{self.tool}.{self.error_class}.{digest.hexdigest()[:8]}"


def normalise(text: str) -> str:
    out = text.strip()
    for pattern, placeholder in _NORMALISE:
        out = pattern.sub(placeholder, out)
    return out.strip().lower()


def slug(name: str | None) -> str:
    s = re.sub(r"[^a-z0-9]+", "_", (name or "tool").lower()).strip("_")
    return s or "tool"


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


def salient_line(text: str) -> str:
    """The line that says what went wrong: the first error-looking line, else the first line."""
    # Some tools double-escape their output: a literal backslash-n is a line break too.
    lines = [_TAGS.sub("", ln).strip() for ln in text.replace("\\n", "\n").splitlines()]
    lines = [ln for ln in lines if ln and not _NOISE_LINE.match(ln)]
    for ln in lines[:60]:
        if _SALIENT.search(ln):
            return ln[:300]
    return lines[0][:300] if lines else ""


def exit_code(text: str) -> int | None:
    m = _EXIT.search(text[:500])
    return int(m.group(1)) if m else None


def classify(text: str, classes: Iterable[ErrorClass]) -> str:
    head = text[:4000]
    for c in classes:
        if c.pattern.search(head):
            return c.name
    code = exit_code(text)
    return "nonzero_exit" if code not in (None, 0) else "failed"


def signature(
    tool: str | None, text: str, command: str | None, classes: Iterable[ErrorClass]
) -> ErrorSignature:
    return ErrorSignature(
        tool=slug(tool),
        error_class=classify(text, classes),
        program=program_of(command) if _SHELL_TOOL.search(slug(tool)) else "",
        message=normalise(salient_line(text)),
        exit_code=exit_code(text),
    )
