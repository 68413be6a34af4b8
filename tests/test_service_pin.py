"""Supervisor PINs: hashed, checked, rate-limited; sessions expire."""

from __future__ import annotations

import pytest

from controller.service.pin import PinGuard, hash_pin, verify_pin


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def guard(clock: Clock, **kw: float) -> PinGuard:
    return PinGuard(
        {"jsmith": hash_pin("2468", iterations=1000), "apatel": hash_pin("13579", iterations=1000)},
        clock=clock,
        **kw,  # type: ignore[arg-type]
    )


def test_a_pin_hash_verifies_its_pin_only() -> None:
    stored = hash_pin("2468", iterations=1000)
    assert "2468" not in stored
    assert verify_pin("2468", stored)
    assert not verify_pin("2469", stored)
    assert hash_pin("2468", iterations=1000) != stored  # salted


@pytest.mark.parametrize("pin", ["", "12", "abcd", "12 34"])
def test_a_short_or_non_digit_pin_cannot_be_set(pin: str) -> None:
    with pytest.raises(ValueError):
        hash_pin(pin)


def test_the_right_pin_opens_a_session_naming_the_supervisor() -> None:
    clock = Clock()
    g = guard(clock, session_seconds=120)
    result = g.login("apatel", "13579", "127.0.0.1")
    assert result.ok and result.token
    assert g.session(result.token) == "apatel"
    assert not g.login("apatel", "2468", "127.0.0.1").ok  # another supervisor's PIN
    clock.now += 121
    assert g.session(result.token) is None  # expired


def test_repeated_wrong_pins_lock_the_client_out_then_longer() -> None:
    clock = Clock()
    g = guard(clock, max_attempts=3, lockout_seconds=30)
    for _ in range(2):
        r = g.login("jsmith", "0000", "10.0.0.5")
        assert not r.ok and r.retry_after == 0
    r = g.login("jsmith", "0000", "10.0.0.5")
    assert not r.ok and r.retry_after == 30
    # While locked out even the right PIN is not accepted.
    r = g.login("jsmith", "2468", "10.0.0.5")
    assert not r.ok and 0 < r.retry_after <= 30
    # Nor from another client: the id has its own count (a proxy may name any client).
    r = g.login("jsmith", "2468", "10.0.0.6")
    assert not r.ok and 0 < r.retry_after <= 30
    # Another client, for another supervisor, is not locked out by this one.
    assert g.login("apatel", "13579", "10.0.0.6").ok
    clock.now += 31
    for _ in range(3):
        r = g.login("jsmith", "1111", "10.0.0.5")
    assert r.retry_after == 60  # the second lockout is twice as long
    clock.now += 61
    assert g.login("jsmith", "2468", "10.0.0.5").ok


def test_an_unknown_supervisor_counts_as_a_wrong_pin() -> None:
    clock = Clock()
    g = guard(clock, max_attempts=2, lockout_seconds=10)
    assert not g.login("nobody", "2468", "c").ok
    assert g.login("nobody", "2468", "c").retry_after == 10


def test_logout_ends_the_session() -> None:
    g = guard(Clock())
    token = g.login("jsmith", "2468", "c").token
    assert token is not None
    g.logout(token)
    assert g.session(token) is None


def test_a_long_attack_stays_locked_out_an_hour_at_a_time() -> None:
    clock = Clock()
    g = guard(clock, max_attempts=1, lockout_seconds=60)
    for _ in range(3000):  # more lockouts than 2**n fits a float for
        r = g.login("jsmith", "0000", "c")
        clock.now += r.retry_after
    assert r.retry_after == 3600
