"""What a failed tool call's output says: the exit status around it, the line that says what went wrong (past
headers, build noise and a check runner's section labels), the tool's own advice on it, and the evidence an
entry keeps. Pure; the rules are rules/errors.toml's [lines] (`kg.reflect.failures.load_rules`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .failures import FailureRules

_TAGS = re.compile(r"</?[a-z_]+>")
# The escape sequences a terminal program colours and moves its output with (cargo, vitest, npm, pytest --color):
# CSI (`ESC [ params final`: SGR colours 38;5;n and 38;2;r;g;b, cursor moves, erases), OSC (`ESC ] ... BEL` or
# `ESC \`: hyperlinks, titles), the 8-bit CSI and the two-character escapes (`ESC ( B`, `ESC =`).
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?"
                      r"|\x1b[ -/]*[0-~]|\x1b")
# An SGR whose ESC was lost on the way ("[31mFAIL[39m src/a.test.ts"): a bare "[1m" may be words ("[1m ago]"), so
# these go only from an output that also holds a bare reset (what colouring always ends with) and at least two.
_BARE_SGR = re.compile(r"\[(?:\d{1,3}(?:;\d{1,3}){0,4})?m(?!\])")
_BARE_RESET = re.compile(r"\[(?:0|39|49|22|23|24|27)?m(?!\])")


def plain(text: str) -> str:
    """The output as it reads, without its terminal escape sequences: what the error line is chosen from and the
    pattern key is made of, so a coloured failure is named as the same failure printed plain (the live hook's
    and reflection's alike: `kg.reflect.failures` calls this before either reads an output)."""
    if "\x1b" in text or "\x9b" in text:
        text = _ESCAPES.sub("", text)
    if "m" in text and "[" in text and _BARE_RESET.search(text) and len(_BARE_SGR.findall(text)) >= 2:
        text = _BARE_SGR.sub("", text)
    return text


def exit_status(text: str, rules: FailureRules) -> tuple[int | None, str]:
    """The exit status the runtime wrote around the output, and the output without those lines."""
    code: int | None = None
    kept = []
    for line in text.replace("\r\n", "\n").split("\n"):
        m = next((m for p in rules.exit_lines if (m := p.match(line))), None)
        if m:
            code = int(m.group(1)) if code is None else code
            continue
        kept.append(line)
    return code, "\n".join(kept)


def salient_line(text: str, rules: FailureRules) -> str:
    """The line that says what went wrong: the first line that states an error message (`cause`), else the
    first error-looking line, else the first line; never noise. A header that introduces the cause ("... the
    following issue:") gives way to the telling line after it. The output's head is read first, then its tail:
    a build or a test run prints its error after hundreds of progress lines."""
    head, *tail = [[ln for ln in (_TAGS.sub("", raw).strip() for raw in part)
                    if ln and not any(p.search(ln) for p in rules.noise)] for part in _head_and_tail(text, rules)]
    views = [head[: rules.scan_lines]]  # the first `scan_lines` telling lines,
    if tail or len(head) > rules.scan_lines:  # and the last ones when there are more (a run's error is at its end)
        views.append((tail[0] if tail else head)[-rules.scan_lines:])
    for test in (rules.cause.search, rules.salient.search, lambda ln: True):
        for lines in views:
            for i, ln in enumerate(lines):
                if test(ln):
                    cause = _past_header(lines, i, rules)
                    return (_first_finding(lines, cause, rules) if rules.section.match(cause) else cause)[:300]
    return ""


def _head_and_tail(text: str, rules: FailureRules) -> list[list[str]]:
    """The output's first `scan_lines` × 4 lines, and, when it is longer, its last ones (no line twice): what is read
    of an output of any length."""
    raw = text.replace("\\n", "\n").splitlines()
    reach = rules.scan_lines * 4
    return [raw[:reach]] + ([raw[max(reach, len(raw) - reach):]] if len(raw) > reach else [])


_LEAD = re.compile(r"^[^\w\[(/.~-]+")  # box drawing and arrows before a finding
_BOX = re.compile(r"^[\s┃│║]+")


def _first_finding(lines: list[str], label: str, rules: FailureRules) -> str:
    """A check runner's section label (`[CREDO]`) says which check failed, not why: the cause is the first
    finding in its section (a severity marker or a `file:line` location, with the message under a bare
    location), named with the label. The label alone when its section has none."""
    at = lines.index(label) if label in lines else -1
    section = []
    for ln in lines[at + 1:] if at >= 0 else []:
        if rules.section.match(ln):
            break
        section.append(_LEAD.sub("", ln).strip())
    for i, ln in enumerate(section):
        m = rules.finding.search(ln)
        if not m:
            continue
        said = (ln[:m.start()] + ln[m.end():]).strip(" :#")
        if len(said.split()) < 3 and i + 1 < len(section):  # a location with a code: its message is under it
            ln = f"{ln} {section[i + 1]}"
        return f"{label} {ln}"
    return label


def advice_of(body: str, line: str, rules: FailureRules) -> str:
    """What the output says to do about the cause: the first line right after it (`advice_reach`) that advises
    (`advice`: "hint: ...", "Run `x` to fix"), with the line it introduces when it ends in a colon. "" when there
    is none, or when the cause itself says it."""
    if not line or rules.advice.search(line):
        return ""
    lines = [ln for part in _head_and_tail(body, rules) for ln in (_BOX.sub("", _TAGS.sub("", raw)).strip()
                                                                  for raw in part) if ln]
    tail = line.split("] ", 1)[-1][-40:]  # a check's finding is said after its label
    at = next((i for i, ln in enumerate(lines) if ln in line or tail in ln), None)
    if at is None:
        return ""
    for i, ln in enumerate(lines[at + 1: at + 1 + rules.advice_reach], start=at + 1):
        if rules.advice.search(ln) and not any(p.search(ln) for p in rules.noise):
            more = lines[i + 1] if ln.endswith(":") and i + 1 < len(lines) else ""
            return " ".join(f"{ln} {more}".split())[:200]
    return ""


def _is_header(line: str, rules: FailureRules) -> bool:
    return any(p.search(line) for p in rules.headers)


def _past_header(lines: list[str], i: int, rules: FailureRules) -> str:
    """Line `i`, or when it only introduces the cause, the cause: the first telling line within reach after it
    that is not a header itself, else the next line that is not a header, else the header without its colon."""
    if not _is_header(lines[i], rules):
        return lines[i]
    after = [ln for ln in lines[i + 1: i + 1 + rules.header_reach] if not _is_header(ln, rules)]
    for ln in after:
        if rules.cause.search(ln) or rules.salient.search(ln):
            return ln
    return after[0] if after else lines[i].rstrip(" :：")


def evidence(body: str, line: str, rules: FailureRules) -> str:
    """The output an entry keeps: without noise lines and blank runs, from a few lines before the cause on, at
    most `error_chars` (the banners, warnings and progress before it are no evidence)."""
    kept = [ln.rstrip() for ln in body.replace("\r\n", "\n").replace("\\n", "\n").split("\n")
            if ln.strip() and not any(p.search(_TAGS.sub("", ln).strip()) for p in rules.noise)]
    at = next((i for i, ln in enumerate(kept) if line and line in ln), None)
    if at is None:  # a check's finding, said after the check's name: the evidence starts at the finding
        at = next((i for i, ln in enumerate(kept) if len(s := _LEAD.sub("", ln).strip()) > 12 and s in line), 0)
    text = "\n".join(kept[max(0, at - rules.error_lines_before):]).strip()
    return (text or body.strip())[: rules.error_chars]
