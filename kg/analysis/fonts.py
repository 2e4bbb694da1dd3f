"""Fonts for text in any script in kg's drawings, through matplotlib's font fallback.

matplotlib draws with DejaVu Sans, which has no Chinese, Japanese or Korean glyphs: a Chinese label becomes a
row of empty boxes and a "Glyph missing" warning per character. `readable(fig)` looks at the characters a
figure holds, finds installed fonts that have the ones the default font lacks (checking each font's own
character map, so any CJK font works: Noto CJK, Source Han, WenQuanYi, Droid Sans Fallback ...), and gives
every text of the figure the family list `[default, fallback...]`, which matplotlib draws glyph by glyph from
the first font that has it (matplotlib ≥ 3.6). When no installed font has them, it warns once, in one line,
with the package to install.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["MissingGlyphsWarning", "fallback_families", "readable"]

INSTALL_HINT = "install a font that has them, e.g. `apt-get install fonts-noto-cjk` (Debian/Ubuntu)"


class MissingGlyphsWarning(UserWarning):
    """No installed font can draw some characters of a drawing."""


@functools.cache
def _charmap(path: str) -> frozenset[int]:
    from matplotlib.ft2font import FT2Font

    try:
        return frozenset(FT2Font(path).get_charmap())
    except (OSError, RuntimeError, ValueError):
        return frozenset()


def _entries(rescan: bool) -> list[Any]:
    """Installed fonts, one entry per file, regular weights first and names that say CJK before others."""
    from matplotlib import font_manager as fm

    if rescan:  # fonts installed after matplotlib built its cache: add them for this process
        known = {e.fname for e in fm.fontManager.ttflist}
        for path in fm.findSystemFonts():
            if path not in known:
                try:
                    fm.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    pass
    seen: dict[str, Any] = {}
    for e in fm.fontManager.ttflist:
        if not e.name.startswith("Last Resort"):  # matplotlib's own: a box for every character, not a glyph
            seen.setdefault(e.fname, e)
    return sorted(seen.values(), key=lambda e: ("CJK" not in e.name and "Han" not in e.name,
                                                 e.weight not in (400, "normal", "regular"), "Serif" in e.name,
                                                 "Mono" in e.name, e.name))


@functools.cache
def _fallbacks(missing: frozenset[int]) -> tuple[tuple[str, ...], frozenset[int]]:
    """Families that cover as many of `missing` as installed fonts can, and what is still not covered."""
    chosen: list[str] = []
    left = set(missing)
    for rescan in (False, True):
        for entry in _entries(rescan):
            if not left:
                break
            covered = left & _charmap(entry.fname)
            if covered and entry.name not in chosen:
                chosen.append(entry.name)
                left -= covered
        if not left:
            break
    return tuple(chosen), frozenset(left)


def matplotlib_home() -> None:
    """Before kg first imports matplotlib: matplotlib keeps its font list under ~/.cache/matplotlib and makes
    ~/.config/matplotlib, and kg writes nothing outside the workspace unless told to. Where the user has no
    matplotlib folder of their own yet (nor MPLCONFIGDIR), it keeps them in the workspace's cache folder
    (memory/.kg/cache/matplotlib); a process that imported matplotlib already (a notebook) is left as it is."""
    if "MPLCONFIGDIR" in os.environ or "matplotlib" in sys.modules:
        return
    from kg.redaction.cache import cache_dir

    where = cache_dir()
    if where is None:
        return
    home = Path.home()
    own = (Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache") / "matplotlib",
           Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "matplotlib", home / ".matplotlib")
    if not any(folder.is_dir() for folder in own):
        os.environ["MPLCONFIGDIR"] = str(where / "matplotlib")


def fallback_families(texts: Iterable[str]) -> tuple[list[str], str | None]:
    """The font families for these texts, default first, and a one-line hint when some characters have no
    installed font (None when all can be drawn)."""
    matplotlib_home()
    from matplotlib import font_manager as fm

    default = fm.FontProperties(family=["sans-serif"])
    base = fm.findfont(default)
    chars = {ord(ch) for text in texts for ch in text if ord(ch) > 0x7F and not ch.isspace()}
    missing = frozenset(chars - _charmap(base))
    family = fm.get_font(base).family_name
    if not missing:
        return [family], None
    extra, left = _fallbacks(missing)
    hint = None
    if left:
        sample = "".join(chr(c) for c in sorted(left)[:8])
        hint = (f"no installed font has glyphs for {sample!r}"
                f"{f' and {len(left) - 8} more characters' if len(left) > 8 else ''}: they are drawn as boxes; "
                + INSTALL_HINT)
    return [family, *extra], hint


def readable(fig: Any) -> str | None:
    """Give every text of the figure fonts that can draw it; warn once (MissingGlyphsWarning) when none can.
    Returns the hint, or None."""
    from matplotlib.text import Text

    texts = [t for t in fig.findobj(Text) if t.get_text()]
    families, hint = fallback_families(t.get_text() for t in texts)
    if len(families) > 1:
        for t in texts:
            t.set_fontfamily(families)
    fig._kg_font_hint = hint  # noqa: SLF001 - read by kg.analysis.drawing.save to quieten matplotlib's per-glyph warnings
    if hint:
        warnings.warn(hint, MissingGlyphsWarning, stacklevel=3)
    return hint
