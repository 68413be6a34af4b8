"""PINs: salted PBKDF2 hashes in the config, rate-limited attempts, short supervisor sessions.

There is no default PIN: a table config names each supervisor (and each dealer) with the hash
of their PIN (`floorctl pin-hash` makes one), and the service refuses to start without at least
one supervisor. Wrong PINs are counted per client address (the peer's own address: proxy headers
are not trusted unless a proxy is configured), for supervisors and dealers apart, so a dealer's
own right PIN never clears a count of wrong supervisor PINs. The counts are bounded: past
:data:`MAX_CLIENTS` addresses with failures on record, every further address shares one count,
so many addresses buy an attacker no more guesses than one.

Wrong PINs are counted per id as well (each supervisor's, each dealer's; ids not in the config
share one count), and either count locks: behind a trusted proxy, where the address is what
the proxy says, a new ``X-Forwarded-For`` on every guess still meets the id's count.
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
MAX_CLIENTS = 64  # addresses with failures on record; beyond, they share one count
MAX_SESSIONS = 8  # supervisor sessions open at once (the oldest ends first)
FORGET_AFTER = 3600.0  # seconds after which a client's last failure, if not locked, is forgotten
OVERFLOW = "*"  # the shared count of addresses beyond MAX_CLIENTS


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
    last: float = 0.0


@dataclass(frozen=True)
class LoginResult:
    ok: bool
    who: str | None = None
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
    """Checks PINs with a lockout after repeated failures.

    After `max_attempts` consecutive failures from one client, that client is locked out
    for `lockout_seconds`, doubling with each further lockout (capped at one hour). A
    success clears the count. While locked out, PINs are not even checked. A supervisor's
    PIN opens a session (a token) for `session_seconds`; a dealer's only says who signs in.
    """

    supervisors: dict[str, str]  # id -> stored hash
    max_attempts: int = 5
    lockout_seconds: float = 60.0
    session_seconds: float = 120.0
    clock: Callable[[], float] = time.monotonic
    dealers: dict[str, str] = field(default_factory=dict)  # id -> stored hash
    _attempts: dict[str, _Attempts] = field(default_factory=dict)
    _ids: dict[str, _Attempts] = field(default_factory=dict)  # per id (bounded by the config)
    _sessions: dict[str, Session] = field(default_factory=dict)

    def login(self, supervisor: str, pin: str, client: str) -> LoginResult:
        """A supervisor's PIN: a session token when right."""
        result = self._check(self.supervisors, supervisor, pin, client, "supervisor")
        if not result.ok or result.who is None:
            return result
        now = self.clock()
        token = secrets.token_urlsafe(24)
        self._sessions[token] = Session(result.who, now + self.session_seconds)
        while len(self._sessions) > MAX_SESSIONS:
            del self._sessions[next(iter(self._sessions))]
        return LoginResult(ok=True, who=result.who, token=token, expires_in=self.session_seconds)

    def sign_in(self, dealer: str, pin: str, client: str) -> LoginResult:
        """A dealer's PIN: ok when right (no session: the dealer on duty is the table's)."""
        return self._check(self.dealers, dealer, pin, client, "dealer")

    def _check(
        self, book: dict[str, str], who: str, pin: str, client: str, role: str
    ) -> LoginResult:
        now = self.clock()
        key = f"{role} {client}"
        state = self._bucket(key, role, now)
        who = _canonical(book, who)
        stored = book.get(who)
        by_id = self._ids.setdefault(
            f"{role} {who if stored is not None else OVERFLOW}", _Attempts()
        )
        locked = max(state.locked_until, by_id.locked_until)
        if locked > now:
            return LoginResult(ok=False, retry_after=locked - now, reason="too many wrong PINs")
        # Check a PIN even for an unknown id so timing does not reveal valid ids.
        if stored is None:
            verify_pin(pin, next(iter(book.values()), _DUMMY))
            ok = False
        else:
            ok = verify_pin(pin, stored)
        if ok:
            if self._attempts.get(key) is state:
                del self._attempts[key]  # a success clears the count (not the shared one)
            by_id.failures = 0
            return LoginResult(ok=True, who=who)
        locked_for = 0.0
        for count in (state, by_id):
            count.failures += 1
            count.last = now
            if count.failures >= self.max_attempts:
                count.failures = 0
                # Doubling, capped at an hour (the exponent too: a long attack must not overflow).
                duration = min(self.lockout_seconds * (2 ** min(count.lockouts, 32)), 3600.0)
                count.lockouts += 1
                count.locked_until = now + duration
                locked_for = max(locked_for, duration)
        if locked_for > 0:
            return LoginResult(ok=False, retry_after=locked_for, reason="too many wrong PINs")
        left = self.max_attempts - max(state.failures, by_id.failures)
        return LoginResult(ok=False, reason=f"wrong {role} or PIN ({left} tries left)")

    def _bucket(self, key: str, role: str, now: float) -> _Attempts:
        """The client's count of failures; beyond MAX_CLIENTS addresses, the role's shared one."""
        found = self._attempts.get(key)
        if found is not None:
            return found
        if len(self._attempts) >= MAX_CLIENTS:
            stale = [
                k
                for k, a in self._attempts.items()
                if not k.endswith(OVERFLOW)
                and a.locked_until <= now
                and a.last + FORGET_AFTER < now
            ]
            for old in stale:
                del self._attempts[old]
        if len(self._attempts) >= MAX_CLIENTS:
            return self._attempts.setdefault(f"{role} {OVERFLOW}", _Attempts())
        return self._attempts.setdefault(key, _Attempts())

    @property
    def clients_on_record(self) -> int:
        """How many counts of failures are kept (bounded by MAX_CLIENTS + the shared one)."""
        return len(self._attempts)

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


def _canonical(book: dict[str, str], who: str) -> str:
    """The id as the config spells it (the screen's id pad types lower case)."""
    if who in book:
        return who
    folded = who.casefold()
    return next((known for known in book if known.casefold() == folded), who)


_DUMMY = hash_pin("0000", iterations=1000, salt=b"floorctl-dummy!!")
