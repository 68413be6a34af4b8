"""A table's Ed25519 signing key: made by ``floorctl keygen``, read by the table and ``replay``.

``table.key`` is the private key (PKCS #8 PEM, unencrypted, mode 0600: the table service reads
it at start); ``table.pub`` is the public key (SubjectPublicKeyInfo PEM), which goes to the
floor's key registry and to whoever verifies. A key's *id* is the SHA-256 of its 32 raw public
bytes, in hex: each signed head names the key that signed it.

No key material is ever logged or put in a message: errors name the file only.
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from controller.store.db import StoreError

PRIVATE_NAME = "table.key"
PUBLIC_NAME = "table.pub"


class KeyFileError(StoreError):
    """A key file that is missing, unreadable or not an Ed25519 key (names the file only)."""


def _raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id_of(key: Ed25519PublicKey) -> str:
    return hashlib.sha256(_raw_public(key)).hexdigest()


@dataclass(frozen=True)
class PublicKey:
    key: Ed25519PublicKey
    key_id: str

    @classmethod
    def of(cls, key: Ed25519PublicKey) -> PublicKey:
        return cls(key, key_id_of(key))

    def verify(self, signature: str, message: bytes) -> bool:
        """Whether ``signature`` (base64) is this key's over ``message``."""
        try:
            raw = base64.b64decode(signature, validate=True)
            self.key.verify(raw, message)
        except (InvalidSignature, ValueError):
            return False
        return True

    def pem(self) -> str:
        return self.key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")


class SigningKey:
    """A private key in memory; its repr never shows it."""

    def __init__(self, key: Ed25519PrivateKey, source: str = "") -> None:
        self._key = key
        self.source = source
        self.public = PublicKey.of(key.public_key())

    @property
    def key_id(self) -> str:
        return self.public.key_id

    def sign(self, message: bytes) -> str:
        """The signature over ``message``, base64."""
        return base64.b64encode(self._key.sign(message)).decode("ascii")

    def __repr__(self) -> str:
        return f"SigningKey(key_id={self.key_id[:16]}…, source={self.source!r})"

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(Ed25519PrivateKey.generate(), "(generated)")


def generate_pair(directory: Path) -> tuple[Path, Path, SigningKey]:
    """Write a new key pair into ``directory`` (``table.key`` mode 0600, ``table.pub``);
    refuses to overwrite either. Returns both paths and the key."""
    directory.mkdir(parents=True, exist_ok=True)
    private, public = directory / PRIVATE_NAME, directory / PUBLIC_NAME
    for path in (private, public):
        if path.exists():
            raise KeyFileError(f"{path} already exists: a table's key is never overwritten")
    key = SigningKey.generate()
    pem = key._key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    # Created 0600 from the first byte (no window where another user could read it).
    fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, pem)
        os.fsync(fd)
    finally:
        os.close(fd)
    public.write_text(key.public.pem(), encoding="ascii")
    return private, public, SigningKey(key._key, str(private))


def _read_key_file(path: Path, what: str) -> bytes:
    """A key file's bytes; :class:`KeyFileError` naming it (``what`` and path) if unreadable."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise KeyFileError(f"{what} {path}: no such file") from None
    except OSError as exc:
        raise KeyFileError(f"{what} {path}: cannot read it ({exc.strerror})") from None


def load_signing_key(path: Path | str) -> SigningKey:
    """The private key in ``path``; :class:`KeyFileError` naming the file if it cannot be used."""
    path = Path(path)
    data = _read_key_file(path, "signing key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise KeyFileError(
            f"signing key {path}: not an unencrypted PEM private key (make one with "
            "floorctl keygen)"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"signing key {path}: not an Ed25519 key")
    return SigningKey(key, str(path))


def load_public_key(path: Path | str) -> PublicKey:
    """The public key in ``path`` (a ``table.pub``)."""
    path = Path(path)
    return public_key_from_pem(_read_key_file(path, "public key"), str(path))


def public_key_from_pem(data: bytes | str, where: str = "public key") -> PublicKey:
    raw = data.encode("ascii") if isinstance(data, str) else data
    try:
        key = serialization.load_pem_public_key(raw)
    except (ValueError, TypeError):
        raise KeyFileError(f"{where}: not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{where}: not an Ed25519 public key")
    return PublicKey.of(key)
