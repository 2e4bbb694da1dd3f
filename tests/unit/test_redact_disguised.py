r"""Secrets a red team found stored whole (note 48): JSON inside a JSON string (`curl -d "{\"password\":\"…\"}"`, a
secret manager's `"SecretString"`, a URL written `postgres:\/\/…`), a space other than " " after the label (a no-break
space, the ideographic space after 密码：), and a token broken by a control character or written in another Unicode
form that `clean` only mends after redaction (DEL inside a token, a Kelvin sign for K, a decomposed ñ in a label).
Redaction reads the text as `clean` will store it and JSON's escaped quotes as they would be unescaped; what holds
no secret comes back as given."""

from __future__ import annotations

import pytest

from kg.core.text import clean, visible
from kg.redaction import escaped
from kg.redaction.redact import load_default

SECRET = "Tr4inSet9QxZ" + "Lm2Vd8"
GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5r" + "sT7vW9xY1z"


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("text", [
    'curl -X POST https://api.example.com/login -d "{\\"email\\":\\"a@b.c\\",\\"password\\":\\"%s\\"}"',
    '{"body": "{\\"api_key\\": \\"%s\\", \\"n\\": 2}"}',
    '"{\\\\\\"client_secret\\\\\\":\\\\\\"%s\\\\\\"}"',  # escaped twice
    '"SecretString": "{\\"username\\":\\"app\\",\\"password\\":\\"%s\\"}"',
    'DATABASE_URL is postgres:\\/\\/app:%s@db.internal:5432\\/prod',
    "Password:\u00a0%s", "the password is\u00a0%s", "Mot de passe\u202f: %s", "密码：\u3000%s", "password:\u2003%s",
    "contrasen\u0303a: %s",
])
def test_a_secret_in_escaped_json_or_after_another_space_is_redacted(text):
    out = redact(text % SECRET)
    assert SECRET[:8] not in out and "[REDACTED:" in out, out


def test_what_is_around_an_escaped_secret_is_kept_as_written():
    text = f'curl -d "{{\\"user\\":\\"ann\\",\\"password\\":\\"{SECRET}\\"}}" https://x.test/login'
    out = redact(text)
    assert out.startswith('curl -d "{\\"user\\":\\"ann\\",\\"password\\":\\"[REDACTED:')
    assert out.endswith(']\\"}" https://x.test/login'), out


@pytest.mark.parametrize("text, secret", [
    (f"token {GHP[:20]}\x7f{GHP[20:]}", GHP),  # `clean` drops the DEL after: the token was stored whole
    ("key s\u212a_live_" + "51HxQwErTyUiOpAsDfGhJkL", "51HxQwErTyUiOpAsDfGhJkL"),  # NFC: the Kelvin sign is a K
])
def test_a_token_clean_would_mend_is_redacted_before(text, secret):
    out = clean(redact(text))
    assert secret[:10] not in out and secret[-8:] not in out, out


@pytest.mark.parametrize("text", [
    'log {\\"level\\":\\"info\\",\\"msg\\":\\"started on port 8080\\"} and a path C:\\/tmp',
    "Prix\u00a0: 12\u202f€, 密码规则：\u3000至少八位",  # a label with no value that is a secret
    "emoji 👍\ufe0f and a word joiner\u2060 and a Persian word می\u200cکنیم",
])
def test_text_without_a_secret_comes_back_as_given(text):
    assert load_default().redact(text).text == text


def test_visible_reads_as_clean_stores_and_keeps_what_redaction_reads_past():
    assert visible("a\u00a0b\u3000c\x7fd\u212a") == "a b cdK"
    assert visible("line\r\n\tcol \x1b[32mgreen\x1b[0m") == "line\r\n\tcol \x1b[32mgreen\x1b[0m"
    assert visible("ascii only\x00") == "ascii only"


def test_only_keys_named_for_a_secret_and_escaped_urls_are_read_unescaped():
    redactor = load_default()
    text = ('{\\"level\\":\\"info\\"} ' * 50 + '{\\"db_password\\": \\"x\\"} ' + '{\\"n\\":1} ' * 50
            + "postgres:\\/\\/a:b@h")
    found = escaped.windows(text, redactor._starts(text))
    assert len(found) == 2, [view.text for _, view in found]
    assert '"db_password": "x"' in found[0][1].text and "postgres://a:b@h" in found[1][1].text
    lo, view = found[0]
    at = view.text.index('"x"') + 1
    a, b = view.span(at, at + 1)
    assert text[lo + a:lo + b] == "x"
