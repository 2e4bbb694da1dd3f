"""Secret redaction, run on every text field before anything is stored (graph or files).

Patterns are data in `rules/secrets.toml`; this module compiles and applies them. Only the secret is replaced,
with `[REDACTED:<kind>]`, so the key name and the surrounding text stay useful for recall. A rule with
keywords is tried only where one of them begins in the lowercased text, so a 200-character summary costs
about 30 microseconds and 1 MB about 50 ms.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from typing import Any

from kg.errors import RulesError

MARKER = "[REDACTED:{kind}]"
# Anything already redacted is left alone, which is what makes `redact` idempotent.
_MARKER_PREFIX = "[REDACTED:"
_KIND = re.compile(r"[a-z][a-z0-9_]{0,63}")
_RULE_KEYS = {"kind", "pattern", "group", "keywords", "min_entropy", "before", "description"}
# How far back `before` may look; keys longer than this are not worth the scan.
_BEFORE_WINDOW = 96
_TOP_KEYS = {"rule"}


class SecretRulesError(RulesError, ValueError):
    """`rules/secrets.toml` (or an override) is malformed; the message names the file, rule and reason.

    A `ValueError` too, so callers that only know the standard library can catch it.
    """


@dataclass(frozen=True)
class SecretRule:
    """One compiled pattern. `group` is the secret inside the match (0 = whole match)."""

    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0
    keywords: tuple[str, ...] = ()
    min_entropy: float = 0.0
    before: re.Pattern[str] | None = None

    def starts(self, lowered: str) -> list[int]:
        """Where a match may begin: every occurrence of a keyword, in order."""
        found: set[int] = set()
        for keyword in self.keywords:
            at = lowered.find(keyword)
            while at >= 0:
                found.add(at)
                at = lowered.find(keyword, at + 1)
        return sorted(found)

    def apply(self, text: str, lowered: str, found: set[str]) -> str:
        """Redact this rule's secrets in `text`, adding its kind to `found` when one is removed.

        A rule with keywords is tried only where a keyword begins (the rules promise every match starts with
        one), so its regex never scans the bulk of the text; without keywords it scans everything.
        """
        if not self.keywords:
            if self.pattern.search(text) is None:  # the common case: no callback to build
                return text
            return self.pattern.sub(_replacer(self, found), text)
        starts = self.starts(lowered)
        if not starts:
            return text
        replace = _replacer(self, found)
        if len(lowered) != len(text):  # a few non-ASCII letters lowercase to two characters
            return self.pattern.sub(replace, text)
        parts: list[str] = []
        done = 0
        for at in starts:
            if at < done:
                continue
            match = self.pattern.match(text, at)
            if match is None or match.end() == at:
                continue
            parts += (text[done:at], replace(match))
            done = match.end()
        if not parts:
            return text
        parts.append(text[done:])
        return "".join(parts)


@dataclass(frozen=True)
class Redacted:
    """Redacted text and the sorted, unique kinds of secret removed (never the secrets themselves)."""

    text: str
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class Redactor:
    """An ordered set of rules; earlier rules win, so specific token formats come before generic ones."""

    rules: tuple[SecretRule, ...]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "rules/secrets.toml") -> Redactor:
        """Validate parsed TOML: unknown keys refused, regexes compiled, groups checked."""
        if not isinstance(data, Mapping):
            raise SecretRulesError(f"{source}: expected a table with [[rule]] entries")
        unknown = sorted(set(data) - _TOP_KEYS)
        if unknown:
            raise SecretRulesError(f"{source}: unknown key {unknown[0]!r} (known keys here: rule)")
        entries = data.get("rule", [])
        if not isinstance(entries, list):
            raise SecretRulesError(f"{source}: 'rule' must be an array of tables ([[rule]])")
        return cls(tuple(_parse_rule(entry, i, source) for i, entry in enumerate(entries, 1)))

    def redact(self, text: str) -> Redacted:
        """Replace every secret in `text` with `[REDACTED:<kind>]`."""
        if not text:
            return Redacted(text)
        lowered = text.lower()
        found: set[str] = set()
        # Most text holds no keyword at all: one scan for any of them skips every keyword rule at once.
        rules = self.rules if self._any_keyword.search(lowered) else self._keywordless
        for rule in rules:
            new = rule.apply(text, lowered, found)
            if new != text:
                text = new
                lowered = text.lower()
        return Redacted(text, tuple(sorted(found)))

    @cached_property
    def _any_keyword(self) -> re.Pattern[str]:
        words = sorted({k for rule in self.rules for k in rule.keywords}, key=len, reverse=True)
        return re.compile("|".join(map(re.escape, words))) if words else re.compile(r"(?!)")

    @cached_property
    def _keywordless(self) -> tuple[SecretRule, ...]:
        return tuple(rule for rule in self.rules if not rule.keywords)

    def redact_many(
        self, fields: Mapping[str, str | list[str] | None]
    ) -> tuple[dict[str, str | list[str] | None], tuple[str, ...]]:
        """Redact every string, also inside list fields; return the new mapping and all kinds found."""
        out: dict[str, str | list[str] | None] = {}
        kinds: set[str] = set()
        for key, value in fields.items():
            if isinstance(value, str):
                result = self.redact(value)
                out[key] = result.text
                kinds.update(result.kinds)
            elif isinstance(value, list):
                items = []
                for item in value:
                    if isinstance(item, str):
                        result = self.redact(item)
                        items.append(result.text)
                        kinds.update(result.kinds)
                    else:
                        items.append(item)
                out[key] = items
            else:
                out[key] = value
        return out, tuple(sorted(kinds))


def _replacer(rule: SecretRule, found: set[str]) -> Callable[[re.Match[str]], str]:
    """A re.sub callback that swaps only the secret group and records the kind."""
    marker = MARKER.format(kind=rule.kind)

    def replace(match: re.Match[str]) -> str:
        secret = match.group(rule.group)
        if not secret or _MARKER_PREFIX in secret:
            return match.group(0)
        if rule.min_entropy and entropy(secret) < rule.min_entropy:
            return match.group(0)
        if rule.before is not None and not _preceded_by(rule.before, match):
            return match.group(0)
        found.add(rule.kind)
        whole = match.group(0)
        start = match.start(rule.group) - match.start()
        end = match.end(rule.group) - match.start()
        return whole[:start] + marker + whole[end:]

    return replace


def _preceded_by(before: re.Pattern[str], match: re.Match[str]) -> bool:
    """Does the text just before the match, on the same line, end with `before`?"""
    text, end = match.string, match.start()
    start = max(text.rfind("\n", max(0, end - _BEFORE_WINDOW), end) + 1, end - _BEFORE_WINDOW, 0)
    return before.search(text, start, end) is not None


def entropy(value: str) -> float:
    """Shannon entropy in bits per character: random keys score high, words and slugs low."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def _parse_rule(entry: Any, index: int, source: str) -> SecretRule:
    where = f"{source}: rule #{index}"
    if not isinstance(entry, Mapping):
        raise SecretRulesError(f"{where}: must be a table")
    kind = entry.get("kind")
    if not isinstance(kind, str) or not _KIND.fullmatch(kind):
        raise SecretRulesError(f"{where}: 'kind' must be a lowercase name like 'github_token', got {kind!r}")
    where = f"{source}: rule #{index} ({kind})"
    unknown = sorted(set(entry) - _RULE_KEYS)
    if unknown:
        known = ", ".join(sorted(_RULE_KEYS))
        raise SecretRulesError(f"{where}: unknown key {unknown[0]!r} (known keys here: {known})")
    raw = entry.get("pattern")
    if not isinstance(raw, str) or not raw:
        raise SecretRulesError(f"{where}: 'pattern' must be a non-empty string")
    try:
        pattern = re.compile(raw)
    except re.error as exc:
        raise SecretRulesError(f"{where}: bad regex: {exc}") from None
    if pattern.match(""):
        raise SecretRulesError(f"{where}: pattern matches the empty string; make the secret part required")
    group = entry.get("group", 0)
    if isinstance(group, bool) or not isinstance(group, (int, str)):
        raise SecretRulesError(f"{where}: 'group' must be a group number or name")
    if isinstance(group, int) and not 0 <= group <= pattern.groups:
        raise SecretRulesError(f"{where}: group {group} does not exist (pattern has {pattern.groups} groups)")
    if isinstance(group, str) and group not in pattern.groupindex:
        names = ", ".join(pattern.groupindex) or "none"
        raise SecretRulesError(f"{where}: group {group!r} does not exist (named groups: {names})")
    keywords = entry.get("keywords", [])
    if not isinstance(keywords, list) or not all(isinstance(k, str) and k for k in keywords):
        raise SecretRulesError(f"{where}: 'keywords' must be a list of non-empty strings")
    min_entropy = entry.get("min_entropy", 0.0)
    if isinstance(min_entropy, bool) or not isinstance(min_entropy, (int, float)) or min_entropy < 0:
        raise SecretRulesError(f"{where}: 'min_entropy' must be a number >= 0")
    before = entry.get("before")
    if before is not None:
        if not isinstance(before, str) or not before:
            raise SecretRulesError(f"{where}: 'before' must be a non-empty string")
        try:
            before = re.compile(f"(?:{before})\\Z")
        except re.error as exc:
            raise SecretRulesError(f"{where}: bad regex in 'before': {exc}") from None
    if not isinstance(entry.get("description", ""), str):
        raise SecretRulesError(f"{where}: 'description' must be a string")
    return SecretRule(kind, pattern, group, tuple(k.lower() for k in keywords), float(min_entropy), before)


@cache
def load_default() -> Redactor:
    """The packaged rules, parsed once per process (a Redactor is immutable, so sharing it is safe)."""
    entry = resources.files("kg.rules") / "secrets.toml"
    source = "rules/secrets.toml"
    try:
        data = tomllib.loads(entry.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SecretRulesError(f"{source}: not valid TOML: {exc}") from None
    return Redactor.from_mapping(data, source)
