"""The scan's own policy is data in rules/secrets.toml, not constants in kg/redaction: which rules are token formats
(`token_priority`: read again past glue and joined over lines), what glue is (`glue`), and how much of a decoding must
be printable for it to be text (`printable_share`). An override that changes one changes what is redacted, a bad value
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
