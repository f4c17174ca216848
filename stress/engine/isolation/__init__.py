"""A phase in a supervised child process: the supervising side (:mod:`.supervise`), the child's
side (:mod:`.child`) and what a child runs (:mod:`.jobs`); the fork server the children are
forked from, its session side (:mod:`.forkserver`) and its own loop (:mod:`.forkserver_loop`)."""
