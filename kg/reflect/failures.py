"""Failed tool calls: one failure per failed call, named the same way by the live hook and by reflection.

    rules = load_rules(ws.rules.raw("errors"))
    f = analyse("Bash", "Exit code 1\\nfatal: The current branch fix/x has no upstream branch.", "git push", rules)
    f.summary   # "`git push` failed: fatal: The current branch fix/x has no upstream branch."
    f.pattern_key  # err.bash.git_no_upstream.<8 hex>, the same for every branch name

`analyse` reads one tool's output: the line that says what went wrong (after the runtime's "Exit code N"
header, past build noise), the error class, a pattern key hashed from the program and that line with branch
names, paths, hashes, numbers, temp names and durations normalised away, the area from the command that ran,
and whether the output held nothing but an exit status. `failures` does it for every failed call of a
transcript: interrupts and declined calls are not failures, "Sibling tool call errored" cascades count toward
their root, and past the cap the most severe are kept. Pure; the rules are rules/errors.toml.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from kg.core.policy import RuleReader
from kg.core.text import code_span

from .output_lines import advice_of, evidence, exit_status, plain, salient_line  # noqa: F401 - salient_line re-exported
from .parse import Transcript, Turn
from .signature import program_of, slug

_WORDS = re.compile(r"&&|\|\||;|\|")
_LIST = re.compile(r";|\n")
_CHAIN = re.compile(r"&&|\|\|")
_PIPE = re.compile(r"\|")
_SEGMENT_SKIP = ("cd", "source", ".", "export", "set", "echo", "pushd", "popd")
_WRAPPERS = ("sudo", "env", "time", "nice", "timeout", "command", "exec")
SHELLISH = ("bash", "shell", "exec", "exec_command", "local_shell", "run", "sh", "zsh", "powershell")


@dataclass(frozen=True)
class ErrorClass:
    name: str
    pattern: re.Pattern[str]
    names: re.Pattern[str] | None  # the named errors (`ModuleNotFoundError`) of this class, case-sensitive


@dataclass(frozen=True)
class FailureRules:
    max_per_session: int
    summary_chars: int
    error_chars: int
    scan_lines: int
    error_lines_before: int
    priority: str
    repeat_priority: str
    repeat_threshold: int
    exit_only_priority: str
    tags: tuple[str, ...]
    exit_only_tag: str
    flag: tuple[re.Pattern[str], ...]
    ignore: tuple[re.Pattern[str], ...]
    cascade: tuple[re.Pattern[str], ...]
    exit_lines: tuple[re.Pattern[str], ...]
    noise: tuple[re.Pattern[str], ...]
    headers: tuple[re.Pattern[str], ...]
    header_reach: int
    section: re.Pattern[str]
    advice: re.Pattern[str]
    advice_reach: int
    finding: re.Pattern[str]
    cause: re.Pattern[str]
    salient: re.Pattern[str]
    answer_programs: tuple[re.Pattern[str], ...]
    answer_codes: frozenset[int]
    normalise: tuple[tuple[re.Pattern[str], str], ...]
    classes: tuple[ErrorClass, ...]
    error_name: re.Pattern[str]
    arguments: tuple[re.Pattern[str], ...]
    severity: dict[str, int]
    areas: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]
    tools_area: str
    shell_tools: frozenset[str]
    family: dict[str, str] = field(default_factory=dict)  # tool slug -> the key segment of its family


def _rx(r: RuleReader, name: str, text: str, flags: int = re.IGNORECASE | re.MULTILINE,
        groups: tuple[int | str, ...] = ()) -> re.Pattern[str]:
    return r.regex(name, text, flags, groups=groups)


def load_rules(data: dict[str, Any], source: str = "rules/errors.toml") -> FailureRules:
    top = RuleReader(data, source).known(("version", "limits", "priority", "tags", "detect", "lines", "normalise",
                                          "classes", "severity", "areas", "answers", "tools", "classify"))
    lim = top.table("limits").known(("max_per_session", "summary_chars", "error_chars", "error_lines_before",
                                     "scan_lines"))
    pri = top.table("priority").known(("default", "repeat", "repeat_threshold", "exit_code_only"))
    tags = top.table("tags").known(("all", "exit_code_only"))
    det = top.table("detect").known(("flag_patterns", "ignore_patterns", "cascade_patterns"))
    lines = top.table("lines").known(("exit_patterns", "noise_patterns", "header_patterns", "header_reach", "cause",
                                      "section", "finding", "advice", "advice_reach",
                                      "salient"))
    answers = top.table("answers").known(("programs", "exit_codes"))
    norm = top.table("normalise").known(("rules",))
    sev = top.table("severity")
    areas = top.table("areas")
    levels = ("critical", "high", "medium", "low")

    def rxs(r: RuleReader, name: str) -> tuple[re.Pattern[str], ...]:
        return tuple(_rx(r, f"{name}[{i}]", p) for i, p in enumerate(r.strings(name)))

    rules = []
    for i, pair in enumerate(norm.get("rules")):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            raise norm.fail(f"rules[{i}]", "must be [pattern, placeholder]")
        rx = _rx(norm, f"rules[{i}]", pair[0])
        rules.append((rx, norm.replacement(f"rules[{i}]", rx, pair[1])))
    classes = []
    for c in top.tables("classes"):
        c.known(("name", "pattern", "names"))
        names = _rx(c, "names", c.string("names"), 0) if "names" in c.data else None
        classes.append(ErrorClass(c.string("name"), _rx(c, "pattern", c.string("pattern")), names))
    cl = top.table("classify").known(("error_name", "arguments"))
    order = areas.strings("order")
    area_rules = tuple((name, tuple(tuple(p.lower().split()) for p in areas.strings(name))) for name in order)
    return FailureRules(
        max_per_session=lim.whole("max_per_session", 1), summary_chars=lim.whole("summary_chars", 40),
        error_chars=lim.whole("error_chars", 100), scan_lines=lim.whole("scan_lines", 1),
        error_lines_before=lim.whole("error_lines_before", 0),
        priority=pri.string("default", levels), repeat_priority=pri.string("repeat", levels),
        repeat_threshold=pri.whole("repeat_threshold", 2), exit_only_priority=pri.string("exit_code_only", levels),
        tags=tuple(tags.strings("all")), exit_only_tag=tags.string("exit_code_only"),
        flag=rxs(det, "flag_patterns"), ignore=rxs(det, "ignore_patterns"), cascade=rxs(det, "cascade_patterns"),
        exit_lines=rxs(lines, "exit_patterns"), noise=rxs(lines, "noise_patterns"),
        headers=rxs(lines, "header_patterns"), header_reach=lines.whole("header_reach", 1),
        section=_rx(lines, "section", lines.string("section"), re.MULTILINE),
        finding=_rx(lines, "finding", lines.string("finding"), re.MULTILINE),
        advice=_rx(lines, "advice", lines.string("advice")), advice_reach=lines.whole("advice_reach", 1),
        cause=_rx(lines, "cause", lines.string("cause")),
        salient=_rx(lines, "salient", lines.string("salient")),
        answer_programs=rxs(answers, "programs"),
        answer_codes=_codes(answers, "exit_codes"), normalise=tuple(rules), classes=tuple(classes),
        error_name=_rx(cl, "error_name", cl.string("error_name"), groups=(1,)),  # group 1: the error's name
        arguments=rxs(cl, "arguments"),
        severity={k: sev.whole(k, 0) for k in sev.data}, areas=area_rules, tools_area=areas.string("tools"),
        shell_tools=frozenset(s.lower() for s in areas.strings("shell_tools")),
        family=_families(top.table("tools").known(("families",)) if "tools" in data else None))


def _families(r: RuleReader | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for i, names in enumerate(r.get("families", []) if r else []):
        if not (isinstance(names, list) and names and all(isinstance(n, str) and n.strip() for n in names)):
            raise r.fail(f"families[{i}]", "must be a list of tool names")
        out.update({slug(n): slug(names[0]) for n in names})
    return out


def _codes(r: RuleReader, name: str) -> frozenset[int]:
    codes = r.get(name)
    if not (isinstance(codes, list) and all(isinstance(c, int) and not isinstance(c, bool) for c in codes)):
        raise r.fail(name, "must be a list of exit codes (integers)")
    return frozenset(codes)


@dataclass(frozen=True)
class Failure:
    tool: str
    command: str | None
    line: str  # what went wrong, in the tool's words ("" when the output held only an exit status)
    error: str  # the output, trimmed
    exit_code: int | None
    error_class: str
    pattern_key: str
    area: str | None
    exit_only: bool
    severity: int
    priority: str
    call_id: str | None = None
    position: str = ""
    turn: int = -1
    cascaded: int = 0  # sibling calls cancelled because of this one
    advice: str = ""  # what the tool's output says to do about it ("Run 'mix format' to fix.")

    def lesson(self) -> str | None:
        """The cause and the tool's own advice on it, as the entry's suggested fix; None without advice."""
        return f"{self.line.rstrip()} {self.advice}".strip() if self.advice else None

    def summary(self, width: int) -> str:
        """`<what ran>` failed: <the cause>. The cause is what the entry is for: what ran gives way to it (down
        to a few words; a path keeps its end, the file), never the other way round."""
        why = self.line or (f"exit code {self.exit_code} (no output)" if self.exit_code is not None else "failed")
        why = " ".join(why.split())
        shell = self.tool.lower() in SHELLISH
        head = "" if shell else f"{self.tool} "
        room = max(_MIN_WHAT, min(60 if shell else 50, width - len(head) - len(why) - len("`` failed: ")))
        if not self.command:
            return _short(f"{self.tool} failed: {why}", width)
        ran = " ".join(self.command.split())
        ran = _CD.sub("", ran) or ran
        what = _short(ran, room) if shell or not _PATHISH.match(ran) else _tail(ran, room)
        return _short(f"{head}{code_span(what)} failed: {why}", width)

    def details(self) -> str:
        out = [f"Tool: {self.tool}"]  # the command is the entry's context (`failure_fields`), not said twice
        if self.exit_code is not None:
            out.append(f"Exit code: {self.exit_code}")
        out.append(f"Error: {self.line or '(no output but the exit status)'}")
        if self.cascaded:
            out.append(f"Cancelled {self.cascaded} parallel call(s) with it")
        if self.call_id:
            out.append(f"Tool call id: {self.call_id}" + (f" ({self.position})" if self.position else ""))
        return "\n".join(out)

    def tags(self, rules: FailureRules) -> list[str]:
        tags = [*rules.tags, slug(self.tool), self.error_class]
        return tags + [rules.exit_only_tag] if self.exit_only else tags


_MIN_WHAT = 24
_CD = re.compile(r"^cd\s+\S+\s*(&&|;)\s*")  # where it ran is in the entry's context; what ran is what matters
_PATHISH = re.compile(r"^(?:[A-Za-z]:)?[~./\\]?[\w.@+-]*[/\\]\S*$")


def _tail(text: str, width: int) -> str:
    """The end of a path within `width`, from a separator: "…/.openclaw/workspace/x.md", never "…me/node/…"."""
    if len(text) <= width:
        return text
    end = text[-(width - 1):]
    if text[-width] in "/\\":  # the cut falls on a separator: the first segment is whole
        return "…" + end
    cut = min((i for i in (end.find("/"), end.find("\\")) if i > 0), default=-1)
    return "…" + (end[cut:] if 0 < cut < len(end) - 1 else end)


_BREAK = re.compile(r"[\s\"'`(\[{|;&,=]|(?<=/)")  # a cut may fall before these, or after a "/"


def _short(text: str | None, width: int) -> str:
    """The text within `width`, cut where a word ends ("git commit -m…", not `git commit -m "f…`; "test/…", not
    "test/spotter_w…") unless that would leave less than half of it."""
    one = " ".join(str(text or "").split())
    if len(one) <= width:
        return one
    head = one[:width - 1]
    if one[width - 1].isalnum() or one[width - 1] in "_-.":  # the cut falls inside a word
        breaks = [m.start() for m in _BREAK.finditer(head)]
        if breaks and breaks[-1] >= width // 2:
            head = head[:breaks[-1]]
    return head.rstrip(" \"'`([{|;&,=") + "…"


# -- one tool's output --------------------------------------------------------------------------------------------
def normalise(text: str, rules: FailureRules) -> str:
    out = text.strip()
    for pattern, placeholder in rules.normalise:
        out = pattern.sub(placeholder, out)
    return out.strip().lower()


def error_class(head: str, line: str, rules: FailureRules) -> str | None:
    """The class of the error, from what it is and never from what it is about: the error named on the line
    that says what went wrong (and any other named in the output) against each class's `names`, and each
    class's pattern against the output with its arguments masked: quoted names, and that error's own message
    ("No module named pre-commit" is about pre-commit, not a hook). First class in the rules' order wins."""
    named = rules.error_name.search(line)
    masked = head
    if named and line[named.end():].strip(" :"):
        masked = masked.replace(line[named.end():].strip(" :"), " ")
    for p in rules.arguments:
        masked = p.sub(" ", masked)
    names = ([named.group(1)] if named else []) + [m.group(1) for m in rules.error_name.finditer(masked)]
    for c in rules.classes:
        if (c.names and any(c.names.search(n) for n in names)) or c.pattern.search(masked):
            return c.name
    return None


def area_of(tool: str, command: str | None, rules: FailureRules) -> str | None:
    """The area of the command that ran, from its program and subcommand (never from file names in it)."""
    if slug(tool) not in rules.shell_tools:
        return rules.tools_area or None
    for part in _WORDS.split(command or ""):
        words = [w for w in part.strip().split() if "=" not in w.split("/")[0]]
        while words and words[0] in _WRAPPERS:
            words = words[1:]
        if not words or words[0] in _SEGMENT_SKIP:
            continue
        words = [words[0].rsplit("/", 1)[-1].lower(), *(w.lower() for w in words[1:4])]
        for name, prefixes in rules.areas:
            if any(tuple(words[: len(p)]) == p for p in prefixes):
                return name
        return None
    return None


def _message_of(text: str) -> str:
    """A tool that answers with a JSON object (`{"status": "error", "error": "ENOENT ..."}`) says what went wrong
    in its `error` (or `message`) field."""
    head = text.lstrip()
    if head.startswith("{") and len(head) < 20000:
        try:
            doc = json.loads(head)
        except json.JSONDecodeError:
            return text
        if isinstance(doc, dict):
            msg = doc.get("error") if isinstance(doc.get("error"), str) else doc.get("message")
            if isinstance(msg, str) and msg.strip():
                return msg
    return text


def analyse(tool: str | None, text: str, command: str | None, rules: FailureRules, *,
            exit_code: int | None = None) -> Failure:
    tool = tool or "tool"
    code, body = exit_status(_message_of(plain(text or "")), rules)
    code = exit_code if exit_code is not None else code
    line = salient_line(body, rules)
    at = body.find(line) if line else -1  # a cause past the head (a long build's): the output around it
    cls = error_class(body[:4000] if at < 3000 else body[at - 2000:at + 2000], line, rules)
    exit_only = not line
    cls = cls or ("nonzero_exit" if code not in (None, 0) else "failed")
    program = program_of(command) if slug(tool) in rules.shell_tools else ""
    message = normalise(line, rules)
    named = rules.family.get(slug(tool), slug(tool))
    digest = hashlib.sha256(f"{named}\x1f{cls}\x1f{program}\x1f{message}".encode()).hexdigest()[:8]
    severity = rules.severity.get("exit_code_only", 0) if exit_only else rules.severity.get(
        cls, rules.severity.get("default", 0))
    return Failure(tool=tool, command=command, line=line, error=evidence(body, line, rules), exit_code=code,
                   advice=advice_of(body, line, rules),
                   error_class=cls, pattern_key=f"err.{named}.{cls}.{digest}", area=area_of(tool, command, rules),
                   exit_only=exit_only, severity=severity,
                   priority=rules.exit_only_priority if exit_only else rules.priority)


# -- a transcript's failures --------------------------------------------------------------------------------------
def is_failure(turn: Turn, rules: FailureRules) -> bool:
    if turn.role != "tool":
        return False
    if turn.is_error is None:
        return any(p.search(turn.text[:4000]) for p in rules.flag)
    return turn.is_error


def is_declined(text: str, rules: FailureRules) -> bool:
    """The user declined or stopped the call (the runtime says so first, or last after what ran printed)."""
    return any(p.search(text[:500]) or p.search(text[-200:].strip()) for p in rules.ignore)


def is_answer(f: Failure, rules: FailureRules) -> bool:
    """A search or compare that printed nothing and exited 1: it found nothing, or the two differ. An answer."""
    if not f.exit_only or not f.command or slug(f.tool) not in rules.shell_tools:
        return False
    if f.exit_code is not None and f.exit_code not in rules.answer_codes:
        return False
    # Only the last command of a list gives its status; a && or || chain fails when any of its parts did (a `cd`
    # or `export` before it does not count), and a pipeline is a search when one of its programs is.
    last = _LIST.split(f.command.strip())[-1]
    parts = [p for p in _CHAIN.split(last) if p.split()[:1] and p.split()[0] not in _SEGMENT_SKIP]
    return bool(parts) and all(any(_answer_program(s, rules) for s in _PIPE.split(p)) for p in parts)


def _answer_program(part: str, rules: FailureRules) -> bool:
    words = part.strip().split()
    while words and ("=" in words[0].split("/")[0] or words[0] in _WRAPPERS):
        words = words[1:]
    if not words:
        return False
    seg = " ".join([words[0].rsplit("/", 1)[-1], *words[1:]])
    return any(p.search(seg) for p in rules.answer_programs)


def _cascade(text: str, rules: FailureRules) -> bool:
    return any(p.search(text[:500]) for p in rules.cascade)


@dataclass(frozen=True)
class Failures:
    found: tuple[Failure, ...]
    dropped_by_cap: int
    declined: int
    cascades: int
    answers: int = 0  # searches and compares that found nothing (exit 1, no output): not failures
    keys: tuple[str, ...] = ()  # the pattern key of every failure found (before the cap)


def failures(transcript: Transcript, rules: FailureRules, *, earlier: Counter[str] | None = None,
             after_line: int = 0) -> Failures:
    """Every failed tool call of the transcript, in order, one each. `earlier`: the pattern keys of the failures an
    earlier reflection found before this part of the transcript (`kg.reflect.window`), for the repeats; failures up
    to `after_line` (the context it re-reads) were that reflection's."""
    found: list[Failure] = []
    cascades: list[int] = []
    declined = answers = 0
    seen: set[str] = set()
    for turn in transcript.turns:
        if turn.role == "tool":  # read as the hook reads it: without the colours a terminal program printed
            turn = replace(turn, text=plain(turn.text))
        if not is_failure(turn, rules):
            continue
        if is_declined(turn.text, rules):
            declined += 1
            continue
        if _cascade(turn.text, rules):
            cascades.append(turn.index)
            continue
        if turn.call_id and turn.call_id in seen:
            continue
        if turn.call_id:
            seen.add(turn.call_id)
        f = analyse(turn.tool_name, turn.text, turn.tool_input, rules, exit_code=turn.exit_code)
        if is_answer(f, rules):
            answers += 1
            continue
        found.append(replace(f, call_id=turn.call_id, position=turn.position, turn=turn.index))
    for at in cascades:  # a cancelled sibling belongs to the nearest real failure
        if found:
            i = min(range(len(found)), key=lambda k: (abs(found[k].turn - at), found[k].turn > at))
            found[i] = replace(found[i], cascaded=found[i].cascaded + 1)
    if earlier is not None:
        found = [f for f in found if (transcript.turns[f.turn].line or 0) > after_line]
    keys = tuple(f.pattern_key for f in found)
    counts = Counter(keys) + Counter(earlier or {})
    found = [replace(f, priority=rules.repeat_priority)
             if counts[f.pattern_key] >= rules.repeat_threshold and not f.exit_only else f for f in found]
    kept = found
    if len(found) > rules.max_per_session:
        ranked = sorted(found, key=lambda f: (-f.severity, -f.turn))[: rules.max_per_session]
        kept = sorted(ranked, key=lambda f: f.turn)
    return Failures(tuple(kept), len(found) - len(kept), declined, len(cascades), answers, keys)


def failure_of_payload(tool: str | None, text: str, command: str | None, rules: FailureRules,
                       call_id: str | None = None, exit_code: int | None = None) -> Failure | None:
    """A live hook's failure (the same naming as reflection's), or None when it was declined, a cascade, or a
    search that found nothing."""
    text = plain(text)
    if is_declined(text, rules) or _cascade(text, rules):
        return None
    f = analyse(tool, text, command, rules, exit_code=exit_code)
    return None if is_answer(f, rules) else replace(f, call_id=call_id)

