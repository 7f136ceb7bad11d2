"""API keys, as the Go side has them (remote/keys.go).

A client presents its key in the metadata "authorization: Bearer KEY" (or
"x-baton-key: KEY"). A server with keys refuses a call whose key is missing or matches
no key (UNAUTHENTICATED), and one whose key does not grant the name it addresses: keys
are per served name (an agent), and a default key, given without a name, grants every
name that has no key of its own.

The key file format is the Go side's: one entry per line, NAME=KEY, or a bare KEY for
the default key; blank lines and lines starting with # are ignored; white space around
names and keys is trimmed. Keys are at least MIN_KEY_LEN bytes of printable ASCII with
no white space; ``new_key`` makes good ones.
"""

from __future__ import annotations

import base64
import hmac
import os
import secrets
from collections.abc import Iterable, Mapping

from .errors import ConfigError

__all__ = ["MIN_KEY_LEN", "Keys", "new_key"]

#: The shortest API key accepted, in bytes.
MIN_KEY_LEN = 16

AUTHORIZATION = "authorization"
KEY_HEADER = "x-baton-key"
BEARER = "Bearer "


def new_key() -> str:
    """A new random key: 32 bytes from the OS's source, base64url-encoded."""
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode("ascii")


def _check_key(key: str) -> str:
    if not isinstance(key, str):
        return f"is a {type(key).__name__}, want a string"
    if len(key.encode("utf-8")) < MIN_KEY_LEN:
        return f"is {len(key.encode('utf-8'))} bytes long, want at least {MIN_KEY_LEN}"
    if any(not (" " < c <= "~") for c in key):
        return "holds a byte that is not printable ASCII or is white space"
    return ""


class Keys:
    """API keys by name; the name "" is the default key. Immutable; safe to share
    between threads. Every problem is reported at once in one ConfigError; the keys
    themselves never appear in errors."""

    def __init__(self, by_name: Mapping[str, str]):
        problems = []
        names: list[str] = []
        keys: list[bytes] = []
        default: bytes | None = None
        for name in sorted(by_name):
            key = by_name[name]
            err = _check_key(key)
            if err:
                problems.append(("the default key" if name == "" else f"the key of {name}") + " " + err)
                continue
            if name == "":
                default = key.encode("ascii")
                continue
            if any(c.isspace() for c in name):
                problems.append(f"name {name!r} has white space")
                continue
            names.append(name)
            keys.append(key.encode("ascii"))
        if problems:
            raise ConfigError("keys: " + "; ".join(problems))
        self._names: tuple[str, ...] = tuple(names)
        self._keys: tuple[bytes, ...] = tuple(keys)
        self._default = default

    @classmethod
    def parse(cls, text: str) -> Keys:
        """Reads keys in the key file format."""
        by_name = {}
        problems = []
        for line_no, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, key = line.partition("=")
            if not sep:
                name, key = "", line
            name, key = name.strip(), key.strip()
            if sep and not name:
                problems.append(f"line {line_no}: empty name before '='")
                continue
            if name in by_name:
                what = "the default key" if name == "" else f"a key for {name}"
                problems.append(f"line {line_no}: {what} is given twice")
                continue
            err = _check_key(key)
            if err:
                problems.append(f"line {line_no}: the key {err}")
                continue
            by_name[name] = key
        if problems:
            raise ConfigError("key file: " + "; ".join(problems))
        if not by_name:
            raise ConfigError("key file: no key")
        return cls(by_name)

    @classmethod
    def read(cls, path: os.PathLike[str] | str) -> Keys:
        """Reads a key file."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            return cls.parse(text)
        except ConfigError as e:
            raise ConfigError(f"{os.fspath(path)}: {e}") from None

    @property
    def names(self) -> tuple[str, ...]:
        """The names that have a key of their own, sorted."""
        return self._names

    def empty(self) -> bool:
        """Whether there is no key at all (a server with none accepts every call)."""
        return not self._names and self._default is None

    def key_for(self, name: str) -> str | None:
        """The key a client presents to the server of name: its own, or the default
        key; None when there is neither."""
        if name in self._names:
            return self._keys[self._names.index(name)].decode("ascii")
        return self._default.decode("ascii") if self._default is not None else None

    def grant(self, presented: bytes) -> Grant:
        """What a presented key grants. Compares it with every key in constant time,
        without stopping at a match."""
        matched = [hmac.compare_digest(presented, k) for k in self._keys]
        default = self._default is not None and hmac.compare_digest(presented, self._default)
        return Grant(self, tuple(matched), default)


class Grant:
    """What one presented key grants."""

    def __init__(self, keys: Keys, matched: tuple[bool, ...], default: bool):
        self._keys = keys
        self._matched = matched
        self._default = default

    def any(self) -> bool:
        """Whether the key matched some key."""
        return self._default or any(self._matched)

    def allows(self, name: str) -> bool:
        """Whether the key grants name: its own key, or the default key when name has
        none."""
        names = self._keys.names
        if name in names:
            return self._matched[names.index(name)]
        return self._default


def presented_key(metadata: Iterable[tuple[str, object]]) -> bytes | None:
    """The key a call presents in its metadata: "authorization: Bearer KEY" first, else
    "x-baton-key: KEY"; None when there is none."""
    fallback = None
    for k, v in metadata:
        if isinstance(v, bytes):
            continue
        if k == AUTHORIZATION and v.startswith(BEARER):
            return v[len(BEARER) :].strip().encode("utf-8")
        if k == KEY_HEADER and fallback is None:
            fallback = v.strip().encode("utf-8")
    return fallback


def as_keys(key) -> Keys:
    """Keys from what a server is given: None (no key), a str (the default key), a
    mapping of names to keys ("" the default), or Keys."""
    if key is None:
        return Keys({})
    if isinstance(key, Keys):
        return key
    if isinstance(key, str):
        return Keys({"": key})
    if isinstance(key, Mapping):
        return Keys(key)
    raise ConfigError(f"key: want a str, a mapping of names to keys or Keys, got {type(key).__name__}")
