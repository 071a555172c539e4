"""Failed sign-ins back off (paimon_sql/server/backoff.py): after five wrong passwords in a row of
a user, or from an address, attempts are refused unchecked for a doubling while; a success clears."""

import pytest

from paimon_sql.server import backoff as B
from paimon_sql.server.auth import Authenticator, add_user


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_a_user_backs_off_after_five_failures_for_a_doubling_while():
    clock = Clock()
    b = B.SignInBackoff(clock)
    for _ in range(B.FREE):
        assert not b.refused("alice", "10.0.0.1")
        b.failed("alice", "10.0.0.1")
    assert b.refused("alice", "10.0.0.2")  # the user, from anywhere
    assert not b.refused("bob", "10.0.0.1")  # the address: not after five
    clock.now += 1.0  # 2 ** 0 s after the fifth failure
    assert not b.refused("alice", "10.0.0.2")
    b.failed("alice", "10.0.0.2")  # the sixth: 2 s now
    clock.now += 1.5
    assert b.refused("alice", "10.0.0.3")
    clock.now += 0.5
    assert not b.refused("alice", "10.0.0.3")
    for _ in range(20):
        b.failed("alice", "")
    clock.now += B.MAX_SECONDS - 1
    assert b.refused("alice", "")  # capped at a minute, not 2 ** 21 s
    clock.now += 1
    assert not b.refused("alice", "")


def test_an_address_backs_off_after_twenty_failures_of_any_users():
    clock = Clock()
    b = B.SignInBackoff(clock)
    for i in range(B.FREE_ADDRESS):
        assert not b.refused(f"user{i}", "10.0.0.7")
        b.failed(f"user{i}", "10.0.0.7")
    assert b.refused("someone", "10.0.0.7") and not b.refused("someone", "10.0.0.8")
    clock.now += 1.0
    b.succeeded("user0", "10.0.0.7")  # a success from the address clears it
    b.failed("user1", "10.0.0.7")
    assert not b.refused("someone", "10.0.0.7")


def test_a_success_clears_and_old_failures_are_forgotten():
    clock = Clock()
    b = B.SignInBackoff(clock)
    for _ in range(B.FREE - 1):
        b.failed("carol", "10.0.0.9")
    b.succeeded("carol", "10.0.0.9")
    b.failed("carol", "10.0.0.9")
    assert not b.refused("carol", "10.0.0.9")  # one failure since the success
    for _ in range(B.FREE):
        b.failed("dave", "")
    clock.now += B.FORGET_SECONDS
    assert not b.refused("dave", "") and len(b._failures) == 2


def test_the_authenticator_refuses_a_backing_off_user_even_with_the_right_password(tmp_path, capsys):
    path = str(tmp_path / "users")
    add_user(path, "erin", "right")
    auth = Authenticator("plain", path)
    clock = Clock()
    auth.backoff = B.SignInBackoff(clock)
    for _ in range(B.FREE):
        assert not auth.check("erin", "wrong", "10.1.1.1")
    assert "5 failed sign-ins in a row of user 'erin': backing off" in capsys.readouterr().err
    assert not auth.check("erin", "right", "10.1.1.2")  # refused unchecked: a guess would go unseen
    clock.now += 1.0
    assert auth.check("erin", "right", "10.1.1.2")
    assert auth.check("erin", "right", "10.1.1.1")  # cleared by the success


@pytest.mark.parametrize("mode", ["none", "nosasl"])
def test_no_backoff_without_passwords(mode):
    auth = Authenticator(mode)
    for _ in range(B.FREE * 2):
        assert auth.check("anyone", "x", "10.0.0.1")
