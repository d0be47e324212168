"""Read what Jericho does not expose from the story file: each object's vocabulary (its dictionary words).

Infocom games keep an object's nouns in a property holding dictionary addresses (ZIL's SYNONYM), Inform games in
`name`; either way, a property whose data is a list of dictionary-entry addresses names the object. Vocabulary is
static, so reading the story file once is exact. Layout per the Z-Machine Standards Document 1.1, sections 12-13.
"""

from __future__ import annotations

import struct


def _word(data: bytes, address: int) -> int:
    return struct.unpack_from(">H", data, address)[0]


def dictionary_addresses(data: bytes) -> tuple[int, int, int]:
    """(first entry address, entry length, entry count) of the main dictionary."""
    start = _word(data, 0x08)
    separators = data[start]
    header = start + 1 + separators
    entry_length = data[header]
    count = abs(struct.unpack_from(">h", data, header + 1)[0])
    return header + 3, entry_length, count


def object_properties(data: bytes, num: int) -> dict[int, bytes]:
    """Property number -> raw data of object `num` as stored in the story file."""
    version = data[0]
    table = _word(data, 0x0A)
    defaults, entry_size, pointer_at = (63, 14, 12) if version >= 4 else (31, 9, 7)
    entry = table + defaults * 2 + (num - 1) * entry_size
    address = _word(data, entry + pointer_at)
    address += 1 + 2 * data[address]  # skip the short name
    properties: dict[int, bytes] = {}
    while data[address] != 0:
        size_byte = data[address]
        if version >= 4:
            number = size_byte & 0x3F
            if size_byte & 0x80:
                length = (data[address + 1] & 0x3F) or 64
                address += 2
            else:
                length = 2 if size_byte & 0x40 else 1
                address += 1
        else:
            number, length = size_byte & 0x1F, (size_byte >> 5) + 1
            address += 1
        properties[number] = data[address : address + length]
        address += length
    return properties


def object_vocabulary(data: bytes, words: list[str], object_count: int) -> dict[int, frozenset[str]]:
    """Object number -> the dictionary words naming it. `words` is the dictionary in entry order."""
    first, entry_length, count = dictionary_addresses(data)
    if count != len(words) or entry_length == 0:
        return {}
    by_address = {first + i * entry_length: words[i] for i in range(count)}
    vocabulary: dict[int, frozenset[str]] = {}
    for num in range(1, object_count + 1):
        found: set[str] = set()
        for value in object_properties(data, num).values():
            if value and len(value) % 2 == 0:
                addresses = [_word(value, i) for i in range(0, len(value), 2)]
                if all(a in by_address for a in addresses):
                    found.update(by_address[a] for a in addresses)
        if found:
            vocabulary[num] = frozenset(found)
    return vocabulary
