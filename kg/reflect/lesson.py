"""Write a finding as a lesson (what to do next time) and give it a pattern key that recurs with the lesson.

No language model: the user's sentence is cleaned of fillers and rewritten by the first matching rule of
rules/reflect.toml [lessons] ("i asked you to X, not Y" -> "X; do not Y"), else a per-category template.
The key is the category and the lesson's most specific words (code-like tokens first, then the longest),
stemmed and sorted, so the same lesson said another way in another session lands on the same pattern.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from kg.core.text import cjk_runs, has_cjk
from kg.graph.linking import default_rules, terms

from .rules import Lessons

_SENTENCES = re.compile(r"(?<=[.!?。！？])\s+|\n+|(?<=[。！？；;])")
_CODE = re.compile(r"`[^`]+`|(?<!\w)@[\w./-]+|(?<!\w)--?[a-z][\w-]*|\b[\w-]+\.[a-z]{1,4}\b|#\d+|\b\w*\d\w*\b")
_FIELD = re.compile(r"\{(\w+)(:base)?\}")
# The linking rules (stopwords, stemmer) are read once: keys and links agree on what a word is.
linking_rules = cache(default_rules)
_PREFIX = {"correction": "fix", "preference": "pref", "knowledge_gap": "fact", "feature_request": "feat",
           "best_practice": "keep"}


def sentences(text: str) -> list[str]:
    return [p.strip() for p in _SENTENCES.split(text) if p and p.strip()]


def sentence_at(text: str, needle: str) -> str:
    """The sentence of `text` (one evidence line) that holds `needle`, else the first one."""
    parts = sentences(text)
    for p in parts:
        if needle and needle in p:
            return p
    return parts[0] if parts else text.strip()


def phrase(category: str, said: list[str], preferred: str, rules: Lessons) -> tuple[str, str]:
    """(lesson, the sentence it came from). The first rewrite, in the rules' order, that matches any
    sentence of what the user said wins; else the category's template over the `preferred` sentence.

    A sentence with nothing left once fillers and the path of an attached file are stripped ("ok.", a pasted
    screenshot's path) is no lesson: the turn's other sentences are read, and `preferred` gives way to the first."""
    said = [s for s in said if _content(s, rules) and not _pasted(s, rules)] or said
    if _pasted(preferred, rules):  # a heading, an emphasised line pasted from the agent's answer, a shell command
        preferred = said[0]
    if rules.pointer is not None:  # "make a rule so you never do this again": the lesson is the other sentences
        said = [s for s in said if not rules.pointer.search(s)] or said
        if rules.pointer.search(preferred) or not _content(preferred, rules):
            preferred = next((s for s in said if _content(s, rules)), preferred)
    if not _content(preferred, rules):
        preferred = next((s for s in said if _content(s, rules)), preferred)
    cleaned = [(_clean(s, rules), s) for s in said]
    vague: tuple[str, str] | None = None  # the first rewrite that names nothing a key can hold ("I know there is one")
    for rw in rules.rewrites:
        for s, original in cleaned:
            m = rw.pattern.search(s)
            if m:
                out = fill(rw.template, {**{k: v or "" for k, v in m.groupdict().items()}, "s": s}, rules.ing_e)
                if len(out.split()) < 2:  # "you should be" -> "Be" says nothing
                    continue
                if key(category, out, rules) is not None:
                    return out, original
                vague = vague or (out, original)
    if vague is not None:  # another sentence that says what to do and has a key is the lesson, else the rewrite
        other = next(((s, o) for s, o in cleaned if o != vague[1] and _says_what_to_do(s, rules)
                      and key(category, s, rules) is not None and not _asks(o, rules)), None)
        return (fill(rules.fallback[category], {"s": other[0]}), other[1]) if other else vague
    s = _clean(preferred, rules)
    meant = rules.meant_context.get(category)
    if meant and rules.meant is not None and rules.meant.search(preferred) and not _says_what_to_do(s, rules):
        return fill(meant, {"s": s}), preferred  # "i mean non-blank lines": a fragment of what the agent got wrong
    if category in rules.reword and key(category, s, rules) is None:
        other = _with_content(category, cleaned, rules)
        if other is not None:
            s, preferred = other
    if category in rules.question and _asks(preferred, rules):
        # a question is not a lesson: another sentence that says what to do, else the question to answer first
        other = _with_content(category, [c for c in cleaned if not _asks(c[1], rules)], rules, strict=True)
        if other is None:  # one that sets a fact right, naming no key's words ("端口是 8080 不是 3000" after a
            # rhetorical "搞错了吧？": the fact was dropped for "the user had to ask", QA10 #4)
            other = next(((c, o) for c, o in cleaned if not _asks(o, rules) and any(p.search(c) for p in rules.fact)),
                         None)
        if other is not None:
            s, preferred = other
        else:
            asked = s.rstrip(" ?？")
            for rw in rules.question_rewrites:  # said as what to do: "did you push?" -> "Make sure you push ..."
                m = rw.pattern.search(asked)
                if m:
                    return fill(rw.template, {**{k: v or "" for k, v in m.groupdict().items()}, "s": asked},
                                rules.ing_e), preferred
            if not is_question(s, rules):  # a statement said with doubt: the statement is the lesson
                return fill(rules.fallback[category], {"s": asked}), preferred
            # no rewrite (another language, a shape no rule knows): the question to answer, in the user's words
            return fill(rules.question[category], {"s": asked}), preferred
    return fill(rules.fallback[category], {"s": _with_other_half(s, preferred, cleaned, rules)}), preferred


def _with_other_half(s: str, preferred: str, cleaned: list[tuple[str, str]], rules: Lessons) -> str:
    """`s` joined with the sentence beside it when one of the two forbids and the other does not ("don't mock
    completion. mock the httpx library ...", "reorder the lists. DO NOT CHANGE the contents."): the rule is both
    halves, and a signal matched only one."""
    at = next((i for i, (_, o) in enumerate(cleaned) if o == preferred), None)
    if rules.prohibits is None or at is None:
        return s
    for j in (at + 1, at - 1):
        if not 0 <= j < len(cleaned):
            continue
        other, original = cleaned[j]
        if bool(rules.prohibits.search(s)) == bool(rules.prohibits.search(other)) or _asks(original, rules) or \
                len(_PROSE_WORD.findall(other)) < 2 or _pasted(original, rules):
            continue  # (a list's next number, "6.", is no half of a rule)
        first, second = (s, other) if j > at else (other, s)
        return f"{first.rstrip(' .;,')}; {second}"
    return s


# A markdown heading or a wholly emphasised line ("## Stats", "*No stats available*"): the agent's answer pasted back.
_PASTED_MARKUP = re.compile(r"^\s*(#{1,6}\s|\*[^*\s][^*]*\*\W*$|_[^_\s][^_]*_\W*$)")


def _pasted(sentence: str, rules: Lessons) -> bool:
    return bool(_PASTED_MARKUP.match(sentence)) or command_line(sentence, rules)


def _asks(sentence: str, rules: Lessons) -> bool:
    """Said as a question: a "?" at its end, or a question's opening."""
    return sentence.rstrip().endswith(("?", "？")) or is_question(sentence, rules)


def is_question(sentence: str, rules: Lessons) -> bool:
    """A question: it opens as one ("why not just edit it", "куда ты создал файл"), or it ends with "?" and is not an
    English statement said with doubt ("scrolling still does not work (maybe X)?": no opener, words of its own).
    Other languages ask yes/no without an opener ("Удалось понять причину?"): their "?" is a question."""
    text = _LIST.sub("", sentence).strip()
    said = rules.strip.sub("", text).strip() or text  # "i mean, what do you think ...": the question after fillers
    opens = rules.question_opener is not None and bool(rules.question_opener.search(said))
    if opens or not text.endswith(("?", "？")):
        return opens
    words = _PROSE_WORD.findall(text)
    english = bool(words) and all(w.isascii() for w in words)
    return not (english and len(words) >= _DOUBT_WORDS)


_DOUBT_WORDS = 5  # an English sentence ending "?" with no opener and this many words is a statement said with doubt


def exclaims(words: str, rules: Lessons) -> bool:
    """The turn is only an exclamation or an expletive (rules/reflect.toml [lessons] exclamation)."""
    return rules.exclamation is not None and bool(rules.exclamation.fullmatch(words.strip()))


# Where a clause ends or another begins: a long lesson is cut before one, so what is left is a whole thought.
_JOINS = r"(and|but|or|so|then|because|which|when|if|while|unless|rather than|instead of|including|except)"
# Full-width marks end a clause or a sentence with no blank after them: Chinese and Japanese write none.
_CLAUSE = re.compile(rf"[.,;:!?](?=\s)|[，、；：。！？]|\s(?=[-–—]\s|\()|\s(?={_JOINS}\s)")
_SENTENCE_STOP = re.compile(r"[.;!?](?=\s)|[。；！？]")
_MARKS = ".,;:!?，、；：。！？"  # a clause mark that ends the clause before it (kept until the strip)
_CUT_STRIP = " .,;:-–—(，、；：。"  # what a cut text does not end on
_JOINED = re.compile(rf"(\s+{_JOINS})+$")  # "... and then" at the cut: the words that would join the next clause


def shorten(lesson: str, limit: int, whole: int) -> str:
    """`lesson` on one line: whole up to `whole` characters, else its first sentences that fit in `whole` ("X; Y"
    joined: X), else cut where a clause ends within `limit` (not inside backticks, quotes or brackets, not before
    half of it), else where a word ends; marked cut with "…"."""
    text = " ".join(lesson.split())
    if len(text) <= max(limit, whole):
        return text

    def outside(e: int) -> bool:
        return e >= limit // 2 and text[:e].count("`") % 2 == 0 == text[:e].count('"') % 2 and \
            text[:e].count("(") <= text[:e].count(")") and text[:e].count("[") <= text[:e].count("]")

    stops = [m.start() + 1 for m in _SENTENCE_STOP.finditer(text, 0, whole)]
    clauses = [m.start() + (m.group(0) in _MARKS) for m in _CLAUSE.finditer(text, 0, limit - 1)]
    ends = [e for e in stops if outside(e)] or [e for e in clauses if outside(e)]
    head = text[: ends[-1]] if ends else text[: limit - 1]
    if not ends and not text[limit - 1].isspace():  # inside a word: back to where it starts
        head = head[: head.rfind(" ")] if head.rfind(" ") > 0 else head
    return _JOINED.sub("", head).rstrip(_CUT_STRIP) + "…"



def names_something(text: str, rules: Lessons) -> bool:
    """Any word a key could hold: "you didn't update the worklog" names the worklog, "wtf" names nothing."""
    return any(t not in rules.key_skip and t not in rules.key_weak and (len(t) >= 3 or not t.isascii())
               for t in terms(text, linking_rules()))


_PROSE_WORD = re.compile(r"[^\W\d_]{2,}")
_CODE_MARKS = re.compile(r"\s=\s|[;{}]|^(const|let|var|def|return|import|from)\s")  # a line of code


def prose(s: str) -> bool:
    """Words, not markup or code: most of it letters in words, and no tag or escape."""
    if "<" in s[:2] or "\\" in s or _CODE_MARKS.search(s):
        return False
    return sum(len(w) for w in _PROSE_WORD.findall(s)) >= 0.6 * len(s.replace(" ", ""))


_LIST = re.compile(r"^\s*([-*+•]|\d{1,2}[.)])\s+|\*\*|__")  # a list item's marker, bold markup


def _content(sentence: str, rules: Lessons) -> str:
    """The sentence without swearing, insults, list markup and leading fillers ("" when nothing else is left)."""
    s = rules.drop.sub("", sentence) if rules.drop is not None else sentence
    s = rules.abuse.sub("", s) if rules.abuse is not None else s  # "you idiot, use pnpm": the insult is no lesson
    s = " ".join(_LIST.sub("", s).split())
    return rules.strip.sub("", s).strip()


def _clean(sentence: str, rules: Lessons) -> str:
    return _content(sentence, rules) or sentence.strip()


def _says_what_to_do(sentence: str, rules: Lessons) -> bool:
    return any(p.search(sentence) for p in rules.actionable)


def _with_content(category: str, cleaned: list[tuple[str, str]], rules: Lessons,
                  strict: bool = False) -> tuple[str, str] | None:
    """The first sentence that says what to do and names something a key can hold, else (unless `strict`) the
    first that names anything: (cleaned sentence, original)."""
    named = [(s, o) for s, o in cleaned if key(category, s, rules) is not None]
    for s, o in named:
        if _says_what_to_do(s, rules):
            return s, o
    return named[0] if named and not strict else None


def fill(template: str, values: dict[str, str], ing_e: frozenset[str] = frozenset()) -> str:
    """A lesson's template with its `{fields}` filled from `values` (`{Field}` capitalised, `{field:base}` in its
    base form), with no double space where a field is empty (kg.reflect.verdict fills its notes with it too)."""

    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        value = values.get(name.lower(), "").strip(" ,;:.?!")
        if m.group(2):
            value = base_form(value, ing_e)
        return _capital(value) if name[:1].isupper() else value

    return _capital(" ".join(_FIELD.sub(one, template).split()))  # an empty field leaves no double space


def _capital(text: str) -> str:
    """`text` with its first letter upper-cased, unless it opens with code: "from_coder should ..." stays as the
    user wrote it (an agent reading "From_coder" looks for a name that does not exist)."""
    first = text.split(maxsplit=1)[0] if text.strip() else ""
    return text if code_like(first) or command_line(text) else text[:1].upper() + text[1:]


_FLAG = re.compile(r"^--?[A-Za-z][\w-]*=?")
# A name as code writes it: a dotted, slashed or snake_case identifier ("aider.repomap", "../chitin", "from_coder"),
# camelCase ("getUser"), a flag, or anything in backticks.
_IDENTIFIER = re.compile(r"^[`'\"(]*([\w-]*\w[_./\\][\w./\\-]*|[./~]+/[\w./-]*|[a-z]+[A-Z]\w*|--?[A-Za-z][\w-]*|`.*)$")


def code_like(token: str) -> bool:
    """A name as code writes it (`_IDENTIFIER`), not a word that ends a sentence ("etc.")."""
    word = token.rstrip(".,;:!?")
    camel = word.isalpha() and word[1:] != word[1:].lower()
    return bool(_IDENTIFIER.match(token)) and (camel or not word.isalpha())


def command_line(sentence: str, rules: Lessons | None = None) -> bool:
    """A shell command pasted into the turn ("git pr --path ../chitin"): a flag or a path among its words, and not one
    of English's function words (a user's sentence about a flag has them: "run it with --verbose"), nor an opening
    that says what to do. Never the lesson nor its evidence: the user's own words around it are."""
    words = sentence.split()
    if not any(_FLAG.match(w) or "/" in w for w in words):
        return False
    stop = linking_rules().stopwords
    if any(w.lower().strip(".,;:!?'\"") in stop for w in words if not code_like(w)):
        return False
    return rules is None or not _says_what_to_do(sentence, rules)


_DOUBLED = re.compile(r"([b-df-hj-np-tv-z])\1$")  # a doubled final consonant: "runn(ing)"


def base_form(verb: str, ing_e: frozenset[str] = frozenset()) -> str:
    """"editing" -> "edit", "running" -> "run", "making" -> "make" (stems in `ing_e` take their "e" back); any other
    word as it is."""
    low = verb.lower()
    if not low.endswith("ing") or len(low) < 5:
        return verb
    stem = verb[:-3]
    if stem.lower() in ing_e:
        return stem + "e"
    low = stem.lower()
    if (_DOUBLED.search(low) and low[-1] not in "lsz" and len(low) >= 4 and low[-3] in "aeiou"
            and low[-4] not in "aeiou"):
        return stem[:-1]  # "running", "committing"; not "adding", "calling", "passing"
    return stem


# A dotted name whose last part is a name, not a file's extension ("aider.repomap.RepoMap", "pkg.module_name"): the
# last part is the thing named, and the same thing said with or without its module keeps one key.
_DOTTED = re.compile(r"\b(?:[A-Za-z_]\w*\.)+([A-Z]\w*|\w*_\w*|[a-z]\w{4,})\b")
# Names as code writes them, besides `_CODE`: CamelCase and camelCase, snake_case, a call ("prompt()"), an argument
# ("paginate=false": its name).
_CODE_NAME = re.compile(r"\b[A-Za-z][a-z]+[A-Z]\w*|\b\w+_\w+\b|\b\w+(?=\(\))|\b[a-z]\w*(?==\w)")


def key(category: str, lesson: str, rules: Lessons, commands: Sequence[str] = ()) -> str | None:
    """`<fix|pref|fact|feat|keep>.<word>-<word>-<word>`: the lesson's most specific words, sorted. A lesson with too
    few that points at a command the user pasted beside it ("when i run this, i see no stats" over "bun run . git pr
    --path ../chitin") takes the command's names too (not its flags, paths or arguments)."""
    found = _key(category, lesson, rules)
    names = [w for c in commands for w in c.split() if w.isalpha() and not code_like(w)] if found is None else []
    return _key(category, f"{lesson} {' '.join(names)}", rules) if names else found


def _key(category: str, lesson: str, rules: Lessons) -> str | None:
    lesson = _DOTTED.sub(r"\1", lesson)
    code = {t for p in (_CODE, _CODE_NAME) for m in p.finditer(lesson) for t in terms(m.group(0), linking_rules())}
    words_of = _cjk_words(lesson, rules) if has_cjk(lesson) else frozenset()
    stop = linking_rules().stopwords
    seen: dict[str, int] = {}
    weak: dict[str, int] = {}
    for i, t in enumerate(terms(lesson, linking_rules())):
        if t in rules.key_skip or t in seen or t in weak or (len(t) < 3 and t.isascii()):
            continue
        cjk_pair = has_cjk(t)  # (not "not ASCII": an accented or Cyrillic word is a word, as before; review H1)
        (weak if t in rules.key_weak or (cjk_pair and (t not in words_of or t in stop)) else seen)[t] = i
    if len(seen) < rules.key_min_words:
        seen.update(weak)
    if len(seen) < rules.key_min_words and not (len(seen) == 1 and _one_thing(lesson, rules)):
        return None

    def length(t: str) -> int:
        return len(t) if not has_cjk(t) else rules.key_cjk_pair_length if t in words_of else 1

    ranked = sorted(seen, key=lambda t: (t not in code, -length(t), seen[t]))
    words = sorted(ranked[: rules.key_words])
    return f"{rules.key_prefix.get(category) or _PREFIX.get(category, category)}.{'-'.join(words)}"


def _cjk_words(text: str, rules: Lessons) -> frozenset[str]:
    """The character pairs of `text`'s CJK runs likely to be words: each run cut at the function characters
    (linking's cjk_stop_chars: 的, 了, 是, 都 ...) and at the one-character words (rules/reflect.toml
    key_cjk_breaks: 用, 还, 把 ...), each stretch read two by two from its start (修复订单导出分页 -> 修复, 订单, 导出,
    分页; 测试还是 -> 测试, not 试还). Chinese words are mostly two characters, and a stretch starts where a function
    word ended, so these are words far more often than the pairs across them. Pure."""
    stop = linking_rules().cjk_stop_chars | rules.key_cjk_breaks
    out: set[str] = set()
    for run in cjk_runs(text):
        start = 0
        for at in [*(i for i, ch in enumerate(run) if ch in stop), len(run)]:
            piece = run[start:at]
            out.update(piece[i:i + 2] for i in range(0, len(piece) - 1, 2))
            start = at + 1
    return frozenset(out)


def _one_thing(lesson: str, rules: Lessons) -> bool:
    """A short lesson that says what to do with one thing ("Use minsky", "Get not post"): one word is its key."""
    return rules.key_one_word is not None and len(lesson.split()) <= rules.key_short_words and bool(
        rules.key_one_word.search(lesson))


def names_one_thing_at_most(category: str, lesson: str, rules: Lessons) -> bool:
    """No key, or one that holds fewer words than key_min_words ("Use X"): what the user named is all there is."""
    found = key(category, lesson, rules)
    return found is None or found.count("-") + 1 < rules.key_min_words
