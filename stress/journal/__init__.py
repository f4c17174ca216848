"""The results journal: ``results.jsonl`` written and read back (:mod:`.results`), each line
checked against its schema (:mod:`.schema`)."""
