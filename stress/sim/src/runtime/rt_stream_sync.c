/*
 * rt_stream_sync.c - waiting on streams: aclrtSynchronizeStream (with and without a timeout) and
 * aclrtSynchronizeDevice wait until everything submitted before the call has completed (and
 * the work joined to the stream off it, rt_stream_join.c), then
 * return (and clear) the stream's sticky error, if a task recorded one; and aclsimStreamDelay,
 * the test hook that queues a sleep.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_stream.h"

/* Wait for everything submitted so far; timeout_ms < 0 waits forever.  Returns 0, the sticky
 * error (message set, error cleared) or ACL_ERROR_RT_STREAM_SYNC_TIMEOUT. */
static int stream_wait(const char *api, aclsim_stream *s, int32_t timeout_ms)
{
    struct timespec deadline;
    if (timeout_ms >= 0) {
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&s->mu);
    uint64_t target = s->submitted;
    while (s->completed < target || s->joined) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&s->done_cv, &s->mu);
        } else if (pthread_cond_timedwait(&s->done_cv, &s->mu, &deadline) == ETIMEDOUT &&
                   (s->completed < target || s->joined)) {
            uint64_t pending = target - s->completed;
            pthread_mutex_unlock(&s->mu);
            return aclsim_set_error(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                                    "%s: stream %p did not finish within %d ms (%llu tasks still "
                                    "pending)",
                                    api, aclsim_stream_handle(s), (int)timeout_ms,
                                    (unsigned long long)pending);
        }
    }
    int code = s->err_code;
    char msg[ACLSIM_MSG_CAP];
    if (code) {
        memcpy(msg, s->err_msg, sizeof msg);
        s->err_code = 0;
        s->err_msg[0] = '\0';
    }
    pthread_mutex_unlock(&s->mu);
    if (aclsim_sanitize_on)
        aclsim_san_sync_stream(s);
    if (code)
        return aclsim_set_error(code, "%s: %s", api, msg);
    return 0;
}

ACLSIM_API aclError aclrtSynchronizeStream(aclrtStream stream)
{
    aclsim_stream *s;
    int rc = rt_stream_resolve_for("aclrtSynchronizeStream", stream, &s);
    if (rc)
        return rc;
    rc = stream_wait("aclrtSynchronizeStream", s, -1);
    aclsim_stream_put(s);
    return rc;
}

ACLSIM_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    if (timeout < -1)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "aclrtSynchronizeStreamWithTimeout: timeout must be -1 (forever) "
                                "or >= 0 ms (got %d)",
                                (int)timeout);
    aclsim_stream *s;
    int rc = rt_stream_resolve_for("aclrtSynchronizeStreamWithTimeout", stream, &s);
    if (rc)
        return rc;
    rc = stream_wait("aclrtSynchronizeStreamWithTimeout", s, timeout);
    aclsim_stream_put(s);
    return rc;
}

ACLSIM_API aclError aclrtSynchronizeDevice(void)
{
    int32_t dev = aclsim_current_device();
    if (dev < 0)
        return aclsim_set_error(ACL_ERROR_RT_CONTEXT_NULL,
                                "aclrtSynchronizeDevice: no current context in this thread (call "
                                "aclrtSetDevice or aclrtSetCurrentContext first)");
    /* Snapshot the device's streams with a reference each, then wait outside the list lock. */
    aclsim_stream **v;
    size_t n;
    if (rt_streams_of_device(dev, &v, &n) != 0)
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                                "aclrtSynchronizeDevice: out of host memory");
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = stream_wait("aclrtSynchronizeDevice", v[i], -1);
        if (rc && !first)
            first = rc; /* its message stays pending; later errors are reported on their streams */
        aclsim_stream_put(v[i]);
    }
    free(v);
    return first;
}

/* ---- aclsimStreamDelay (test hook) --------------------------------------------------------- */

static int sleep_task(void *arg, char *msg, size_t cap)
{
    (void)msg;
    (void)cap;
    int32_t ms = (int32_t)(intptr_t)arg;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    return 0;
}

ACLSIM_API aclError aclsimStreamDelay(aclrtStream stream, int32_t ms)
{
    if (ms < 0)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclsimStreamDelay: ms must be >= 0 (got %d)",
                                (int)ms);
    aclsim_stream *s;
    int rc = rt_stream_resolve_for("aclsimStreamDelay", stream, &s);
    if (rc)
        return rc;
    rc = aclsim_stream_enqueue(s, sleep_task, (void *)(intptr_t)ms, NULL);
    aclsim_stream_put(s);
    if (rc)
        return aclsim_set_error(rc, "aclsimStreamDelay: stream %p is being destroyed", stream);
    return ACL_SUCCESS;
}
