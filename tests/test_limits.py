"""The per-client rate limit, with a clock the test moves."""

from __future__ import annotations

import pytest

from qa.surfaces.web.limits import RateLimited, RateLimiter


def test_sliding_minute_per_client() -> None:
    now = [1000.0]
    limiter = RateLimiter(3, clock=lambda: now[0])
    for _ in range(3):
        limiter.check("user alice")
    with pytest.raises(RateLimited, match=r"limit is 3 a minute \(QA_RATE\); try again in 60 s") as err:
        limiter.check("user alice")
    assert "\n" not in str(err.value)
    limiter.check("user bob")  # each client has its own window
    now[0] += 30
    with pytest.raises(RateLimited, match="try again in 30 s"):
        limiter.check("user alice")
    now[0] += 30.5  # the first three requests have left the window
    limiter.check("user alice")


def test_zero_turns_it_off_and_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    off = RateLimiter(0)
    for _ in range(1000):
        off.check("address 127.0.0.1")
    monkeypatch.setattr("qa.surfaces.web.limits.MAX_CLIENTS", 50)
    limiter = RateLimiter(5)
    for n in range(200):
        limiter.check(f"address 10.0.0.{n}")
    assert len(limiter._seen) == 50
