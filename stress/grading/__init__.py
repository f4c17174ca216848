"""Grading, below the engine and every printer: one call judged (:mod:`.judge`, its digests and
canary count in :mod:`.digest`), the verdict and diagnosis rules (:mod:`.verdicts`), the pair
coverage a run reached (:mod:`.coverage`), the streaming tally (:mod:`.tally`) and the report's
assembly (:mod:`.assemble`): one graded :class:`~stress.records.RunReport` every printer reads."""
