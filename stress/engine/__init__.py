"""The engine: a prepared call (:mod:`.call`), executing and judging it (:mod:`.execute`,
:mod:`.digest`), the worker pool (:mod:`.replay`), the protocol phases (:mod:`.phases`),
verdicts (:mod:`.grading`), supervised children (:mod:`.isolate`, :mod:`.jobs`), a whole run
(:mod:`.session`) and shrinking a failing mix (:mod:`.shrink`)."""
