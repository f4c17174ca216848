"""The shipped corpus through the pytest plugin's own fixtures: the tests ``make stress`` selects
(``pytest -p stress -m stress tests/test_plugin_stress.py``; ``-n 4`` spreads them over four
devices).

Apart from tests/test_plugin.py (the plugin's options, hooks and inner ``pytester`` sessions) so
that the stress step imports and collects only these: that module's imports (hypothesis, the
pytester plugin) and the collection of its 34 other tests were ~0.5 s of CPU of the step.
"""

from __future__ import annotations

import pytest


@pytest.mark.stress
def test_shipped_case_alone(stress_case_item, stress_run):
    """Each case of the shipped corpus alone: the baseline holds, no self-race.

    One round: its T threads call the case at once and the pool's fill calls keep it in flight,
    every API mode among them (plain, event, pipeline, repeatable executors rebound); a second
    round repeated that at twice the CPU (large-c: 6.5 -> 3.5 s of CPU, 123 -> 57 calls)."""
    stress_run([stress_case_item], phases=("serial", "isolated"), control=False, iterations=1)


@pytest.mark.stress
def test_shipped_corpus_in_flight_together(stress_corpus, stress_run):
    """The whole shipped corpus in flight together, with the control corpus."""
    result = stress_run(stress_corpus, phases=("serial", "interleaved", "mixed", "control"))
    missing = {c.id for c in stress_corpus} - {c.id for p in result.phases for c in p.cases}
    assert not missing, f"cases no phase ran: {sorted(missing)}"  # read also under --assert=plain
