"""Replaying calls concurrently in one process: the worker pool (:mod:`.pool`), the protocol's
phases (:mod:`.phases`, the interleaved one in :mod:`.interleave`), PCT schedules (:mod:`.pct`),
budgets (:mod:`.phase_budget`, :mod:`.sampling`), a stop request (:mod:`.stop`) and the serial
replay that records a baseline (:mod:`.baseline`)."""
