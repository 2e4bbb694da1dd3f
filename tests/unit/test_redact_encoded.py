"""Secrets left after QA5 (note 38): a token in base64 (`echo <b64> | base64 -d`, an encoded .env), a key a CLI's
login takes as a positional argument (`wandb login`, `shodan init`), a key given as a client's first argument, a
wallet's seed phrase, and Hugging Face tokens with digits. And what must survive: encodings of text without a
secret, hashes, ids, images, paths, and the arguments of logins and inits that are no key."""

from __future__ import annotations

import base64

import pytest

from kg.redaction.redact import load_default
from kg.redaction.textchecks import decoded as read


def redact(text: str) -> str:
    return load_default().redact(text).text


def decoded(value: str) -> str | None:
    return read(value, load_default()._scan_settings.printable_share)  # rules/secrets.toml's share


def b64(text: str, urlsafe: bool = False, pad: bool = True) -> str:
    out = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(text.encode()).decode()
    return out if pad else out.rstrip("=")


GHP = "ghp_" + "Zx9Qm2Lk7Rt4Vb8Np3Hs6Jd1Fg5Wc0YaQe7T"
AWS = "AKIA" + "J7QHW5N3PZT2XK4L"
SLACK = "xoxb-" + "2094176530812-4419803561207-" + "Lq8vR2mT6kW9zN4pX7cB1dYh"
ENV = "OPENAI_API_KEY=" + "sk-proj-" + "u7RbN2qK9mW4xT6vL1pZ8cY3hJ5sD0fG" + "Qe2Wr4Ty6Ui8Op0As" + "\nDEBUG=1\n"


@pytest.mark.parametrize("text, secret", [
    (f"echo {b64(GHP)} | base64 -d", b64(GHP)),
    (f"echo {b64(AWS)} | base64 --decode", b64(AWS)),
    (f'{{"auth": "{b64(SLACK, urlsafe=True, pad=False)}"}}', b64(SLACK, urlsafe=True, pad=False)),
    (f"kubectl create secret generic app --from-literal=env={b64(ENV)}", b64(ENV)),
    (f"ENV_B64: {b64(ENV)}\n", b64(ENV)),
])
def test_a_secret_in_base64_is_redacted_whole(text, secret):
    out = redact(text)
    assert secret not in out and secret[:12] not in out, out
    assert "[REDACTED:" in out


def test_the_kind_is_the_decoded_secrets():
    assert load_default().redact(f"echo {b64(GHP)} | base64 -d").kinds == ("github_token",)


@pytest.mark.parametrize("text", [
    f"echo {b64('hello world, this is only some plain text')} | base64 -d",  # text, no secret
    "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",  # an integrity digest
    "commit 3f2a9c8e1b7d4f6a0e5c2b9d8a7f1e3c4b6d5a90",
    "toolu_01XyZAbCdEfGhIjKlMnOpQrStUv msg_01ABCdefGHIjklMNOpqrSTUvw",  # ids
    "/home/user/projects/myapp/src/components/ButtonGroupContainer",
    "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 4).decode(),  # an image's bytes
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",  # the alphabet
])
def test_encodings_and_runs_without_a_secret_are_kept(text):
    assert redact(text) == text


def test_an_encoding_is_decoded_one_level_deep_only():
    twice = b64(b64(GHP))
    assert decoded(twice) == b64(GHP)
    assert redact(f"echo {twice}") == f"echo {twice}"  # the decoded text holds only another encoding


def test_decoded_reads_text_only():
    assert decoded(b64("some text: a=1, b=2")) == "some text: a=1, b=2"
    assert decoded(base64.b64encode(bytes(range(200))).decode()) is None
    assert decoded("abcdefghijklmnopqrstuvwx") is None  # one case only: no encoded text looks like this
    assert decoded("not*base64") is None


@pytest.mark.parametrize("text, secret", [
    ("wandb login 969dd80ffd5fcfde8cfd65699c5acd52df979e91", "969dd80ffd5fcfde8cfd65699c5acd52df979e91"),
    ("$ shodan init ub9TIYoMFVvf3FJwc0EKUN9TCIciaFWK", "ub9TIYoMFVvf3FJwc0EKUN9TCIciaFWK"),
    ("doctl auth init -t Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7", "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7"),
    ("bash <(curl -s https://codecov.io/bash) -t 8f14e45fceea167a5a36dedd4bea2543", "8f14e45fceea167a5a36dedd4bea2543"),
    ("mycli login 'Kq3Lm8Np2Rs7Tv4Wx9Yz1Ab6Cd'", "Kq3Lm8Np2Rs7Tv4Wx9Yz1Ab6Cd"),
])
def test_a_key_a_login_takes_as_an_argument_is_redacted(text, secret):
    out = redact(text)
    assert secret not in out, out


@pytest.mark.parametrize("text", [
    "git init my-project",
    "terraform login app.terraform.io",
    "npm init vite@latest my-app",
    "cargo init hello_world_2024_projects",
    "gcloud auth login user@example.com",
    "gh auth login --with-token < token.txt",
    "az login --tenant 72f988bf-86f1-41af-91ab-2d7cd011db47",
    "docker login registry.example.com:5000",
    "the login page at /auth/callback returned 302",
    "python -m venv init_environment_for_tests",
])
def test_arguments_of_logins_that_are_no_key_are_kept(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ('dg = DeepgramClient("717e6f39ab506b7879dd3c07c36be78835e76b6f")', "717e6f39ab506b7879dd3c07c36be78835e76b6f"),
    ("api = WeatherApi('Jd8Kf3Lm9Np2Qr5St7Uv1Wx4')", "Jd8Kf3Lm9Np2Qr5St7Uv1Wx4"),
])
def test_a_key_given_to_a_client_is_redacted(text, secret):
    assert secret not in redact(text)


@pytest.mark.parametrize("text", [
    'client = HttpClient("https://api.example.com/v1")',
    'db = MongoClient("mongodb-primary-cluster-2024")',
    'c = RedisClient("localhost")',
    "api = RestApi('orders_service_v2_production')",
])
def test_a_clients_url_or_name_is_kept(text):
    assert redact(text) == text


@pytest.mark.parametrize("text", [
    'MNEMONIC="abstract access abuse absorb about absurd above ability abandon accident able absent"',
    "seed phrase: legal winner thank year wave sausage worth useful legal winner thank yellow",
    "recovery_phrase = zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong",
])
def test_a_seed_phrase_is_redacted(text):
    out = redact(text)
    assert "[REDACTED:mnemonic_phrase]" in out, out
    assert "winner" not in out and "abstract" not in out and "wrong" not in out


@pytest.mark.parametrize("text", [
    "the mnemonic is a device for remembering things",
    "seed phrase: write it down on paper and keep it offline",
])
def test_prose_about_seed_phrases_is_kept(text):
    assert redact(text) == text


def test_a_hugging_face_token_with_digits_is_redacted():
    token = "hf_" + "8EgN82HPvxefpR3t4VBBzNRb56g3ncaT9m"
    for text in (f"HF_TOKEN={token}", f'{{"log": "key:\\t{token}"}}', f"令牌{token}已过期"):
        assert token not in redact(text), text
    assert redact("hf_hub_download_for_all_the_models_here") == "hf_hub_download_for_all_the_models_here"
