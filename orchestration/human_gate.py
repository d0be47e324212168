"""The human side of a loop gate: show the loop, read one line of guidance."""

from __future__ import annotations

from typing import TextIO


def ask_for_guidance(description: str, recent: list[tuple[str, str]], ask_in: TextIO, ask_out: TextIO) -> str:
    """Print the loop and the last turns; return the guidance line ('' on an empty line or end of input)."""
    ask_out.write("\n=== LOOP GATE: the agent is stuck ===\n" + description + "\nLast turns:\n")
    for command, response in recent[-5:]:
        ask_out.write(f"  > {command}\n    {response.strip()[:160]}\n")
    ask_out.write("Guidance for the agent (one line; empty to continue without): ")
    ask_out.flush()
    line = ask_in.readline()
    if not (hasattr(ask_in, "isatty") and ask_in.isatty()):
        ask_out.write("\n")  # a terminal echoes the Enter key; a pipe or file does not
    return line.strip()
