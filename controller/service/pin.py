"""Supervisor PINs: salted PBKDF2 hashes in the config, rate-limited attempts, short sessions.

There is no default PIN: a table config names each supervisor with the hash of their PIN
(`floorctl pin-hash` makes one), and the service refuses to start without at least one.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

SCHEME = "pbkdf2-sha256"
DEFAULT_ITERATIONS = 200_000
MIN_PIN_LENGTH = 4


class PinFormatError(ValueError):
    """A stored PIN hash that cannot be used."""


def hash_pin(pin: str, *, iterations: int = DEFAULT_ITERATIONS, salt: bytes | None = None) -> str:
    """Return the storable form `pbkdf2-sha256$<iterations>$<salt hex>$<digest hex>`."""
    if len(pin) < MIN_PIN_LENGTH or not pin.isdigit():
        raise ValueError(f"a PIN is at least {MIN_PIN_LENGTH} digits, got {len(pin)} characters")
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha256", pin.encode(), salt, iterations)
    return f"{SCHEME}${iterations}${salt.hex()}${digest.hex()}"


def parse_pin_hash(stored: str) -> tuple[int, bytes, bytes]:
    parts = stored.split("$")
    if len(parts) != 4 or parts[0] != SCHEME:
        raise PinFormatError(f"expected '{SCHEME}$<iterations>$<salt>$<digest>'")
    try:
        iterations = int(parts[1])
        salt = bytes.fromhex(parts[2])
        digest = bytes.fromhex(parts[3])
    except ValueError as exc:
        raise PinFormatError(f"malformed hash: {exc}") from None
    if iterations < 1000 or len(salt) < 8 or len(digest) != 32:
        raise PinFormatError("iterations must be >= 1000, salt >= 8 bytes, digest 32 bytes")
    return iterations, salt, digest


def verify_pin(pin: str, stored: str) -> bool:
    iterations, salt, digest = parse_pin_hash(stored)
    candidate = hashlib.pbkdf2_hmac("sha256", pin.encode(), salt, iterations)
    return hmac.compare_digest(candidate, digest)


@dataclass
class _Attempts:
    failures: int = 0
    lockouts: int = 0
    locked_until: float = 0.0


@dataclass(frozen=True)
class LoginResult:
    ok: bool
    supervisor: str | None = None
    token: str | None = None
    expires_in: float = 0.0
    retry_after: float = 0.0  # > 0 when locked out
    reason: str = ""


@dataclass
class Session:
    supervisor: str
    expires: float


@dataclass
class PinGuard:
    """Checks supervisor PINs with a lockout after repeated failures.

    After `max_attempts` consecutive failures from one client, that client is locked out
    for `lockout_seconds`, doubling with each further lockout (capped at one hour). A
    success clears the count. While locked out, PINs are not even checked.
    """

    supervisors: dict[str, str]  # id -> stored hash
    max_attempts: int = 5
    lockout_seconds: float = 60.0
    session_seconds: float = 120.0
    clock: Callable[[], float] = time.monotonic
    _attempts: dict[str, _Attempts] = field(default_factory=dict)
    _sessions: dict[str, Session] = field(default_factory=dict)

    def login(self, supervisor: str, pin: str, client: str) -> LoginResult:
        now = self.clock()
        state = self._attempts.setdefault(client, _Attempts())
        if state.locked_until > now:
            return LoginResult(
                ok=False, retry_after=state.locked_until - now, reason="too many wrong PINs"
            )
        stored = self.supervisors.get(supervisor)
        # Check a PIN even for an unknown supervisor so timing does not reveal valid ids.
        if stored is None:
            verify_pin(pin, next(iter(self.supervisors.values()), _DUMMY))
            ok = False
        else:
            ok = verify_pin(pin, stored)
        if ok:
            state.failures = 0
            state.lockouts = 0
            token = secrets.token_urlsafe(24)
            self._sessions[token] = Session(supervisor, now + self.session_seconds)
            return LoginResult(
                ok=True, supervisor=supervisor, token=token, expires_in=self.session_seconds
            )
        state.failures += 1
        if state.failures >= self.max_attempts:
            state.failures = 0
            duration = min(self.lockout_seconds * (2**state.lockouts), 3600.0)
            state.lockouts += 1
            state.locked_until = now + duration
            return LoginResult(ok=False, retry_after=duration, reason="too many wrong PINs")
        left = self.max_attempts - state.failures
        return LoginResult(ok=False, reason=f"wrong supervisor or PIN ({left} tries left)")

    def session(self, token: str | None) -> str | None:
        """The supervisor a session token belongs to, or None if unknown or expired."""
        if not token:
            return None
        now = self.clock()
        for key in [k for k, s in self._sessions.items() if s.expires <= now]:
            del self._sessions[key]
        found = self._sessions.get(token)
        return found.supervisor if found is not None else None

    def logout(self, token: str) -> None:
        self._sessions.pop(token, None)


_DUMMY = hash_pin("0000", iterations=1000, salt=b"floorctl-dummy!!")
