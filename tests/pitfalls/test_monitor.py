"""Observer-effect monitor: calibrated false alarms on honest streams, alarms on a planted drift."""

from __future__ import annotations

import numpy as np
import pytest

from liedar.behavioral.observer import ObserverMonitor, calibrate_monitor, detection_rate, measured_false_alarm
from liedar.core.errors import InputError


@pytest.fixture(scope="module")
def mon() -> ObserverMonitor:
    return calibrate_monitor(0.7, 120, shift=0.2, horizon=150, false_alarm=0.05, simulations=1500, seed=0)


def test_false_alarm_rate_on_fresh_honest_streams_is_near_nominal(mon) -> None:
    far = measured_false_alarm(mon, streams=1500, seed=11)
    assert far.lo <= 0.05 <= far.hi or abs(far.value - 0.05) < 0.02


def test_ignoring_the_baseline_error_would_alarm_more(mon) -> None:
    """The threshold accounts for the baseline being an estimate: a monitor calibrated as if
    the baseline were exact (huge baseline_n) alarms more on streams whose true rate is unsure."""
    naive = calibrate_monitor(0.7, 10**7, shift=0.2, horizon=150, simulations=1500, seed=0)
    assert naive.threshold < mon.threshold
    honest_like = ObserverMonitor(0.7, 120, 0.2, 150, naive.threshold, 0.05)
    assert measured_false_alarm(honest_like, streams=1500, seed=11).value > 0.07


def test_a_planted_drop_alarms_with_evidence(mon) -> None:
    rng = np.random.default_rng(3)
    stream = np.concatenate([rng.random(60) < 0.7, rng.random(90) < 0.35]).astype(float)
    alarms = mon.run(stream)
    assert alarms and alarms[0].index >= 20
    a = alarms[0]
    assert a.statistic > a.threshold and a.successes / a.n < 0.7 and a.baseline == 0.7
    assert detection_rate(mon, 0.4, streams=500).value > 0.9


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"baseline": 1.0, "baseline_n": 10}, "strictly between 0 and 1"),
        ({"baseline": 0.5, "baseline_n": 0}, "baseline_n >= 1"),
        ({"baseline": 0.5, "baseline_n": 10, "false_alarm": 0.0}, "false_alarm and shift"),
    ],
)
def test_bad_calibration_input_one_line(kwargs, message) -> None:
    with pytest.raises(InputError, match=message):
        calibrate_monitor(**kwargs)


def test_bad_stream_one_line(mon) -> None:
    with pytest.raises(InputError, match="outcomes in"):
        mon.run([0, 2, 1])
