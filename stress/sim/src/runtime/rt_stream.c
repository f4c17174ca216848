/*
 * rt_stream.c - streams: one worker thread per stream executing tasks in FIFO order.
 *
 * Work enqueued on a stream (kernels, aclsimStreamDelay) runs asynchronously on the stream's
 * worker; a task's error is kept as the stream's sticky error, which synchronize
 * (rt_stream_sync.c) returns and clears.
 *
 * Process exit: workers block in pthread_cond_wait and are never joined by any atexit handler
 * or library destructor, so a process may exit with live streams (exit_group ends them).
 * Workers block all signals, so signals (Ctrl-C) reach the application's threads.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_stream.h"

typedef struct rt_task {
    struct rt_task *next;
    aclsim_task_fn fn;
    void *arg;
    void (*release)(void *);
    void *san; /* the sanitizer's ordering token (NULL when it is off) */
} rt_task;

#define STREAM_KINDS (ACLSIM_KIND_BIT(ACLSIM_KIND_STREAM) | ACLSIM_KIND_BIT(ACLSIM_KIND_STREAM_DEFAULT))

static pthread_mutex_t g_list_lock = PTHREAD_MUTEX_INITIALIZER;
static aclsim_stream *g_list; /* every live stream (default and explicit) */

static void stream_free(aclsim_obj *o)
{
    aclsim_stream *s = (aclsim_stream *)o;
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->work_cv);
    pthread_cond_destroy(&s->done_cv);
    free(s);
}

static void *worker_main(void *p)
{
    aclsim_stream *s = p;
    fesetenv(FE_DFL_ENV); /* round-to-nearest, no flush-to-zero, whatever the creator had */
    pthread_setname_np(pthread_self(), "aclsim-stream");
    char *msg = malloc(ACLSIM_MSG_CAP);
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->head && !s->stopping)
            pthread_cond_wait(&s->work_cv, &s->mu);
        rt_task *t = s->head;
        if (!t)
            break; /* stopping and drained */
        s->head = t->next;
        if (!s->head)
            s->tail = NULL;
        pthread_mutex_unlock(&s->mu);

        int rc = 0;
        if (msg)
            msg[0] = '\0';
        if (t->san)
            aclsim_san_task_begin(t->san);
        if (t->fn)
            rc = t->fn(t->arg, msg ? msg : (char[1]){0}, msg ? ACLSIM_MSG_CAP : 1);
        if (t->release)
            t->release(t->arg);
        if (t->san)
            aclsim_san_task_end(t->san);
        free(t);

        pthread_mutex_lock(&s->mu);
        if (rc && !s->err_code) {
            s->err_code = rc;
            aclsim_format(s->err_msg, sizeof s->err_msg, "%s", msg && *msg ? msg : "task failed");
        }
        s->completed++;
        pthread_cond_broadcast(&s->done_cv);
    }
    pthread_mutex_unlock(&s->mu);
    free(msg);
    return NULL;
}

int rt_stream_create(const char *api, void *ctx, int32_t device, int is_default, void **out_handle)
{
    aclsim_stream *s = calloc(1, sizeof *s);
    if (!s)
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    aclsim_obj_init(&s->obj, is_default ? ACLSIM_KIND_STREAM_DEFAULT : ACLSIM_KIND_STREAM,
                    stream_free);
    s->ctx = ctx;
    s->device = device;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work_cv, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->done_cv, &ca);
    pthread_condattr_destroy(&ca);

    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int prc = pthread_create(&s->thread, NULL, worker_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (prc) {
        aclsim_obj_release(&s->obj);
        return aclsim_set_error(ACL_ERROR_RT_INTERNAL_ERROR,
                                "%s: cannot start the stream's worker thread (%s)", api,
                                strerror(prc));
    }
    void *h = aclsim_obj_register(&s->obj);
    if (!h) {
        pthread_mutex_lock(&s->mu);
        s->stopping = 1;
        pthread_cond_signal(&s->work_cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
        aclsim_obj_release(&s->obj);
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    pthread_mutex_lock(&g_list_lock);
    s->list_next = g_list;
    g_list = s;
    pthread_mutex_unlock(&g_list_lock);
    *out_handle = h;
    return 0;
}

static void list_remove(aclsim_stream *s)
{
    pthread_mutex_lock(&g_list_lock);
    for (aclsim_stream **l = &g_list; *l; l = &(*l)->list_next) {
        if (*l == s) {
            *l = s->list_next;
            break;
        }
    }
    s->list_next = NULL;
    pthread_mutex_unlock(&g_list_lock);
}

/* Let the worker drain the queue, then join it.  The stream must be unregistered already. */
static void stop_and_join(aclsim_stream *s)
{
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&s->mu);
    if (pthread_equal(pthread_self(), s->thread))
        pthread_detach(s->thread); /* a task destroying its own stream: never wait on ourselves */
    else
        pthread_join(s->thread, NULL);
    if (aclsim_sanitize_on)
        aclsim_san_sync_stream(s); /* destroy synchronizes */
}

void rt_streams_destroy_for_context(void *ctx)
{
    /* Collect under the list lock (with a reference each, so a concurrent aclrtDestroyStream
     * cannot free one under us), tear down outside it (joining can take a while). */
    aclsim_stream *mine = NULL;
    pthread_mutex_lock(&g_list_lock);
    for (aclsim_stream **l = &g_list; *l;) {
        aclsim_stream *s = *l;
        if (s->ctx == ctx) {
            *l = s->list_next;
            aclsim_obj_retain(&s->obj);
            s->list_next = mine;
            mine = s;
        } else {
            l = &s->list_next;
        }
    }
    pthread_mutex_unlock(&g_list_lock);
    while (mine) {
        aclsim_stream *s = mine;
        mine = s->list_next;
        s->list_next = NULL;
        /* Whoever unregisters the handle owns the teardown (a concurrent aclrtDestroyStream
         * may have won; then it joins the worker, not us). */
        aclsim_obj *o = aclsim_obj_unregister(aclsim_stream_handle(s), STREAM_KINDS);
        if (o) {
            stop_and_join(s);
            aclsim_obj_release(o); /* the table's reference */
        }
        aclsim_obj_release(&s->obj); /* ours */
    }
}

void *aclsim_stream_handle(const aclsim_stream *s)
{
    return rt_p(s->obj.handle);
}

int aclsim_stream_resolve(void *handle, aclsim_stream **out)
{
    if (!handle) {
        void *ctx = aclsim_current_context();
        if (!ctx)
            return ACL_ERROR_RT_CONTEXT_NULL;
        handle = rt_context_default_stream(ctx);
        if (!handle)
            return ACL_ERROR_RT_CONTEXT_NULL;
    }
    aclsim_stream *s = (aclsim_stream *)aclsim_obj_acquire(handle, STREAM_KINDS);
    if (!s)
        return ACL_ERROR_INVALID_PARAM;
    *out = s;
    return 0;
}

void aclsim_stream_put(aclsim_stream *s)
{
    if (s)
        aclsim_obj_release(&s->obj);
}

int aclsim_stream_enqueue(aclsim_stream *s, aclsim_task_fn fn, void *arg, void (*release)(void *))
{
    rt_task *t = malloc(sizeof *t);
    if (!t)
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    t->next = NULL;
    t->fn = fn;
    t->arg = arg;
    t->release = release;
    t->san = NULL;
    pthread_mutex_lock(&s->mu);
    if (s->stopping) {
        pthread_mutex_unlock(&s->mu);
        free(t);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (aclsim_sanitize_on)
        t->san = aclsim_san_enqueue(s); /* in FIFO order, under the stream's lock */
    if (s->tail)
        s->tail->next = t;
    else
        s->head = t;
    s->tail = t;
    s->submitted++;
    pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

int rt_streams_of_device(int32_t device, aclsim_stream ***out, size_t *count)
{
    size_t n = 0, cap = 16;
    aclsim_stream **v = malloc(cap * sizeof *v);
    if (!v)
        return -1;
    pthread_mutex_lock(&g_list_lock);
    for (aclsim_stream *s = g_list; s; s = s->list_next) {
        if (s->device != device)
            continue;
        if (n == cap) {
            aclsim_stream **nv = realloc(v, 2 * cap * sizeof *v);
            if (!nv)
                break;
            v = nv;
            cap *= 2;
        }
        aclsim_obj_retain(&s->obj);
        v[n++] = s;
    }
    pthread_mutex_unlock(&g_list_lock);
    *out = v;
    *count = n;
    return 0;
}

int rt_stream_resolve_for(const char *api, void *handle, aclsim_stream **out)
{
    int rc = aclsim_stream_resolve(handle, out);
    if (rc == ACL_ERROR_RT_CONTEXT_NULL)
        return aclsim_set_error(rc,
                                "%s: stream is NULL (the default stream) but this thread has no "
                                "current context (call aclrtSetDevice or aclrtSetCurrentContext)",
                                api);
    if (rc)
        return aclsim_set_error(rc, "%s: stream %p is not a live stream (destroyed already?)", api,
                                handle);
    return 0;
}

ACLSIM_API aclError aclrtCreateStream(aclrtStream *stream)
{
    if (!stream)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is NULL");
    void *ctx = aclsim_current_context();
    if (!ctx)
        return aclsim_set_error(ACL_ERROR_RT_CONTEXT_NULL,
                                "aclrtCreateStream: no current context in this thread (call "
                                "aclrtSetDevice or aclrtSetCurrentContext first)");
    int32_t dev = aclsim_current_device();
    return rt_stream_create("aclrtCreateStream", ctx, dev, 0, stream);
}

ACLSIM_API aclError aclrtDestroyStream(aclrtStream stream)
{
    if (!stream)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream: stream is NULL");
    aclsim_stream *s =
        (aclsim_stream *)aclsim_obj_unregister(stream, ACLSIM_KIND_BIT(ACLSIM_KIND_STREAM));
    if (!s)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "aclrtDestroyStream: stream %p is not a live stream created by "
                                "aclrtCreateStream (destroyed already?)",
                                stream);
    list_remove(s);
    stop_and_join(s); /* runs what is queued first: destroy synchronizes */
    aclsim_obj_release(&s->obj);
    return ACL_SUCCESS;
}
