"""The scan's own policy is data in rules/secrets.toml, not constants in kg/redaction: which rules are token formats
(`token_priority`: read again past glue and joined over lines), what glue is (`glue`), how much of a decoding must
be printable for it to be text (`printable_share`), and how far a token cut over lines is joined and what a piece of a
key or a word is (`[wrapped]`). An override that changes one changes what is redacted, a bad value
is refused with the file and the key named, and the packaged values come through the rules cache. Values are fake."""

from __future__ import annotations

import base64

import pytest

from kg.redaction.redact import Redactor, load_default
from kg.redaction.rules import SecretRulesError, packaged

AWS = "AKIAQWERTYUIOPASDFGH"
GHP = "ghp_m2QFxRDKbalaDQylFYcjiIECcbqzXlZB81Yr"
GLUED = '{"Error":{"Message":"The security token is invalid.\\n' + AWS + '"}}'


def redactor(**changed) -> Redactor:
    return Redactor.from_mapping({**packaged("secrets.toml"), **changed}, validate=False)


def test_the_packaged_settings_come_through_the_cache_as_the_file_says():
    data = packaged("secrets.toml")
    scan = load_default().settings
    assert (scan.token_priority, scan.glue, scan.printable_share) == (
        data["token_priority"], data["glue"], data["printable_share"])


def test_which_rules_read_past_glue_and_what_glue_is_are_the_rules_to_say():
    assert AWS not in redactor().redact(GLUED).text
    assert AWS in redactor(token_priority=10).redact(GLUED).text  # kg's AWS rule (15) is then no token format
    assert AWS in redactor(glue="&quot;").redact(GLUED).text  # a JSON escape is then no glue


def test_how_much_of_a_decoding_must_be_printable_is_the_rules_to_say():
    encoded = base64.b64encode(f"\x01\x02token: {GHP} in a config".encode()).decode()
    assert GHP not in load_default().redact(f"echo {encoded}").text
    assert redactor(printable_share=0.99).redact(f"echo {encoded}").text == f"echo {encoded}"


@pytest.mark.parametrize("changed, named", [
    ({"token_priority": "20"}, "token_priority"), ({"glue": "("}, "glue"), ({"glue": ""}, "glue"),
    ({"printable_share": 2}, "printable_share"), ({"printable_share": 0}, "printable_share"),
])
def test_a_bad_setting_is_refused_with_its_name(changed, named):
    with pytest.raises(SecretRulesError, match=named):
        redactor(**changed)


# --- [wrapped]: how a token cut over lines is joined (kg.redaction.wrapped) -------------------------------------------

WRAPPED = f"export GITHUB_TOKEN={GHP[:22]}\\\n{GHP[22:]}"  # cut after a shell's `\`
AFTER = f"GITHUB_TOKEN={GHP}\nWindows11Pro\n"  # a word alone after a whole token


def wrapped(**changed) -> Redactor:
    return redactor(wrapped={**packaged("secrets.toml")["wrapped"], **changed})


def test_the_packaged_wrapped_limits_come_through_the_cache_as_the_file_says():
    wrap = load_default().settings.wrapped
    assert wrap.dump() == tuple(packaged("secrets.toml")["wrapped"].values())


def test_how_a_token_cut_over_lines_is_joined_is_the_rules_to_say():
    assert GHP[22:] not in redactor().redact(WRAPPED).text
    three = f"token:\n  {GHP[:14]}\n  {GHP[14:28]}\n  {GHP[28:]}"  # three pieces
    assert GHP[28:] not in redactor().redact(three).text
    assert GHP[28:] in wrapped(pieces=1).redact(three).text
    assert GHP[22:] in wrapped(longest=16).redact(WRAPPED).text  # the first piece is read no further than 16
    assert GHP[22:] in wrapped(key_min_chars=40).redact(WRAPPED).text  # the first piece is then no key's
    assert "Windows11Pro" in redactor().redact(AFTER).text
    assert "Windows11Pro" not in wrapped(word_vowels="q").redact(AFTER).text  # no part then holds a vowel
    assert "Windows11Pro" in wrapped(key_case_switches=3, key_digit_switches=5, word_vowels="q").redact(AFTER).text


@pytest.mark.parametrize("changed, named", [
    ({"pieces": 0}, "pieces"), ({"behind": -1}, "behind"), ({"longest": "300"}, "longest"),
    ({"key_min_chars": True}, "key_min_chars"), ({"word_part": "("}, "word_part"),
    ({"word_part": "[a-z]*"}, "word_part"), ({"word_vowels": ""}, "word_vowels"), ({"typo": 1}, "typo"),
])
def test_a_bad_wrapped_limit_is_refused_with_its_name(changed, named):
    with pytest.raises(SecretRulesError, match=named):
        wrapped(**changed)
