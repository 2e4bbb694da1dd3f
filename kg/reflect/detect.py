"""Find what the user's turns of a session teach: corrections, requests, preferences, knowledge gaps.

Pure functions over a parsed Transcript and the frozen rules. Only the user's own
words are read: harness output, fenced code, quoted lines and pasted logs are removed
first, and tool results are never the user speaking. Findings are deduplicated per
session, capped, and redacted before they leave this module. Failed tool calls are
`kg.reflect.failures`' business (rules/errors.toml), one finding per failed call.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from kg.core.text import folded

from .language import fold
from .lesson import command_line, names_one_thing_at_most, sentence_at, sentences, shorten
from .lesson import key as lesson_key
from .lesson import phrase as phrase_lesson
from .parse import LINE_FORMATS, Transcript, Turn
from .pasted import cut_pasted_prompt
from .replaced import with_replaced
from .rules import PRIORITIES, ReflectRules
from .signals import as_written, fired, has_reason, reasons, score, straighten, views
from .verdict import last_step, verdict


@dataclass(frozen=True)
class Finding:
    kind: str  # learning | feature | preference
    category: str  # correction, knowledge_gap, best_practice, feature_request, preference
    summary: str
    details: str
    evidence: str  # the line that triggered it, trimmed
    position: str  # "line 42" / "turn 7"
    pattern_key: str | None
    priority: str
    source: str
    tool_calls_in_task: int
    occurrences: int = 1
    turn: int = 0  # index of the turn it came from
    signals: tuple[str, ...] = ()  # the signals that made it, strongest first (learnings)
    score: float | None = None  # the model's score for its class (learnings)
    also: tuple[str, ...] = ()  # other categories the same entry stands for (a rule stated as a correction)


@dataclass(frozen=True)
class Task:
    """The work between one thing the user said and the next."""

    index: int
    turn: int  # index of the user turn that started it (-1: before any)
    position: str
    request: str
    tool_calls: int


@dataclass(frozen=True)
class Reflection:
    findings: tuple[Finding, ...]
    tasks: tuple[Task, ...]
    skill_candidates: tuple[Task, ...]
    dropped_by_cap: int
    duplicates: int
    # (`unique_key`, kind, priority, session: "" when the file is one session) of each finding before the caps
    found: tuple[tuple[str, str, str, str], ...] = ()


_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_RANK = {p: i for i, p in enumerate(PRIORITIES)}


# --- what the user said -----------------------------------------------------------------


def is_harness(text: str, rules: ReflectRules) -> bool:
    """Harness output in the user's place, read past the sections a runtime injects before it (Cursor's time stamp
    and background-task notice)."""
    injected = rules.quoting.injected
    heads = [text.lstrip()]
    if injected is not None and "<" in text:  # (a prefix may be an injected tag itself: `<command-name>`)
        heads.append(injected.sub("", text).lstrip())
    return any(head.startswith(p) for head in heads for p in rules.quoting.harness_prefixes) or bool(
        rules.quoting.command_pattern.match(heads[0]))


def is_speaking_user(turn: Turn, rules: ReflectRules) -> bool:
    """A user turn in the user's words: not harness output, unless the harness wraps words the user typed (the
    arguments of a slash command of their own)."""
    typed = rules.quoting.typed
    return turn.role == "user" and bool(turn.text.strip()) and (not is_harness(turn.text, rules) or (
        typed is not None and any(m.group(3).strip() for m in typed.finditer(turn.text))))


def own_lines(text: str, rules: ReflectRules) -> list[tuple[int, str]]:
    """(offset, line) for the lines that are the user's own words, not pasted or quoted text."""
    q = rules.quoting
    text = cut_pasted_prompt(text, q.pasted_prompt, q.pasted_prompt_min_lines)  # another agent's prompt, pasted
    if q.injected is not None and "<" in text:  # blanked line for line: offsets still point into the message
        text = q.injected.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    if q.typed is not None and "<" in text:  # the user's words the harness wrapped: the words, not the tags
        text = q.typed.sub(lambda m: m.group(3), text)
    lines = text.splitlines()
    keep = [True] * len(lines)
    for i, line in enumerate(lines):
        if any(p.search(line) for p in q.request_markers):
            keep[: i + 1] = [False] * (i + 1)
    fenced = prompted = False
    captions: list[int] = []
    for i, line in enumerate(lines):
        if not keep[i]:
            continue
        if q.drop_fenced_code and _FENCE.match(line):
            keep[i] = False
            fenced = not fenced
            continue
        prompted = bool(line.strip()) and (prompted or any(p.search(line) for p in q.prompt_patterns))
        if fenced or prompted or line.lstrip().startswith(q.quote_prefixes) or not line.strip():
            keep[i] = False
            if prompted and i and keep[i - 1] and len(lines[i - 1].split()) <= q.caption_max_words and \
                    not lines[i - 1].rstrip().endswith(("?", "!", ".", ":", "？", "！", "。")) and \
                    any(p.search(line) for p in q.prompt_patterns):
                captions.append(i - 1)  # a short line right above a pasted shell prompt
        elif any(p.search(line) for p in q.output_line_patterns):
            keep[i] = False
    if q.caption_max_words and len(captions) >= 2:  # screens the user labelled to compare ("vs code", "ghostty"):
        for i in captions:  # names, not words to learn from (one short line above one paste may be the verdict)
            keep[i] = False
    for i, line in enumerate(lines):  # a shell's error record: its message from the head line, the place, the rest
        if not any(p.search(line) for p in q.record_position_patterns):
            continue
        start = next((j for j in range(i - 1, max(-1, i - 4), -1)
                      if any(p.search(lines[j]) for p in q.record_head_patterns)), i)
        end = i
        while end < len(lines) and lines[end].strip():
            end += 1
        keep[start:end] = [False] * (end - start)
    if q.screen_min_lines:  # a copied terminal screen: many lines padded to one width
        widths: dict[int, int] = {}
        for line in lines:
            if len(line) >= q.screen_min_width and line != line.rstrip():
                widths[len(line)] = widths.get(len(line), 0) + 1
        screen = {w for w, n in widths.items() if n >= q.screen_min_lines}
        if screen:
            keep = [k and len(line) not in screen for k, line in zip(keep, lines, strict=True)]
    # Runs of log-looking lines are pasted output. A line already dropped (blank, quoted, fenced) does not end a
    # run: pasted tracebacks and terminal screens hold blank lines.
    run: list[int] = []
    for i, line in enumerate([*lines, ""]):
        if i < len(lines) and keep[i] and any(p.search(line) for p in q.log_line_patterns):
            run.append(i)
            continue
        if i < len(lines) and not keep[i]:
            continue
        if len(run) >= q.log_block_min_lines:
            for j in run:
                keep[j] = False
        run = []
    if q.reference_prefix is not None:  # "#terminalSelection please fix": the words after the attached context
        lines = [q.reference_prefix.sub("", line, count=1) if k else line for k, line in zip(keep, lines, strict=True)]
    return [(i, lines[i].strip()) for i in range(len(lines)) if keep[i] and lines[i].strip()]


def _evidence(line: str, hit: re.Match[str], limit: int) -> str:
    if len(line) <= limit:
        return line
    start = 0
    for s in _SENTENCE_END.finditer(line):
        if s.end() <= hit.start():
            start = s.end()
    return _trim(line[start:], limit)


def _read(said: list[str], chars: int) -> list[str]:
    """The whole sentences that start within the first `chars` characters: the words the signals read, which a
    lesson comes from (what follows is mostly pasted prose)."""
    out, at = [], 0
    for s in said:
        if at >= chars:
            break
        out.append(s)
        at += len(s) + 1
    return out


def _trim(text: str, limit: int) -> str:
    """`text` on one line within `limit` (a lesson is cut where a clause ends: `kg.reflect.lesson.shorten`)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip(" ,;:-(") + "…"


# --- tasks ---------------------------------------------------------------------------


def task_of_turns(transcript: Transcript, rules: ReflectRules) -> tuple[list[int], list[Task]]:
    """The task index of every turn, and the tasks with their tool-call counts."""
    owner: list[int] = []
    tasks: list[Task] = []
    current = -1
    counts: list[int] = []
    for turn in transcript.turns:
        if is_speaking_user(turn, rules):
            current = len(tasks)
            first = next((ln for _, ln in own_lines(turn.text, rules)), turn.text.strip().splitlines()[0])
            tasks.append(Task(current, turn.index, turn.position, _trim(first, 120), 0))
            counts.append(0)
        elif current == -1 and not tasks:
            tasks.append(Task(0, -1, turn.position, _command(turn, rules), 0))
            counts.append(0)
            current = 0
        elif current == 0 and tasks[0].turn == -1 and not tasks[0].request:  # (a system prompt came first)
            tasks[0] = replace(tasks[0], request=_command(turn, rules))
        if turn.role == "assistant" and turn.tool_name:
            counts[current] += 1
        owner.append(current)
    tasks = [replace(t, tool_calls=counts[t.index]) for t in tasks]
    return owner, tasks


def _command(turn: Turn, rules: ReflectRules) -> str:
    """The slash command a harness user turn ran (`/init`): what the work before the user's first words asked for
    ("" when there is none)."""
    found = rules.quoting.command.search(turn.text) if rules.quoting.command and turn.role == "user" else None
    return _trim(found.group(3), 120) if found else ""


# --- detection -----------------------------------------------------------------------


def speaking_turns(transcript: Transcript, rules: ReflectRules) -> list[int]:
    return [t.index for t in transcript.turns if is_speaking_user(t, rules)]


def turn_signals(transcript: Transcript, rules: ReflectRules) -> dict[int, tuple[str, ...]]:
    """The signals that fire on each speaking user turn (what the model and the trainer read)."""
    users = speaking_turns(transcript, rules)
    own = {i: own_lines(transcript.turns[i].text, rules) for i in users}
    v = views(transcript, rules, users, own)
    return {i: fired(v[i], rules) for i in users}


def _evidence_line(lines: list[tuple[int, str]], why: tuple[str, ...],
                   rules: ReflectRules) -> tuple[int, str, re.Match[str] | None]:
    """The line of the user's words where the strongest user-side signal of this class matched."""
    by_name = {s.name: s for s in rules.signals.matched if s.scope in ("user", "about_agent", "about_work")}
    for name in why:
        s = by_name.get(name)
        if s is None:
            continue
        for offset, line in lines:
            text = fold(straighten(line))
            for p in s.patterns:
                hit = p.search(text)
                if hit:
                    return offset, line, hit
    offset, line = lines[0]
    return offset, line, None


def _learnings(
    transcript: Transcript, rules: ReflectRules, owner: list[int], tasks: list[Task]
) -> Iterable[Finding]:
    lim = rules.limits
    users = speaking_turns(transcript, rules)
    own = {i: own_lines(transcript.turns[i].text, rules) for i in users}
    v = views(transcript, rules, users, own)
    for n, i in enumerate(users):
        lines = own[i]
        if not lines:
            continue  # nothing but pasted text: no commentary to learn from
        if n and _written_twice(transcript, users[n - 1], i):
            continue  # the same message again with nothing of the agent's between: the first copy answered
        turn = transcript.turns[i]
        sigs = fired(v[i], rules)
        words_ = "\n".join(ln for _, ln in lines)
        spoken = [x for x in lines if not command_line(x[1], rules.lessons)] or lines  # not a pasted command
        spoken_text = straighten("\n".join(ln for _, ln in spoken))
        kept = {o for o, _ in spoken}
        pasted = [ln for o, ln in lines if o not in kept]  # commands: "when i run this, ..."
        for det in rules.detectors:
            if det.model is None or (det.requires_prior_assistant and v[i].first_turn and not v[i].resumed):
                continue
            p = score(det.model, sigs)
            why = reasons(det.model, sigs)
            if p < det.threshold or not has_reason(why, rules, det.reasons):
                continue
            offset, line, hit = _evidence_line(spoken, why, rules)
            evidence = _evidence(line, hit, lim.evidence_chars) if hit else _trim(line, lim.evidence_chars)
            said = _read(sentences(spoken_text), rules.signals.user_chars) or [straighten(line)]
            preferred = sentence_at(straighten(line), straighten(hit.group(0)) if hit else "")
            lesson, source = phrase_lesson(det.category, said, preferred, rules.lessons)
            pointing = rules.lessons.quote_pointer
            if pointing is not None and v[i].quoted and pointing.search(lesson):  # "Do not skip this part": which
                lesson = f"{lesson.rstrip(' .:')}: {sentences(v[i].quoted)[0].rstrip(' .')}"
            if source != preferred:  # the lesson came from another sentence: show that one as evidence
                offset = next((o for o, ln in lines if source in straighten(ln)), offset)
                evidence = _trim(source, lim.evidence_chars)
            if det.category == "correction" and "replaces_own" in sigs and \
                    names_one_thing_at_most(det.category, lesson, rules.lessons):  # "Use X": instead of what?
                lesson = with_replaced(lesson, v[i].next, rules.signals.matched)
            step = last_step(transcript.turns, users[n - 1] if n else -1, i, rules.lessons)
            said_ = verdict(det.category, words_, lesson, lesson_key(det.category, lesson, rules.lessons, pasted),
                            v[i].prev, step, rules.lessons)  # an insult, "wtf", "try again": kg.reflect.verdict
            if said_ is None:
                continue
            lesson, judged, pattern_key = said_.lesson, said_.judged, said_.key
            details = f"User said: {_trim(words_, 1000)}"
            if v[i].prev:
                details += f"\nAfter the assistant said: {_trim(v[i].prev, 300)}"
            details += f"\nThe verdict is on: {judged}" if judged else ""  # context, never the lesson
            details += f"\nSignals: {', '.join(why) or 'none'} (score {p:.2f})"
            yield Finding(
                kind=det.kind,
                category=det.category,
                # the user's own quotes (“” in Chinese) in the stored text: straightened only for matching
                summary=shorten(as_written(lesson, words_), lim.summary_chars, lim.summary_whole_chars),
                details=details,
                evidence=evidence,
                position=f"line {turn.line + (offset if transcript.format in LINE_FORMATS else 0)}"
                if turn.line is not None else turn.position,
                pattern_key=pattern_key,
                priority=said_.priority or det.priority_of(sigs),
                source=det.source,
                tool_calls_in_task=tasks[owner[i]].tool_calls if owner[i] >= 0 else 0,
                turn=i,
                signals=why,
                score=round(p, 3),
            )


def _written_twice(transcript: Transcript, before: int, i: int) -> bool:
    """The user's message is the one they sent just before, with no agent turn between: a runtime's import that
    writes a message twice (SpecStory's copy of a Codex session), or a resend of a message the agent had not yet
    answered. What it says was read on the first copy; a second finding would count the same words twice."""
    turns = transcript.turns
    return turns[i].text.strip() == turns[before].text.strip() and not any(
        t.role == "assistant" for t in turns[before + 1:i])


def learnings(transcript: Transcript, rules: ReflectRules) -> list[Finding]:
    """Every learning found, turn by turn, before dedupe, caps and redaction (what the quality bench scores)."""
    owner, tasks = task_of_turns(transcript, rules)
    return list(_learnings(transcript, rules, owner, tasks))


def default_redact(text: str) -> str:
    """The secret rules shipped for everything kg stores (rules/secrets.toml)."""
    from kg.redaction.redact import load_default

    return load_default().redact(text).text


def _redacted(f: Finding, redact: Callable[[str], str]) -> Finding:
    return replace(
        f,
        summary=redact(f.summary),
        details=redact(f.details),
        evidence=redact(f.evidence),
    )


# What stays of a turn's one lesson said as several findings, first first: the rule (it lasts), else the correction
# (the agent's own mistake, what the loop learns from first), else the fact.
_KEEP = ("preference", "correction", "knowledge_gap")


def _one_entry_per_rule(found: list[Finding]) -> list[Finding]:
    """A turn that corrects the agent in the words of a lasting rule ("No, don't use pip here, this repo uses uv.
    Remember that.") yields a correction and a preference with the same lesson; one that corrects it with a fact
    ("there's an existing task spec file in the current workspace") a correction and a knowledge gap. An agent reading
    .learnings needs the lesson once, and to know it had just broken it: one entry (the preference, else the
    correction; `_KEEP`), at the highest priority, marked as the others too, with the signals of all. The same lesson:
    the same words, or the same pattern key ("Remember: X" and "X"). Lessons that differ stay apart."""
    def same(f: Finding) -> tuple[int, str]:
        return (f.turn, f.pattern_key or folded(f.summary))

    groups: dict[tuple[int, str], list[Finding]] = {}
    for f in found:
        if f.category in _KEEP:
            groups.setdefault(same(f), []).append(f)
    merged: dict[tuple[int, str], Finding] = {}
    kept: dict[tuple[int, str], Finding] = {}
    for k, group in groups.items():
        keep = next(f for c in _KEEP for f in group if f.category == c)
        if len(group) < 2:
            continue
        kept[k] = keep
        others = [f for f in group if f is not keep]
        merged[k] = replace(
            keep,
            priority=max((f.priority for f in group), key=lambda p: _RANK[p]),
            also=(*keep.also, *(f.category for f in others)),
            signals=(*keep.signals, *dict.fromkeys(x for f in others for x in f.signals if x not in keep.signals)),
            details=keep.details + "".join(
                f"\nAlso a {f.category.replace('_', ' ')}"
                f"{' of what the agent had just done' if f.category == 'correction' else ''}: "
                f"{', '.join(f.signals) or 'none'} (score {f.score:.2f})" for f in others),
        )
    out = []
    for f in found:
        k = same(f)
        if k not in merged:
            out.append(f)
        elif f is kept[k]:
            out.append(merged[k])
    return out


def dedupe_key(f: Finding) -> tuple[str, str, str]:
    return (f.kind, f.category, f.pattern_key or folded(f.evidence))


def unique_key(f: Finding) -> str:
    """A finding's `dedupe_key` hashed: what a reflection that reads on from the last one keeps of it."""
    return hashlib.sha256("\x1f".join(dedupe_key(f)).encode()).hexdigest()[:16]


def reflect(
    transcript: Transcript, rules: ReflectRules, *, redact: Callable[[str], str] | None = None,
    gated: bool = False, earlier: Mapping[str, tuple[str, ...]] | None = None, after_line: int = 0,
    sessions: Sequence[str] | None = None,
) -> Reflection:
    """Findings, tasks and skill candidates of one session (or of each, `sessions` naming every turn's: an aider
    history holds one chat after another, each capped on its own, so one chat's findings do not use up another's
    caps; a finding said again in a later chat is still the first one's, "Seen N times").

    `redact` scrubs every text field; by default with the secret rules shipped for everything stored
    (rules/secrets.toml). Pass the workspace's redactor to apply its own. The turns are redacted before anything
    is read from them (a pattern key is their words lowercased and cut, where a secret is no longer recognised),
    unless the caller says it has done so (`gated`: `kg.reflect.apply.gated`, which redacts a call's input and
    its result together).

    `earlier` (`unique_key` -> kind, priority[, session]): the findings of the same transcript before this part of
    it, read by an earlier reflection (`kg.reflect.window`). A finding said again is theirs, and they rank first for the
    caps: this part yields what a reading of the whole transcript yields in it. Findings up to `after_line` (the
    context it re-reads) were that reflection's.
    """
    redact = redact or default_redact
    if not gated:
        transcript = replace(transcript, turns=tuple(
            replace(t, text=redact(t.text), tool_input=redact(t.tool_input) if t.tool_input else t.tool_input)
            for t in transcript.turns))
    owner, tasks = task_of_turns(transcript, rules)
    raw = _one_entry_per_rule(list(_learnings(transcript, rules, owner, tasks)))
    raw.sort(key=lambda f: f.turn)
    if earlier is not None:
        raw = [f for f in raw if (transcript.turns[f.turn].line or 0) > after_line]
    before = dict(earlier or {})

    def session(turn: int) -> str:
        return sessions[turn] if sessions and 0 <= turn < len(sessions) else ""

    merged: dict[tuple[str, str, str], Finding] = {}
    for f in raw:
        f = _redacted(f, redact)
        key = dedupe_key(f)
        if unique_key(f) in before:
            continue  # said before this part: the earlier reflection's finding
        if key in merged:
            first = merged[key]
            merged[key] = replace(first, occurrences=first.occurrences + 1)
        else:
            merged[key] = f
    unique = []
    for f in merged.values():
        if f.occurrences > 1:
            f = replace(f, details=f"{f.details}\nSeen {f.occurrences} times in this session")
        unique.append(f)

    lim = rules.limits
    # the earlier part's findings count against their own session's caps; one an older reflection kept without its
    # session, against the session this part begins in (only stricter)
    first = next((i for i, t in enumerate(transcript.turns) if (t.line or 0) > after_line), 0)
    ghosts = [(said[0], said[1], said[2] if len(said) > 2 else session(first)) for said in before.values()]
    ranked = sorted([(-_RANK[p], -1, k, None, where) for k, p, where in ghosts]
                    + [(-_RANK[f.priority], f.turn, f.kind, f, session(f.turn)) for f in unique],
                    key=lambda x: (x[0], x[1]))
    per_kind: dict[tuple[str, str], int] = {}
    taken: dict[str, int] = {}
    kept = []
    for _, _, kind, f, where in ranked:
        if per_kind.get((where, kind), 0) >= lim.max_per_kind or taken.get(where, 0) >= lim.max_findings_per_session:
            continue
        per_kind[(where, kind)] = per_kind.get((where, kind), 0) + 1
        taken[where] = taken.get(where, 0) + 1
        if f is not None:
            kept.append(f)
    kept.sort(key=lambda f: f.turn)

    candidates = tuple(t for t in tasks if t.tool_calls >= lim.skill_candidate_min_tool_calls)
    return Reflection(tuple(kept), tuple(tasks), candidates, len(unique) - len(kept), len(raw) - len(unique),
                      tuple((unique_key(f), f.kind, f.priority, session(f.turn)) for f in unique))


def detect(
    transcript: Transcript, rules: ReflectRules, *, redact: Callable[[str], str] | None = None,
    gated: bool = False,
) -> list[Finding]:
    """The findings of one session, deduplicated, capped and redacted."""
    return list(reflect(transcript, rules, redact=redact, gated=gated).findings)
