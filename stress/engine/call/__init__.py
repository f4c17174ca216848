"""One two-stage aclnn call: the layout of its tensors (:mod:`.layout`), its seeded inputs
(:mod:`.inputs`), the prepared call (:mod:`.prepared`), running it (:mod:`.execute`) and a
case's byte size checked before anything is allocated (:mod:`.case_size`)."""
