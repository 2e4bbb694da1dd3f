"""Secret redaction, run on every text field before anything is stored (graph or files).

Patterns are data: `rules/secrets.toml` (kg's own rules for what agents' text holds: command lines, headers,
URLs, key blocks, assignments) and the provider rules it includes, `rules/secrets_gitleaks.toml` (converted
from gitleaks' MIT rule set). This module applies them; `kg.redaction.rules` parses them and `kg.redaction.cache`
keeps the parse.

How one call works: the text is lowercased once and its keywords are found (a short text, as a `kg log`'s fields
are, looks up only the keywords whose first two characters it holds; a long one is scanned by trie regexes of the
keywords); a rule is built, compiled and tried only at its keywords (or, with `window`, in their line). Each
match yields a secret span; spans are collected on the original text (earlier rules win, a later span that
overlaps one already taken is dropped) and the text is rebuilt once. The whole secret is replaced: a span that stops in
the middle of a run of token characters is extended to the run's end, so a pattern's length cap never leaves a
tail. What is reported is the kinds of secret removed, never the secrets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

from kg.core.text import spaced, visible
from kg.redaction import escaped
from kg.redaction.cache import KeywordPlan, LazyRules, packaged_parts
from kg.redaction.prefixes import Patterns, bare_view, compiled, unescaped
from kg.redaction.rules import (
    DEFAULT_ECHO_MIN,
    SecretRule,
    SecretRulesError,
    Settings,
    echo_min,
    line_prefix,
    parse,
    regex,
    settings,
)
from kg.redaction.spans import _DOTTED_RUN, MARKER, _found, _Spans  # noqa: F401 - re-exported
from kg.redaction.spans import MARKERS as _MARKERS
from kg.redaction.textchecks import (
    _glued_at,
    _line_before,
    _lowered_is,
    _preceded_by,
    _run_end,
    _trie,
    decoded,
    entropy,
    glue_patterns,
    may_decode,
    unglued,
)
from kg.redaction.wrapped import may_continue, rejoined

__all__ = ["MARKER", "Redacted", "Redactor", "SecretRule", "SecretRulesError", "entropy", "load_default",
           "redact_text", "redact_value"]

# Characters a secret is made of: a span ending next to one of these is extended over the rest of the run.
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_+/=-]*")
_SHORT = 4096  # below this many characters keywords are found by str.find, above by the tries
# Keyword-less rules (rules/secrets.toml says so) all need a run of 20 such characters: text without one, as most
# of a kg log's fields, skips them, and so never pays for compiling them.
_LONG_RUN = re.compile(r"[A-Za-z0-9+/_-]{20}")
_NOT_NAME = re.compile(r"[^A-Za-z0-9_]+")  # a key as an env name (`redact_pair`): db.password -> DB_PASSWORD
_MAX_EXTEND = 16384  # longer runs are not secrets but blobs; the bound keeps adversarial input linear
_DECODING: ContextVar[bool] = ContextVar("kg_redaction_decoding", default=False)  # inside `_decoded_kind`
_WINDOW_RUN_ON = 160  # how far past its window a windowed rule's match may run (a quoted value's closing quote)


@dataclass(frozen=True)
class Redacted:
    """Redacted text and the sorted, unique kinds of secret removed (never the secrets themselves)."""

    text: str
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class Redactor:
    """An ordered set of rules (by priority, then file order): specific token formats before generic ones."""

    rules: Sequence[SecretRule]  # a tuple, or the packaged rules as `LazyRules` (each built on first use)
    ignore_sources: tuple[str, ...] = field(default=())
    # a secret value of this many characters or more is redacted wherever else it occurs in the text or group
    # (rules/secrets.toml `echo_min_chars`); shorter ones (a -u user:pw's "pw") would take common words with them
    echo_min: int = DEFAULT_ECHO_MIN
    # what tools print before a line (rules/secrets.toml `line_prefix`): a text with such lines is read again
    # without them (`kg.redaction.prefixes`), so `+mimi=<key>` in a diff loses the key as `mimi=<key>` does
    line_prefix: str = ""
    # rules/secrets.toml's `token_priority`, `glue` and `printable_share` (None: the packaged file's): rules of that
    # priority or lower are token formats (kg's own at 15, the providers' at 20), and only they are read again past
    # glue (`_unglue`) and joined over lines (`_rejoin`): a contextual rule (a key's name before its value) is no
    # token glued to text
    settings: Settings | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "rules/secrets.toml", *,
                     validate: bool = True) -> Redactor:
        """Validate parsed TOML: unknown keys refused, regexes compiled (unless `validate=False`), groups checked."""
        rules, ignore = parse(data, source, validate=validate)
        return cls.from_rules(rules, ignore, echo_min(data, source), line_prefix(data, source), settings(data, source))

    @classmethod
    def from_rules(cls, rules: Iterable[SecretRule], ignore: Iterable[str] = (),
                   echo_min: int = DEFAULT_ECHO_MIN, line_prefix: str = "",
                   settings: Settings | None = None) -> Redactor:
        """Parsed rules in file order, applied by priority (stable, so file order breaks ties)."""
        ordered = sorted(enumerate(rules), key=lambda pair: (pair[1].priority, pair[0]))
        return cls(tuple(rule for _, rule in ordered), tuple(ignore), echo_min, line_prefix, settings)

    # --- the scan -----------------------------------------------------------------------------------------

    def redact(self, text: str) -> Redacted:
        """Replace every secret in `text` with `[REDACTED:<kind>]`, and every other occurrence of a secret found
        (`_echoes`: "PGPASSWORD=X ... the password is X" loses both copies). Read without the characters that show
        nothing (`visible`): a zero-width space inside a token hid it, and `clean` then stored it whole. A text with
        no secret comes back as given (an Arabic letter mark, a variation selector are part of real text); one with
        a secret, as read."""
        seen = visible(text) if text else text
        if not seen:
            return Redacted(text)
        spans = self._collect(seen)
        if not spans.kinds:
            return Redacted(text)
        self._echoes(seen, spans, _found(seen, spans, self.echo_min))
        return Redacted(spans.render(seen), tuple(sorted(spans.kinds)))

    def redact_group(self, texts: Sequence[str]) -> list[Redacted]:
        """Redact texts that belong together (the fields of one entry, a tool call's input and its result): a
        secret found in any of them is redacted wherever it occurs in all of them (characters that show nothing
        read as `redact` reads them; one with no secret comes back as given)."""
        given = list(texts)
        texts = [visible(text) if text else text for text in given]
        collected = [self._collect(text) if text else None for text in texts]
        found: dict[str, str] = {}
        for text, spans in zip(texts, collected, strict=True):
            if spans is not None and spans.kinds:
                found.update(_found(text, spans, self.echo_min))
        out = []
        for original, text, spans in zip(given, texts, collected, strict=True):
            if spans is None:
                out.append(Redacted(original))
                continue
            self._echoes(text, spans, found)
            out.append(Redacted(spans.render(text), tuple(sorted(spans.kinds))) if spans.kinds else
                       Redacted(original))
        return out

    def redact_pair(self, key: str, value: str) -> tuple[Redacted, Redacted]:
        """A key and the value set under it (a preference, a skill's frontmatter field): the key is redacted as any
        text, and the value both by itself and as it would be after the key on a .env line (`KEY=value`), so the
        key's name is context: `db_password hunter2secretpw` loses the value, which alone is not a secret. A secret
        found in either is redacted in both."""
        name = _NOT_NAME.sub("_", key).upper()
        quote = '"' if any(c.isspace() for c in value) and '"' not in value else ""
        lead = len(name) + 1 + len(quote)
        spans = _Spans()
        if name and value:
            for start, end, kind in self._collect(f"{name}={quote}{value}{quote}").items:
                if kind and end > lead and start < lead + len(value):
                    spans.add(max(start, lead) - lead, min(end, lead + len(value)) - lead, kind)
        for start, end, kind in self._collect(value).items if value else ():
            spans.add(start, end, kind)
        key_spans = self._collect(key) if key else _Spans()
        found = {**_found(key, key_spans, self.echo_min), **_found(value, spans, self.echo_min)}
        out = []
        for text, taken in ((key, key_spans), (value, spans)):
            self._echoes(text, taken, found)
            out.append(Redacted(taken.render(text), tuple(sorted(taken.kinds))) if taken.kinds else Redacted(text))
        return out[0], out[1]

    def _echoes(self, text: str, spans: _Spans, found: Mapping[str, str]) -> None:
        """Add a span for every occurrence of a secret value in `found` (lowercased value -> kind), in any case and
        inside any word: a secret the rules found once is a secret wherever it is repeated."""
        if not found:
            return
        lowered = text.lower()
        same = len(lowered) == len(text)  # else (a character that lowercases to two) positions differ: use re
        for value, kind in found.items():
            if same:
                at = lowered.find(value)
                while at >= 0:
                    spans.add(at, at + len(value), kind)
                    at = lowered.find(value, at + len(value))
            else:
                for match in re.finditer(re.escape(value), text, re.IGNORECASE):
                    spans.add(match.start(), match.end(), kind)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, kind) of every secret `redact` replaces, in order (for reviewing what was redacted)."""
        return [item for item in self._collect(text).items if item[2]] if text else []

    def _collect(self, text: str) -> _Spans:
        """The text's secrets, and those of its view without the prefixes tools print before lines: a secret the
        view shows whole (a key block, a value over several lines) replaces the parts of it the text showed. Read
        with its odd spaces as spaces (`spaced`: the same positions)."""
        text = spaced(text)
        starts = self._starts(text)
        spans = self._scan(text, starts=starts)
        self._absorb_bare(text, spans)
        plain = unescaped(text)  # colours (`\x1b[32m+mimi=<key>`) hide a line's start, as a prefix does
        if plain is not None:
            found = self._scan(plain.text, decode=False)
            self._absorb_bare(plain.text, found)
            for start, end, kind in found.items:
                if kind:
                    spans.absorb(*plain.span(start, end), kind)
        if escaped.may_hold(text):  # JSON in a JSON string, `{\"password\":\"<it>\"}`: read unescaped where it
            found = escaped.windows(text, starts)  # is near a rule's keyword, all such stretches in one scan
            joined = escaped.Joined(found)
            for start, end, kind in self._scan(joined.text, decode=False).items if found else ():
                where = joined.span(start, end) if kind else None
                if where is not None:  # a value longer than its stretch goes on to its run's end in the text
                    a, b = where
                    if 0 < b < len(text) and text[b - 1] in _TOKEN_CHARS and text[b] in _TOKEN_CHARS:
                        b = _TOKEN_RUN.match(text, b, b + _MAX_EXTEND).end()
                    spans.absorb(a, b, kind)
        return spans

    def _absorb_bare(self, text: str, spans: _Spans) -> None:
        view = bare_view(text, self._prefixes) if self._prefixes is not None else None
        if view is not None:
            for start, end, kind in self._scan(view.text, decode=False).items:
                if kind:
                    spans.absorb(*view.span(start, end), kind)

    def _starts(self, text: str) -> dict[int, list[int]]:
        # Keywords are ASCII (but for a few CJK labels, found in `text` itself): lowercase an ASCII copy in which
        # every other character is one '?', so positions match `text` and the scans run over one byte per character.
        lowered = text.lower() if text.isascii() else text.encode("ascii", "replace").decode("ascii").lower()
        return self._keyword_starts(lowered, text)

    def _scan(self, text: str, decode: bool = True, starts: dict[int, list[int]] | None = None) -> _Spans:
        # `decode`: the rules that decode a run (base64) read the text itself, not its views without colours or line
        # prefixes: a run is the same run there, and those rules are the costliest of the rules without keywords
        ascii_only = text.isascii()
        starts = self._starts(text) if starts is None else starts
        spans = _Spans()
        if "[REDACTED:" in text:  # earlier markers stay as they are: this is what makes redact idempotent
            for m in _MARKERS.finditer(text):
                spans.add(m.start(), m.end(), "")
        todo = set(starts)  # only the rules that can match are touched (and so built and compiled)
        glued: list[tuple[int, int]] = []  # (rule, keyword position) where a match failed beside glue
        if _LONG_RUN.search(text) is not None:
            todo.update(i for i in self._plan.bare if decode or not self.rules[i].decode)
        for index in sorted(todo):  # in the order rules apply: an earlier rule's span wins
            rule = self.rules[index]
            if rule.column:
                if "|" not in text:  # no table, no cell: nor the columns module and header regex loaded (3 ms)
                    continue
                from kg.redaction.columns import column_cells  # (few texts hold a table: not paid by the rest)

                for lo, hi in column_cells(text, sorted(set(starts[index])), rule.header):
                    match = rule.pattern.fullmatch(text, lo, hi)
                    if match is not None:
                        self._take(rule, match, text, spans)
            elif rule.keywords:
                self._apply_at(rule, text, sorted(set(starts[index])), spans, (index, glued, ascii_only))
            elif rule.decode:  # most runs are words in one case or paths: no text in any encoding (`may_decode`)
                group = rule.group
                for match in rule.pattern.finditer(text):
                    run = match.group(group)
                    if run and may_decode(run):
                        self._take(rule, match, text, spans)
            else:
                for match in rule.pattern.finditer(text):
                    self._take(rule, match, text, spans)
        if glued:
            self._unglue(text, glued, spans)
        return spans

    def _unglue(self, text: str, glued: list[tuple[int, int]], spans: _Spans) -> None:
        """A token right after glue (`"...invalid.\\nAKIA..."` in JSON, `%3Dglpat-`, `令牌glpat-`, `TOKEN_AIza`), or
        before a character of another script, is read again in a view with the glue blanked (`unglued`), at the
        keyword where its match failed: one fix for every rule's boundary. A match is taken only if no glue is
        in the secret itself, so the view finds nothing a rule would not find in the token standing alone."""
        view = unglued(self._glue[0], text, [at for _, at in glued])
        found = _Spans()
        for index, at in glued:
            rule = self.rules[index]
            match = rule.pattern.match(view, at)
            if match is not None and match.end() > at:
                start, end = match.span(rule.group)
                if text[start:end] == view[start:end]:
                    self._take(rule, match, text, found)
        for start, end, kind in found.items:
            if not spans.covers(start):  # what a rule took in the text itself stays as it took it
                spans.absorb(start, end, kind)

    def _apply_at(self, rule: SecretRule, text: str, positions: list[int], spans: _Spans,
                  glue: tuple[int, list[tuple[int, int]], bool]) -> None:
        pattern = rule.pattern
        if rule.upper:
            positions = [at for at in positions if text[at].isupper()]
        if not rule.window:
            index, glued, ascii_only = glue
            token_priority = self._scan_settings.token_priority
            done = 0
            run_end = -1  # where the run of token characters of the last position looked at ends (`_run_end`)
            run_stop = -1  # the same for `_TOKEN_RUN` (each run read once: "sk-" * 10**5 stays linear)
            for at in positions:
                if at < done:  # inside this rule's previous match: keeps "password=" * 10**5 linear
                    continue
                match = pattern.match(text, at)
                if match is not None and match.end() > at:
                    self._take(rule, match, text, spans)
                    done = match.end()
                    if rule.priority <= token_priority:  # its tail on the next line or in the next row's cell?
                        done = max(done, self._rejoin(rule, text, at, done, spans))
                elif rule.priority <= token_priority:  # cut over lines, or read again without the glue (`_unglue`)?
                    if at >= run_stop:
                        run_stop = _TOKEN_RUN.match(text, at).end()
                    if may_continue(text, run_stop):
                        joined = self._rejoin(rule, text, at, -1, spans)
                        if joined:
                            done = joined
                            continue
                    if not ascii_only and at >= run_end:
                        run_end = _run_end(text, at)
                    if _glued_at(self._glue[1], text, at, run_end):
                        glued.append((index, at))
            return
        # Where a match may start: the keywords' windows, overlapping ones merged. A match may run on past the
        # window (to its line's end, at most _WINDOW_RUN_ON further), so a value after a key near the edge is whole.
        windows: list[list[int]] = []
        for at in positions:
            line_start = text.rfind("\n", max(0, at - rule.window), at) + 1
            line_end = text.find("\n", at, at + rule.window)
            lo = max(line_start, at - rule.window)
            hi = min(len(text), at + rule.window) if line_end < 0 else line_end
            if windows and lo <= windows[-1][1]:
                windows[-1][1] = max(windows[-1][1], hi)
            else:
                windows.append([lo, hi])
        for lo, hi in windows:
            stop = text.find("\n", hi, hi + _WINDOW_RUN_ON)
            stop = min(len(text), hi + _WINDOW_RUN_ON) if stop < 0 else stop
            for match in pattern.finditer(text, lo, stop):
                if match.start() > hi:
                    break
                self._take(rule, match, text, spans)

    def _rejoin(self, rule: SecretRule, text: str, at: int, matched_end: int, spans: _Spans) -> int:
        """A token at `at` cut over lines or table cells (`kg.redaction.wrapped`): each of its pieces is redacted
        when the rule matches them joined. Where the last piece ends, or 0."""
        def take(match: re.Match[str], joined: str) -> tuple[int, int] | None:
            found = _Spans()
            self._take(rule, match, joined, found)
            return found.items[0][:2] if found.items else None

        pieces = rejoined(rule.pattern, text, at, matched_end, take, self._scan_settings.wrapped)
        for start, end in pieces:
            spans.add(start, end, rule.kind)
        return pieces[-1][1] if pieces else 0

    def _take(self, rule: SecretRule, match: re.Match[str], text: str, spans: _Spans) -> None:
        start, end = match.span(rule.group)
        if start < 0 or end <= start:
            return
        if spans.covers(start):
            return
        secret = text[start:end]
        if rule.decode:  # an encoding (base64 of a token, of a .env): a secret when what it decodes to holds one (its
            kind = self._decoded_kind(secret)  # placeholders are read in the decoded text, by every rule's ignore)
            if kind is not None:
                spans.add(start, end, kind)
            return
        if rule.min_entropy and entropy(secret) < rule.min_entropy:
            return
        if rule.before is not None and not _preceded_by(rule.before, text, match.start()):
            return
        if rule.not_before is not None and _line_before(rule.not_before, text, start):
            return
        if any(p.search(secret) for p in rule.ignore) or any(p.search(secret) for p in self._ignore):
            return
        if end < len(text) and text[end - 1] in _TOKEN_CHARS and (
                text[end] in _TOKEN_CHARS or (text[end] == "." and "." in secret)):
            # a secret with dots in it (pscale_pw_...x.y) goes on over a dot that joins two runs, unless the run is
            # a blob longer than the bound (then as any other: so a second pass finds nothing new, as in the first)
            stop = spans.dotted_end(text, end) if "." in secret else -1
            end = stop if 0 <= stop < end + _MAX_EXTEND else _TOKEN_RUN.match(text, end, end + _MAX_EXTEND).end()
        spans.add(start, end, rule.kind)

    def _decoded_kind(self, encoded: str) -> str | None:
        """The first kind of secret in what `encoded` decodes to (`decoded`), read with every rule; None when it is
        no text or holds none. One level deep: an encoding inside the decoded text is not decoded again."""
        if _DECODING.get():
            return None
        text = decoded(encoded, self._scan_settings.printable_share)
        if text is None:
            return None
        token = _DECODING.set(True)
        try:
            kinds = self._collect(text).kinds
        finally:
            _DECODING.reset(token)
        return min(kinds) if kinds else None

    # --- compiled once per Redactor ------------------------------------------------------------------------

    @cached_property
    def _scan_settings(self) -> Settings:
        return self.settings if self.settings is not None else settings({}, "rules/secrets.toml")

    @cached_property
    def _glue(self) -> tuple[re.Pattern[str], re.Pattern[str]]:
        return glue_patterns(self._scan_settings.glue)

    @cached_property
    def _prefixes(self) -> Patterns | None:
        return compiled(self.line_prefix)

    @cached_property
    def _ignore(self) -> tuple[re.Pattern[str], ...]:
        return tuple(regex(source) for source in self.ignore_sources)

    @cached_property
    def _plan(self) -> KeywordPlan:
        """Which rules each keyword starts (the packaged rules bring theirs from the cache, unbuilt)."""
        rules = self.rules
        if isinstance(rules, LazyRules) and rules.plan is not None:
            return rules.plan
        return KeywordPlan.of([rule.keywords for rule in rules])

    @cached_property
    def _other_words(self) -> tuple[re.Pattern[str], dict[str, tuple[tuple[str, int], ...]]] | None:
        """The non-ASCII keywords (labels in other scripts: 密码, пароль, hasło) by their first non-ASCII character
        (and its offset in the word), and one regex of those characters in either case: a text is scanned once (a
        character class the regex engine skips through fast), not once per keyword, and an ASCII letter never
        starts a look (hasło is looked for at each ł, not at each h). Keywords are lowercase; a capitalised label
        (Пароль) is found too."""
        by_char: dict[str, list[tuple[str, int]]] = {}
        for word in self._plan.other:
            at = next(i for i, c in enumerate(word) if not c.isascii())
            by_char.setdefault(word[at], []).append((word, at))
        if not by_char:
            return None
        cases = {v for c in by_char for v in (c, c.upper(), c.title()) if len(v) == 1}
        chars = re.compile("[" + "".join(re.escape(c) for c in sorted(cases)) + "]")
        return chars, {c: tuple(words) for c, words in by_char.items()}

    def _other_starts(self, text: str, starts: dict[int, list[int]]) -> None:
        """Where the non-ASCII keywords occur in `text`, any case (see `_other_words`), compared letter for letter
        as the rules' `(?i)` does (ŞİFRE is şifre, though str.lower() makes İ two characters)."""
        if text.isascii():
            return
        other = self._other_words
        if other is None:
            return
        chars, by_char = other
        for match in chars.finditer(text):
            for word, offset in by_char.get(match.group().lower(), ()):
                at = match.start() - offset
                if at >= 0 and _lowered_is(text[at:at + len(word)], word):
                    for index in self._plan.other[word]:
                        starts.setdefault(index, []).append(at)

    @cached_property
    def _keyword_index(self) -> tuple[tuple[re.Pattern[str], ...], dict[str, tuple[int, ...]]]:
        """Trie regexes of the keywords, one per first character (each opens with a literal, which the regex
        engine finds by a fast scan: about a third faster than one trie over 10 MB), and for each string they
        can match, the rules of every keyword that is a prefix of it (a trie reports the longest keyword)."""
        by_keyword = self._plan.ascii_words
        words = sorted(by_keyword)
        lookup = {w: tuple(i for k in words if w.startswith(k) for i in by_keyword[k]) for w in words}
        groups: dict[str, list[str]] = {}
        for word in words:
            groups.setdefault(word[0], []).append(word)
        return tuple(re.compile(_trie(group)) for _, group in sorted(groups.items())), lookup

    def _keyword_starts(self, lowered: str, text: str) -> dict[int, list[int]]:
        """Where each rule's keywords occur: ASCII keywords in `lowered`, the others (labels in other scripts) in
        `text`."""
        starts: dict[int, list[int]] = {}
        if len(lowered) < _SHORT:  # a kg log's fields: finds of the keywords whose first pair occurs here
            plan = self._plan
            pairs = {lowered[i:i + 2] for i in range(len(lowered) - 1)}
            found = [item for pair in pairs & plan.pairs.keys() for item in plan.at(pair)] + list(plan.at(""))
            for keyword, packed in found:
                at = lowered.find(keyword)
                if at >= 0:
                    indexes = plan.rules_of(packed)
                    while at >= 0:
                        for index in indexes:
                            starts.setdefault(index, []).append(at)
                        at = lowered.find(keyword, at + 1)
            self._other_starts(text, starts)
            return starts
        self._other_starts(text, starts)
        tries, lookup = self._keyword_index
        by_word: dict[str, list[int]] = {}  # one append per keyword found; rules gather their words' lists after
        for trie in tries:
            for match in trie.finditer(lowered):
                by_word.setdefault(match.group(), []).append(match.start())
        for word, positions in by_word.items():
            for index in lookup[word]:
                if index in starts:
                    starts[index] += positions
                else:
                    starts[index] = list(positions)
        return starts

    # --- helpers for callers -------------------------------------------------------------------------------

    def redact_many(
        self, fields: Mapping[str, str | list[str] | None]
    ) -> tuple[dict[str, str | list[str] | None], tuple[str, ...]]:
        """Redact every string, also inside list fields, as one group (a secret found in one field is redacted in
        every field); return the new mapping and all kinds found."""
        kinds: set[str] = set()
        out = self.redact_value(dict(fields), kinds)
        return {key: out[key] for key in fields}, tuple(sorted(kinds))

    def redact_value(self, value: Any, kinds: set[str] | None = None) -> Any:
        """Redact every string inside `value` (str, list, tuple, dict values and keys, nested) as one group
        (`redact_group`); other values are returned as they are. Kinds found are added to `kinds`."""
        strings: dict[str, Redacted] = {}
        _strings_of(value, strings)
        if not strings:
            return value
        for text, result in zip(list(strings), self.redact_group(list(strings)), strict=True):
            strings[text] = result
            if kinds is not None:
                kinds.update(result.kinds)
        return _rebuilt(value, strings)


def _strings_of(value: Any, out: dict[str, Redacted]) -> None:
    if isinstance(value, str):
        out.setdefault(value, Redacted(value))
    elif isinstance(value, (list, tuple)):
        for item in value:
            _strings_of(item, out)
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings_of(key, out)
            _strings_of(item, out)


def _rebuilt(value: Any, done: Mapping[str, Redacted]) -> Any:
    if isinstance(value, str):
        return done[value].text
    if isinstance(value, list):
        return [_rebuilt(v, done) for v in value]
    if isinstance(value, tuple):
        return tuple(_rebuilt(v, done) for v in value)
    if isinstance(value, dict):
        return {_rebuilt(k, done): _rebuilt(v, done) for k, v in value.items()}
    return value


@cache
def load_default() -> Redactor:
    """The packaged rules, loaded once per process (a Redactor is immutable, so sharing it is safe) from the
    workspace's cache of parsed rules (memory/.kg/cache) when it matches the rule files
    (`kg.redaction.cache.packaged_parts`), each rule built and its regexes compiled on first use; the test suite
    compiles and checks every one."""
    rules, ignore, echo, prefix, scan = packaged_parts("secrets.toml")
    return Redactor(rules, tuple(ignore), echo, prefix, scan)


def redact_text(text: str, redactor: Redactor | None = None) -> str:
    """The one gate for a single value: `text` with every secret replaced (the packaged rules by default)."""
    return (redactor or load_default()).redact(text).text


def redact_report(text: str) -> str:
    """`redact_text` for a message being reported (an `Error:` line, a tool error): it never raises, so the report
    of a failure cannot fail again (QA3 #1: a cache folder kg could not write failed the command, then its error
    line, then the last line of defence, three tracebacks). Rules that cannot be loaded from the cache are parsed
    in memory; rules that cannot be loaded at all leave the message unshown (it may quote a secret)."""
    try:
        return redact_text(text)
    except Exception:  # noqa: BLE001 - tried once more below, then said without the text
        pass
    try:
        from kg.redaction.cache import writes_held

        with writes_held():
            rules, ignore, echo, prefix, scan = packaged_parts("secrets.toml")
            return Redactor(rules, tuple(ignore), echo, prefix, scan).redact(text).text
    except Exception as exc:  # noqa: BLE001
        return (f"(the message is not shown: kg's secret rules, which must redact it first, could not be loaded: "
                f"{type(exc).__name__})")


def redact_value(value: Any, redactor: Redactor | None = None) -> Any:
    """The one gate for structured values (lists, dicts, nested): every string inside redacted."""
    return (redactor or load_default()).redact_value(value)
