"""Text normalisation shared by the write path, linking and search.

Kùzu's full-text index splits on whitespace, so Chinese (and Japanese) text would be one giant token. We index
a `tokens` field instead: Latin words lower-cased, and every run of CJK characters as overlapping character
bigrams (a lone character stays a unigram). The same function tokenises queries, so both sides agree.
"""

from __future__ import annotations

import re
import unicodedata

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff]")
_CONTROL_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff]")
# The one CJK range (a regex character-class body): kana, CJK ideographs (extension A, unified, compatibility)
# and Hangul syllables. Tokens, slugs and `has_cjk` all use it.
CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK = CJK
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
_IS_CJK = re.compile(rf"[{_CJK}]")
_NOT_SLUG = re.compile(rf"[^a-z0-9{_CJK}]+")
_SPACES = re.compile(r"\s+")


def clean(text: str, *, one_line: bool = False) -> str:
    """Drop control characters (keeping newlines and tabs unless `one_line`), NFC-normalise, strip."""
    text = unicodedata.normalize("NFC", text)
    if one_line:
        return _SPACES.sub(" ", _CONTROL_ONE_LINE.sub(" ", text)).strip()
    return _CONTROL.sub("", text).strip()


def words(text: str) -> list[str]:
    """Lower-cased tokens: Latin words, and CJK runs as character bigrams."""
    if text.isascii():  # NFKC leaves ASCII as it is, and it holds no CJK: the common case in one call
        return _TOKEN.findall(text.lower())
    out: list[str] = []
    for match in _TOKEN.finditer(unicodedata.normalize("NFKC", text).lower()):
        token = match.group(0)
        if _IS_CJK.match(token):
            if len(token) == 1:
                out.append(token)
            else:
                out.extend(token[i : i + 2] for i in range(len(token) - 1))
        else:
            out.append(token)
    return out


def index_tokens(*parts: str | None) -> str:
    """The string stored in `Node.tokens` for the full-text index."""
    return " ".join(w for part in parts if part for w in words(part))


def has_cjk(text: str) -> bool:
    return bool(_IS_CJK.search(text))


def slugify(text: str, *, fallback: str = "") -> str:
    """A file-safe kebab-case name (skills, promoted rules' files): NFKC, lower-cased, every run of anything but
    a-z, 0-9 and CJK becomes one '-'; at most 60 characters. `git.push.auth` → `git-push-auth`. Pure."""
    text = unicodedata.normalize("NFKC", clean(text, one_line=True)).lower()
    return _NOT_SLUG.sub("-", text).strip("-")[:60].strip("-") or fallback
