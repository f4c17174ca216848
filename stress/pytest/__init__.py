"""The pytest plugin (:mod:`.plugin`, entry point ``stress``) and what it runs (:mod:`.runner`)."""
