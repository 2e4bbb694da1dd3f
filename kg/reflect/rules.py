"""Load and validate the `kg reflect` rules (rules/reflect.toml) into a frozen policy.

Every table refuses keys it does not know, so a typo in the rules file is an error
naming the file, the key and why, never a silently ignored setting.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from kg.errors import RulesError
from kg.policy import RuleReader

RULES_FILE = "reflect.toml"
DETECTORS = ("correction", "feature", "knowledge_gap", "best_practice", "preference")
KINDS = ("learning", "error", "feature", "preference")
PRIORITIES = ("low", "medium", "high", "critical")
# The assistant's own words are never a user correction or a user's feature request.
USER_ONLY = ("correction", "feature", "preference")


@dataclass(frozen=True)
class Limits:
    max_findings_per_session: int
    max_per_kind: int
    evidence_chars: int
    summary_chars: int
    skill_candidate_min_tool_calls: int


@dataclass(frozen=True)
class Quoting:
    drop_fenced_code: bool
    quote_prefixes: tuple[str, ...]
    log_block_min_lines: int
    log_line_patterns: tuple[re.Pattern[str], ...]
    harness_prefixes: tuple[str, ...]


@dataclass(frozen=True)
class ErrorClass:
    name: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class ErrorRules:
    kind: str
    category: str
    priority: str
    repeat_priority: str
    repeat_threshold: int
    source: str
    flag_patterns: tuple[re.Pattern[str], ...]
    ignore_patterns: tuple[str, ...]
    classes: tuple[ErrorClass, ...]


@dataclass(frozen=True)
class Detector:
    name: str
    kind: str
    category: str
    priority: str
    source: str
    roles: tuple[str, ...]
    requires_prior_assistant: bool
    matchers: tuple[re.Pattern[str], ...]  # phrases and patterns, compiled


@dataclass(frozen=True)
class Redaction:
    replacement: str
    patterns: tuple[re.Pattern[str], ...]


@dataclass(frozen=True)
class ReflectRules:
    version: int
    limits: Limits
    quoting: Quoting
    errors: ErrorRules
    detectors: tuple[Detector, ...]
    redact: Redaction
    areas: tuple[tuple[str, re.Pattern[str]], ...]

    def detector(self, name: str) -> Detector:
        for d in self.detectors:
            if d.name == name:
                return d
        raise KeyError(name)


class ReflectRulesError(RulesError, ValueError):
    """The reflect rules are malformed. A `ValueError` too, which is what `load_rules` has always raised."""


def _regex(r: RuleReader, name: str, pattern: str, flags: int = 0) -> re.Pattern[str]:
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise r.fail(name, f"bad regular expression {pattern!r}: {exc}") from None


def _regexes(r: RuleReader, name: str, flags: int = 0) -> tuple[re.Pattern[str], ...]:
    return tuple(_regex(r, name, p, flags) for p in r.strings(name, [], items="non-empty"))


def phrase_regex(phrase: str) -> str:
    """An ASCII phrase matches on word boundaries; a CJK phrase anywhere."""
    body = re.escape(phrase)
    if phrase.isascii():
        start = r"\b" if re.match(r"\w", phrase) else ""
        end = r"\b" if re.search(r"\w$", phrase) else ""
        return f"{start}{body}{end}"
    return body


def load_rules(data: Mapping[str, Any], *, source: str = "rules/reflect.toml") -> ReflectRules:
    """Validate a parsed rules mapping; raise ReflectRulesError naming file, key and reason."""
    top = RuleReader(data, source, error=ReflectRulesError)
    top.known(("version", "limits", "quoting", "errors", "redact", "areas", *DETECTORS))
    version = top.whole("version", int_only=True)
    if version != 1:
        raise top.fail("version", f"unsupported version {version}; this kg understands version 1")

    lim = top.table("limits").known(Limits.__dataclass_fields__)
    limits = Limits(**{name: lim.whole(name, 1, int_only=True) for name in Limits.__dataclass_fields__})

    q = top.table("quoting").known(Quoting.__dataclass_fields__)
    quoting = Quoting(
        drop_fenced_code=q.flag("drop_fenced_code"),
        quote_prefixes=q.strings("quote_prefixes", items="non-empty"),
        log_block_min_lines=q.whole("log_block_min_lines", 1, int_only=True),
        log_line_patterns=_regexes(q, "log_line_patterns"),
        harness_prefixes=q.strings("harness_prefixes", items="non-empty"),
    )

    e = top.table("errors").known(ErrorRules.__dataclass_fields__)
    classes = []
    for c in e.tables("classes", []):
        c.known(("name", "pattern"))
        name = c.string("name")
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise c.fail("name", f"must be snake_case (it goes into pattern keys), not {name!r}")
        classes.append(ErrorClass(name, _regex(c, "pattern", c.string("pattern"))))
    errors = ErrorRules(
        kind=e.string("kind", ("error",)),
        category=e.string("category"),
        priority=e.string("priority", PRIORITIES),
        repeat_priority=e.string("repeat_priority", PRIORITIES),
        repeat_threshold=e.whole("repeat_threshold", 1, int_only=True),
        source=e.string("source"),
        flag_patterns=_regexes(e, "flag_patterns"),
        ignore_patterns=e.strings("ignore_patterns", [], items="non-empty"),
        classes=tuple(classes),
    )

    detectors = []
    for name in DETECTORS:
        if name not in data:
            continue
        d = top.table(name).known(("kind", "category", "priority", "source", "roles", "requires_prior_assistant",
                                   "phrases", "patterns"))
        roles = d.strings("roles", items="non-empty", allowed=("user", "assistant"))
        if "assistant" in roles and name in USER_ONLY:
            raise d.fail("roles", f"a {name} is never taken from the assistant's own words; use [\"user\"]")
        matchers = [_regex(d, "phrases", phrase_regex(p), re.IGNORECASE)
                    for p in d.strings("phrases", [], items="non-empty")]
        matchers += _regexes(d, "patterns", re.IGNORECASE)
        if not matchers:
            raise d.fail("", "needs at least one phrase or pattern")
        detectors.append(
            Detector(
                name=name,
                kind=d.string("kind", KINDS),
                category=d.string("category"),
                priority=d.string("priority", PRIORITIES),
                source=d.string("source"),
                roles=roles,
                requires_prior_assistant=d.flag("requires_prior_assistant", False),
                matchers=tuple(matchers),
            )
        )

    r = top.table("redact").known(("replacement", "patterns"))
    redact = Redaction(r.string("replacement"), _regexes(r, "patterns"))

    a = top.table("areas", {})
    areas = tuple((name, _regex(a, name, a.string(name))) for name in a.data)

    return ReflectRules(version, limits, quoting, errors, tuple(detectors), redact, areas)


def load_rules_file(path: str | Path) -> ReflectRules:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ReflectRulesError(f"{path}: not valid TOML: {exc}") from None
    return load_rules(data, source=str(path))


def default_rules() -> ReflectRules:
    """The rules shipped in `kg.rules`, falling back to the repository's rules/ folder."""
    try:
        text = resources.files("kg.rules").joinpath(RULES_FILE).read_text(encoding="utf-8")
        source = f"kg.rules/{RULES_FILE}"
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        path = Path(__file__).resolve().parents[2] / "rules" / RULES_FILE
        text, source = path.read_text(encoding="utf-8"), str(path)
    return load_rules(tomllib.loads(text), source=source)
