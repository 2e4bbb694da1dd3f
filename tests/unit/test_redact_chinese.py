"""A password or key written the everyday Chinese way is redacted (QA qa10 F0): the label glued to its value
(数据库密码hunter2xyz!), after a blank or a connecting word (密码 X, 密码都是X), traditional labels (密碼, 金鑰, 權杖),
and a random-looking key after a full-width colon or 是/为 (AK：X, 七牛云的AK是X), as the ASCII forms are. Chinese prose
about passwords keeps its words."""

from __future__ import annotations

import pytest

from kg.redaction.redact import load_default

PW = "hunter2xyz!"
PW2 = "Zq8mK2pL9vX7"
KEY = "7Kp2Vx9Qm4Rt8Ws1Yz6Nb3Hc5Jd0Lf2Gk7Pq9Tw"
KEY2 = "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz2Xc4Vb6Nm8M"


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("text, secret", [
    (f"数据库密码{PW}", PW),
    (f"密码 {PW}", PW),
    (f"口令{PW2}", PW2),
    (f"登录密码{PW}", PW),
    (f"密码都是{PW}", PW),
    (f"用户名admin，密码{PW2[:10]}", PW2[:10]),
    (f"我已经把密码{PW}写进 config.ts 了。", PW),
    (f"新密码改成了{PW2}", PW2),
    (f"令牌{PW2}过期了", PW2),
    # traditional Chinese
    (f"密碼是{PW}，別外傳", PW),
    ("資料庫密碼：Tr0ub4dor&3x", "Tr0ub4dor&3x"),
    (f"金鑰：{PW2}", PW2),
    (f"密鑰{PW2}", PW2),
    (f"權杖：{PW2}", PW2),
    # a random-looking key after a full-width colon or 是/为, glued to CJK text before it
    (f"AK：{KEY}", KEY),
    (f"SK：{KEY}", KEY),
    (f"AK是{KEY}", KEY),
    (f"七牛云的AK是{KEY}，SK是{KEY2}", KEY2),
    (f"七牛云的AK是{KEY}，SK是{KEY2}", KEY),
])
def test_a_chinese_password_or_key_is_redacted(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out


@pytest.mark.parametrize("text", [
    "密码不能写进代码里",
    "不对，密码不能写进代码里！",
    "密码要定期更换",
    "修改密码功能",
    "密码错误时提示用户",
    "密码长度至少8位",
    "密码加密用bcrypt",
    "密码hash存在users表",
    "密码MD5加密不安全",
    "密码SHA256哈希",
    "密钥AES256加密",
    "令牌HS256签名",
    "密钥RSA2048位",
    "令牌TTL3600秒",
    "令牌v2已过期",
    "这个密码 policy 要改",
    "密码 admin 登录失败",
    "密码都是明文存储的，太危险了",
    "用户名和密码都是必填项",
    "AK是什么意思",
    "模型是claude-3-5-sonnet-20241022",
    "commit是5Ke8Yw0Zz7Bq2Lm9Np4Rt6Vx1Sa3Ud0Fg8Hj2Kl",
    "sha256：e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "分支名是feature-login-v2-2024",
    "文件是src/components/OrderExport.tsx",
])
def test_chinese_prose_about_passwords_keeps_its_words(text):
    assert redact(text) == text

