"""bench/coldstart/first_response.py: a baseline revision's samples are summarised beside this tree's, against one
floor."""

from __future__ import annotations

from bench.coldstart.first_response import FUNCTIONS, summarize


def _samples(init: float, total: float, calls: int) -> list[list[float]]:
    # one process's line: wall init, wall total, cpu init, cpu total, answers used
    return [[init, total, init, total, calls]] * 3


def test_the_baseline_is_measured_against_the_same_floor() -> None:
    samples: dict[str, list[list[float]]] = {}
    for name in FUNCTIONS:
        samples |= {f"{name}/floor": _samples(0.4, 0.5, 0), f"{name}/stack": _samples(0.4, 0.6, 10),
                    f"{name}/untraced": _samples(0.4, 0.55, 10), f"{name}/baseline": _samples(0.5, 0.7, 12)}
    recording = {"exchanges": {name: [{}] * 10 for name in FUNCTIONS}}
    baseline = {"exchanges": {name: [{}] * 12 for name in FUNCTIONS}}
    out = summarize(samples, recording, {}, baseline)
    for name in FUNCTIONS:
        cpu = out[name]["cpu"]
        assert (cpu["ratio"], cpu["ratio_baseline"], cpu["baseline_ms"]) == (1.2, 1.4, 700.0)
        assert out[name]["aws_calls_made"] == [10] and out[name]["baseline_aws_calls_made"] == [12]
        assert out[name]["baseline_aws_calls_recorded"] == 12


def test_without_a_baseline_nothing_is_added() -> None:
    samples = {f"{n}/{v}": _samples(0.4, 0.5, 1) for n in FUNCTIONS for v in ("floor", "stack", "untraced")}
    out = summarize(samples, {"exchanges": {n: [{}] for n in FUNCTIONS}}, {})
    assert all("ratio_baseline" not in out[n]["cpu"] and "baseline_aws_calls_made" not in out[n] for n in FUNCTIONS)
