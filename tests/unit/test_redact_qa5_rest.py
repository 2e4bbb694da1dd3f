"""QA qa5's last formats that reached storage, each fixed by a general rule rather than a provider's name, and the
near misses each must keep. Values are fake, made to the published shapes.
- A key as the only argument of a class whose name says nothing of a client (`Virustotal("<64 hex>")`,
  `Shodan("<32 letters and digits>")`): an id's, a hash's, a path's or a version's class keeps its argument."""

from __future__ import annotations

import pytest

from kg.redaction.redact import load_default

HEX64 = "df50e6b2ad4adc7e897a1f86293f9ff10e122a075f18a7bf45850efc41fc9326"
ALNUM32 = "Xk9mP2vQ7rT4wY8zA3bC6dE1fG5hJ0kL"


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("text, secret", [
    (f'vt = virustotal_python.Virustotal("{HEX64}")', HEX64),
    (f'api = shodan.Shodan("{ALNUM32}")', ALNUM32),
    (f"const c = new Foo('{ALNUM32}');", ALNUM32),
    (f'client = Vt.new("{HEX64}")', HEX64),
])
def test_a_key_as_a_class_s_only_argument_is_redacted(text, secret):
    out = redact(text)
    assert secret not in out and secret[:12] not in out, out
    assert redact(out) == out


@pytest.mark.parametrize("text", [
    f'uuid.UUID("{HEX64[:32]}")', 'Path("/usr/local/lib")', 'Version("1.2.3")', f'sha256("{HEX64}")',
    f'Hash("{HEX64}")', f'Commit("{HEX64[:40]}")', f'ObjectId("{HEX64[:24]}")', f'PublicKey("{ALNUM32}")',
    f'HexBytes("{HEX64}")', f'Digest("{HEX64}")', f'TxHash("{HEX64}")', f'PlayerId("{ALNUM32}")',
    f'assert_eq("{HEX64}")', 'Text("HelloWorld")', 'Component("UserProfileCard2024")',
])
def test_an_id_a_hash_a_path_or_a_version_as_a_class_s_argument_is_kept(text):
    assert redact(text) == text
