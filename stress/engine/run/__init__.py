"""A whole run: the session (:mod:`.session`), the order and durations of its phases
(:mod:`.schedule`), the baseline it grades against (:mod:`.baseline_step`), the journal's header
(:mod:`.header`) and a phase's end (:mod:`.phase_end`), the run directory (:mod:`.rundir`),
``--resume`` (:mod:`.resume`) and the minimal reproducer (:mod:`.reproducer`)."""
