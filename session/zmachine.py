"""Read what Jericho does not expose, per the Z-Machine Standards Document 1.1 (sections 3, 6, 11-13).

- From the story file: each object's vocabulary (its dictionary words). Infocom games keep an object's nouns in a
  property holding dictionary addresses (ZIL's SYNONYM), Inform games in `name`; either way, a property whose data is
  a list of dictionary-entry addresses names the object. Vocabulary is static, so reading the story file once is exact.
- From dynamic memory, every turn (`ObjectTable`): each object's parent, sibling, child and attributes, the global
  variables, and short names. Jericho caps its object count (at 255 on many games, 176 on spirit), so rooms and items
  past the cap were invisible; the table's real size is where the first property table begins.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

GLOBAL_COUNT = 240
"""Global variables 0x10-0xFF: a table of 240 words at the header's address 0x0C."""


def _word(data: bytes, address: int) -> int:
    return struct.unpack_from(">H", data, address)[0]


@dataclass(frozen=True)
class ObjectLayout:
    """Where the object table's entries are and how they are laid out (versions 1-3 and 4+ differ)."""

    version: int
    first_entry: int
    entry_size: int
    count: int

    @classmethod
    def of(cls, memory: bytes) -> ObjectLayout:
        version = memory[0]
        defaults, entry_size, pointer_at = (63, 14, 12) if version >= 4 else (31, 9, 7)
        first = _word(memory, 0x0A) + defaults * 2
        # Property tables follow the object entries: the lowest property address seen bounds the count. Both are in
        # dynamic memory (the game changes them), which ends at the static memory base.
        end, count = min(len(memory), _word(memory, 0x0E)), 0
        while first + (count + 1) * entry_size <= end and count < 0xFFFF:
            end = min(end, _word(memory, first + count * entry_size + pointer_at))
            count += 1
        return cls(version, first, entry_size, count)

    @property
    def attribute_bytes(self) -> int:
        return 6 if self.version >= 4 else 4

    @property
    def pointer_at(self) -> int:
        return 12 if self.version >= 4 else 7


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


# -- live reads of dynamic memory ---------------------------------------------------------------------------
_ALPHABET_A0 = "abcdefghijklmnopqrstuvwxyz"
_ALPHABET_A1 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ALPHABET_A2 = " \n0123456789.,!?_#'\"/\\-:()"  # z-chars 6-31; 6 is the ZSCII escape, 7 a new line
_EXTRA_ZSCII = "äöüÄÖÜß»«ëïÿËÏáéíóúýÁÉÍÓÚÝàèìòùÀÈÌÒÙâêîôûÂÊÎÔÛåÅøØãñõÃÑÕæÆçÇþðÞÐ£œŒ¡¿"
"""ZSCII 155-223 in the default Unicode translation table (Standard section 3.8.5.3)."""


def attribute_mask(width: int, left_out: frozenset[int] | set[int]) -> np.ndarray:
    """A mask over `width` bytes of attribute flags (attribute 0 is the top bit of the first byte) that keeps every
    attribute but those `left_out`."""
    mask = np.full(width, 0xFF, dtype=np.uint8)
    for attribute in left_out:
        if attribute // 8 < width:
            mask[attribute // 8] &= ~np.uint8(0x80 >> attribute % 8)
    return mask


def attributes_set(flags: np.ndarray) -> frozenset[int]:
    """The attribute numbers whose bits are set in one row of attribute flag bytes."""
    values = flags.tolist()
    return frozenset(byte * 8 + bit for byte, value in enumerate(values) for bit in range(8) if value & 0x80 >> bit)


@dataclass(frozen=True)
class WorldSnapshot:
    """The object tree, attributes and globals read from dynamic memory at one moment (arrays indexed by
    object number - 1), plus Jericho's curated "special RAM" bytes for the game."""

    parents: np.ndarray
    siblings: np.ndarray
    children: np.ndarray
    attributes: np.ndarray
    """One row per object, `attribute_bytes` bytes each."""
    globals: np.ndarray
    special: np.ndarray

    def parent(self, num: int) -> int:
        return int(self.parents[num - 1]) if 0 < num <= len(self.parents) else 0

    def child(self, num: int) -> int:
        return int(self.children[num - 1]) if 0 < num <= len(self.children) else 0

    def sibling(self, num: int) -> int:
        return int(self.siblings[num - 1]) if 0 < num <= len(self.siblings) else 0

    def room_of(self, num: int, rooms_container: int) -> int | None:
        """The room (outermost container below `rooms_container`, or parentless) holding object `num`; None for
        an object outside the tree."""
        current = self.parent(num)
        for _ in range(len(self.parents)):
            if current == 0:
                return None
            parent = self.parent(current)
            if parent == 0 or parent == rooms_container:
                return current
            current = parent
        return None

    def contents(self, num: int) -> list[int]:
        """The objects directly inside `num`, in the game's own (child, then sibling) order."""
        found: list[int] = []
        current = self.child(num)
        while current and len(found) <= len(self.parents):
            found.append(current)
            current = self.sibling(current)
        return found


class ObjectTable:
    """Reads the object table, globals and short names from a copy of dynamic memory (Jericho's `_get_ram()`).

    Short names are decoded here (abbreviations and custom alphabets included) because Jericho's names are
    missing past its object cap and garbled in some games.
    """

    def __init__(self, story: bytes):
        self.story = story
        self.layout = ObjectLayout.of(story)
        self.version = self.layout.version
        self.globals_address = _word(story, 0x0C)
        self._names: dict[tuple[int, int], str] = {}

    @property
    def count(self) -> int:
        return self.layout.count

    def snapshot(self, ram: np.ndarray, special: np.ndarray) -> WorldSnapshot:
        layout = self.layout
        entries = ram[layout.first_entry : layout.first_entry + layout.count * layout.entry_size]
        entries = entries.reshape(layout.count, layout.entry_size)
        links = layout.attribute_bytes
        if self.version >= 4:
            words = entries[:, links : links + 6].astype(np.int32)
            parents, siblings, children = (words[:, i] * 256 + words[:, i + 1] for i in (0, 2, 4))
        else:
            parents, siblings, children = (entries[:, links + i].astype(np.int32) for i in range(3))
        table = ram[self.globals_address : self.globals_address + 2 * GLOBAL_COUNT].astype(np.int32)
        return WorldSnapshot(
            parents=parents,
            siblings=siblings,
            children=children,
            attributes=entries[:, :links].copy(),
            globals=table[0::2] * 256 + table[1::2],
            special=special,
        )

    def short_name(self, ram: np.ndarray | bytes, num: int) -> str:
        if not 0 < num <= self.count:
            return ""
        entry = self.layout.first_entry + (num - 1) * self.layout.entry_size
        address = int(ram[entry + self.layout.pointer_at]) * 256 + int(ram[entry + self.layout.pointer_at + 1])
        key = (num, address)
        if key not in self._names:
            memory = bytes(ram) + self.story[len(ram) :]
            length = memory[address] if address < len(memory) else 0
            self._names[key] = decode_zstring(memory, address + 1, self.version, length)
        return self._names[key]


def decode_zstring(memory: bytes, address: int, version: int, max_words: int | None = None, depth: int = 0) -> str:
    """Decode the Z-encoded string at `address` (versions 3 and later; earlier ones decode approximately)."""
    zchars: list[int] = []
    words = 0
    while address + 1 < len(memory):
        word = _word(memory, address)
        zchars += [(word >> 10) & 0x1F, (word >> 5) & 0x1F, word & 0x1F]
        address += 2
        words += 1
        if word & 0x8000 or (max_words is not None and words >= max_words):
            break
    alphabets = _alphabets(memory, version)
    abbreviations = _word(memory, 0x18)
    out: list[str] = []
    alphabet, i = 0, 0
    while i < len(zchars):
        z = zchars[i]
        i += 1
        if z == 0:
            out.append(" ")
        elif z in (1, 2, 3):
            if i < len(zchars) and depth == 0:
                entry = abbreviations + 2 * (32 * (z - 1) + zchars[i])
                if entry + 1 < len(memory):
                    out.append(decode_zstring(memory, 2 * _word(memory, entry), version, depth=1))
            i += 1
        elif z in (4, 5):
            alphabet = z - 3
            continue
        elif alphabet == 2 and z == 6:
            if i + 1 < len(zchars):
                out.append(_zscii(zchars[i] << 5 | zchars[i + 1]))
            i += 2
        else:
            out.append(alphabets[alphabet][z - 6])
        alphabet = 0
    return "".join(out)


def _alphabets(memory: bytes, version: int) -> tuple[str, str, str]:
    table = _word(memory, 0x34) if version >= 5 else 0
    if table:
        rows = [bytes(memory[table + 26 * row : table + 26 * (row + 1)]) for row in range(3)]
        custom = tuple("".join(_zscii(c) for c in row) for row in rows)
        return custom[0], custom[1], " \n" + custom[2][2:]
    return _ALPHABET_A0, _ALPHABET_A1, _ALPHABET_A2


def _zscii(code: int) -> str:
    if code == 13:
        return "\n"
    if 32 <= code <= 126:
        return chr(code)
    if 155 <= code < 155 + len(_EXTRA_ZSCII):
        return _EXTRA_ZSCII[code - 155]
    return ""
