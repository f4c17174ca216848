/*
 * rt_stream_join.c - work joined to a stream from off it.  An operator that finishes part of
 * its output on an internal stream of its own counts that work on the launch stream
 * (aclsim_stream_join_begin, from its kernel, before the kernel's task completes) and uncounts
 * it when done (aclsim_stream_join_end): aclrtSynchronizeStream and aclrtSynchronizeDevice
 * (rt_stream_sync.c) wait until nothing is counted, but an event recorded on the stream after
 * the launch completes with the kernel's task, before the joined work is done.
 */
#include "rt_stream.h"

int aclsim_stream_join_begin(void *handle, aclsim_stream **out)
{
    aclsim_stream *s;
    int rc = aclsim_stream_resolve(handle, &s);
    if (rc)
        return rc;
    pthread_mutex_lock(&s->mu);
    s->joined++;
    pthread_mutex_unlock(&s->mu);
    *out = s; /* keeps the reference until aclsim_stream_join_end */
    return 0;
}

void aclsim_stream_join_end(aclsim_stream *s)
{
    pthread_mutex_lock(&s->mu);
    s->joined--;
    pthread_cond_broadcast(&s->done_cv);
    pthread_mutex_unlock(&s->mu);
    aclsim_stream_put(s);
}
