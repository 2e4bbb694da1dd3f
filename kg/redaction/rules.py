"""Secret rules: parse and validate `rules/secrets.toml` (and the files it includes) into `SecretRule`s.

A rule's regex is compiled on first use: the packaged set holds about two hundred provider patterns and a
`kg log` touches a handful of them, so compiling them all would cost more than the redaction itself. Rules
from a user's override are compiled at load (`validate=True`), so a bad regex is refused with the file, rule
and reason before anything is written. The packaged rules are read through the workspace's cache of the parse
(`kg.redaction.cache`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from kg.core.errors import RulesError
from kg.redaction.wrapped import Wrapping

_KIND = re.compile(r"[a-z0-9][a-z0-9_]{0,63}")
_RULE_KEYS = {"kind", "pattern", "group", "keywords", "min_entropy", "before", "not_before", "description",
              "template", "key", "secret", "window", "ignore", "priority", "upper", "column", "header", "decode"}
_TOP_KEYS = {"rule", "ignore", "include", "template", "priority", "source", "licence", "echo_min_chars",
             "line_prefix", "token_priority", "glue", "printable_share", "wrapped"}
DEFAULT_PRIORITY = 50
DEFAULT_ECHO_MIN = 6  # a file that does not say (`echo_min_chars`): the packaged secrets.toml's value
DECODINGS = ("", "base64")  # what a rule's `decode` may name (`kg.redaction.textchecks.decoded`)


class SecretRulesError(RulesError, ValueError):
    """`rules/secrets.toml` (or an override) is malformed; the message names the file, rule and reason.

    A `ValueError` too, so callers that only know the standard library can catch it.
    """


# The regex engine's compiled forms of the scan's own regexes (the line prefix's, the glue's, the global ignores), by
# source, as the rules cache brought them (`kg.redaction.cache`): compiling the line prefix's three cost a fresh
# `kg log` 1.5 ms, more than the rest of its redaction.
_CODES: dict[str, bytes] = {}


def known_codes(codes: Mapping[str, bytes]) -> None:
    """Keep `codes` (source -> `engine_code(source)`, from a sealed cache) for `regex`."""
    _CODES.update(codes)


def regex(source: str) -> re.Pattern[str]:
    """`re.compile(source)`, from the cache's compiled form when it has one (the engine checks it; else compiled)."""
    code = _CODES.get(source)
    if code is not None:
        try:
            import _sre
            import marshal

            return _sre.compile(source, *marshal.loads(code))
        except Exception:  # another interpreter's form, or refused by the engine's check: compile it
            pass
    return re.compile(source)


@dataclass(eq=False)  # not frozen: a frozen dataclass's __init__ costs 3x, and ~250 are built per process
class SecretRule:
    """One pattern. `group` is the secret inside the match (0 = whole match).

    `window` = 0: every match starts where a keyword begins (the regex is tried only there). `window` > 0:
    the regex is searched in the keyword's line, at most `window` characters either side of it.
    """

    kind: str
    source: str
    group: int | str = 0
    keywords: tuple[str, ...] = ()
    min_entropy: float = 0.0
    before_source: str | None = None
    window: int = 0
    ignore_sources: tuple[str, ...] = ()
    priority: int = DEFAULT_PRIORITY
    not_before_source: str | None = None
    upper: bool = False  # a keyword counts only where its first letter is a capital in the text (ENV_NAME=)
    column: bool = False  # the keywords name a table's column; the pattern is matched on each cell under it
    header_source: str | None = None  # a column rule's header cell must match this whole (emphasis stripped)
    decode: str = ""  # "base64": the match is an encoding, a secret when its decoded text holds one (`decoded`)
    code: bytes | None = None  # the regex engine's compiled form of `source`, from the cache (`engine_code`)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        if self.code is not None:
            try:
                import _sre
                import marshal

                return _sre.compile(self.source, *marshal.loads(self.code))
            except Exception:  # another interpreter's form, or refused by the engine's check: compile it
                pass
        return re.compile(self.source)

    @cached_property
    def before(self) -> re.Pattern[str] | None:
        return re.compile(f"(?:{self.before_source})\\Z") if self.before_source else None

    @cached_property
    def not_before(self) -> re.Pattern[str] | None:
        return re.compile(self.not_before_source) if self.not_before_source else None

    @cached_property
    def header(self) -> re.Pattern[str] | None:
        return re.compile(self.header_source) if self.header_source else None

    @cached_property
    def ignore(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(source) for source in self.ignore_sources)


def parse(data: Mapping[str, Any], source: str, *, validate: bool = True,
          included: frozenset[str] = frozenset()) -> tuple[list[SecretRule], list[str]]:
    """(rules, global ignore regexes) of one parsed file and the packaged files it includes."""
    if not isinstance(data, Mapping):
        raise SecretRulesError(f"{source}: expected a table with [[rule]] entries")
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        known = ", ".join(sorted(_TOP_KEYS))
        raise SecretRulesError(f"{source}: unknown key {unknown[0]!r} (known keys here: {known})")
    entries = data.get("rule", [])
    if not isinstance(entries, list):
        raise SecretRulesError(f"{source}: 'rule' must be an array of tables ([[rule]])")
    templates = data.get("template", {})
    if not isinstance(templates, Mapping) or not all(isinstance(v, str) for v in templates.values()):
        raise SecretRulesError(f"{source}: 'template' must be a table of strings")
    priority = data.get("priority", DEFAULT_PRIORITY)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise SecretRulesError(f"{source}: 'priority' must be a whole number")
    ignore = _regex_list(data.get("ignore", []), f"{source}: 'ignore'", validate)
    rules = [_parse_rule(entry, i, source, templates, priority, validate) for i, entry in enumerate(entries, 1)]
    includes = data.get("include", [])
    if not isinstance(includes, list) or not all(isinstance(n, str) for n in includes):
        raise SecretRulesError(f"{source}: 'include' must be a list of rule file names")
    for name in includes:
        if name in included:
            continue
        sub_rules, sub_ignore = parse(packaged(name), f"rules/{name}", validate=validate,
                                      included=included | {name})
        rules += sub_rules
        ignore += sub_ignore
    return rules, ignore


def echo_min(data: Mapping[str, Any], source: str) -> int:
    """`echo_min_chars`: how long a found secret must be for its other occurrences to be redacted too."""
    value = data.get("echo_min_chars", DEFAULT_ECHO_MIN) if isinstance(data, Mapping) else DEFAULT_ECHO_MIN
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
        raise SecretRulesError(f"{source}: 'echo_min_chars' must be a whole number from 1 to 1024")
    return value


def line_prefix(data: Mapping[str, Any], source: str) -> str:
    """`line_prefix`: the regex of what tools print before a line (`kg.redaction.prefixes`); "" for none. It is
    matched at each line's start, so it must not reach past the line's end."""
    value = data.get("line_prefix", "") if isinstance(data, Mapping) else ""
    if not isinstance(value, str):
        raise SecretRulesError(f"{source}: 'line_prefix' must be a regex (a string)")
    if value:
        try:
            pattern = re.compile(f"(?:{value})")
        except re.error as exc:
            raise SecretRulesError(f"{source}: bad regex in 'line_prefix': {exc}") from None
        if pattern.match("\n") is not None and pattern.match("\n").end() > 0:
            raise SecretRulesError(f"{source}: 'line_prefix' must not match a line's end")
    return value


@dataclass(frozen=True)
class Settings:
    """How the scan reads past a token's surroundings (rules/secrets.toml): `token_priority`, the priority at or below
    which a rule is a token format (read again past glue, joined over lines); `glue`, the regex of what may stand
    glued before a token without being part of it; `printable_share`, the share of a decoding's characters that must
    be printable for it to be text; `wrapped`, how a token cut over lines is joined (`kg.redaction.wrapped`)."""

    token_priority: int
    glue: str
    printable_share: float
    wrapped: Wrapping

    def dump(self) -> tuple[int, str, float, tuple[int, int, int, int, int, int, str, str]]:
        return self.token_priority, self.glue, self.printable_share, self.wrapped.dump()

    @classmethod
    def loaded(cls, dumped: tuple[Any, ...]) -> Settings:
        """The `Settings` a `dump` gave (the rules cache holds it)."""
        priority, glue, share, wrapped = dumped
        return cls(priority, glue, share, Wrapping(*wrapped))


_SETTINGS = ("token_priority", "glue", "printable_share", "wrapped")
# [wrapped]'s whole numbers and the range each may take
_WRAPPED_NUMBERS = {"pieces": (1, 64), "behind": (0, 256), "longest": (16, 16384), "key_min_chars": (1, 1024),
                    "key_case_switches": (1, 64), "key_digit_switches": (1, 64)}


def settings(data: Mapping[str, Any], source: str) -> Settings:
    """`token_priority`, `glue`, `printable_share` and `[wrapped]` of a parsed file; a key it does not give is the
    packaged secrets.toml's (a user's override is merged over that file, so only a hand-made mapping lacks one)."""
    data = data if isinstance(data, Mapping) else {}
    if not set(_SETTINGS) <= data.keys():
        data = {**packaged("secrets.toml"), **data}
    priority, glue, share = data["token_priority"], data["glue"], data["printable_share"]
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise SecretRulesError(f"{source}: 'token_priority' must be a whole number")
    if not isinstance(glue, str) or not glue:
        raise SecretRulesError(f"{source}: 'glue' must be a regex (a non-empty string)")
    try:
        re.compile(glue)
    except re.error as exc:
        raise SecretRulesError(f"{source}: bad regex in 'glue': {exc}") from None
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
        raise SecretRulesError(f"{source}: 'printable_share' must be a number above 0, at most 1")
    return Settings(priority, glue, float(share), _wrapped(data["wrapped"], source))


def _wrapped(table: Any, source: str) -> Wrapping:
    """`[wrapped]`: every key given (an override is merged over the packaged table), none unknown, each in range."""
    known = (*_WRAPPED_NUMBERS, "word_part", "word_vowels")
    if not isinstance(table, Mapping):
        raise SecretRulesError(f"{source}: 'wrapped' must be a table ([wrapped]) with keys {', '.join(known)}")
    unknown = sorted(set(table) - set(known))
    missing = [key for key in known if key not in table]
    if unknown or missing:
        what = f"unknown key {unknown[0]!r}" if unknown else f"missing key {missing[0]!r}"
        raise SecretRulesError(f"{source}: [wrapped]: {what} (its keys: {', '.join(known)})")
    for key, (low, high) in _WRAPPED_NUMBERS.items():
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise SecretRulesError(f"{source}: [wrapped] '{key}' must be a whole number from {low} to {high}")
    part, vowels = table["word_part"], table["word_vowels"]
    if not isinstance(part, str) or not part:
        raise SecretRulesError(f"{source}: [wrapped] 'word_part' must be a regex (a non-empty string)")
    try:
        empty = re.compile(part).match("")
    except re.error as exc:
        raise SecretRulesError(f"{source}: bad regex in [wrapped] 'word_part': {exc}") from None
    if empty is not None:
        raise SecretRulesError(f"{source}: [wrapped] 'word_part' must not match an empty string (a part is a letter "
                               "or more)")
    if not isinstance(vowels, str) or not vowels:
        raise SecretRulesError(f"{source}: [wrapped] 'word_vowels' must be a non-empty string of letters")
    return Wrapping(*(table[key] for key in known))


def packaged(name: str) -> dict[str, Any]:
    """A packaged rule file of this module's family (`secrets_gitleaks.toml`), parsed."""
    import tomllib  # imported here: a process that finds the cache never parses TOML
    from importlib import resources

    entry = resources.files("kg.rules") / name
    try:
        return tomllib.loads(entry.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SecretRulesError(f"rules/{name}: no such packaged rule file") from None
    except tomllib.TOMLDecodeError as exc:
        raise SecretRulesError(f"rules/{name}: not valid TOML: {exc}") from None


def _regex_list(value: Any, where: str, validate: bool) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SecretRulesError(f"{where} must be a list of regexes")
    if validate:
        for item in value:
            try:
                re.compile(item)
            except re.error as exc:
                raise SecretRulesError(f"{where}: bad regex {item!r}: {exc}") from None
    return list(value)


def _parse_rule(entry: Any, index: int, source: str, templates: Mapping[str, str], default_priority: int,
                validate: bool) -> SecretRule:
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
    raw = _pattern_of(entry, where, templates)
    group = entry.get("group", "secret" if "template" in entry else 0)
    if isinstance(group, bool) or not isinstance(group, (int, str)):
        raise SecretRulesError(f"{where}: 'group' must be a group number or name")
    if validate:
        try:
            pattern = re.compile(raw)
        except re.error as exc:
            raise SecretRulesError(f"{where}: bad regex: {exc}") from None
        if pattern.match(""):
            raise SecretRulesError(f"{where}: pattern matches the empty string; make the secret part required")
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
    window = entry.get("window", 0)
    if isinstance(window, bool) or not isinstance(window, int) or not 0 <= window <= 4096:
        raise SecretRulesError(f"{where}: 'window' must be a whole number of characters from 0 to 4096")
    if window and not keywords:
        raise SecretRulesError(f"{where}: 'window' needs 'keywords' (it is the span searched around them)")
    priority = entry.get("priority", default_priority)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise SecretRulesError(f"{where}: 'priority' must be a whole number")
    before = entry.get("before")
    if before is not None:
        if not isinstance(before, str) or not before:
            raise SecretRulesError(f"{where}: 'before' must be a non-empty string")
        if validate:
            try:
                re.compile(f"(?:{before})\\Z")
            except re.error as exc:
                raise SecretRulesError(f"{where}: bad regex in 'before': {exc}") from None
    not_before = entry.get("not_before")
    if not_before is not None:
        if not isinstance(not_before, str) or not not_before:
            raise SecretRulesError(f"{where}: 'not_before' must be a non-empty string")
        _regex_list([not_before], f"{where}: 'not_before'", validate)
    ignore = _regex_list(entry.get("ignore", []), f"{where}: 'ignore'", validate)
    upper = entry.get("upper", False)
    if not isinstance(upper, bool):
        raise SecretRulesError(f"{where}: 'upper' must be true or false")
    column = entry.get("column", False)
    if not isinstance(column, bool):
        raise SecretRulesError(f"{where}: 'column' must be true or false")
    if column and (not keywords or window):
        raise SecretRulesError(f"{where}: a 'column' rule needs 'keywords' (the column's names) and no 'window'")
    header = entry.get("header")
    if header is not None:
        if not column or not isinstance(header, str) or not header:
            raise SecretRulesError(f"{where}: 'header' is a non-empty regex, and only a 'column' rule has one")
        _regex_list([header], f"{where}: 'header'", validate)
    decode = entry.get("decode", "")
    if decode not in DECODINGS:
        raise SecretRulesError(f"{where}: 'decode' must be one of {', '.join(map(repr, DECODINGS))}")
    if not isinstance(entry.get("description", ""), str):
        raise SecretRulesError(f"{where}: 'description' must be a string")
    return SecretRule(kind, raw, group, tuple(k.lower() for k in keywords), float(min_entropy), before, window,
                      tuple(ignore), priority, not_before, upper, column, header, decode)


def _pattern_of(entry: Mapping[str, Any], where: str, templates: Mapping[str, str]) -> str:
    """`pattern`, or a `template` filled with the rule's `key` and `secret` regexes."""
    if "template" not in entry:
        raw = entry.get("pattern")
        if not isinstance(raw, str) or not raw:
            raise SecretRulesError(f"{where}: 'pattern' must be a non-empty string")
        return raw
    name = entry["template"]
    if "pattern" in entry:
        raise SecretRulesError(f"{where}: give either 'pattern' or 'template' with 'key' and 'secret', not both")
    if not isinstance(name, str) or name not in templates:
        raise SecretRulesError(f"{where}: unknown template {name!r} (templates here: {', '.join(templates) or 'none'})")
    key, secret = entry.get("key"), entry.get("secret")
    if not (isinstance(key, str) and key and isinstance(secret, str) and secret):
        raise SecretRulesError(f"{where}: a 'template' rule needs 'key' and 'secret' regexes")
    return templates[name].replace("{key}", key).replace("{secret}", secret)
