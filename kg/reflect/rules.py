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


class _Reader:
    """Reads one table, remembering where it is for error messages."""

    def __init__(self, source: str, where: str, table: Any, allowed: tuple[str, ...]):
        self.source, self.where = source, where
        if not isinstance(table, Mapping):
            raise self.error(where, "must be a table")
        unknown = sorted(set(table) - set(allowed))
        if unknown:
            raise self.error(
                f"{where}.{unknown[0]}" if where else unknown[0],
                f"unknown key; expected one of: {', '.join(allowed)}",
            )
        self.table = table

    def error(self, key: str, reason: str) -> ValueError:
        return ValueError(f"{self.source}: key '{key}': {reason}")

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def get(self, name: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        if name not in self.table:
            if default is ...:
                raise self.error(self.key(name), "missing")
            return default
        value = self.table[name]
        if kind is int and isinstance(value, bool) or not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise self.error(self.key(name), f"must be {names}, got {type(value).__name__}")
        return value

    def positive(self, name: str) -> int:
        value = self.get(name, int)
        if value < 1:
            raise self.error(self.key(name), "must be at least 1")
        return value

    def strings(self, name: str, default: Any = ...) -> tuple[str, ...]:
        value = self.get(name, list, default)
        for item in value:
            if not isinstance(item, str) or not item:
                raise self.error(self.key(name), f"must be a list of non-empty strings, got {item!r}")
        return tuple(value)

    def choice(self, name: str, choices: tuple[str, ...]) -> str:
        value = self.get(name, str)
        if value not in choices:
            raise self.error(self.key(name), f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    def regex(self, key: str, pattern: str, flags: int = 0) -> re.Pattern[str]:
        try:
            return re.compile(pattern, flags)
        except re.error as exc:
            raise self.error(key, f"bad regular expression {pattern!r}: {exc}") from None

    def regexes(self, name: str, flags: int = 0) -> tuple[re.Pattern[str], ...]:
        return tuple(self.regex(self.key(name), p, flags) for p in self.strings(name, []))


def phrase_regex(phrase: str) -> str:
    """An ASCII phrase matches on word boundaries; a CJK phrase anywhere."""
    body = re.escape(phrase)
    if phrase.isascii():
        start = r"\b" if re.match(r"\w", phrase) else ""
        end = r"\b" if re.search(r"\w$", phrase) else ""
        return f"{start}{body}{end}"
    return body


def load_rules(data: Mapping[str, Any], *, source: str = "rules/reflect.toml") -> ReflectRules:
    """Validate a parsed rules mapping; raise ValueError naming file, key and reason."""
    top = _Reader(source, "", data, ("version", "limits", "quoting", "errors", "redact", "areas", *DETECTORS))
    version = top.get("version", int)
    if version != 1:
        raise top.error("version", f"unsupported version {version}; this kg understands version 1")

    lim = _Reader(source, "limits", top.get("limits", dict), tuple(Limits.__dataclass_fields__))
    limits = Limits(**{name: lim.positive(name) for name in Limits.__dataclass_fields__})

    q = _Reader(
        source,
        "quoting",
        top.get("quoting", dict),
        (
            "drop_fenced_code",
            "quote_prefixes",
            "log_block_min_lines",
            "log_line_patterns",
            "harness_prefixes",
        ),
    )
    quoting = Quoting(
        drop_fenced_code=q.get("drop_fenced_code", bool),
        quote_prefixes=q.strings("quote_prefixes"),
        log_block_min_lines=q.positive("log_block_min_lines"),
        log_line_patterns=q.regexes("log_line_patterns"),
        harness_prefixes=q.strings("harness_prefixes"),
    )

    e = _Reader(
        source,
        "errors",
        top.get("errors", dict),
        (
            "kind",
            "category",
            "priority",
            "repeat_priority",
            "repeat_threshold",
            "source",
            "flag_patterns",
            "ignore_patterns",
            "classes",
        ),
    )
    classes = []
    for i, item in enumerate(e.get("classes", list, [])):
        c = _Reader(source, f"errors.classes[{i}]", item, ("name", "pattern"))
        name = c.get("name", str)
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise c.error(c.key("name"), f"must be snake_case (it goes into pattern keys), got {name!r}")
        classes.append(ErrorClass(name, c.regex(c.key("pattern"), c.get("pattern", str))))
    errors = ErrorRules(
        kind=e.choice("kind", ("error",)),
        category=e.get("category", str),
        priority=e.choice("priority", PRIORITIES),
        repeat_priority=e.choice("repeat_priority", PRIORITIES),
        repeat_threshold=e.positive("repeat_threshold"),
        source=e.get("source", str),
        flag_patterns=e.regexes("flag_patterns"),
        ignore_patterns=e.strings("ignore_patterns", []),
        classes=tuple(classes),
    )

    detectors = []
    for name in DETECTORS:
        if name not in data:
            continue
        d = _Reader(
            source,
            name,
            data[name],
            (
                "kind",
                "category",
                "priority",
                "source",
                "roles",
                "requires_prior_assistant",
                "phrases",
                "patterns",
            ),
        )
        roles = d.strings("roles")
        for role in roles:
            if role not in ("user", "assistant"):
                raise d.error(d.key("roles"), f"roles are 'user' or 'assistant', got {role!r}")
            if role == "assistant" and name in USER_ONLY:
                raise d.error(d.key("roles"), f"a {name} is never taken from the assistant's own words")
        matchers = [
            d.regex(d.key("phrases"), phrase_regex(p), re.IGNORECASE) for p in d.strings("phrases", [])
        ]
        matchers += d.regexes("patterns", re.IGNORECASE)
        if not matchers:
            raise d.error(name, "needs at least one phrase or pattern")
        detectors.append(
            Detector(
                name=name,
                kind=d.choice("kind", KINDS),
                category=d.get("category", str),
                priority=d.choice("priority", PRIORITIES),
                source=d.get("source", str),
                roles=roles,
                requires_prior_assistant=d.get("requires_prior_assistant", bool, False),
                matchers=tuple(matchers),
            )
        )

    r = _Reader(source, "redact", top.get("redact", dict), ("replacement", "patterns"))
    redact = Redaction(r.get("replacement", str), r.regexes("patterns"))

    a = top.get("areas", dict, {})
    areas = tuple((name, top.regex(f"areas.{name}", pat)) for name, pat in a.items() if isinstance(pat, str))
    if len(areas) != len(a):
        raise top.error("areas", "every area must map to a regular expression string")

    return ReflectRules(version, limits, quoting, errors, tuple(detectors), redact, areas)


def load_rules_file(path: str | Path) -> ReflectRules:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
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
