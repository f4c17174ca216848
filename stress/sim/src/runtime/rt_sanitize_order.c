/*
 * rt_sanitize_order.c - happens-before for racecheck: vector clocks over the host and streams.
 *
 * Actor 0 is the host (every host thread: what one thread synchronised, the others may rely on
 * afterwards, which over-approximates ordering and so never reports a false race).  Each stream
 * gets an actor slot (1..SAN_ACTORS-1, reused round-robin when a run creates more streams; a
 * reused slot keeps counting, so a stale record only hides races, never invents one).
 *
 * - enqueue on stream s:  task.vc = join(vc[s], host); vc[s] = task.vc + tick(s); host ticks
 * - synchronize s:        host = join(host, vc[s])   (every task queued so far)
 * - record e on s:        vc[e] = vc[s]
 * - stream s waits e:     vc[s] = join(vc[s], vc[e])
 * - synchronize e:        host = join(host, vc[e])
 * - hand-over of k:       release vc[k] = join(vc[k], vc[actor]); acquire vc[actor] = join(..., vc[k])
 * An access by actor a at clock c is ordered before an access with clock vector V iff
 * c <= V[a].  The tables are guarded by rt_san_mu (taken inside the stream locks, never the
 * other way round).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ACLSIM_SAN_PRIVATE
#include "rt_private.h"
#include "sanitize.h"

static uint32_t g_host[SAN_ACTORS];
static uint32_t g_stream_vc[SAN_ACTORS][SAN_ACTORS];
static const void *g_slot_key[SAN_ACTORS]; /* stream using each slot */
static int g_next_slot = 1;

typedef struct san_event {
    const void *key;
    uint32_t vc[SAN_ACTORS];
    struct san_event *next;
} san_event;

#define EVENT_BUCKETS 1024
static san_event *g_events[EVENT_BUCKETS];

static void join(uint32_t *dst, const uint32_t *src)
{
    for (int i = 0; i < SAN_ACTORS; i++)
        if (src[i] > dst[i])
            dst[i] = src[i];
}

/* Slot of a stream (lock held). */
static int slot_of(const void *stream)
{
    for (int i = 1; i < SAN_ACTORS; i++)
        if (g_slot_key[i] == stream)
            return i;
    int s = g_next_slot;
    g_next_slot = g_next_slot + 1 < SAN_ACTORS ? g_next_slot + 1 : 1;
    g_slot_key[s] = stream;
    return s;
}

static san_event *event_of(const void *key, int create)
{
    size_t b = ((uintptr_t)key >> 4) % EVENT_BUCKETS;
    for (san_event *e = g_events[b]; e; e = e->next)
        if (e->key == key)
            return e;
    if (!create)
        return NULL;
    san_event *e = calloc(1, sizeof *e);
    if (e) {
        e->key = key;
        e->next = g_events[b];
        g_events[b] = e;
    }
    return e;
}

void *aclsim_san_enqueue(const void *stream)
{
    rt_san_token *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    pthread_mutex_lock(&rt_san_mu);
    int s = slot_of(stream);
    join(g_stream_vc[s], g_host);
    g_stream_vc[s][s]++;
    memcpy(t->vc, g_stream_vc[s], sizeof t->vc);
    t->actor = s;
    g_host[0]++; /* host accesses after this enqueue are not ordered before the task */
    pthread_mutex_unlock(&rt_san_mu);
    return t;
}

void aclsim_san_drop(void *token)
{
    free(token);
}

void aclsim_san_sync_stream(const void *stream)
{
    if (!(aclsim_sanitize_on & ACLSIM_SAN_RACECHECK))
        return;
    pthread_mutex_lock(&rt_san_mu);
    join(g_host, g_stream_vc[slot_of(stream)]);
    g_host[0]++;
    pthread_mutex_unlock(&rt_san_mu);
}

void aclsim_san_event(const void *event, const void *stream, int record)
{
    if (!(aclsim_sanitize_on & ACLSIM_SAN_RACECHECK))
        return;
    pthread_mutex_lock(&rt_san_mu);
    int s = slot_of(stream);
    san_event *e = event_of(event, 1);
    if (e && record)
        memcpy(e->vc, g_stream_vc[s], sizeof e->vc);
    else if (e)
        join(g_stream_vc[s], e->vc);
    pthread_mutex_unlock(&rt_san_mu);
}

/* The key's sync clock is an event's (same table): release is a record by the calling actor, acquire
 * a wait, both on the actor's own clock (the task's, mid-launch, or the host's). */
void aclsim_san_handover(const void *key, int release)
{
    if (!(aclsim_sanitize_on & ACLSIM_SAN_RACECHECK))
        return;
    pthread_mutex_lock(&rt_san_mu);
    san_event *e = event_of(key, 1);
    uint32_t *vc = rt_san_ctx.tok ? rt_san_ctx.tok->vc : g_host;
    if (e && release)
        join(e->vc, vc);
    else if (e)
        join(vc, e->vc);
    pthread_mutex_unlock(&rt_san_mu);
}

void aclsim_san_event_sync(const void *event)
{
    if (!(aclsim_sanitize_on & ACLSIM_SAN_RACECHECK))
        return;
    pthread_mutex_lock(&rt_san_mu);
    san_event *e = event_of(event, 0);
    if (e)
        join(g_host, e->vc);
    g_host[0]++;
    pthread_mutex_unlock(&rt_san_mu);
}

/* The accessor's actor and clock vector (lock held): the task's, or the host's. */
void rt_san_clock(const rt_san_token *task, int *actor, const uint32_t **vc)
{
    if (task) {
        *actor = task->actor;
        *vc = task->vc;
    } else {
        *actor = 0;
        *vc = g_host;
    }
}

void rt_san_order_reset(void)
{
    pthread_mutex_lock(&rt_san_mu);
    memset(g_host, 0, sizeof g_host);
    memset(g_stream_vc, 0, sizeof g_stream_vc);
    memset(g_slot_key, 0, sizeof g_slot_key);
    g_next_slot = 1;
    for (int b = 0; b < EVENT_BUCKETS; b++) {
        while (g_events[b]) {
            san_event *e = g_events[b];
            g_events[b] = e->next;
            free(e);
        }
    }
    pthread_mutex_unlock(&rt_san_mu);
}
