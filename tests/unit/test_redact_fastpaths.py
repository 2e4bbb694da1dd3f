"""The scan's quick tests and skips (w-fspeed): each lets the scan pass over what it proves no rule can take, so each
is checked here against the slow way it replaced. A quick test that wrongly said "nothing here" would keep a secret:
these tests fail then.

- `may_decode`: a run `decoded` reads as no text whatever it holds is not decoded (most runs of a transcript).
- the encoded_secret rule's pattern skips, inside the regex engine, what is no run of 24 base64 characters: it finds
  the runs the plain run `[A-Za-z0-9+/_-]{24,8192}={0,2}` found, in the same parts.
- a column rule (a Markdown table's password column) is tried only in a text with a `|`.
- `kg.redaction.prefixes._marked_line` finds a prefixed line by searching for a newline, where `(?m)^` was tried at
  every character: the same lines.
"""

from __future__ import annotations

import base64
import re
import sys
from pathlib import Path

import pytest

from kg.redaction.prefixes import _marked_line, compiled
from kg.redaction.redact import load_default
from kg.redaction.textchecks import decoded, may_decode

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from redact_cases import provider_cases  # noqa: E402  (the bench's generated secrets of every provider rule)

_PLAIN_RUN = re.compile(r"[A-Za-z0-9+/_-]{24,8192}={0,2}")  # the encoded_secret rule's pattern before


def _encoded_rule():
    redactor = load_default()
    (rule,) = [redactor.rules[i] for i in redactor._plan.bare if redactor.rules[i].decode]
    return rule


def _runs(text: str) -> list[tuple[int, int]]:
    rule = _encoded_rule()
    return [m.span(rule.group) for m in rule.pattern.finditer(text) if m.group(rule.group)]


def _share() -> float:
    return load_default()._scan_settings.printable_share


def _texts_with_a_secret() -> list[str]:
    """The bench's provider cases whose secret the rules find in the plain text (a few hundred, one per shape)."""
    redactor = load_default()
    seen: set[str] = set()
    out = []
    for _, text, secret in provider_cases(redactor):
        if secret and secret not in redactor.redact(text).text and text not in seen:
            seen.add(text)
            out.append(text)
    return out


def test_every_providers_secret_in_base64_is_still_redacted():
    """Every generated secret the rules find, in each of its shapes, given base64-encoded (standard and URL-safe,
    unpadded) after `echo`: the encoded run is redacted, so neither the new pattern nor `may_decode` skipped it."""
    texts = _texts_with_a_secret()
    assert len(texts) > 500
    redactor = load_default()
    kept = []
    for text in texts:
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            run = encode(text.encode()).decode().rstrip("=" if encode is base64.urlsafe_b64encode else "")
            if run in redactor.redact(f"echo {run} | base64 -d").text:
                kept.append(text)
    assert kept == []


def test_may_decode_never_refuses_what_decoded_reads():
    """Runs of every kind the scan meets: base64 of text (both alphabets, padded or not), hex of text, one-case words,
    paths; `may_decode` says False only where `decoded` gives None."""
    samples = ["deadbeef" * 4, "DEADBEEF" * 4, "0123456789" * 3, "abc" * 9, "ABC" * 9, "node_modules/some-package/x"]
    for text in ["hello world, this is text", "API_KEY=sk-live-1234567890abcdef", "ümlaut text with ß", "x" * 40]:
        raw = text.encode()
        samples += [base64.b64encode(raw).decode(), base64.b64encode(raw).decode().rstrip("="),
                    base64.urlsafe_b64encode(raw).decode(), raw.hex(), raw.hex().upper(),
                    base64.b64encode(raw).decode().lower(), base64.b64encode(raw).decode().upper()]
    for value in samples:
        assert may_decode(value) or decoded(value, _share()) is None, value
    assert sum(1 for value in samples if decoded(value, _share()) is not None) >= 12


@pytest.mark.parametrize("text", [
    "",
    "a" * 23,
    "a" * 24,
    "x " + "aB3+/_-" * 5 + "== tail",
    "aB3" * 8 + "=" + "cD4" * 8,
    "short words only, no run in them at all " * 40,
    "Zm9v" * 5000 + " then " + "YmFy" * 10,  # a run longer than 8192: read in parts, as before
    "Zm9v" * 2048 + "abc",  # the part after the first 8192 is shorter than 24
    "=" * 30 + "Q" * 30 + "=" * 3,
    "\n".join(["word"] * 100 + ["QUtJQTRMVE0wUThQNVcwN05UOFY="] + ["tail"] * 100),
])
def test_the_encoded_rule_finds_the_runs_the_plain_run_found(text):
    assert _runs(text) == [m.span() for m in _PLAIN_RUN.finditer(text)]


def test_a_prefixed_line_is_found_where_a_search_from_each_line_start_finds_it():
    prefix, marked, after_newline, _ = compiled(load_default().line_prefix)
    lines = ["+x=1", "-y", " z", "12:a", "12-b", "> q", "plain", "", "\t3\tcat", "     7→read", "- item", "  ", "---",
             "src/a.py:3:k=v", "-----BEGIN", "++c", " -d"]
    text = "\n".join(lines * 3)
    for at in range(len(text) + 1):
        hit = marked.search(text, at)
        assert _marked_line(text, at, marked, after_newline) == (-1 if hit is None else hit.start()), at


try:
    import hypothesis
except ImportError:  # the `test` extra has it; test_redact_properties.py says so when it is missing
    hypothesis = None

if hypothesis is not None:
    st = hypothesis.strategies

    @hypothesis.settings(deadline=None, max_examples=300)
    @hypothesis.given(st.text(alphabet="aZ9+/_-=. \n", max_size=400))
    def test_any_text_of_runs_and_breaks_gives_the_same_runs(text):
        assert _runs(text) == [m.span() for m in _PLAIN_RUN.finditer(text)]

    @hypothesis.settings(deadline=None, max_examples=300)
    @hypothesis.given(st.text(alphabet="aB09+/_-=", min_size=24, max_size=120))
    def test_any_run_may_decode_when_decoded_reads_it(value):
        assert may_decode(value) or decoded(value, _share()) is None

    @hypothesis.settings(deadline=None, max_examples=300)
    @hypothesis.given(st.text(alphabet="+- :>\t12ab\n→", max_size=200), st.integers(0, 200))
    def test_any_text_has_its_prefixed_lines_found_alike(text, at):
        _, marked, after_newline, _ = compiled(load_default().line_prefix)
        at = min(at, len(text))
        hit = marked.search(text, at)
        assert _marked_line(text, at, marked, after_newline) == (-1 if hit is None else hit.start())


def test_a_column_rule_is_skipped_only_in_a_text_without_a_pipe():
    """A text without `|` holds no table, so the column rules are not tried there (a `kg log` naming a token then paid
    3 ms for the header regex and the columns module); a table, with or without outer pipes, still loses its column."""
    redactor = load_default()
    assert redactor.redact("Password | notes\n--- | ---\nS3cretVal | first login").text.startswith(
        "Password | notes\n--- | ---\n[REDACTED:")
    assert "Qw3rtyPass" not in redactor.redact("| user | password |\n|---|---|\n| root | Qw3rtyPass |").text
