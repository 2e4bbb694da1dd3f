"""Text normalisation shared by the write path, linking and search.

Kùzu's full-text index splits on whitespace, so Chinese (and Japanese) text would be one giant token. We index
a `tokens` field instead: Latin words lower-cased, and every run of CJK characters as overlapping character
bigrams (a lone character stays a unigram). The same function tokenises queries, so both sides agree.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cache

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u2028-\u202e\ufeff]")
_CONTROL_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b\u200e\u200f\u2028-\u202e\ufeff]")
# The zero-width non-joiner and joiner (U+200C, U+200D) are part of Persian and Indic words (می‌کنیم) and of emoji
# sequences (👨‍👩‍👧): kept between two non-ASCII characters, dropped beside ASCII or an end, where they do nothing
# but hide a word ("pass\u200dword") from search and redaction's eyes.
_JOINER = re.compile(r"(?<![^\x00-\x7f])[\u200c\u200d]|[\u200c\u200d](?![^\x00-\x7f])")
# The one CJK range (a regex character-class body): kana, CJK ideographs (extension A, unified, compatibility)
# and Hangul syllables. Tokens, slugs and `has_cjk` all use it.
CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK = CJK
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")  # what _TOKEN finds in lower-cased ASCII text


# The CJK classes take milliseconds to compile (large Unicode ranges); `kg log` with ASCII text needs none.
@cache
def _regex(name: str) -> re.Pattern[str]:
    return re.compile({"token": rf"[{_CJK}]+|[^\W_{_CJK}]+", "is_cjk": rf"[{_CJK}]",
                       "not_slug": rf"[^a-z0-9{_CJK}]+", "not_ascii_slug": r"[^a-z0-9]+"}[name])
_SPACES = re.compile(r"\s+")
_DOUBLE = re.compile(r"([bdfgmnprt])\1$")


# Zero-width space, bidi marks (LRM, RLM, the Arabic letter mark), embeddings and overrides (U+202A-202E), isolates
# (U+2066-2069), the word joiner and invisible operators (U+2060-2064), the soft hyphen, the combining grapheme
# joiner, Hangul fillers, Mongolian selectors and vowel separator, variation selectors, tag characters, a BOM.
_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u180b-\u180f\u200b\u200e\u200f\u202a-\u202e"
                        "\u2060-\u2064\u2066-\u2069\u3164\ufe00-\ufe0f\uffa0\ufeff\U000e0000-\U000e007f"
                        "\U000e0100-\U000e01ef]")
# The control characters `clean` drops (a carriage return, the line and paragraph separators, 8-bit CSI among them),
# but for the ESC that starts a terminal escape (`\x1b[32m`: redaction reads past the whole escape, and `clean`'s
# leaves `[32m` between what it split, which joins nothing).
_CONTROLS = r"\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f\u2028\u2029"
_READ_CONTROL = re.compile(rf"[{_CONTROLS}]|\x1b(?![\[\]])")
# Spaces other than " " (no-break, en to hair, narrow no-break, medium mathematical, ideographic), read as " "
_OTHER_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
# any character `visible` may drop (the joiners too, any ESC), in one class: one scan of a text that holds none
_ODD = re.compile("[" + _INVISIBLE.pattern[1:-1] + _CONTROLS + "\x1b\u200c\u200d]")


def visible(text: str) -> str:
    """`text` as `clean` will store it, for redaction to read: without the characters that show nothing and join
    nothing (zero-width space, word joiner, bidi marks, overrides and isolates, variation selectors, tag
    characters, a byte order mark; a joiner beside ASCII), without the control characters `clean` drops (but for
    tabs, newlines and the ESC that starts a terminal escape, which redaction reads past) and NFC-normalised (a
    Kelvin sign is a K). So `ghp_…\u200b…`, `ghp_…\x7f…` or `ghp_…\r…` hides no token from redaction and is stored
    whole after `clean`. Pure."""
    if text.isascii():
        return text if text.isprintable() or _READ_CONTROL.search(text) is None else _READ_CONTROL.sub("", text)
    if _ODD.search(text) is not None:  # (one scan: most texts hold none of these; each kind is looked for first,
        text = _INVISIBLE.sub("", text)  # as a substitution copies the text)
        if "\u200c" in text or "\u200d" in text:
            text = _JOINER.sub("", text)
        if _READ_CONTROL.search(text) is not None:
            text = _READ_CONTROL.sub("", text)
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def spaced(text: str) -> str:
    """`text` with each space other than " " as " " (a no-break space after "Password:", the ideographic space after
    密码：), position for position: what redaction's rules read, while what it stores keeps the spaces. Pure."""
    return text if text.isascii() or _OTHER_SPACES.search(text) is None else _OTHER_SPACES.sub(" ", text)


def clean(text: str, *, one_line: bool = False) -> str:
    """Drop control characters (keeping newlines and tabs unless `one_line`; a joiner only between two non-ASCII
    characters), NFC-normalise, strip."""
    if text.isascii() and text.isprintable():  # nothing to normalise or drop; the one space is " "
        return " ".join(text.split()) if one_line and "  " in text else text.strip()
    text = unicodedata.normalize("NFC", text)
    if one_line:
        text = _SPACES.sub(" ", _CONTROL_ONE_LINE.sub(" ", text))
    else:
        text = _CONTROL.sub("", text)
    return _JOINER.sub("", text).strip() if "\u200c" in text or "\u200d" in text else text.strip()


def nfc(text: str) -> str:
    """A lookup argument (an id, a pattern key, a tag, a line to find) in the NFC form every stored text is in
    (`clean`): a key typed or pasted decomposed (NFD, as macOS writes "é") finds the key stored composed. Pure."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def code_span(text: str) -> str:
    """`text` as Markdown inline code that shows it whole (CommonMark): fenced by one backtick more than its
    longest run of backticks, with a space inside each fence when it starts or ends with a backtick (or a space:
    one is taken off each side). `pytest; rm $HOME/`id`` in single backticks ended the span at the first one. Pure."""
    runs = re.findall(r"`+", text)
    fence = "`" * (max(map(len, runs), default=0) + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def folded(text: str) -> str:
    """Lowercased, with every run of whitespace one space: the form two texts are compared in."""
    return " ".join(text.lower().split())


_END_MARKS = re.compile(r"[\s.!?;:,。！？；：，、…~～]+$")


def variant_key(text: str) -> str:
    """The form two wordings of one sentence share: `folded` after NFKC, without the spaces beside a CJK character
    and without the marks it ends with. Chinese writers put or leave out a space between a Chinese and a Latin
    word at will, and end with 。 or ！: "以后都用 pnpm 安装依赖，不要用 npm。" and "以后都用pnpm安装依赖，不要用npm！"
    are one sentence. Pure."""
    low = folded(unicodedata.normalize("NFKC", text))
    if has_cjk(low):
        low = re.sub(rf"(?<=[{CJK}]) | (?=[{CJK}])", "", low)
    return _END_MARKS.sub("", low)


def words(text: str) -> list[str]:
    """Lower-cased tokens: Latin words, and CJK runs as character bigrams."""
    if text.isascii():  # NFKC leaves ASCII as it is, and it holds no CJK: the common case in one call
        return _ASCII_TOKEN.findall(text.lower())
    out: list[str] = []
    for match in _regex("token").finditer(unicodedata.normalize("NFKC", text).lower()):
        token = match.group(0)
        if _regex("is_cjk").match(token):
            if len(token) == 1:
                out.append(token)
            else:
                out.extend(token[i : i + 2] for i in range(len(token) - 1))
        else:
            out.append(token)
    return out


# Versions and ids are written as one word of pieces joined by `.`, `-` or `:` (2.4.1, release-1.2, c0-D1:3).
# `words` splits them into their pieces, as the indexes hold them; search asks for one as its pieces in a row
# (a phrase), so "2.4.1" is not three single digits dropped as too short, and "release-1.2" finds 1.2, not 1.20.
_JOINED = re.compile(r"(?<![a-z0-9])[a-z0-9]+(?:[.:-][a-z0-9]+)+(?![a-z0-9])")
_PIECE = re.compile(r"[a-z0-9]+")
_VERSION_V = re.compile(r"v\d+")
JOINED_PIECES = 8  # a longer run (a hash, a long dotted path) is asked for by its words, as before


def joined(text: str, *, inner: bool = False) -> dict[str, str]:
    """The versions and ids in `text`: words of two pieces or more joined by `.`, `-` or `:`, at least one of
    them holding a digit (a hyphenated word, "read-only", is two words). Each as its pieces joined by a space
    (what search asks for: those pieces in a row) -> its spelling in the text, lower-cased. `inner` (a text
    searched, not a query): also every shorter run of two pieces or more in it holding a digit ("release-1.2"
    holds 1.2). A version written with a `v` is the version ("v2.4.1" gives "2 4 1"; a text searched holds
    both). Pure."""
    low = unicodedata.normalize("NFKC", text).lower() if not text.isascii() else text.lower()
    out: dict[str, str] = {}
    for m in _JOINED.finditer(low):
        spelled = m.group(0)
        pieces = _PIECE.findall(spelled)
        if len(pieces) > JOINED_PIECES or not any(c.isdigit() for c in spelled):
            continue
        runs = [(0, len(pieces))]
        if inner:
            runs = [(a, b) for a in range(len(pieces)) for b in range(a + 2, len(pieces) + 1)]
        for a, b in runs:
            run = pieces[a:b]
            if not any(c.isdigit() for p in run for c in p):
                continue
            if _VERSION_V.fullmatch(run[0]):
                if inner:
                    out.setdefault(" ".join(run), spelled)
                run = [run[0][1:], *run[1:]]
            out.setdefault(" ".join(run), spelled)
    return out


def joined_pattern(phrase: str) -> str:
    """A regex finding the version or id `phrase` (as `joined` gives it) in lower-cased raw text: its pieces
    joined by `.`, `-` or `:`, not inside a longer word; a version starting with a digit also written with a
    `v` ("2 4 1" finds v2.4.1). Pure."""
    pieces = phrase.split()
    head = "v?" if pieces[0][:1].isdigit() else ""
    return rf"(?<![a-z0-9]){head}" + "[.:-]".join(map(re.escape, pieces)) + r"(?![a-z0-9])"


def search_words(text: str) -> set[str]:
    """The words a searched text holds, as search compares a query's terms with it: `words`, and its versions
    and ids (`joined(..., inner=True)`)."""
    out = set(words(text))
    if any(c in text for c in ".:-"):
        out.update(joined(text, inner=True))
    return out


def index_tokens(*parts: str | None) -> str:
    """The string stored in `Node.tokens` for the full-text index."""
    joined = " ".join(part for part in parts if part)
    if joined.isascii():  # a word never spans the space between two parts
        return " ".join(_ASCII_TOKEN.findall(joined.lower()))
    return " ".join(w for part in parts if part for w in words(part))


# What separates the items of a list option (`--tags a,b`): the ASCII comma, and the full-width comma and the
# enumeration comma (、) a Chinese or Japanese IME types by default.
_LIST_SEPARATORS = re.compile(r"[,，、]")


def split_list(values: str | Iterable[str] | None) -> list[str]:
    """The items of one or more comma-separated values (`--tags 前端，部署、测试` too), stripped, empty ones dropped."""
    given = [values] if isinstance(values, str) else list(values or ())
    return [part.strip() for value in given for part in _LIST_SEPARATORS.split(value) if part.strip()]


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, never inside what shows as one character: an emoji sequence joined
    by U+200D, a flag's pair of regional indicators, a character with its combining marks or variation selector
    (QA10 #11: `kg list` left a dangling joiner, and a flag cut to one letter)."""
    if len(text) <= limit or text.isascii():
        return text[:limit]
    cut = limit
    while 0 < cut < len(text) and _joined(text[cut - 1], text[cut]):
        cut -= 1
    head = text[:cut]
    flags = len(head) - len(head.rstrip(_REGIONAL))
    return head[:-1] if flags % 2 else head


_REGIONAL = "".join(chr(c) for c in range(0x1F1E6, 0x1F200))


def _joined(before: str, after: str) -> bool:
    """Whether `after` belongs to the same shown character as `before`."""
    return (before == "\u200d" or after == "\u200d" or unicodedata.combining(after) > 0
            or "\ufe00" <= after <= "\ufe0f" or "\U0001f3fb" <= after <= "\U0001f3ff")


def columns(ch: str) -> int:
    """How many terminal columns a character takes: two for a wide one (CJK, full-width forms), else one."""
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def display_width(text: str) -> int:
    """The columns `text` takes in a terminal (`columns` of each character)."""
    return len(text) if text.isascii() else sum(map(columns, text))


def pad(text: str, width: int) -> str:
    """`text` padded with blanks to `width` columns (a table's column, with CJK characters taking two)."""
    return text + " " * max(0, width - display_width(text))


def has_cjk(text: str) -> bool:
    return bool(_regex("is_cjk").search(text))


def cjk_runs(text: str) -> list[str]:
    """The runs of CJK characters in `text`, as `words` reads them (NFKC, lower-cased) before cutting them in pairs."""
    return [t for t in _regex("token").findall(unicodedata.normalize("NFKC", text).lower())
            if _regex("is_cjk").match(t)]


def slugify(text: str, *, fallback: str = "", sep: str = "-", cjk: bool = True, limit: int | None = 60) -> str:
    """A file-safe name: NFKC, lower-cased, every run of anything but a-z, 0-9 (and CJK unless `cjk=False`)
    becomes one `sep`; at most `limit` characters (None: no cap). `git.push.auth` → `git-push-auth`. The one
    slugifier: skills and promoted rules' files (the defaults), `.learnings` titles, the tool segment of a
    failure's pattern key (`sep="_"`, ASCII, uncapped) and a derived key's area (ASCII, uncapped). Pure."""
    text = unicodedata.normalize("NFKC", clean(text, one_line=True)).lower()
    out = _regex("not_slug" if cjk else "not_ascii_slug").sub(sep, text).strip(sep)
    if limit is not None:
        out = out[:limit].strip(sep)
    return out or fallback


def stem(word: str) -> str:
    """A light English stemmer so "failed", "fails", "failing" meet: enough for overlap, not linguistics."""
    if not word.isascii() or not word.isalpha() or len(word) <= 3:
        return word
    w = word
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "shes", "ches", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if _DOUBLE.search(w):
                w = w[:-1]
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


def stem_prefix(word: str) -> str:
    """What a word and its stem share at the start ("retries"/"retry" → "retr"): a substring that finds every
    inflection in raw text, for search in files. Under 4 characters it would match inside unrelated words
    ("cat" in "locate"), so the word stays whole. Pure."""
    root = stem(word)
    n = 0
    while n < min(len(word), len(root)) and word[n] == root[n]:
        n += 1
    return word[:n] if n >= 4 else word


@cache
def cjk_stop_chars() -> frozenset[str]:
    """rules/words.toml's `cjk_stop_chars` as packaged: the CJK characters that are grammar, not topic ("的", "都")."""
    from kg.core.policy import packaged

    return frozenset(unicodedata.normalize("NFKC", c).strip() for c in packaged("words").get("cjk_stop_chars", []))


@cache
def stopwords() -> frozenset[str]:
    """The one stopword list, rules/words.toml as packaged (linking reads a workspace's override of it), with
    its `cjk_stop_chars` each alone and each CJK bigram of two of them ("不是", "我们"), the words CJK text is
    read as: grammar, as "the" is. Search kept "的 了 是" as three terms and found 是 inside 不是 (a QA pass),
    where "the a of" is refused as common words only."""
    from kg.core.policy import packaged

    data = packaged("words")
    chars = [unicodedata.normalize("NFKC", c).strip() for c in data.get("cjk_stop_chars", [])]
    return frozenset([unicodedata.normalize("NFKC", w).lower().strip() for w in data["stopwords"]]
                     + chars + [a + b for a in chars for b in chars])


def simplified(text: str) -> str:
    """`text` with each traditional Chinese character written as its simplified form (rules/hanzi.toml, from
    OpenCC), for matching only: reflect's phrases and the skill triggers read "記住" as "记住". One character for
    one, so positions in the text stay where they were."""
    return text if text.isascii() else text.translate(_hant())


@cache
def _hant() -> dict[int, str]:
    """rules/hanzi.toml's traditional character -> simplified one, as a `str.translate` table (read once)."""
    from kg.core.policy import packaged

    pairs = "".join(packaged("hanzi")["fold"]["pairs"].split())
    return {ord(pairs[i]): pairs[i + 1] for i in range(0, len(pairs) - 1, 2)}
