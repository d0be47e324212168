"""Make untrusted text safe to keep: no secrets, no terminal control sequences, nothing UTF-8 cannot encode.

Text from an LLM server (error bodies, replies) ends up in exception messages, the console and the episode's JSON
files. A server or proxy may echo the request's `Authorization` header back, and a hostile or broken one may send
escape sequences that rewrite a terminal, or lone surrogates that make `str.encode("utf-8")` raise. These helpers
are the one place that knows how to neutralise each of those.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[redacted]"
# `Bearer <token>` wherever it appears (a header echoed in a body, a repr of the request's headers)
_BEARER = re.compile(r"(\bbearer\s+)(?!" + re.escape(REDACTED) + r")[^\s'\",;}\]]+", re.IGNORECASE)
# ESC sequences: CSI (ESC [ ... final byte), terminated OSC/DCS/APC/PM/SOS strings (up to BEL or ESC \), and
# two-byte escapes (which also disarm an unterminated string without swallowing the text after it)
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[ -~]?"
)
# C0 controls except tab and newline, DEL, and the C1 controls (\x9b is an 8-bit CSI on some terminals)
_CONTROLS = r"\x00-\x08\x0b-\x1f\x7f-\x9f"
_SURROGATES = r"\ud800-\udfff"
_CONTROL = re.compile(f"[{_CONTROLS}]")
_SURROGATE = re.compile(f"[{_SURROGATES}]")
# Anything `printable` would change: every escape sequence starts with ESC, itself a control
_UNPRINTABLE = re.compile(f"[{_CONTROLS}{_SURROGATES}]")
REPLACEMENT = "\ufffd"


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every secret and every `Bearer <token>` value replaced by `[redacted]`.

    Longer secrets are replaced first so a secret that contains another is never left half visible. The Bearer
    rule catches a key we were not told about (one read by a proxy from another variable, say)."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    if "bearer" not in text.lower():  # the common case: a plain scan is 20 times faster than the pattern
        return text
    return _BEARER.sub(lambda match: match.group(1) + REDACTED, text)


def printable(text: str) -> str:
    """`text` without terminal escape sequences or control characters, and with lone surrogates replaced (see
    `encodable`); newlines and tabs are kept.

    Server text shown on a console must not be able to move the cursor, recolour or clear the screen, or set the
    window title; in a JSON log a NUL or an ESC only hides what was really said."""
    if not _UNPRINTABLE.search(text):  # the common case, one scan instead of three
        return text
    return encodable(_CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text)))


def encodable(text: str) -> str:
    """`text` with lone surrogates (which UTF-8 cannot encode) replaced by U+FFFD.

    JSON allows `"\\ud800"`, so a server can hand us a string that crashes the next `write()` or request body."""
    return _SURROGATE.sub(REPLACEMENT, text)
