"""Reports: the results journal (:mod:`.journal`), ``report.json`` / Markdown / console
(:mod:`.document`), live progress (:mod:`.progress`) and the pytest summary
(:mod:`.pytest_summary`)."""
