"""QA qa5: formats from trufflehog's detectors and GitHub's secret-scanning list that reached storage, each as the
QA wrote it (values fake, made to the published shapes), and the near misses that must survive. General rules first:
a URL's query key by name (?key=, &appid=, &X-Amz-Security-Token=), a token as a URL's whole userinfo, a mail address
as a URL's user, a webhook's or an RPC endpoint's path, "key word + 是 / lautet + value"; then provider shapes."""

from __future__ import annotations

import pytest

from kg.redaction.redact import load_default


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("text, secret", [
    ("https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=2e9df731-55e2-4b84-ac2d-a5c47a8fde1b",
     "2e9df731-55e2-4b84-ac2d-a5c47a8fde1b"),
    ("GET https://api.openweathermap.org/data/2.5/weather?q=Paris&appid=j8ngQNKzYuXyll3BkjeZ2Ykb5G9vLgNm 401",
     "j8ngQNKzYuXyll3BkjeZ2Ykb5G9vLgNm"),
    ("https://bucket.s3.amazonaws.com/a.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Security-Token=IQoJb3JpZ2luX2VjEC"
     "tcbuoNaw2wBE%2F1ZeBulA89rBElpLxn23l6OnAHpvyhB72vK6OBuBi74wCBqiAoK7qWQObLjhDXH8"
     "&X-Amz-Signature=17c8638486f05c1a737b5262062d41341c87ded7f7c7ac8e85bdbbf97cadea6e",
     "IQoJb3JpZ2luX2VjECtcbuoNaw2wBE"),
    ("git clone https://skoivom7xdqc55o3qtxz4csgijozp4agnuqrp3i2fymv7aj2e3as@dev.azure.com/org/proj/_git/repo",
     "skoivom7xdqc55o3qtxz4csgijozp4agnuqrp3i2fymv7aj2e3as"),
    ("EMAIL_URL=smtp://postmaster@mg.example.com:S9lokPbyZepVlGJg@smtp.mailgun.org:587", "S9lokPbyZepVlGJg"),
    ("POST https://discord.com/api/webhooks/389494260868380236/LgW1CaN6nTzaHMImexIf1zP59zhBHZf5GXWMokTiU0BHMg18qrG"
     "-JvXwKvypxqiKZf7F returned 404", "LgW1CaN6nTzaHMImexIf1zP59zhBHZf5GXWMokTiU0BHMg18qrG-JvXwKvypxqiKZf7F"),
    ("ZAPIER_HOOK=https://hooks.zapier.com/hooks/catch/4624096/yi4bx46/", "4624096/yi4bx46"),
    ("curl -X POST https://open.feishu.cn/open-apis/bot/v2/hook/3384c279-2bf9-4e20-ac63-13da471564f2 -d @msg.json",
     "3384c279-2bf9-4e20-ac63-13da471564f2"),
    ("https://mainnet.infura.io/v3/305e58784b8c246a2090201161bd4335", "305e58784b8c246a2090201161bd4335"),
    ("https://eth-mainnet.g.alchemy.com/v2/vR0NH70KRMoUj9im7hvM6BIJ0J6KRs0v", "vR0NH70KRMoUj9im7hvM6BIJ0J6KRs0v"),
    ("微信公众号的 AppSecret 是 c2e64b7bc9ee939089b16c7053cd8037，别外传", "c2e64b7bc9ee939089b16c7053cd8037"),
    ("千帆的 key 是 bce-v3/ALTAK-BVkzAZuekDb2oN2YnV6yE/86de7e0a49b63f77b9263028f40c7b0cdb00f62d", "ALTAK-BVkzAZuekDb2"),
    ("Das Passwort lautet DTeaYONtFpft0K~d", "DTeaYONtFpft0K~d"),
    ('client = Client("AC74a593c088c0a401f4410b2aae074a3b", "b45591f33360776e569bd65c3f2bf591")',
     "b45591f33360776e569bd65c3f2bf591"),
    ('curl -H "Authorization: Bearer 2/4495424066070601/4616394601858400:7d5f390a53fb4ba683a1a369c275f39c" '
     "https://app.asana.com/api/1.0/users/me", "7d5f390a53fb4ba683a1a369c275f39c"),
    ("AIRTABLE_TOKEN=pato50OOIwx5IJJ9V.9ab87142895cbd1f5c3bab5febdb3c0dc87963729951dc66f2c4fb7ad851b094",
     "9ab87142895cbd1f5c3bab5febdb3c0dc87963729951dc66f2c4fb7ad851b094"),
    ('Base("patzeRO2CSC3k5WmQ.c294c231d482dd1637a477baca6dbd554c9d3c7b3b18819e1fd8ac722f1afe49", "appXYZ")',
     "c294c231d482dd1637a477baca6dbd554c9d3c7b3b18819e1fd8ac722f1afe49"),
    ("APP_KEY=base64:t2UPgCxRkRaErFtvqjQuT+i1H/a/lVlcBPqLiT/dWKA=", "t2UPgCxRkRaErFtvqjQuT+i1H/a/lVlcBPqLiT/dWKA="),
    ("TENCENTCLOUD_SECRET_ID=AKIDCIyJOTkALGw8TdHSlkRxjWi0V4Ue5xOV", "AKIDCIyJOTkALGw8TdHSlkRxjWi0V4Ue5xOV"),
    ("sf org display  Access Token  00DOy97R9kusMdt!AQxxoAnJd3VGbDfaW1QKmvUnMmlFvwTAjTAdsV8P9nBuiY2xpS.tj1JXYMhG6Nylg"
     ".TKgebaGNtcgygFZ1U.7wlyJipR37vK", "AQxxoAnJd3VGbDfaW1QKmvUnMmlFvwTAjTAdsV8P9nBuiY2xpS"),
    ("b2 authorize-account 001295e36173046c8cd492b8 K00dVzAwuS5WfgiSNt1aWFQ9jKRdVoe",
     "K00dVzAwuS5WfgiSNt1aWFQ9jKRdVoe"),
    ("matrix access_token syt_rYQfpAeULCr6_zWZXocjj2xFZatFpVejZ_twQfrl",
     "syt_rYQfpAeULCr6_zWZXocjj2xFZatFpVejZ_twQfrl"),
    ('const wallet = new ethers.Wallet("0x5195bbd353d28639b1607533350275bfe077ab28fe7a5ea7748fa51cd54c6633")',
     "5195bbd353d28639b1607533350275bfe077ab28fe7a5ea7748fa51cd54c6633"),
    ("db.internal:5432:shop:app:HTjz5wVTPapxvJ$x", "HTjz5wVTPapxvJ$x"),
    ('curl -b "sessionid=GbvL1YXKBmkkdmpRe1k; csrftoken=abc" https://app.example.com/admin', "GbvL1YXKBmkkdmpRe1k"),
    ('curl --cookie "theme=dark; connect.sid=s%3AGbvL1YXKBmkkdmpRe1k" https://x', "GbvL1YXKBmkkdmpRe1k"),
])
def test_a_qa5_format_is_redacted(text, secret):
    out = redact(text)
    assert secret not in out and secret[:12] not in out, out
    assert redact(out) == out


@pytest.mark.parametrize("text", [
    "https://maps.example.com/tiles?key=street&z=3",  # a key that is a word
    "GET /search?q=Paris&appid=weather-app",
    "git clone https://git@github.com/org/repo.git",
    "https://first.last1234567890123456789012345@example.com/x",  # a mail-ish user, not a token
    "https://abcdefghijklmnopqrstuvwxyzabcdefgh@host.example.com/",  # no digit: a name
    "see https://discord.com/api/webhooks/389494260868380236 for the hook's id",
    "https://mainnet.infura.io/v3/ for the endpoint",
    "token 是必需的，key 为空",
    "token 是 AccessKeyProvider",  # an identifier, not a value
    "Das Passwort lautet falsch",
    'tx = provider.getTransaction("0x5195bbd353d28639b1607533350275bfe077ab28fe7a5ea7748fa51cd54c6633")',
    "AC74a593c088c0a401f4410b2aae074a3b is the account SID",
    "2/3 of the jobs failed; 1/4 retried",
    "data:image/png;base64:iVBORw0KGgo",
    "2026-12-06 10:22:33:5432:info:ready",
    "git checkout -b feature/login-form",
    "curl -b cookies.txt https://example.com",
    "the pattern patternMatcherAbc.isValid() ran",
])
def test_a_qa5_near_miss_is_kept(text):
    assert redact(text) == text


def test_a_value_glued_to_a_chinese_label_is_redacted():
    # 19 characters after glpat-: no GitLab shape, but 令牌 ("token") says what it is, as "token X" does in English
    out = redact("令牌glpat-Qw3Er4Ty5Ui6Op7As8D已过期")
    assert "Qw3Er4Ty5Ui6" not in out and out.startswith("令牌[REDACTED:") and out.endswith("已过期")
    assert redact("密码错误，令牌v2已过期") == "密码错误，令牌v2已过期"


@pytest.mark.parametrize("text", [
    "Cache key: Linux-node-modules-3f786850e387550fdab836ed7e6dc881de23001b",  # actions/cache: words and a digest
    "Cache restored from key: Linux-x64-pnpm-store-8f14e45fceea167a5a36dedd4bea2543",
    "Secret: projects/my-proj/secrets/db-password/versions/3",  # a Secret Manager name, not the secret
    "secret = projects/p1/secrets/api-key/versions/latest",
])
def test_qa5_false_redactions_are_kept(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ("OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team=hcaik_u2e2n1mwpynk734gcxylpiioe76hxy0fd38ylaus2bvns213cgopkuyy2o",
     "hcaik_u2e2n1mwpynk734gcxylpiioe76hxy0fd38ylaus2bvns213cgopkuyy2o"),
    ('sdk = mercadopago.SDK("APP_USR-6307836571411051-340185-b47c7a24376d3c1d3a317cf0f776be6c-800491093")',
     "b47c7a24376d3c1d3a317cf0f776be6c"),
    ('midtransclient.Snap(server_key="Mid-server-QYaQ9O5WrSees321n7oQBo-u")', "Mid-server-QYaQ9O5WrSees321n7oQBo-u"),
    ("the samsara token samsara_api_ZkO8oScPAuvrINLM9Af8ILmQCy4pCZ expired",
     "samsara_api_ZkO8oScPAuvrINLM9Af8ILmQCy4pCZ"),
    ('statsig.initialize("secret-4X5Q80kLBPFG0jgsjn2xM2welSOmjDS3YqW6TzTHHFH")',
     "secret-4X5Q80kLBPFG0jgsjn2xM2welSOmjDS3YqW6TzTHHFH"),
])
def test_a_qa5_prefixed_token_is_redacted(text, secret):
    out = redact(text)
    assert secret not in out and secret[:16] not in out, out


@pytest.mark.parametrize("text", [
    "kubectl create secret-manager-access-token-rotation-job-for-prod",
    "npm run test-integration-suite-2024-with-retries",
    "see the Mid-server-side docs",
])
def test_a_qa5_prefix_in_prose_is_kept(text):
    assert redact(text) == text
