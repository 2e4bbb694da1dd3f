"""One written form for words that people write several ways, so a signal's pattern names each word once.

Italian, French, German, Czech, Portuguese and Spanish users type accents or leave them out ("perché" and "perche",
"déjà" and "deja", "läuft" and "lauft"), and Italians often write a final accent as an apostrophe ("perche'", "e'",
"piu'"); Russian writers use "ё" or "е" for the same letter ("ещё", "еще"). Both the patterns of rules/reflect.toml
[signals] and the text they read are folded the same way (kg.reflect.rules compiles the folded pattern,
kg.reflect.signals folds what it reads), so a rule written with or without accents matches both spellings. Only
marks over Latin letters and the diaeresis of Cyrillic "е" go: Cyrillic "й", Japanese kana and Korean syllables keep
what makes them letters (a mark over one is another letter, not another spelling). Traditional Chinese characters
are written as their simplified forms (rules/hanzi.toml, from OpenCC): "記住", "說過" and "錯" read as "记住",
"说过" and "错" do, so one phrase list serves Taiwan's and Hong Kong's users too (QA10 #18: 1 of 4 of their
corrections found, 3 of 4 of the same sentences in simplified).
"""

from __future__ import annotations

import re
import unicodedata

from kg.core.text import simplified

# A combining mark over a Latin letter (after NFD, "é" is "e" and U+0301), and the diaeresis of Cyrillic е / Е (ё).
_LATIN_MARK = re.compile(r"(?<=[A-Za-z])[\u0300-\u036f]+|(?<=[\u0435\u0415])\u0308")
# An accent typed as an apostrophe after a word's last vowel ("perche'", "e'", "gia'"), not a closing quote: the word
# does not open with one ("'force'" stays quoted) and no letter follows (not "l'ho", "c'est", "don't").
_APOSTROPHE_ACCENT = re.compile(r"(?<![\w'])([^\W\d_]*[aeiouAEIOU])'(?![^\W\d_])")


def fold(text: str) -> str:
    """The text with accents over Latin letters dropped, ё written е, traditional Chinese characters written
    simplified, and an apostrophe that stands for a final accent dropped; everything else as it was."""
    if not text.isascii():
        text = simplified(unicodedata.normalize("NFC", _LATIN_MARK.sub("", unicodedata.normalize("NFD", text))))
    return _APOSTROPHE_ACCENT.sub(r"\1", text) if "'" in text else text

