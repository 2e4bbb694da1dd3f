"""The [lessons] table of the `kg reflect` rules (rules/reflect.toml): how a finding's words become a lesson and its
pattern key. Loaded by `kg.reflect.rules.load_rules`; split from it to keep each module short. Every table refuses
keys it does not know.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from kg.core.policy import RuleReader


def regex(r: RuleReader, name: str, pattern: str, flags: int = 0) -> re.Pattern[str]:
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise r.fail(name, f"bad regular expression {pattern!r}: {exc}") from None


def regexes(r: RuleReader, name: str, flags: int = 0) -> tuple[re.Pattern[str], ...]:
    return tuple(regex(r, name, p, flags) for p in r.strings(name, [], items="non-empty"))


@dataclass(frozen=True)
class Rewrite:
    pattern: re.Pattern[str]
    template: str


@dataclass(frozen=True)
class Lessons:
    strip: re.Pattern[str]
    fallback: Mapping[str, str]  # category -> template
    key_skip: frozenset[str]  # stemmed
    key_weak: frozenset[str]  # stemmed: used only when the key has too few words without them
    key_words: int
    key_min_words: int
    key_cjk_pair_length: int  # how long an ASCII word a two-character CJK word ranks as, for a key's words
    key_cjk_breaks: frozenset[str]  # one-character words that end a stretch of CJK text, as function characters do
    rewrites: tuple[Rewrite, ...]
    # A sentence that says what to do: when the sentence a finding matched names nothing a key can hold ("are you
    # kidding me?"), the lesson comes from another sentence of the turn, these first.
    actionable: tuple[re.Pattern[str], ...] = ()
    fact: tuple[re.Pattern[str], ...] = ()  # what is true said against what was taken (beside a rhetorical question)
    # Categories whose lesson may come from another sentence that way (praise stays with the praising sentence).
    reword: frozenset[str] = frozenset()
    drop: re.Pattern[str] | None = None  # words taken out of a lesson wherever they stand (swearing)
    # category -> template for a lesson whose user words name nothing a key can hold ("wtf", "nice, it works"): the
    # user's words ({s}) as the verdict; the key names what the agent had just said it did. No template holds the
    # agent's words: a lesson is the user's ({s} is the only field of every template but a rewrite's).
    context: Mapping[str, str] = field(default_factory=dict)
    # category -> template for a lesson whose sentence is a question no rewrite turned into an instruction ({s}).
    question: Mapping[str, str] = field(default_factory=dict)
    # Categories whose finding needs a pattern key: words that name nothing, with nothing the agent said to name
    # either ("Thanks" after a greeting), make no lesson.
    need_key: frozenset[str] = frozenset()
    # Verb stems that take an "e" back when "-ing" is cut ("making" -> "make"; "editing" -> "edit" takes none).
    ing_e: frozenset[str] = frozenset()
    # A question no rewrite made an instruction is first tried against these ("did you push?" -> "Make sure you
    # push ..."); only a question with no match keeps the `question` template.
    question_rewrites: tuple[Rewrite, ...] = ()
    # A turn that is only an exclamation ("wtf", "ugh", "seriously?") teaches nothing by itself.
    exclamation: re.Pattern[str] | None = None
    key_prefix: Mapping[str, str] = field(default_factory=dict)  # category -> a pattern key's first part
    # A sentence that opens as a question is one without its "?" ("why not just edit the file directly"); one that
    # does not, in English, is a statement said with doubt ("scrolling still does not work (maybe X)?").
    question_opener: re.Pattern[str] | None = None
    # An agent's offer or question back ("If you want me to ...", "Let me know ..."): never a context lesson.
    context_skip: re.Pattern[str] | None = None
    # "i mean <words that say no step>": what the user meant ({s}).
    meant: re.Pattern[str] | None = None
    meant_context: Mapping[str, str] = field(default_factory=dict)
    pointer: re.Pattern[str] | None = None  # a sentence pointing at the lesson said elsewhere ("make a rule so ...")
    quote_pointer: re.Pattern[str] | None = None  # a lesson's end pointing at what the user quoted ("this part")
    # A lesson of at most key_short_words words in this shape ("Use minsky", "Get not post") keys on its one word.
    key_short_words: int = 0
    key_one_word: re.Pattern[str] | None = None
    # A sentence that forbids: said beside one that does not, the lesson is both ("don't X. do Y").
    prohibits: re.Pattern[str] | None = None
    # An insult or blame with no content ("you screwed that up"): with nothing else a key could hold, the turn is a
    # note of the user's frustration (`frustrated`, {s} the user's words, {step} the agent's last step), at
    # `frustrated_priority` and with no key, never a rule.
    abuse: re.Pattern[str] | None = None
    frustrated: Mapping[str, str] = field(default_factory=dict)
    frustrated_priority: str | None = None
    # A tool that changes a file: the agent's last such call is the step a verdict is on, else its last call.
    step_tool: re.Pattern[str] | None = None


_FIELDS = re.compile(r"\{(\w+)(?::base)?\}")  # "{V:base}": the field's verb in its base form ("editing" -> "edit")



def _key_prefix(t: RuleReader, categories: set[str]) -> dict[str, str]:
    kp = t.table("key_prefix") if "key_prefix" in t.data else None
    out = {c: kp.string(c) for c in kp.data} if kp else {}
    bad = next((c for c, v in out.items() if c not in categories or not re.fullmatch(r"[a-z]+", v)), None)
    if bad:
        raise kp.fail(bad, "a finding category, with lower-case letters as its prefix")
    return out


def lessons_of(t: RuleReader, categories: set[str]) -> Lessons:
    from kg.graph.linking import stem  # the stemmer linking uses, so keys and links agree on words

    t.known(("strip", "fallback", "key_skip", "key_weak", "key_words", "key_min_words", "key_cjk_pair_length",
             "key_cjk_breaks", "rewrite", "actionable", "fact",
             "reword", "drop", "context", "question", "need_key", "ing_e", "question_rewrite",
             "exclamation", "question_opener", "context_skip", "meant", "meant_context",
             "key_prefix", "pointer", "quote_pointer", "key_short_words", "key_one_word",
             "prohibits", "abuse", "frustrated", "frustrated_priority", "step_tool"))
    fb = t.table("fallback")
    fallback = {c: fb.string(c) for c in fb.data}
    missing = sorted(categories - set(fallback))
    if missing:
        raise fb.fail(missing[0], "missing: every finding category needs a fallback lesson")
    def rewrites_of(name: str) -> list[Rewrite]:
        out = []
        for r in t.tables(name, []):
            r.known(("pattern", "template"))
            pattern = regex(r, "pattern", r.string("pattern"), re.IGNORECASE)
            template = r.string("template")
            for field_ in _FIELDS.findall(template):
                if field_.lower() not in (*pattern.groupindex, "s"):
                    raise r.fail("template", f"{{{field_}}} is not a named group of the pattern (nor {{s}})")
            out.append(Rewrite(pattern, template))
        return out

    rewrites = rewrites_of("rewrite")
    return Lessons(
        strip=regex(t, "strip", t.string("strip"), re.IGNORECASE),
        fallback=fallback,
        key_skip=frozenset(stem(w.lower()) for w in t.strings("key_skip", items="non-empty")),
        key_weak=frozenset(stem(w.lower()) for w in t.strings("key_weak", [], items="non-empty")),
        key_words=t.whole("key_words", 1, int_only=True),
        key_min_words=t.whole("key_min_words", 1, int_only=True),
        key_cjk_pair_length=t.whole("key_cjk_pair_length", 1, int_only=True, default=4),
        key_cjk_breaks=frozenset(t.strings("key_cjk_breaks", [], items="non-empty")),
        rewrites=tuple(rewrites),
        actionable=tuple(regex(t, "actionable", p, re.IGNORECASE)
                         for p in t.strings("actionable", [], items="non-empty")),
        fact=tuple(regex(t, "fact", p, re.IGNORECASE) for p in t.strings("fact", [], items="non-empty")),
        reword=_reword(t, categories),
        drop=regex(t, "drop", t.string("drop"), re.IGNORECASE) if "drop" in t.data else None,
        context=_context(t, categories),
        question=_context(t, categories, "question"),
        need_key=_reword(t, categories, "need_key"),
        ing_e=frozenset(w.lower() for w in t.strings("ing_e", [], items="non-empty")),
        question_rewrites=tuple(rewrites_of("question_rewrite")),
        exclamation=regex(t, "exclamation", t.string("exclamation"), re.IGNORECASE)
        if "exclamation" in t.data else None,
        question_opener=regex(t, "question_opener", t.string("question_opener"), re.IGNORECASE)
        if "question_opener" in t.data else None,
        key_prefix=_key_prefix(t, categories),
        context_skip=regex(t, "context_skip", t.string("context_skip"), re.IGNORECASE)
        if "context_skip" in t.data else None,
        meant=regex(t, "meant", t.string("meant"), re.IGNORECASE) if "meant" in t.data else None,
        meant_context=_context(t, categories, "meant_context"),
        pointer=regex(t, "pointer", t.string("pointer"), re.IGNORECASE) if "pointer" in t.data else None,
        quote_pointer=regex(t, "quote_pointer", t.string("quote_pointer")) if "quote_pointer" in t.data else None,
        key_short_words=t.whole("key_short_words", 0, int_only=True) if "key_short_words" in t.data else 0,
        key_one_word=regex(t, "key_one_word", t.string("key_one_word"), re.IGNORECASE)
        if "key_one_word" in t.data else None,
        prohibits=regex(t, "prohibits", t.string("prohibits"), re.IGNORECASE) if "prohibits" in t.data else None,
        abuse=regex(t, "abuse", t.string("abuse"), re.IGNORECASE) if "abuse" in t.data else None,
        frustrated=_context(t, categories, "frustrated", ("s", "step")),
        frustrated_priority=_priority(t, "frustrated_priority"),
        step_tool=regex(t, "step_tool", t.string("step_tool"), re.IGNORECASE) if "step_tool" in t.data else None,
    )


def _priority(t: RuleReader, name: str) -> str | None:
    if name not in t.data:
        return None
    value = t.string(name)
    if value not in ("low", "medium", "high", "critical"):
        raise t.fail(name, "low, medium, high or critical")
    return value


def _context(t: RuleReader, categories: set[str], table: str = "context",
             fields: tuple[str, ...] = ("s",)) -> dict[str, str]:
    ctx = t.table(table, {})
    out = {}
    for c in ctx.data:
        if c not in categories:
            raise ctx.fail(c, f"not a finding category ({', '.join(sorted(categories))})")
        template = ctx.string(c)
        for name in _FIELDS.findall(template):
            if name.lower() not in fields:
                raise ctx.fail(c, f"{{{name}}} is not a field of a {table} lesson "
                                  f"({', '.join('{' + f + '}' for f in fields)})")
        out[c] = template
    return out


def _reword(t: RuleReader, categories: set[str], name: str = "reword") -> frozenset[str]:
    names = t.strings(name, [], items="non-empty")
    for n in names:
        if n not in categories:
            raise t.fail(name, f"{n!r} is not a finding category ({', '.join(sorted(categories))})")
    return frozenset(names)
