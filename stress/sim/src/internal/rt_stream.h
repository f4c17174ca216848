/*
 * rt_stream.h - a stream as the rt_*.c files of libascendcl see it (hidden symbols): rt_stream.c
 * owns its life (creation, the worker, the queue, destruction), rt_stream_sync.c waits on it.
 */
#ifndef ACLSIM_RT_STREAM_H
#define ACLSIM_RT_STREAM_H

#include <pthread.h>

#include "rt_private.h"

struct rt_task;

struct aclsim_stream {
    aclsim_obj obj;
    void *ctx;       /* owning context handle */
    int32_t device;
    pthread_t thread;
    pthread_mutex_t mu; /* guards everything below */
    pthread_cond_t work_cv;
    pthread_cond_t done_cv; /* CLOCK_MONOTONIC */
    struct rt_task *head, *tail;
    uint64_t submitted, completed;
    uint64_t joined; /* work off the stream that synchronize waits for (rt_stream_join.c) */
    int stopping;
    int err_code;
    char err_msg[ACLSIM_MSG_CAP];
    aclsim_stream *list_next; /* g_list, guarded by g_list_lock */
};

/* aclsim_stream_resolve with the API's message set on failure: 0 or the aclError. */
RT_HIDDEN int rt_stream_resolve_for(const char *api, void *handle, aclsim_stream **out);
/* Every live stream of `device`, each with a reference (aclsim_stream_put them), into a malloc'd
 * array (free it): 0, or -1 when even the array cannot be allocated. */
RT_HIDDEN int rt_streams_of_device(int32_t device, aclsim_stream ***out, size_t *n);

#endif /* ACLSIM_RT_STREAM_H */
