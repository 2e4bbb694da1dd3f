"""A secret found once is a secret everywhere (the QA pass of 2026-12-03): every other occurrence of the value in the
same text, or in the other texts of one group (an entry's fields, a tool call's input and its result), is redacted
too; passwords said in prose and an AWS secret key beside its access key id are found by the rules themselves."""

from __future__ import annotations

import pytest

from kg.redaction.redact import load_default

PW = "Hx7pQ2mZ9vL4"


def redact(text: str) -> str:
    return load_default().redact(text).text


def test_every_occurrence_of_a_found_secret_is_redacted_in_any_case_and_inside_words():
    out = redact(f"PGPASSWORD={PW} works; see fix.{PW.lower()}-password and {PW.upper()}")
    assert PW.lower() not in out.lower(), out
    assert out.startswith("PGPASSWORD=[REDACTED:env_secret] works; see fix.[REDACTED:env_secret]-password")


def test_a_short_secret_is_not_chased_through_the_text():
    # a -u user:pw's two-letter password would take every "pw" of the text with it
    out = redact("curl -u admin:pw https://x.example.com; the pw field stays")
    assert out == "curl -u admin:[REDACTED:cli_credential] https://x.example.com; the pw field stays"


def test_a_group_shares_what_any_of_its_texts_revealed():
    red = load_default()
    command, error = red.redact_group([f"curl -u admin:{PW} https://api.example.com",
                                       f"401 Unauthorized: admin with {PW.lower()} rejected"])
    assert command.text == "curl -u admin:[REDACTED:cli_credential] https://api.example.com"
    assert error.text == "401 Unauthorized: admin with [REDACTED:cli_credential] rejected"
    assert error.kinds == ("cli_credential",)


def test_redact_many_is_one_group_and_a_pattern_key_loses_the_value_too():
    fields, kinds = load_default().redact_many({"summary": f"export PGPASSWORD={PW}", "details": f"it was {PW}",
                                                "pattern_key": f"fix.{PW.lower()}-pgpassword", "tags": [PW]})
    assert PW.lower() not in str(fields).lower(), fields
    assert kinds == ("env_secret",)


@pytest.mark.parametrize("text", [
    f"the staging password is {PW}", f"the password {PW} on the command line", f"password: {PW}",
    f"passwd={PW}", f"pwd {PW}", f"the password was set to {PW}.", f"Password is '{PW}'",
    "a senha é Abc12345", "la contraseña es Abc12345.", "le mot de passe est Tr0ub4dor&3",
    "das Passwort ist Geheim123", "the password is p@ssword", "the password is hunter22",
])
def test_a_password_said_in_prose_is_redacted(text):
    out = redact(text)
    assert "[REDACTED:" in out and not any(s in out for s in (PW, "Abc12345", "Tr0ub4dor", "Geheim123",
                                                             "p@ssword", "hunter22")), out


@pytest.mark.parametrize("text", [
    "the password is wrong", "password reset flow", "the password-protected zip", "run pwd and ls",
    "the password of user2 expired", "password has 12 chars", "the password v1.2.3 release",
    "type the password again.", "the password is 1234", "cd $(pwd)/build2", "the passwords are rotated weekly",
    "pwd /home/user1/project", "the password field in step 3", "a password prompt appears",
])
def test_prose_about_passwords_is_left_alone(text):
    assert redact(text) == text


def test_an_aws_secret_key_beside_its_access_key_id_is_redacted_without_a_label():
    out = redact("aws creds AKIA4HK7QWERTYUIOP2Z / Zx8kLq2Wm9Vt4Rb7Nc1Yp3Hd6Gf0Js5Ae2Ku8Io4")
    assert out == "aws creds [REDACTED:aws_access_key] / [REDACTED:aws_secret_key]"


@pytest.mark.parametrize("text", [
    "AKIA4HK7QWERTYUIOP2Z commit 3f5e8c1b9a7d6e5f4c3b2a1908f7e6d5c4b3a291",  # a git SHA beside it
    "Zx8kLq2Wm9Vt4Rb7Nc1Yp3Hd6Gf0Js5Ae2Ku8Io4 with no key id on its line",
    "AKIA4HK7QWERTYUIOP2Z\nZx8kLq2Wm9Vt4Rb7Nc1Yp3Hd6Gf0Js5Ae2Ku8Io4",  # another line: not this rule's
])
def test_a_40_character_value_needs_a_key_id_on_its_line(text):
    out = redact(text)
    assert "aws_secret_key" not in out, out


def test_how_long_a_secret_must_be_to_be_chased_is_rules_data():
    from kg.redaction.redact import Redactor
    from kg.redaction.rules import SecretRulesError

    rule = {"kind": "env_secret", "pattern": "PGPASSWORD=(?P<s>\\S+)", "group": "s", "keywords": ["pgpassword"]}
    text = f"PGPASSWORD={PW} and again {PW}"
    assert Redactor.from_mapping({"rule": [rule]}).redact(text).text.count("[REDACTED") == 2
    assert Redactor.from_mapping({"rule": [rule], "echo_min_chars": 13}).redact(text).text.endswith(PW)
    assert load_default().echo_min == 6  # rules/secrets.toml's echo_min_chars
    with pytest.raises(SecretRulesError, match="echo_min_chars"):
        Redactor.from_mapping({"rule": [rule], "echo_min_chars": 0})
