"""The language the user asked the agent to answer in, and whether the agent's reply is in it.

A user who set a reply language ("always answer in Thai") and names it again after the agent answered in another
("ภาษาไทย", "stop answering in English, answer only in Thai") restates a rule the agent broke: a correction any user
of any agent can make, in any language. Which words name a language, which verbs ask for replies, and how a reply
shows its language (a script of its own, or a language's commonest words) are rules ([signals.reply_language] in
rules/reflect.toml); these are pure functions over them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kg.core.policy import RuleReader

from .language import fold
from .lesson_rules import regex as _regex

_FENCED = re.compile(r"^\s*(```|~~~).*?^\s*(```|~~~)", re.DOTALL | re.MULTILINE)
_LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class ReplyLanguage:
    name: str
    names: re.Pattern[str]  # the words that name it, in several languages (folded as the user's words are)
    script: re.Pattern[str] | None  # a letter of its own script
    words: re.Pattern[str] | None  # its commonest words, for a language written in a script others share


@dataclass(frozen=True)
class ReplyLanguages:
    verbs: tuple[re.Pattern[str], ...] = ()  # "answer", "respond", "ตอบ", "回答": the words asking for replies
    languages: tuple[ReplyLanguage, ...] = ()
    bare_words: int = 3  # a turn of at most this many words that names a language asks for it without a verb
    work: tuple[re.Pattern[str], ...] = ()  # a language named as the object of the work ("Chinese input"): left out
    script_share: float = 0.3  # a reply is in a language of its own script when this share of its letters is of it
    min_words: int = 2  # a reply is in a Latin-script language when this many of its commonest words show, the most
    read_chars: int = 1500  # characters of the reply read


def load(t: RuleReader) -> ReplyLanguages:
    """[signals.reply_language]: verbs, work, bare_words, how a reply is read, and one table per language (names,
    and script or words)."""
    flags = re.IGNORECASE
    t.known(("verbs", "work", "bare_words", "script_share", "min_words", "read_chars", "languages"))
    langs = []
    table = t.table("languages", {})
    for name in table.data:
        lt = table.table(name).known(("names", "script", "words"))
        names = "|".join(fold(p) for p in lt.strings("names", empty=False, items="non-empty"))
        script = lt.strings("script", [], items="non-empty")
        words = lt.strings("words", [], items="non-empty")
        if bool(script) == bool(words):
            raise lt.fail("names", "a language needs either `script` (its letters) or `words` (its commonest words)")
        langs.append(ReplyLanguage(
            name, _regex(lt, "names", names, flags),
            _regex(lt, "script", "|".join(script)) if script else None,
            _regex(lt, "words", "|".join(fold(w) for w in words), flags) if words else None))
    return ReplyLanguages(
        verbs=tuple(_regex(t, "verbs", fold(p), flags) for p in t.strings("verbs", [], items="non-empty")),
        work=tuple(_regex(t, "work", fold(p), flags) for p in t.strings("work", [], items="non-empty")),
        languages=tuple(langs), bare_words=t.whole("bare_words", 0, default=3, int_only=True),
        script_share=t.number("script_share", 0, 1, default=0.3),
        min_words=t.whole("min_words", 1, default=2, int_only=True),
        read_chars=t.whole("read_chars", 1, default=1500, int_only=True))


def asked(own: str, words: int, rules: ReplyLanguages) -> frozenset[str]:
    """The languages the user's words (folded) ask replies in: a language named with a verb of replying, or named
    by a turn of at most bare_words words. A language named as the object of the work ("Chinese input", "translate
    it into German") asks nothing of the replies."""
    for w in rules.work:
        own = w.sub(" ", own)
    named = frozenset(lang.name for lang in rules.languages if lang.names.search(own))
    if not named or words <= rules.bare_words or any(v.search(own) for v in rules.verbs):
        return named
    return frozenset()


def written_in(reply: str, name: str, rules: ReplyLanguages) -> bool | None:
    """Whether the agent's reply (its words, code blocks left out) is in the language; None when it cannot tell
    (no letters, or a language the rules do not know)."""
    text = _FENCED.sub("", reply)[:rules.read_chars]
    letters = len(_LETTER.findall(text))
    lang = next((lang for lang in rules.languages if lang.name == name), None)
    if lang is None or letters == 0:
        return None
    if lang.script is not None:
        return len(lang.script.findall(text)) >= rules.script_share * letters
    share = rules.script_share * letters
    if any(o.script is not None and len(o.script.findall(text)) >= share for o in rules.languages):
        return False  # written in another script
    folded = fold(text)
    hits = {o.name: len(o.words.findall(folded)) for o in rules.languages if o.words is not None}
    return hits[name] >= rules.min_words and hits[name] >= max(hits.values())


def broken(own: str, words: int, earlier: frozenset[str], reply: str, rules: ReplyLanguages) -> bool:
    """The user asks again for a reply language they asked for before, and the agent's last reply is not in it."""
    return any(name in earlier and written_in(reply, name, rules) is False for name in asked(own, words, rules))
