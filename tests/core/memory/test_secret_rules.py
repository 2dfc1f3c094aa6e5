"""The secret scan's rule sets (memtui.core.memory.secretscan): gitleaks' vendored default rules
with gitleaks' semantics, the keys people paste (issue 29, item 5), normalisation, masking,
placeholders, no alarm on hashes, UUIDs and plain URLs, linear time.

Per-rule examples: ``gitleaks_examples.json`` beside this file holds gitleaks' own true and false
positives for each rule, from ``cmd/generate/config/rules/*.go`` of github.com/gitleaks/gitleaks
(MIT) at the vendored commit, extracted by ``scripts/extract_gitleaks_examples.py`` (strings as
written upstream; ``secrets.NewSecret(pattern)`` drawn with ``rstr`` from a seeded generator).
gitleaks' own ``utils.Validate`` checks the same thing: each true positive gives a finding of a
detector holding that rule alone, each false positive none. Every other expected value below was
worked out by hand from the rule's pattern, never taken from the scanner's output.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.core.memory import secretscan
from memtui.core.memory.secretscan import (
    GITLEAKS_COMMIT,
    GITLEAKS_TOML,
    GITLEAKS_TOML_SHA256,
    SecretFinding,
    find_secrets,
    find_secrets_line_by_line,
    gitleaks_findings,
    gitleaks_rules,
    mask,
    normalize,
    secret_prefilter,
    shannon_entropy,
    skipped_gitleaks_rules,
)

EXAMPLES = json.loads((Path(__file__).parent / "gitleaks_examples.json").read_text(encoding="utf-8"))
RULES = {rule.id: rule for rule in gitleaks_rules()}

# Rules upstream gives no example for ("validate TODO" in dropbox.go): hand-made from the pattern.
HAND_MADE = {
    # (?i)…(?:dropbox)…[\x60'"\s=]{0,5}(sl\.[a-z0-9\-=_]{135})(?:[\x60'"\s;]|\\[nr]|$)
    "dropbox-short-lived-api-token": ['dropbox_token = "sl.' + ("a1b2c3d4e5-f6g7h8i9j0_k=" * 6)[:135] + '"'],
    # (?i)…(?:dropbox)…([a-z0-9]{11}(AAAAAAAAAA)[a-z0-9\-_=]{43})…
    "dropbox-long-lived-api-token": ['dropbox_token = "q8w7e6r5t4y' + "A" * 10 + ("z9x8c7v6b5n4m3-_=" * 3)[:43] + '"'],
}


def _strings(values: list[object]) -> list[str]:
    return [v for v in values if isinstance(v, str)]


# --- the vendored data --------------------------------------------------------------------------


def test_the_vendored_config_is_the_recorded_one() -> None:
    data = GITLEAKS_TOML.read_bytes()
    assert hashlib.sha256(data).hexdigest() == GITLEAKS_TOML_SHA256
    folder = GITLEAKS_TOML.parent
    assert (folder / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert GITLEAKS_COMMIT in (folder / "README.md").read_text(encoding="utf-8")
    assert EXAMPLES["commit"] == GITLEAKS_COMMIT


def test_exactly_these_rules_are_skipped_and_why() -> None:
    skipped = skipped_gitleaks_rules()
    assert {rule: reason.split(":")[0] for rule, reason in skipped.items()} == {
        "generic-api-key": "generic",
        "freemius-secret-key": "bound to file paths matching '(?i)\\\\.php$'",
        "hashicorp-tf-password": "bound to file paths matching '(?i)\\\\.(?",
        "kubernetes-secret-yaml": "bound to file paths matching '(?i)\\\\.ya?ml$'",
        "nuget-config-password": "bound to file paths matching '(?i)nuget\\\\.config$'",
        "pkcs12-file": "bound to file paths matching '(?i)(?",
    }
    # every other rule of the file compiles (none is skipped for it) and is used
    assert not any("does not compile" in reason for reason in skipped.values())
    total = len(re.findall(r"(?m)^\[\[rules\]\]$", GITLEAKS_TOML.read_text(encoding="utf-8")))
    assert (total, len(RULES)) == (222, 216)
    assert set(RULES) | set(skipped) == set(EXAMPLES["rules"]) | {"dropbox-short-lived-api-token", "dropbox-long-lived-api-token"} | set(EXAMPLES["not_extracted"])


# --- one test per rule: gitleaks' own examples ---------------------------------------------------


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_flags_its_true_positives_and_not_its_false_positives(rule_id: str) -> None:
    rule = RULES[rule_id]
    examples = EXAMPLES["rules"].get(rule_id, {"true_positives": [], "false_positives": []})
    positives = _strings(examples["true_positives"]) + HAND_MADE.get(rule_id, [])
    assert positives, f"{rule_id}: no example"
    for text in positives:
        assert any(f.rule == rule_id for f in gitleaks_findings(text, [rule])), (rule_id, text)
        # the whole scan reports it too (possibly through another rule first), unless the secret
        # is a placeholder written in the key's format (``AGE-SECRET-KEY-1QQQ…``): memtui does not
        # report those, where gitleaks does
        secrets = [rule.secret_of(m.group()) for m in rule.regex.finditer(secretscan.normalize(text))]
        if not all(secretscan._placeholder_secret(s) for s in secrets if s):
            assert find_secrets(text), (rule_id, text)
    for text in _strings(examples["false_positives"]):
        assert gitleaks_findings(text, [rule]) == [], (rule_id, text)


def test_no_finding_carries_a_secret() -> None:
    names = {r for r in RULES} | {str(p.secret_type) for p in secretscan._plugins()} | {type(p).__name__ for p in secretscan._plugins()}
    names |= {secretscan.URL_RULE, secretscan.URL_KIND}
    masked = re.compile(r"(.{0,4})… \((\d+) chars\)", re.DOTALL)
    for rule_id in sorted(RULES):
        for text in _strings(EXAMPLES["rules"].get(rule_id, {}).get("true_positives", []))[:5]:
            for f in find_secrets(text):
                assert f.kind in names and f.rule in names
                m = masked.fullmatch(f.masked)
                assert m and len(m.group(1)) <= int(m.group(2)) // 4, f


# --- the keys of the issue -------------------------------------------------------------------

GITHUB_PAT = "github_pat_" + "11ABCDEFG0hIjKlMnOpQrS" + "_" + "T1u2V3w4X5y6Z7a8B9c0D1e2F3g4H5i6J7k8L9m0N1o2P3q4R5s6T7u8V9w"
GOOGLE_KEY = "AIza" + "SyB3xK9mQ2vR7tL4pN8wC6jH1fD5gZ0sE-u"
HF_TOKEN = "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNmPlOkIjUh"
DO_TOKEN = "dop_v1_" + "3f9a1c7e5b2d8046af13c9e7b5d20864" + "a7c1e9f3b5d70246e8a0c2f4b6d81357"
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_the_hand_made_keys_have_their_formats_lengths() -> None:
    # github_pat_ + 22 + "_" + 59 (\w{82}); AIza + 35 ([\w-]); hf_ + 34 letters; dop_v1_ + 64 hex
    assert (len(GITHUB_PAT), len(GOOGLE_KEY), len(HF_TOKEN), len(DO_TOKEN), len(GHP)) == (93, 39, 37, 71, 40)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"CI pushes with {GITHUB_PAT}", SecretFinding("github-fine-grained-pat", 1, "github-fine-grained-pat", "gith… (93 chars)")),
        (f"maps key {GOOGLE_KEY}", SecretFinding("gcp-api-key", 1, "gcp-api-key", "AIza… (39 chars)")),
        (f"HF_TOKEN={HF_TOKEN}", SecretFinding("huggingface-access-token", 1, "huggingface-access-token", "hf_Q… (37 chars)")),
        (f"doctl auth init -t {DO_TOKEN}", SecretFinding("digitalocean-pat", 1, "digitalocean-pat", "dop_… (71 chars)")),
        # a password with "!", which RFC 3986 allows and detect-secrets' BasicAuthDetector refuses
        ("clone https://alice:Sup3rS3cret!@example.com/x.git", SecretFinding("URL with a password", 1, "url-password", "Sup… (12 chars)")),
        # detect-secrets' plugin finds it first; the URL check's overlapping hit is the same secret
        ("db at postgres://app:s3cretpw@db.internal/app", SecretFinding("Basic Auth Credentials", 1, "BasicAuthDetector", "s3… (8 chars)")),
        # detect-secrets' GitHub plugin first; gitleaks' github-pat overlaps it
        (f"token {GHP}", SecretFinding("GitHub Token", 1, "GitHubTokenDetector", "ghp_… (40 chars)")),
    ],
)
def test_the_issues_keys_are_found_by_rule_name(text: str, expected: SecretFinding) -> None:
    assert find_secrets("intro\n\n" + text) == [SecretFinding(expected.kind, 3, expected.rule, expected.masked)]


def test_the_finding_names_its_rule_and_masks_the_secret() -> None:
    [f] = find_secrets(f"CI pushes with {GITHUB_PAT}")
    assert f.describe() == "github-fine-grained-pat on line 1 (gith… (93 chars))"
    [f] = find_secrets(f"token {GHP}")
    assert f.describe() == "GitHub Token on line 1 (GitHubTokenDetector, ghp_… (40 chars))"
    assert GHP not in repr(f) and GHP[4:12] not in repr(f)


@pytest.mark.parametrize("cf", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"])
def test_a_key_split_by_a_zero_width_character_is_found_on_its_line(cf: str) -> None:
    text = f"line{cf} one\r\nline two {cf}\n token: {GHP[:10]}{cf}{GHP[10:]} and {GOOGLE_KEY[:20]}{cf}{GOOGLE_KEY[20:]}\n"
    assert [(f.rule, f.line, f.masked) for f in find_secrets(text)] == [
        ("GitHubTokenDetector", 3, "ghp_… (40 chars)"),
        ("gcp-api-key", 3, "AIza… (39 chars)"),
    ]


def test_a_key_in_backticks_or_typographic_quotes_is_found() -> None:
    assert [f.rule for f in find_secrets(f"Use `{GOOGLE_KEY}` for maps")] == ["gcp-api-key"]
    assert [(f.rule, f.line) for f in find_secrets(f"```sh\nexport KEY={GOOGLE_KEY}\n```\n")] == [("gcp-api-key", 2)]
    assert [f.rule for f in find_secrets(f"key \u201c{GOOGLE_KEY}\u201d")] == ["gcp-api-key"]
    # the closing quote ends the key as an ASCII one does (gitleaks' suffix accepts '"', not ”)
    assert normalize("\u201ca\u201d \u2018b\u2019 `c`") == "\"a\" 'b'  c "


def test_normalisation_keeps_the_line_numbers() -> None:
    text = "\ufeffa\u200b\r\nb\u00ad\u2028c\x0cd\n" + GOOGLE_KEY
    assert normalize(text).splitlines()[:4] == ["a", "b", "c", "d"]
    assert [f.line for f in find_secrets(text)] == [5] == [len(text.splitlines())]


# --- gitleaks' semantics, worked by hand -------------------------------------------------------


def test_shannon_entropy_is_gitleaks() -> None:
    assert shannon_entropy("") == 0
    assert shannon_entropy("aaaa") == 0
    assert shannon_entropy("ab") == 1.0
    assert shannon_entropy("abcd") == 2.0
    # Go divides by the UTF-8 length: "é" is one character of two bytes, p = 1/2
    assert shannon_entropy("é") == 0.5


def test_a_secret_at_or_below_the_rules_entropy_is_not_reported() -> None:
    # github-pat: entropy 3; "ghp_" + 36 × "a" has 4 characters once and "a" 36 times in 40:
    # H = 4 · (1/40) · log2 40 + (36/40) · log2 (40/36) ≈ 0.67
    low = "ghp_" + "a" * 36
    assert gitleaks_findings(low, [RULES["github-pat"]]) == []
    assert [f.rule for f in gitleaks_findings(GHP, [RULES["github-pat"]])] == ["github-pat"]


def test_a_rule_runs_only_on_a_text_holding_one_of_its_keywords() -> None:
    # airtable-personnal-access-token: \b(pat[[:alnum:]]{14}\.[a-f0-9]{64})\b, keyword "airtable"
    token = "patAbCdEfGhIjKlMn." + "0123456789abcdef" * 4
    rule = RULES["airtable-personnal-access-token"]
    assert gitleaks_findings(f"token {token}", [rule]) == []
    assert [(f.rule, f.line) for f in gitleaks_findings(f"AIRTABLE\ntoken {token}", [rule])] == [(rule.id, 2)]
    # Go lower-cases İ to i: "Aİrtable" holds the keyword
    assert [f.rule for f in gitleaks_findings(f"A\u0130RTABLE\ntoken {token}", [rule])] == [rule.id]


def test_an_allowlisted_secret_is_not_reported() -> None:
    # aws-access-token's allowlist: .+EXAMPLE$ (the documentation's key)
    assert gitleaks_findings("AKIAIOSFODNN7EXAMPLE", [RULES["aws-access-token"]]) == []
    assert [f.rule for f in gitleaks_findings("AKIAZ3MSJV4WPD6QKR7N", [RULES["aws-access-token"]])] == ["aws-access-token"]


def test_the_secret_is_the_rules_secret_group() -> None:
    # sonar-api-token: secretGroup = 2 (group 1 is "token", group 2 the value, 4 + 40 characters)
    text = 'sonar_token = "squ_' + "0a1b2c3d4e5f6a7b8c9d" * 2 + '"'
    assert [(f.rule, f.masked) for f in gitleaks_findings(text, [RULES["sonar-api-token"]])] == [("sonar-api-token", "squ_… (44 chars)")]


def test_a_match_across_lines_is_reported_on_its_first_line() -> None:
    # the semi-generic rules allow a line break between the operator and the secret
    # (gitleaks' "xml - element multiline" sample): the match starts at "adafruit", line 2
    secret = "k3j5h7g9f1d3s5a7p9o1i3u5y7t9r1e3"
    text = f"intro\n<adafruitToken>\n    {secret}\n</adafruitToken>\n"
    assert [(f.rule, f.line) for f in gitleaks_findings(text, [RULES["adafruit-api-key"]])] == [("adafruit-api-key", 2)]


def test_mask() -> None:
    assert mask("AKIAIOSFODNN7EXAMPLE") == "AKIA… (20 chars)"
    assert mask("hunter2") == "h… (7 chars)"
    assert mask("abc") == "… (3 chars)"


# --- no alarm -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "fixed in 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "session 123e4567-e89b-12d3-a456-426614174000 crashed",
        "see https://github.com/org/repo and https://github.com/org/repo/pull/12#issuecomment-1",
        "mirror at https://user@host.example.com/path",
        "the app reads postgres://localhost:5432/db",
        # placeholders (gitleaks' curl-auth-user allowlist, detect-secrets' templated filter)
        "clone with https://user:pass@host/repo.git",
        "DATABASE_URL=postgres://user:password@localhost:5432/app",
        "mongodb://<user>:<password>@cluster0.example.net/db",
        "redis://:${REDIS_PASSWORD}@cache:6379/0",
        "https://$GIT_USER:$GIT_TOKEN@example.com/repo.git",
        "the password is in 1Password under 'staging db'",
        "We use Sentry, Datadog and Twilio; the Heroku app is web-prod.",
        "a3f9c2e1 Merge pull request #42\n9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c Fix the key rotation",
    ],
)
def test_no_alarm_on_ordinary_memory_text(text: str) -> None:
    assert find_secrets(text) == []


# --- the pre-filter holds the keywords ------------------------------------------------------


def test_every_keyword_is_found_by_the_prefilter_in_any_case() -> None:
    prefilter = secret_prefilter()
    keywords = {k for rule in gitleaks_rules() for k in rule.keywords}
    assert keywords <= prefilter.keywords
    for keyword in sorted(keywords):
        for variant in (keyword, keyword.upper(), keyword.title()):
            text = f"one\nx {variant} y\n"
            assert keyword in prefilter.scan(text, text.splitlines())[1], variant


_TPS = [t for rule_id in sorted(RULES) for t in _strings(EXAMPLES["rules"].get(rule_id, {}).get("true_positives", []))[:2]]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(parts=st.lists(st.one_of(st.sampled_from(_TPS), st.sampled_from(["\n", "\r\n", " ", "\u200b", "`", "\u0130", "\u0131", "\u017f", "curl ", "KEY="]), st.text(alphabet=string.ascii_letters + string.digits + "_-=:./\"' \n", max_size=40)), max_size=12))
def test_the_prefiltered_scan_equals_the_reference_on_gitleaks_examples(parts: list[str]) -> None:
    text = "".join(parts)
    assert find_secrets(text) == find_secrets_line_by_line(text)
