"""`clean` and `index_tokens` answer printable ASCII without the regex passes (issue 22: the import calls them
about ten times an entry). The short cut must give what the general path gives, on any text."""

from __future__ import annotations

import re
import string
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from kg.core.text import clean, index_tokens, words

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u2028-\u202e\ufeff]")
_CONTROL_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b\u200e\u200f\u2028-\u202e\ufeff]")
_JOINER = re.compile(r"(?<![^\x00-\x7f])[\u200c\u200d]|[\u200c\u200d](?![^\x00-\x7f])")


def general_clean(text: str, one_line: bool) -> str:
    text = unicodedata.normalize("NFC", text)
    if one_line:
        return _JOINER.sub("", re.sub(r"\s+", " ", _CONTROL_ONE_LINE.sub(" ", text))).strip()
    return _JOINER.sub("", _CONTROL.sub("", text)).strip()


ascii_text = st.text(alphabet=string.printable + "\x00\x07\x1f\x7f", max_size=80)
joiner_text = st.text(alphabet="ab \u0645\u06cc\U0001f468\u200b\u200c\u200d\u200e", max_size=20)
any_text = st.one_of(ascii_text, joiner_text, st.text(max_size=40))


@given(any_text, st.booleans())
def test_clean_is_the_general_path(text, one_line):
    assert clean(text, one_line=one_line) == general_clean(text, one_line)


@given(st.lists(st.one_of(st.none(), any_text), max_size=5))
def test_index_tokens_is_every_parts_words(parts):
    assert index_tokens(*parts) == " ".join(w for p in parts if p for w in words(p))
