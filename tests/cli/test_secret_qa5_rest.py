"""QA qa5's last leaks through the real CLI: `kg log ... --details` stored them in the graph and the journal. Every
byte of the workspace is scanned for them afterwards. Values are fake.
- A token cut in two: a GitHub token's tail in a Markdown table's next row, one hard-wrapped after a shell's `\\`.
- A key as the only argument of a class not named for a client: `Virustotal("<hex>")`, `Shodan("<key>")`.
- A key under `X-Honeycomb-Team:`, a GCS HMAC access id, a hex-encoded AWS key id, `heroku auth:token`'s output, and
  "log in as root with <password>"."""

from __future__ import annotations

from tests.cli.test_secret_qa5 import _logged_and_scanned

GITHUB = "ghp_m2QFxRDKbalaDQylFYcjiIECcbqzXlZB81Yr"
SPLIT = {
    f"| name | value |\n|---|---|\n| GITHUB_TOKEN | {GITHUB[:20]} |\n| | {GITHUB[20:]} |": GITHUB[20:],
    f"export GITHUB_TOKEN={GITHUB[:22]}\\\n{GITHUB[22:]}": GITHUB[22:],
}


def test_kg_log_details_redacts_a_token_cut_over_table_rows_or_lines(ws, run_kg):
    assert _logged_and_scanned(ws, run_kg, list(SPLIT), list(SPLIT.values())) == []


CLASSES = {
    'vt = virustotal_python.Virustotal("df50e6b2ad4adc7e897a1f86293f9ff10e122a075f18a7bf45850efc41fc9326")':
        "df50e6b2ad4adc7e897a1f86293f9ff1",
    'api = shodan.Shodan("Xk9mP2vQ7rT4wY8zA3bC6dE1fG5hJ0kL")': "Xk9mP2vQ7rT4wY8zA3bC6dE1",
}


def test_kg_log_details_redacts_a_key_as_a_class_s_only_argument(ws, run_kg):
    assert _logged_and_scanned(ws, run_kg, list(CLASSES), list(CLASSES.values())) == []


SAID = {
    'headers: {"X-Honeycomb-Team": "UE4M0enhJOZ9eEwrf8Fzge"}': "UE4M0enhJOZ9eEwrf8Fzge",
    "gsutil hmac create -> Access ID: GOOG1E93VZ6U4XF97GU567096HMKVHXNY8DA8PHP94ESYYADB64X5Z5ESQJCZ":
        "GOOG1E93VZ6U4XF97GU567096HMK",
    "payload hex: 414b49413445544b364b554a55443038454b3955": "414b49413445544b364b554a",
    "heroku auth:token -> 840409f0-23b0-4481-a7c4-c9432b0e8155": "840409f0-23b0-4481-a7c4",
    "log in as root with h2AZTeOkgYBExVAY!9": "h2AZTeOkgYBExVAY",
}


def test_kg_log_details_redacts_a_team_header_a_gcs_key_a_hex_key_heroku_s_key_and_a_login_s_password(ws, run_kg):
    assert _logged_and_scanned(ws, run_kg, list(SAID), list(SAID.values())) == []
