"""The engine, cut by role, each package importing only the ones below it:
:mod:`.run` (a whole run: session, schedule, baseline step, journal header, resume, reproducer)
over :mod:`.isolation` (a phase in a supervised child; the fork server) over :mod:`.replay`
(the worker pool, the phases, interleaving, pairs, PCT, sampling) over :mod:`.call` (one
two-stage call: layout, inputs, execute). Judging and grading are :mod:`stress.grading`."""
