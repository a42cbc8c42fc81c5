"""Slack tokens encrypted at rest: Fernet (AES-128-CBC + HMAC-SHA256, from `cryptography`) with the key(s) in
ADVISOR_TOKEN_KEY, so a copy of the database (a backup, a dump, a stolen volume) holds no usable token.

Why Fernet: authenticated encryption with a versioned, timestamped token format, one well-kept implementation
(the `cryptography` package), and MultiFernet for rotation: ADVISOR_TOKEN_KEY is a comma-separated list of keys,
the first encrypts, every one decrypts; after a new key is put first, `rotate` (gpu-advisor slack rotate-key)
re-encrypts each row with it, and the old key can then be dropped.

Errors never show a key or a token: a malformed key is named by its position in the list, a token that no key
opens is reported as "encrypted with a key ADVISOR_TOKEN_KEY does not hold".
"""
from __future__ import annotations

import re

from bot.records.errors import EXIT_USAGE, ConfigError
from bot.store.faults import StorageError

__all__ = ["TokenCipher", "TokenKeyError", "new_key", "KEY_ENV"]

KEY_ENV = "ADVISOR_TOKEN_KEY"
_FIX_MISSING = ("generate one with `gpu-advisor slack new-key` and set ADVISOR_TOKEN_KEY to it (keep it in the same "
                "secret store as SLACK_CLIENT_SECRET; without it the stored tokens cannot be read)")


class TokenKeyError(StorageError):
    """A stored token cannot be decrypted with the keys in ADVISOR_TOKEN_KEY (the key it was written with is gone)."""

    exit_code = EXIT_USAGE             # a setting to correct, not a database that is down


def new_key() -> str:
    """A fresh random Fernet key (32 random bytes, URL-safe base64: 44 characters)."""
    from cryptography.fernet import Fernet
    return Fernet.generate_key().decode("ascii")


def _keys(value: str | None) -> list[str]:
    return [k.strip() for k in re.split(r"[,\s]+", value or "") if k.strip()]


class TokenCipher:
    """encrypt / decrypt / rotate text with the keys of ADVISOR_TOKEN_KEY (first key encrypts, all decrypt)."""

    def __init__(self, keys: str | list[str]):
        from cryptography.fernet import Fernet, MultiFernet
        listed = _keys(keys) if isinstance(keys, str) else [k.strip() for k in keys if k and k.strip()]
        if not listed:
            raise ConfigError(f"{KEY_ENV} is not set: Slack tokens are stored encrypted and need a key",
                              fix=_FIX_MISSING)
        fernets = []
        for n, key in enumerate(listed, 1):
            try:
                fernets.append(Fernet(key.encode("ascii")))
            except (ValueError, UnicodeEncodeError):
                where = f"key {n} of {len(listed)}" if len(listed) > 1 else "its value"
                raise ConfigError(f"{KEY_ENV} is malformed: {where} is not a Fernet key (32 bytes in URL-safe "
                                  "base64, 44 characters ending in '=')",
                                  fix="generate one with `gpu-advisor slack new-key`; separate several keys with "
                                      "commas, the newest first") from None
        self.count = len(fernets)
        self._fernet = MultiFernet(fernets)

    @classmethod
    def from_env(cls) -> "TokenCipher":
        """The cipher of ADVISOR_TOKEN_KEY; ConfigError when it is missing or malformed (never showing it)."""
        import os
        return cls(os.environ.get(KEY_ENV) or "")

    def encrypt(self, text: str) -> str:
        return self._fernet.encrypt(text.encode("utf-8")).decode("ascii")

    def decrypt(self, token: str) -> str:
        from cryptography.fernet import InvalidToken
        try:
            return self._fernet.decrypt(token.encode("ascii")).decode("utf-8")
        except (InvalidToken, UnicodeError, AttributeError):
            raise TokenKeyError("a stored Slack token was encrypted with a key that ADVISOR_TOKEN_KEY does not "
                                "hold (or it was altered)",
                                fix="put the key the tokens were written with back into ADVISOR_TOKEN_KEY (after "
                                    "the new one: `new,old`), or reinstall the app in each workspace") from None

    def rotate(self, token: str) -> str:
        """The same secret encrypted with the first key (MultiFernet.rotate); TokenKeyError when no key opens it."""
        from cryptography.fernet import InvalidToken
        try:
            return self._fernet.rotate(token.encode("ascii")).decode("ascii")
        except (InvalidToken, UnicodeError, AttributeError):
            self.decrypt(token)                                  # raises the explained error
            raise                                                # pragma: no cover
