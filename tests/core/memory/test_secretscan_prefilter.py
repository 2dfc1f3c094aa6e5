"""The secret scan's literal pre-filter keeps every finding the line-by-line scan makes, over the
whole plugin set of detect-secrets (memtui.core.memory.secretscan)."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.core.memory.secretscan import (
    IGNORECASE_EXTRA,
    _plugins,
    find_secrets,
    find_secrets_line_by_line,
    pattern_needs,
    secret_prefilter,
)

PATTERNS = [(type(p).__name__, i, rx) for i, p in enumerate(_plugins()) for rx in p.denylist]

def R(n: int) -> str:
    """``n`` characters of a fixed random-looking hex string: a key's shape without a run of one
    character (which the scan takes for a placeholder, ``ghp_xxxx…``)."""
    digits = "9f3a0c7e1b5d8246e0b7c3f9a1d5826c4e"
    return (digits * (n // len(digits) + 1))[:n]


# One real-looking secret of each kind (the formats of the plugins' own documentation; fake).
SECRETS = [
    "AKIAIOSFODNN7EXAMPLE",
    'aws_secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
    "artifactory: AKCp5bueTFSQFQ9hT8b3kXk5hWfXyDC1gJR4LvGjXzk",
    "AccountKey=" + "q7Rk2mXw9ZpL4vT8nB3c" * 4 + "a1s6b9==",  # random-looking: a run of one character is a placeholder
    "https://user:hunter2@example.com/path",
    'cloudant_password = "' + "f3a9c0e17b2d48a6" * 4 + '"',
    "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    "ghp_" + R(36),
    "glpat-" + "k3Jd8s0PqX2mZ7vB4nRw",
    'ibm_cloud_iam_api_key = "' + R(44) + '"',
    'cos_hmac_secret_access_key = "' + R(48) + '"',
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "0123456789abcdef0123456789abcdef-us12",
    "//registry.npmjs.org/:_authToken=npm_" + R(36),
    "sk-" + R(20) + "T3BlbkFJ" + R(20),
    "-----BEGIN RSA PRIVATE KEY-----",
    "pypi-AgEIcHlwaS5vcmc" + R(70),
    "SG." + R(22) + "." + R(43),
    "xoxb-123456789012-abcdefghij",
    "https://hooks.slack.com/services/T00000000/B00000000/" + R(24) + "",
    'softlayer_api_key = "' + R(64) + '"',
    "sq0csp-" + R(43),
    "sk_live_" + R(24),
    "123456789:" + R(35),
    "AC" + R(32),
    "sk-ant-api03-" + R(40),
]


def test_the_case_folding_exceptions_are_exactly_the_characters_ignorecase_adds() -> None:
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    extra = {
        m.group()
        for letter in string.ascii_letters
        for m in re.finditer(letter, everything, re.IGNORECASE)
        if m.group().lower() != letter.lower()
    }
    assert extra == set(IGNORECASE_EXTRA)
    # and lower-casing keeps every other character's place (a literal's line is found by it)
    assert {c for c in everything if len(c.lower()) != 1} <= set(IGNORECASE_EXTRA)


def test_every_plugin_of_the_set_has_literals_read_from_its_patterns() -> None:
    prefilter = secret_prefilter()
    assert len(prefilter.needs) == len(_plugins()) > 20
    for (name, _i, rx) in PATTERNS:
        need = pattern_needs(rx)
        assert need, f"{name}: no literal read from {rx.pattern!r} (it would run on every line)"
        for clause in need:
            assert clause and all(text and (not folded or text.isascii()) for text, folded in clause)


def test_each_secret_is_found_with_and_without_the_prefilter() -> None:
    for secret in SECRETS:
        for text in (secret, f"prose before\n{secret}\nprose after", f"# Title\n\nSome words {secret} more words.\n"):
            expected = find_secrets_line_by_line(text)
            assert expected, secret
            assert find_secrets(text) == expected


@pytest.mark.parametrize("name, index, rx", PATTERNS, ids=[f"{n}-{k}" for k, (n, _i, _r) in enumerate(PATTERNS)])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(data=st.data())
def test_any_string_a_pattern_matches_passes_its_prefilter(name: str, index: int, rx: re.Pattern[str], data: st.DataObject) -> None:
    try:
        strategy = st.from_regex(rx, fullmatch=False)
    except Exception:  # a construct hypothesis cannot generate (a look-behind): the other tests cover it
        pytest.skip(f"hypothesis cannot generate {name}")
    text = data.draw(strategy)
    assert rx.search(text)
    prefilter = secret_prefilter()
    # the scan is line by line (``str.splitlines``): a line the pattern matches is marked for
    # its plugin, alone and inside the whole text
    matching = [n for n, line in enumerate(text.splitlines(), start=1) if rx.search(line)]
    marked = dict(prefilter.marked_lines(text, text.splitlines()))
    for number in matching:
        assert index in prefilter.on_line(text.splitlines()[number - 1], [index])
        assert index in marked.get(number, [])


# Prose with secrets dropped in at odd places: line starts and ends, other line breaks (CR, form
# feed, U+2028), case variants (and the three characters IGNORECASE adds), long lines scanned in
# windows.
_WORDS = st.sampled_from(["the", "key", "pass", "token", "cl", "sl", "AWS", "api", "Deploy", "ſecret", "İAM", "ıd", ":", "=", '"', "'", "[", "]", "_", "-"])
_BREAKS = st.sampled_from(["\n", "\r\n", "\r", "\x0c", "\u2028", " ", " ", " "])


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            secret = draw(st.sampled_from(SECRETS))
            parts.append(secret.upper() if draw(st.booleans()) else secret)
        elif kind == 1:
            parts.append(draw(_WORDS))
        elif kind == 2:
            parts.append(draw(st.text(alphabet=string.ascii_letters + string.digits + "_-=:./\"' ", max_size=80)))
        else:
            parts.append("x" * draw(st.integers(0, 2100)))
        parts.append(draw(_BREAKS))
    return "".join(parts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=texts())
def test_the_prefiltered_scan_equals_the_line_by_line_scan(text: str) -> None:
    assert find_secrets(text) == find_secrets_line_by_line(text)
