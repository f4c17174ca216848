/*
 * op_cat_side.c - the `side-stream` fault of aclnnCat: the last member is copied into out on an
 * internal stream of the operator, joined to the launch stream only at its synchronize.
 *
 * Mechanism.  A concat of several members splits its copies across streams: the kernel copies
 * every member but the last on the launch stream and hands the last one to the operator's
 * internal stream (one worker thread per process, its jobs in order; each starts a kernel
 * launch latency, SIDE_LATENCY_NS, after it was handed over, as a second kernel on another
 * stream does).  The operator joins that work to the launch stream the way the runtime joins
 * an operator's internal streams (rt_stream_join.c): aclrtSynchronizeStream of the launch
 * stream waits for it — but it never records an event on the internal stream for the launch
 * stream to wait on, so nothing queued on the launch stream after the kernel is ordered after
 * the copy.  A caller that synchronizes the launch stream (serial replay, every plain, repeat
 * and pipeline call, the baseline) always reads the whole output; a consumer that records an
 * event on the launch stream and waits for it on another stream (the event mode) reads out
 * before the last member's elements are there.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "op_cat.h"

#define SIDE_LATENCY_NS 2000000L

typedef struct side_job {
    struct side_job *next;
    aclsim_tensor_desc x, o;
    int dim;
    int64_t along;
    aclsim_devmem_ref *pins[2];
    aclsim_stream *joined;
} side_job;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    side_job *head, *tail;
    int started; /* 1: the worker runs; -1: it could not start */
} side_stream;

static void side_init(void *p)
{
    side_stream *s = p;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
}

static void *side_main(void *p)
{
    side_stream *s = p;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (!s->head)
            pthread_cond_wait(&s->cv, &s->mu);
        side_job *j = s->head;
        s->head = j->next;
        if (!s->head)
            s->tail = NULL;
        pthread_mutex_unlock(&s->mu);
        struct timespec ts = {0, SIDE_LATENCY_NS};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        cat_copy_member(&j->x, &j->o, j->dim, j->along);
        for (int i = 0; i < 2; i++)
            if (j->pins[i])
                aclsim_devmem_unpin(j->pins[i]);
        aclsim_stream_join_end(j->joined);
        free(j);
    }
    return NULL;
}

/* The internal stream, locked, its worker started on first use; NULL if it cannot run. */
static side_stream *side_locked(void)
{
    side_stream *s = aclsim_shared_state("cat.side_stream", sizeof(side_stream), side_init);
    if (!s)
        return NULL;
    pthread_mutex_lock(&s->mu);
    if (!s->started) {
        pthread_t t;
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old); /* signals go to the application's threads */
        s->started = pthread_create(&t, NULL, side_main, s) == 0 ? 1 : -1;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (s->started == 1)
            pthread_detach(t);
    }
    if (s->started == 1)
        return s;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static aclsim_devmem_ref *pin(const aclsim_tensor_desc *d)
{
    uint64_t first, nbytes;
    if (aclsim_extent(d, &first, &nbytes) != 0 || nbytes == 0)
        return NULL;
    return aclsim_devmem_pin((const uint8_t *)d->data + first, nbytes);
}

int cat_side_post(const aclsim_kernel_ctx *k, const aclsim_tensor_desc *x,
                  const aclsim_tensor_desc *o, int dim, int64_t along)
{
    side_job *j = calloc(1, sizeof *j);
    side_stream *s = j ? side_locked() : NULL;
    if (s && aclsim_stream_join_begin(k->stream, &j->joined) != 0) {
        pthread_mutex_unlock(&s->mu);
        s = NULL;
    }
    if (!s) { /* no internal stream: the copy stays on the launch stream */
        free(j);
        cat_copy_member(x, o, dim, along);
        return 0;
    }
    j->x = *x;
    j->o = *o;
    j->dim = dim;
    j->along = along;
    j->pins[0] = pin(x);
    j->pins[1] = pin(o);
    if (s->tail)
        s->tail->next = j;
    else
        s->head = j;
    s->tail = j;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}
