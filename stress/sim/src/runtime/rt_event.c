/*
 * rt_event.c - events: aclrtCreateEvent / RecordEvent / StreamWaitEvent / SynchronizeEvent /
 * QueryEventStatus / DestroyEvent.
 *
 * An event counts records.  aclrtRecordEvent queues a task on the stream that marks record n
 * done when everything queued before it on that stream has run.  aclrtStreamWaitEvent queues a
 * task on the waiting stream that blocks its worker until the record that was the latest at
 * the call is done (nothing to wait for if the event was never recorded), so later work on that
 * stream is ordered after the other stream's earlier work.  aclrtSynchronizeEvent blocks the
 * host the same way; aclrtQueryEventStatus reports whether the latest record is done (never
 * recorded: NOT_READY).  Destroying an event with queued records or waits is safe: the tasks
 * hold references.
 */
#include <pthread.h>
#include <stdlib.h>

#include "rt_private.h"

typedef struct {
    aclsim_obj obj;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t recorded; /* records queued */
    uint64_t done;     /* records completed (they complete in order per stream) */
} rt_event;

#define EVENT_KIND ACLSIM_KIND_BIT(ACLSIM_KIND_EVENT)

typedef struct {
    rt_event *ev;
    uint64_t n; /* the record this task completes / waits for */
} event_task;

static void event_free(aclsim_obj *o)
{
    rt_event *e = (rt_event *)o;
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    free(e);
}

static rt_event *acquire(const char *api, aclrtEvent event, int *rc)
{
    rt_event *e = event ? (rt_event *)aclsim_obj_acquire(event, EVENT_KIND) : NULL;
    if (!e)
        *rc = aclsim_set_error(ACL_ERROR_INVALID_PARAM, "%s: event %p is %s", api, event,
                               event ? "not a live event (destroyed already?)" : "NULL");
    return e;
}

ACLSIM_API aclError aclrtCreateEvent(aclrtEvent *event)
{
    if (!event)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtCreateEvent: event is NULL");
    if (!aclsim_current_context())
        return aclsim_set_error(ACL_ERROR_RT_CONTEXT_NULL,
                                "aclrtCreateEvent: no current context in this thread (call "
                                "aclrtSetDevice or aclrtSetCurrentContext first)");
    rt_event *e = calloc(1, sizeof *e);
    if (!e)
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtCreateEvent: out of memory");
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    aclsim_obj_init(&e->obj, ACLSIM_KIND_EVENT, event_free);
    void *h = aclsim_obj_register(&e->obj);
    if (!h) {
        aclsim_obj_release(&e->obj);
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtCreateEvent: out of memory");
    }
    *event = h;
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtDestroyEvent(aclrtEvent event)
{
    aclsim_obj *o = event ? aclsim_obj_unregister(event, EVENT_KIND) : NULL;
    if (!o)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtDestroyEvent: event %p is %s",
                                event, event ? "not a live event (destroyed already?)" : "NULL");
    aclsim_obj_release(o); /* queued tasks keep their own references */
    return ACL_SUCCESS;
}

static int record_task(void *arg, char *msg, size_t cap)
{
    (void)msg;
    (void)cap;
    event_task *t = arg;
    pthread_mutex_lock(&t->ev->mu);
    if (t->n > t->ev->done)
        t->ev->done = t->n;
    pthread_cond_broadcast(&t->ev->cv);
    pthread_mutex_unlock(&t->ev->mu);
    return 0;
}

/* Block until record n of e is done. */
static void wait_done(rt_event *e, uint64_t n)
{
    pthread_mutex_lock(&e->mu);
    while (e->done < n)
        pthread_cond_wait(&e->cv, &e->mu);
    pthread_mutex_unlock(&e->mu);
}

static int wait_task(void *arg, char *msg, size_t cap)
{
    (void)msg;
    (void)cap;
    event_task *t = arg;
    wait_done(t->ev, t->n);
    return 0;
}

static void task_release(void *arg)
{
    event_task *t = arg;
    aclsim_obj_release(&t->ev->obj);
    free(t);
}

/* Queue fn on stream for record n of e (the task takes its own reference to e). */
static int queue_event_task(const char *api, aclrtStream stream, rt_event *e, uint64_t n,
                            aclsim_task_fn fn)
{
    aclsim_stream *s;
    int rc = aclsim_stream_resolve(stream, &s);
    if (rc)
        return aclsim_set_error(rc, "%s: %s", api,
                                rc == ACL_ERROR_RT_CONTEXT_NULL
                                    ? "no current context in this thread (NULL stream)"
                                    : "stream is not a live stream");
    event_task *t = malloc(sizeof *t);
    if (!t) {
        aclsim_stream_put(s);
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory", api);
    }
    aclsim_obj_retain(&e->obj);
    t->ev = e;
    t->n = n;
    rc = aclsim_stream_enqueue(s, fn, t, task_release);
    if (!rc && aclsim_sanitize_on)
        aclsim_san_event(e, s, fn == record_task);
    aclsim_stream_put(s);
    if (rc) {
        task_release(t);
        return aclsim_set_error(rc, "%s: the stream is being destroyed", api);
    }
    return ACL_SUCCESS;
}

/* Queue a record of event on stream (record), or a wait for its latest record so far. */
static aclError event_on_stream(const char *api, aclrtEvent event, aclrtStream stream, int record)
{
    int rc = 0;
    rt_event *e = acquire(api, event, &rc);
    if (!e)
        return rc;
    pthread_mutex_lock(&e->mu);
    uint64_t n = record ? ++e->recorded : e->recorded;
    pthread_mutex_unlock(&e->mu);
    rc = queue_event_task(api, stream, e, n, record ? record_task : wait_task);
    if (rc && record) { /* nothing was queued: this record will never complete, take it back */
        pthread_mutex_lock(&e->mu);
        if (e->recorded == n)
            e->recorded--;
        pthread_mutex_unlock(&e->mu);
    }
    aclsim_obj_release(&e->obj);
    return rc;
}

ACLSIM_API aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    return event_on_stream("aclrtRecordEvent", event, stream, 1);
}

ACLSIM_API aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
    return event_on_stream("aclrtStreamWaitEvent", event, stream, 0);
}

ACLSIM_API aclError aclrtSynchronizeEvent(aclrtEvent event)
{
    int rc = 0;
    rt_event *e = acquire("aclrtSynchronizeEvent", event, &rc);
    if (!e)
        return rc;
    pthread_mutex_lock(&e->mu);
    uint64_t n = e->recorded;
    pthread_mutex_unlock(&e->mu);
    wait_done(e, n);
    if (aclsim_sanitize_on)
        aclsim_san_event_sync(e);
    aclsim_obj_release(&e->obj);
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    int rc = 0;
    if (!status)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtQueryEventStatus: status is NULL");
    rt_event *e = acquire("aclrtQueryEventStatus", event, &rc);
    if (!e)
        return rc;
    pthread_mutex_lock(&e->mu);
    int complete = e->recorded > 0 && e->done >= e->recorded;
    pthread_mutex_unlock(&e->mu);
    *status = complete ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    aclsim_obj_release(&e->obj);
    return ACL_SUCCESS;
}
