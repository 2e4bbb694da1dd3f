"""Credential forms agents put in transcripts and notes that the rules kept (each checked to pass first): passwords
on command lines (htpasswd -b, mysqldump -p'X', Oracle's user/X@db, ldapsearch -w, smbclient -U user%X, openssl
pass:X, keytool -storepass), password keys in other languages in code and config ("senha": "X", mot_de_passe: X,
"密码": "X"), and private keys cut across lines (quoted, commented out, joined string literals). Each with the
near misses that must survive."""

from __future__ import annotations

import pytest

from kg.redaction.redact import load_default


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("text, secret", [
    ("htpasswd -b /etc/nginx/.htpasswd admin S3cretPw1", "S3cretPw1"),
    ("htpasswd -bc .htpasswd bob S3cretPw1 && nginx -s reload", "S3cretPw1"),
    ('RUN htpasswd -nbB admin "S3cret Pw1" > /etc/htpasswd', "S3cret Pw1"),
    ("echo $(htpasswd -nb admin S3cretPw1)", "S3cretPw1"),
    ("mysqldump -uroot -p'S3cretPw1' app > dump.sql", "S3cretPw1"),
    ('mysql -uroot -p"my S3cret" app', "my S3cret"),
    ("jdbc:oracle:thin:scott/T1ger99@db.example.com:1521/XE", "T1ger99"),
    ("sqlplus -S system/Manag3r@//db:1521/XE @script.sql", "Manag3r"),
    ("expdp system/Manag3r directory=dp schemas=hr", "Manag3r"),
    ("rman target sys/Sys0racle@prod", "Sys0racle"),
    ("ldapsearch -x -H ldap://x -D cn=admin,dc=x -w S3cretPw1 -b dc=x", "S3cretPw1"),
    ("smbclient //srv/share -U bob%S3cretPw1", "S3cretPw1"),
    ("ldapsearch -w S3cretPw1 -x -b dc=x", "S3cretPw1"),  # the option right after the command
    ("smbclient -U bob%S3cretPw1 //srv/share", "S3cretPw1"),
    ("openssl pkcs12 -export -passout pass:S3cretPw1 -out x.p12", "S3cretPw1"),
    ("openssl enc -aes-256-cbc -k S3cretPw1 -in a -out b", "S3cretPw1"),
    ("keytool -importkeystore -srcstorepass S3cretPw1 -deststorepass 'Other Pw2'", "Other Pw2"),
])
def test_passwords_on_command_lines(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:cli_credential]" in out
    assert redact(out) == out


@pytest.mark.parametrize("text", [
    "htpasswd -c /etc/nginx/.htpasswd admin",  # prompts
    "htpasswd -D .htpasswd bob",
    "htpasswd -b .htpasswd bob $PASSWORD",
    'mysql -uroot -p"$DB_PW" app',
    "sqlplus / as sysdba",
    "the sqlplus tool has a help/usage page",
    "ldapadd -x -D cn=admin -W -f x.ldif",
    "openssl rsa -passin env:KEY_PW -in k.pem",
    "keytool -list -keystore x.jks -storepass changeit",  # Java's documented default
    "git log --pretty=format:%h -w 80",
])
def test_command_lines_without_a_password_survive(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ('{"usuario": "admin", "contraseña": "Adm1n!2024"}', "Adm1n!2024"),
    ('"senha": "S3cretPw1"', "S3cretPw1"),
    ("senha_db: S3cretPw1", "S3cretPw1"),
    ('db_contraseña = "S3cretPw1"', "S3cretPw1"),
    ("mot_de_passe: S3cretPw1", "S3cretPw1"),
    ('"mot-de-passe": "S3cretPw1"', "S3cretPw1"),
    ('"Passwort": "Geh31mPw"', "Geh31mPw"),
    ('"пароль": "S3cretPw1"', "S3cretPw1"),
    ('"wachtwoord": "S3cretPw1"', "S3cretPw1"),
    ('"密码": "S3cretPw1"', "S3cretPw1"),
    ("[db]\nsenha = 'S3cretPw1'", "S3cretPw1"),
])
def test_password_keys_in_other_languages(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out


@pytest.mark.parametrize("text", [
    '"senha": "Senha inválida"',
    '"contraseña": "Contraseña"',
    '"mot_de_passe_oublie": "Mot de passe oublié ?"',
    "senha_minima: 8",
    '"senha_label": "Digite sua senha"',
    '"密码": "请输入密码"',  # "enter the password": a UI string
    "senha_hash: $2b$12$abcdef",
])
def test_labels_and_settings_in_other_languages_survive(text):
    assert redact(text) == text


KEY_BODY = "MIIEowIBAAKCAQEA1234567890abcdefghijklmnopqrstuv"


@pytest.mark.parametrize("text", [
    f"> -----BEGIN RSA PRIVATE KEY-----\n> {KEY_BODY}\n> wxyzABCDEFGH12345\n> -----END RSA PRIVATE KEY-----",
    f"# -----BEGIN RSA PRIVATE KEY-----\n# {KEY_BODY}\n# wxyzABCDEFGH12345",
    f'key = "-----BEGIN OPENSSH PRIVATE KEY-----" +\n  "{KEY_BODY}" +\n  "wxyzABCDEFGH12345"',
    f'KEY = ("-----BEGIN PRIVATE KEY-----\\n"\n       "{KEY_BODY}\\n"\n       "wxyzABCDEFGH12345\\n"\n'
    f'       "-----END PRIVATE KEY-----\\n")',
    f'String k = "-----BEGIN EC PRIVATE KEY-----\\n" +\n    "{KEY_BODY}\\n" +\n    "wxyzABCDEFGH12345";',
])
def test_a_private_key_cut_across_lines_is_one_key(text):
    out = redact(text)
    assert KEY_BODY not in out and "wxyzABCDEFGH12345" not in out and "[REDACTED:private_key]" in out


def test_the_text_after_a_quoted_key_is_kept():
    text = (f"> -----BEGIN RSA PRIVATE KEY-----\n> {KEY_BODY}\n> -----END RSA PRIVATE KEY-----\n"
            "> and then the text goes on")
    assert redact(text) == "> [REDACTED:private_key]\n> and then the text goes on"


@pytest.mark.parametrize("text, secret", [
    ("machine api.example.com login bob password hunter", "hunter"),
    ("machine h.io\n    login bob\n    password hunter\n", "hunter"),
    ("default login anonymous password hunter", "hunter"),
    ('psql "host=db user=bob password=hunter dbname=app"', "hunter"),
    ("password=hunter host=db port=5432", "hunter"),
    ('"senha": "hunter"', "hunter"),
    ("contraseña = 'hunter'", "hunter"),
    ('"пароль": "hunter"', "hunter"),
])
def test_a_plain_word_is_a_password_where_the_form_says_so(text, secret):
    # .netrc, libpq's keyword/value strings and a quoted key's value: the password is whatever follows its key
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out


@pytest.mark.parametrize("text", [
    "the default password is set by admin",
    "machine learning password reset",
    "set host=db user=bob then password=x",
    '"senha": "Senha"',  # an i18n file's label
    '"contraseña": "contraseña:"',
    '"passwort": "$PW"',
])
def test_prose_and_labels_near_those_forms_survive(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ("mongosh mongodb://db -u admin -p S3cretPw1 --authenticationDatabase admin", "S3cretPw1"),
    ("sqlcmd -S db -U sa -P S3cretPw1 -Q 'select 1'", "S3cretPw1"),
    ("zip -P S3cretPw1 out.zip report.pdf", "S3cretPw1"),
    ("unzip -P S3cretPw1 out.zip", "S3cretPw1"),
    ("7z a -pS3cretPw1 out.7z dir", "S3cretPw1"),
    ("ssh-keygen -t ed25519 -N 'S3cretPw1' -f key", "S3cretPw1"),
    ("evil-winrm -i 10.0.0.5 -u bob -p S3cretPw1", "S3cretPw1"),
    ("lftp -u bob,S3cretPw1 ftp.example.com", "S3cretPw1"),
    ("xfreerdp /v:host /u:bob /p:S3cretPw1", "S3cretPw1"),
    ("rabbitmqctl add_user bob S3cretPw1", "S3cretPw1"),
    ("net user bob S3cretPw1 /add", "S3cretPw1"),
    ("influx -username bob -password S3cretPw1", "S3cretPw1"),
    ("gpg --batch --passphrase S3cretPw1 -d f.gpg", "S3cretPw1"),
    ('echo "S3cretPw1" | sudo -S apt install x', "S3cretPw1"),
    ("echo 'S3cretPw1' | docker login --username bob --password-stdin", "S3cretPw1"),
    ('echo "bob:S3cretPw1" | chpasswd', "S3cretPw1"),
])
def test_more_tools_that_take_a_password_on_the_command_line(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:cli_credential]" in out


@pytest.mark.parametrize("text, secret", [
    ("CREATE USER 'bob'@'%' IDENTIFIED BY 'S3cretPw1';", "S3cretPw1"),
    ("SET PASSWORD FOR 'bob'@'localhost' = PASSWORD('S3cretPw1');", "S3cretPw1"),
    ('$pw = ConvertTo-SecureString "S3cretPw1" -AsPlainText -Force', "S3cretPw1"),
    ("<server><id>nexus</id><password>S3cretPw1</password></server>", "S3cretPw1"),
    ('<add key="SmtpPassword" value="S3cretPw1"/>', "S3cretPw1"),
    ('"password" => "S3cretPw1",', "S3cretPw1"),
    ("Cookie: theme=dark; sessionid=Zk3pW9qLm2abcdef", "Zk3pW9qLm2abcdef"),
    ("Set-Cookie: _app_session=Zk3pW9qLm2abcdef; Path=/; HttpOnly", "Zk3pW9qLm2abcdef"),
    ("https://acct.blob.core.windows.net/c/b?sv=2021-08-06&se=2024-01-01&sp=r&sig=Zk3pW9qLm2abcdefXYZ%2B12345%3D",
     "Zk3pW9qLm2abcdefXYZ"),
    ("npm config set //registry.npmjs.org/:_authToken S3cretPw1abc", "S3cretPw1abc"),
])
def test_passwords_in_sql_xml_php_cookies_and_signed_urls(text, secret):
    assert secret not in redact(text)


@pytest.mark.parametrize("text", [
    "echo hello | grep h",
    "echo $PW | sudo -S apt update",
    "mongo -u admin -p --authenticationDatabase admin",  # prompts
    "ssh-keygen -t ed25519 -N '' -f key",
    "net user bob /delete",
    "net user bob * /add",
    "<password></password>",
    "<token>{{ token }}</token>",
    "Cookie: theme=dark; lang=en",
    'input.password("Enter password")',
    "'password' => 'required|string|min:8|confirmed',",  # Laravel's validation rules
    "'password' => $request->password,",
    "the user identified by the token",
    "7z a -t7z archive.7z dir",
    "scp -P 2222 file host:",
    "hydra -L users.txt -P rockyou.txt ssh://h",
    "mysql -h db -P 3306 -u root -p",
])
def test_near_misses_of_those_forms_survive(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ("https://h.io/x?a=1&pass=Hunt3rPw", "Hunt3rPw"),
    ("https://h.io/x?user=bob&pw=hunter", "hunter"),
    ("https://db.firebaseio.com/users.json?auth=abc123def456ghi", "abc123def456ghi"),
    ("https://h.io/app#sessionid=abc123def456ghi", "abc123def456ghi"),
    ("https://b.s3.amazonaws.com/k?X-Amz-Credential=x&X-Amz-Signature=9f8e7d6c5b4a39281706f5e4d3c2b1a0",
     "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
])
def test_credentials_in_a_urls_query_under_short_names(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:password_in_url]" in out


@pytest.mark.parametrize("text", [
    "https://h.io/login?pass=true",
    "https://h.io/x?session=new&x=1",
    "https://h.io/auth?auth=google",
    "https://h.io/x?signature=v2",
    "https://h.io/x?session=2024-summer",
    "the pass=3 fail=0 summary",
])
def test_query_parameters_that_hold_no_credential_survive(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ('requests.get(url, auth=("bob", "S3cretPw1"))', "S3cretPw1"),
    ("requests.get(url, auth=HTTPBasicAuth('bob', 'S3cretPw1'))", "S3cretPw1"),
    ('new NetworkCredential("bob", "S3cretPw1")', "S3cretPw1"),
    ('smtp.login("bob@x.io", "S3cretPw1")', "S3cretPw1"),
    ("""curl -H "Authorization: Basic $(echo -n 'bob:S3cretPw1' | base64)" https://x""", "S3cretPw1"),
    ('expect "Password:"\nsend "S3cretPw1\\r"', "S3cretPw1"),
    ("set -x PGPASSWORD S3cretPw1", "S3cretPw1"),
    ("ENV DB_PASSWORD hunter2pw", "hunter2pw"),
    ('gh secret set DB_PASSWORD --body "S3cretPw1"', "S3cretPw1"),
    ("aws ssm put-parameter --name /db/pw --value S3cretPw1 --type SecureString", "S3cretPw1"),
    ("aws secretsmanager create-secret --name db --secret-string S3cretPw1", "S3cretPw1"),
    ("security add-generic-password -a bob -s svc -w S3cretPw1", "S3cretPw1"),
])
def test_passwords_in_auth_calls_scripts_and_secret_stores(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out
    assert "--value [REDACTED" in out if "--value" in text else True  # the option is kept, its value taken


@pytest.mark.parametrize("text", [
    "requests.get(url, auth=(\"bob\", password))",
    'smtp.login(user, os.environ["SMTP_PW"])',
    'self.login("Login", "Failed")',
    'echo "http://localhost:8080" | base64',
    'echo "$USER:$PASS" | base64',
    "set -x PATH /usr/bin $PATH",
    "set -x DB_PASSWORD $PW",
    "ENV NODE_ENV production",
    "gh secret set DB_PASSWORD < pw.txt",
    "aws ssm put-parameter --name /app/url --value https://x --type String",
    'aws ssm put-parameter --name /db/pw --value "$PW" --type SecureString',
    'expect "password:" { send "$env(PW)\\r" }',
])
def test_near_misses_of_auth_calls_and_secret_stores_survive(text):
    assert redact(text) == text
