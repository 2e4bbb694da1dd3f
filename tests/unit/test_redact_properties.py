"""Property tests of the redactor (hypothesis): whatever the text, redaction never raises and leaves plain word
lists alone. Without hypothesis (in the `test` extra) one test says so: skipped, or failed under CI=true."""

from __future__ import annotations

from kg.redaction.redact import load_default

try:
    import hypothesis
except ImportError:
    hypothesis = None

if hypothesis is None:
    def test_the_property_tests_need_hypothesis(need) -> None:
        need("hypothesis")
else:
    st = hypothesis.strategies

    # no deadline: a property of the output, not a timed assertion (the first call loads the rules; the machine
    # may be loaded)
    @hypothesis.settings(deadline=None)
    @hypothesis.given(st.text(max_size=300))
    def test_never_raises(text: str) -> None:
        result = load_default().redact(text)
        assert isinstance(result.text, str)

    @hypothesis.settings(deadline=None)
    @hypothesis.given(st.lists(st.from_regex(r"[A-Za-z]{1,12}", fullmatch=True), max_size=60))
    def test_plain_word_lists_are_never_lengthened(words: list[str]) -> None:
        text = " ".join(words)
        assert load_default().redact(text).text == text
