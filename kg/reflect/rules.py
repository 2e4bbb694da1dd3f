"""Load and validate the `kg reflect` rules (rules/reflect.toml) into a frozen policy.

Every table refuses keys it does not know, so a typo in the rules file is an error
naming the file, the key and why, never a silently ignored setting.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from kg.core.errors import RulesError
from kg.core.policy import RuleReader

from . import reply_language
from .language import fold
from .lesson_rules import Lessons, lessons_of
from .lesson_rules import regex as _regex
from .lesson_rules import regexes as _regexes

RULES_FILE = "reflect.toml"
MODEL_FILE = "reflect_model.toml"
DETECTORS = ("correction", "feature", "knowledge_gap", "best_practice", "preference")
SCOPES = ("user", "prev", "next", "next_tools", "before", "commands", "about_agent", "reply_about_work",
          "beyond_agent", "about_work", "answer")
# Scopes whose patterns name an object (`obj`) that must be a word of the agent's own work before the user spoke
# (beyond_agent: that must not be; about_work: of its whole answer since the user last spoke, its edits too).
WORK_SCOPES = ("about_agent", "reply_about_work", "beyond_agent", "about_work")
# Scopes whose signals read what the user said or did (reasons a finding may rest on): their own words, the
# commands they gave the runtime before speaking ("/undo"), their words about what the agent just said or ran.
USER_SCOPES = ("user", "commands", "about_agent", "beyond_agent", "about_work")
# Signals computed from the turn's shape rather than matched (see [signals] in rules/reflect.toml).
COMPUTED = ("first_turn", "resumed", "short", "long", "question", "pasted", "only_pasted", "prior_tool_error",
            "quotes_agent", "negates_agent", "retries_tool", "repeats_request", "worked", "reedits", "names_agent_work",
            "follows_question", "restates_constraint", "language_broken")
# Computed signals that read what the user said about the agent's words: reasons in the user's own words.
USER_COMPUTED = ("quotes_agent", "negates_agent", "repeats_request", "names_agent_work", "language_broken")
KINDS = ("learning", "feature", "preference")
PRIORITIES = ("low", "medium", "high", "critical")


@dataclass(frozen=True)
class Limits:
    max_findings_per_session: int
    max_per_kind: int
    evidence_chars: int
    summary_chars: int
    summary_whole_chars: int  # a lesson this long is kept whole: cutting 20 characters loses more than it saves
    skill_candidate_min_tool_calls: int
    context_turns: int  # earlier user turns an incremental reflection reads again (kg.reflect.window)


@dataclass(frozen=True)
class Quoting:
    drop_fenced_code: bool
    quote_prefixes: tuple[str, ...]
    log_block_min_lines: int
    log_line_patterns: tuple[re.Pattern[str], ...]
    harness_prefixes: tuple[str, ...]
    command_pattern: re.Pattern[str]
    # A line that is a shell prompt with its command: it and the lines after it, up to a blank line, are pasted
    # (the command's output).
    prompt_patterns: tuple[re.Pattern[str], ...] = ()
    # A line that is tool output on its own, without a run of others (a test runner's FAILED line, a compiler's
    # or interpreter's error line): pasted, not the user's words.
    output_line_patterns: tuple[re.Pattern[str], ...] = ()
    # A copied terminal screen: at least `screen_min_lines` lines of the same width (of at least `screen_min_width`
    # characters, trailing padding included) are pasted, not typed. 0 turns it off.
    screen_min_lines: int = 0
    screen_min_width: int = 40
    # Sections a runtime or IDE injects into the user's message (`<tag>...</tag>`): not the user's words; `typed`
    injected: re.Pattern[str] | None = None
    typed: re.Pattern[str] | None = None  # sections that are: what the user typed after their slash command
    command: re.Pattern[str] | None = None  # the section naming the slash command a harness turn ran (`/init`)
    # A line after which the user's own words start (an IDE's "## My request for ...:" under the context it adds).
    request_markers: tuple[re.Pattern[str], ...] = ()
    caption_max_words: int = 0  # a line this short right before a shell prompt names the paste (0: off)
    # An error record a shell prints (PowerShell's): a line placing the error (`record_position_patterns`), the
    # message above it from its head line (`record_head_patterns`, at most 3 lines up) and the lines after it up to a
    # blank line are pasted, wrapped message lines too ("... verify that the path is correct and try again.").
    record_position_patterns: tuple[re.Pattern[str], ...] = ()
    record_head_patterns: tuple[re.Pattern[str], ...] = ()
    # What an IDE's chat puts before the user's words to attach context (Copilot's `#terminalSelection`,
    # `#file:app.py`, `@workspace`): taken off the line's start, so a signal anchored there reads the words.
    reference_prefix: re.Pattern[str] | None = None
    # An agent's prompt pasted into the message ("You are the X Agent ..." and more than `pasted_prompt_min_lines`
    # lines after): not the user's words, from its opening on (kg.reflect.pasted).
    pasted_prompt: re.Pattern[str] | None = None
    pasted_prompt_min_lines: int = 0


@dataclass(frozen=True)
class Signal:
    name: str
    scope: str  # user: the user's own words; prev: the agent's turn before; next: the agent's reply;
    # next_tools: the commands and paths of the agent's tool calls after the user spoke; before: whatever came
    # right before the user spoke (an agent's turn, a tool result, or the harness noting an interrupt)
    patterns: tuple[re.Pattern[str], ...]


@dataclass(frozen=True)
class Combined:
    """A signal that fires when, for any of its groups, every name in `need` fired and none in `without`."""

    name: str
    groups: tuple[tuple[frozenset[str], frozenset[str]], ...]  # (need, without)


@dataclass(frozen=True)
class Signals:
    prev_chars: int
    next_chars: int
    short_words: int
    long_words: int
    user_chars: int
    matched: tuple[Signal, ...]
    reply_reasons: tuple[str, ...] = ()  # signals of the agent's reply strong enough to be a reason alone
    combined: tuple[Combined, ...] = ()
    # A runtime command or harness note that starts a fresh context ("/clear", a new aider session): what the user
    # says next answers nothing the agent said before it.
    resets: tuple[re.Pattern[str], ...] = ()
    # Tool names (lower case) whose calls change a file: the input is the path, or names the paths (apply_patch).
    edit_tools: frozenset[str] = frozenset()
    # How much of the agent's answer since the user last spoke (its last characters) names the work that the reply's
    # signals compare an object with ([signals.reply_about_work]); 0: the last prev_chars of its last turn.
    work_chars: int = 0
    # A request said again: how alike (rapidfuzz ratio, 0-100) the user's words must be to one of their last
    # `repeat_recent` turns after the agent answered it, and to a request whose work the user undid (often amended).
    repeat_similar: int = 85
    redo_similar: int = 75
    repeat_recent: int = 5
    # A constraint of an earlier request said again (kg.reflect.restate): the words that make a clause a constraint,
    # and how alike (rapidfuzz token sort ratio) its restatement must be.
    constraint_words: tuple[re.Pattern[str], ...] = ()
    restate_similar: int = 85
    # The language the user asks replies in (kg.reflect.reply_language): its names, the verbs, how a reply shows it.
    reply_language: reply_language.ReplyLanguages = reply_language.ReplyLanguages()

    @property
    def names(self) -> tuple[str, ...]:
        return (*COMPUTED, *(s.name for s in self.matched), *(c.name for c in self.combined))

    @property
    def user_side(self) -> frozenset[str]:
        """The signals that can be a finding's reason: read from the user's own words, or a reply signal named
        in reply_reasons (an apology, a revert), or a combination that needs one of those in every group."""
        base = {*USER_COMPUTED, *self.reply_reasons, *(s.name for s in self.matched if s.scope in USER_SCOPES)}
        for c in self.combined:
            if all(need & base for need, _ in c.groups):
                base.add(c.name)
        return frozenset(base)


@dataclass(frozen=True)
class ClassModel:
    """A logistic model over signal names: score = sigmoid(bias + sum of the weights of the signals that fired)."""

    bias: float
    weights: Mapping[str, float]
    threshold: float | None = None  # chosen by cross-validation when trained; else the class's min_score


@dataclass(frozen=True)
class Detector:
    name: str
    kind: str
    category: str
    priority: str
    source: str
    min_score: float
    requires_prior_assistant: bool
    model: ClassModel | None  # None: no weights shipped for it, it finds nothing
    reasons: frozenset[str] | None = None  # a finding needs one of these to fire (None: any user-side signal)
    # A finding is graded `raise_to` when one of `raise_when` fired (said again, still wrong, angrily), else `priority`:
    # "Try again" and "it still crashes, wtf" are not the same urgency.
    raise_to: str | None = None
    raise_when: frozenset[str] = frozenset()

    def priority_of(self, fired: Iterable[str]) -> str:
        return self.raise_to if self.raise_to is not None and not self.raise_when.isdisjoint(fired) else self.priority

    @property
    def threshold(self) -> float:
        """The score a finding needs: the model's cross-validated threshold when it ships one, else min_score."""
        t = self.model.threshold if self.model is not None else None
        return self.min_score if t is None else t


@dataclass(frozen=True)
class ReflectRules:
    version: int
    limits: Limits
    quoting: Quoting
    signals: Signals
    detectors: tuple[Detector, ...]
    lessons: Lessons

    def detector(self, name: str) -> Detector:
        for d in self.detectors:
            if d.name == name:
                return d
        raise KeyError(name)


class ReflectRulesError(RulesError, ValueError):
    """The reflect rules are malformed. A `ValueError` too, which is what `load_rules` has always raised."""


def load_rules(data: Mapping[str, Any], *, source: str = "rules/reflect.toml",
               model: Mapping[str, Any] | None | bool = True,
               model_source: str = f"rules/{MODEL_FILE}") -> ReflectRules:
    """Validate a parsed rules mapping; raise ReflectRulesError naming file, key and reason.

    `model` is the parsed rules/reflect_model.toml: by default the shipped one; None leaves every class without
    weights (the trainer's starting point)."""
    if model is True:
        model = _packaged(MODEL_FILE)[0]
    top = RuleReader(data, source, error=ReflectRulesError)
    top.known(("version", "limits", "quoting", "signals", "lessons", *DETECTORS))
    version = top.whole("version", int_only=True)
    if version != 1:
        raise top.fail("version", f"unsupported version {version}; this kg understands version 1")

    lim = top.table("limits").known(Limits.__dataclass_fields__)
    limits = Limits(**{name: lim.whole(name, 1, int_only=True) for name in Limits.__dataclass_fields__})

    q = top.table("quoting").known({*Quoting.__dataclass_fields__, "injected_tags", "user_tags", "command_tags"}
                                   - {"injected", "typed", "command"})
    quoting = Quoting(
        drop_fenced_code=q.flag("drop_fenced_code"),
        quote_prefixes=q.strings("quote_prefixes", items="non-empty"),
        log_block_min_lines=q.whole("log_block_min_lines", 1, int_only=True),
        log_line_patterns=_regexes(q, "log_line_patterns"),
        harness_prefixes=q.strings("harness_prefixes", items="non-empty"),
        command_pattern=_regex(q, "command_pattern", q.string("command_pattern"), re.IGNORECASE),
        prompt_patterns=_regexes(q, "prompt_patterns") if "prompt_patterns" in q.data else (),
        output_line_patterns=_regexes(q, "output_line_patterns") if "output_line_patterns" in q.data else (),
        screen_min_lines=q.whole("screen_min_lines", 0, int_only=True) if "screen_min_lines" in q.data else 0,
        screen_min_width=q.whole("screen_min_width", 1, int_only=True) if "screen_min_width" in q.data else 40,
        injected=_injected(q), typed=_injected(q, "user_tags"), command=_injected(q, "command_tags"),
        request_markers=_regexes(q, "request_markers") if "request_markers" in q.data else (),
        caption_max_words=q.whole("caption_max_words", 0, int_only=True) if "caption_max_words" in q.data else 0,
        record_position_patterns=_regexes(q, "record_position_patterns"),
        record_head_patterns=_regexes(q, "record_head_patterns"),
        reference_prefix=_regex(q, "reference_prefix", q.string("reference_prefix"))
        if "reference_prefix" in q.data else None,
        pasted_prompt=_regex(q, "pasted_prompt", q.string("pasted_prompt"), re.IGNORECASE)
        if "pasted_prompt" in q.data else None,
        pasted_prompt_min_lines=q.whole("pasted_prompt_min_lines", 1, int_only=True)
        if "pasted_prompt_min_lines" in q.data else 0,
    )

    signals = _signals(top.table("signals"))
    from .weights import class_models  # the model's file read against these signals (weights.py imports this module)

    models = class_models(model, signals, source=model_source)
    detectors = []
    for name in DETECTORS:
        if name not in data:
            continue
        d = top.table(name).known(("kind", "category", "priority", "source", "min_score", "requires_prior_assistant",
                                   "reasons", "raise_to", "raise_when"))
        reasons = d.strings("reasons", [], items="non-empty")
        raise_when = d.strings("raise_when", [], items="non-empty")
        for key_, r in [*(("reasons", r) for r in reasons), *(("raise_when", r) for r in raise_when)]:
            if r not in signals.names:
                raise d.fail(key_, f"{r!r} is not a signal of [signals] (or a computed one)")
        if raise_when and "raise_to" not in d.data:
            raise d.fail("raise_when", "needs raise_to: the priority a finding is raised to when one of them fired")
        detectors.append(
            Detector(
                name=name,
                kind=d.string("kind", KINDS),
                category=d.string("category"),
                priority=d.string("priority", PRIORITIES),
                source=d.string("source"),
                min_score=d.number("min_score", 0.0, 1.0),
                requires_prior_assistant=d.flag("requires_prior_assistant", False),
                model=models.get(name),
                reasons=frozenset(reasons) if reasons else None,
                raise_to=d.string("raise_to", PRIORITIES) if "raise_to" in d.data else None,
                raise_when=frozenset(raise_when),
            )
        )

    lessons = lessons_of(top.table("lessons"), {d.category for d in detectors})
    return ReflectRules(version, limits, quoting, signals, tuple(detectors), lessons)


def _injected(q: RuleReader, field: str = "injected_tags") -> re.Pattern[str] | None:
    """One pattern for the `<tag ...>...</tag>` sections of [quoting] `field` (group 3 what one holds; unclosed: all)"""
    tags = q.strings(field, [], items="non-empty")
    for tag in tags:
        if not re.fullmatch(r"[A-Za-z][\w-]*", tag):
            raise q.fail(field, f"{tag!r} is not a tag name (letters, digits, '_' and '-')")
    if not tags:
        return None
    names = "|".join(re.escape(t) for t in tags)
    return re.compile(rf"<({names})(\s[^>]*)?>(.*?)(</\1>|\Z)", re.DOTALL)


def _signals(t: RuleReader) -> Signals:
    t.known(("prev_chars", "next_chars", "short_words", "long_words", "user_chars", "reply_reasons", "combined",
             "resets", "edit_tools", "work_chars", "repeat_similar", "redo_similar", "repeat_recent",
             "constraint_words", "restate_similar", "reply_language", *SCOPES))
    matched: list[Signal] = []
    seen: set[str] = set(COMPUTED)
    flags = re.IGNORECASE | re.MULTILINE
    for scope in SCOPES:
        table = t.table(scope, {})
        for name in table.data:
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise table.fail(name, "a signal name must be snake_case (findings and weights name it)")
            if name in seen:
                raise table.fail(name, "this signal name is taken (each name once, across scopes and computed ones)")
            seen.add(name)
            # folded as the text they read is (kg.reflect.language): one pattern for each spelling of its words
            patterns = tuple(_regex(table, name, fold(p), flags)
                             for p in table.strings(name, empty=False, items="non-empty"))
            if scope in WORK_SCOPES and any("obj" not in p.groupindex for p in patterns):
                raise table.fail(name, "each pattern needs a group (?P<obj>...): the words compared with the agent's")
            matched.append(Signal(name, scope, patterns))
    return Signals(
        prev_chars=t.whole("prev_chars", 1, int_only=True),
        next_chars=t.whole("next_chars", 1, int_only=True),
        short_words=t.whole("short_words", 1, int_only=True),
        long_words=t.whole("long_words", 1, int_only=True),
        user_chars=t.whole("user_chars", 1, int_only=True),
        matched=tuple(matched),
        reply_reasons=_reply_reasons(t, matched),
        combined=_combined(t.table("combined", {}), seen),
        resets=_regexes(t, "resets", flags),
        edit_tools=frozenset(n.lower() for n in t.strings("edit_tools", [], items="non-empty")),
        work_chars=t.whole("work_chars", 0, default=0, int_only=True),
        repeat_similar=t.whole("repeat_similar", 1, 100, default=85, int_only=True),
        redo_similar=t.whole("redo_similar", 1, 100, default=75, int_only=True),
        repeat_recent=t.whole("repeat_recent", 1, default=5, int_only=True),
        constraint_words=_regexes(t, "constraint_words", flags),
        restate_similar=t.whole("restate_similar", 1, 100, default=85, int_only=True),
        reply_language=reply_language.load(t.table("reply_language", {})),
    )


def _combined(table: RuleReader, seen: set[str]) -> tuple[Combined, ...]:
    """[signals.combined]: name = ["a b", "c !d"]; fires when every name of one group fired (and no `!name`).
    A group may name signals defined before it, combined ones included."""
    out = []
    for name in table.data:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise table.fail(name, "a signal name must be snake_case (findings and weights name it)")
        if name in seen:
            raise table.fail(name, "this signal name is taken (each name once, across scopes and computed ones)")
        groups = []
        for g in table.strings(name, empty=False, items="non-empty"):
            parts = g.split()
            for p in parts:
                if p.lstrip("!") not in seen:
                    raise table.fail(name, f"{p.lstrip('!')!r} is not a signal defined before it")
            need = frozenset(p for p in parts if not p.startswith("!"))
            if not need:
                raise table.fail(name, f"group {g!r} needs at least one signal that must fire")
            groups.append((need, frozenset(p[1:] for p in parts if p.startswith("!"))))
        seen.add(name)
        out.append(Combined(name, tuple(groups)))
    return tuple(out)


def _reply_reasons(t: RuleReader, matched: list[Signal]) -> tuple[str, ...]:
    names = t.strings("reply_reasons", [], items="non-empty")
    reply = {s.name for s in matched if s.scope in ("next", "next_tools", "reply_about_work")}
    for n in names:
        if n not in reply:
            raise t.fail("reply_reasons", f"{n!r} is not a signal of the agent's reply ([signals.next], "
                                          "[signals.next_tools] or [signals.reply_about_work])")
    return names


def load_rules_file(path: str | Path) -> ReflectRules:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ReflectRulesError(f"{path}: not valid TOML: {exc}") from None
    return load_rules(data, source=str(path))


def _packaged(name: str) -> tuple[dict[str, Any], str]:
    """A rules file shipped in `kg.rules`, falling back to the repository's rules/ folder."""
    try:
        text = resources.files("kg.rules").joinpath(name).read_text(encoding="utf-8")
        source = f"kg.rules/{name}"
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        path = Path(__file__).resolve().parents[2] / "rules" / name
        text, source = path.read_text(encoding="utf-8"), str(path)
    try:
        return tomllib.loads(text), source
    except tomllib.TOMLDecodeError as exc:
        raise ReflectRulesError(f"{source}: not valid TOML: {exc}") from None


def default_rules(*, model: bool = True) -> ReflectRules:
    """The rules shipped in `kg.rules` (with the shipped model unless `model=False`)."""
    data, source = _packaged(RULES_FILE)
    return load_rules(data, source=source, model=True if model else None)
