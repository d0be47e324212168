"""session.safe_text: secrets redacted, terminal control sequences stripped, unencodable characters replaced."""

from __future__ import annotations

import pytest

from session.safe_text import REDACTED, encodable, printable, redact

KEY = "sk-test-SECRET"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"invalid key {KEY}", f"invalid key {REDACTED}"),
        (f"{KEY}{KEY}", REDACTED * 2),
        (f"Authorization: Bearer {KEY}", f"Authorization: Bearer {REDACTED}"),
        ("{'authorization': 'Bearer other-token.x_y'}", f"{{'authorization': 'Bearer {REDACTED}'}}"),
        ('"BEARER abc123", more', f'"BEARER {REDACTED}", more'),
        ("nothing secret here", "nothing secret here"),
    ],
)
def test_redact(text, expected):
    assert redact(text, [KEY]) == expected


def test_redact_replaces_longer_secrets_first_and_ignores_empty_ones():
    assert redact("key sk-abc-long and sk-abc", ["sk-abc", "sk-abc-long", "", None]) == f"key {REDACTED} and {REDACTED}"


def test_redact_is_idempotent():
    once = redact(f"Bearer {KEY}", [KEY])
    assert redact(once, [KEY]) == once == f"Bearer {REDACTED}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\x1b[31mred\x1b[0m text", "red text"),
        ("\x1b[2J\x1b[Hcleared", "cleared"),
        ("\x1b]0;new title\x07after", "after"),
        ("\x1b]8;;http://x\x1b\\link", "link"),
        ("\x1b]unterminated string stays", "unterminated string stays"),
        ("bell\x07 nul\x00 bs\x08 cr\r del\x7f csi\x9b done", "bell nul bs cr del csi done"),
        ("keeps\ttabs\nand newlines", "keeps\ttabs\nand newlines"),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
        ("ünïcödé ✓", "ünïcödé ✓"),
    ],
)
def test_printable(text, expected):
    assert printable(text) == expected


def test_printable_output_has_no_control_character_and_encodes():
    noisy = "".join(chr(c) for c in range(0x00, 0xA0)) + "\ud83d\udfff"
    cleaned = printable(noisy)
    assert all(ch in "\t\n" or (ch.isprintable() or ch == "\ufffd") for ch in cleaned)
    cleaned.encode("utf-8")


def test_encodable_replaces_only_surrogates():
    assert encodable("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    assert encodable("\x1b[0m") == "\x1b[0m"
    assert encodable("😀") == "😀"
