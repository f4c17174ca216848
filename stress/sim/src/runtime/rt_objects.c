/*
 * rt_objects.c - opaque handles, reference counts and live-object counters (read by
 * aclsimLiveObjects, rt_live.c, and the sanitizer's leak report).
 *
 * Handles are unique ids, never addresses: 0xA5C in the top 12 bits (a non-canonical address,
 * so a handle dereferenced by mistake faults at once), the kind in the next 4 bits and a 48-bit
 * serial that is never reused.  The table maps id -> object with chained hashing behind one
 * mutex; critical sections are a few pointer operations.
 */
#include <pthread.h>
#include <stdlib.h>

#include "rt_private.h"

#define HANDLE_TAG 0xA5C0000000000000ull
#define HANDLE_TAG_MASK 0xFFF0000000000000ull
#define HANDLE_KIND_SHIFT 48
#define INITIAL_BUCKETS 1024u

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static aclsim_obj **g_buckets;   /* g_nbuckets chains, allocated lazily */
static size_t g_nbuckets;
static size_t g_count;
static uint64_t g_serial;
static atomic_llong g_live[ACLSIM_KIND_COUNT];

static size_t bucket_of(uint64_t h, size_t nbuckets)
{
    return (size_t)((h * 0x9E3779B97F4A7C15ull) >> 32) & (nbuckets - 1);
}

static int handle_kind(uint64_t h)
{
    if ((h & HANDLE_TAG_MASK) != HANDLE_TAG)
        return -1;
    return (int)((h >> HANDLE_KIND_SHIFT) & 0xF);
}

/* Double the table when it gets dense (called with g_lock held).  On allocation failure the
 * table simply stays as it is: chains get longer, nothing breaks. */
static void maybe_grow(void)
{
    if (g_buckets && g_count < 2 * g_nbuckets)
        return;
    size_t n = g_buckets ? 2 * g_nbuckets : INITIAL_BUCKETS;
    aclsim_obj **nb = calloc(n, sizeof *nb);
    if (!nb)
        return;
    for (size_t i = 0; i < g_nbuckets; i++) {
        aclsim_obj *o = g_buckets[i];
        while (o) {
            aclsim_obj *next = o->hnext;
            size_t b = bucket_of(o->handle, n);
            o->hnext = nb[b];
            nb[b] = o;
            o = next;
        }
    }
    free(g_buckets);
    g_buckets = nb;
    g_nbuckets = n;
}

void aclsim_obj_init(aclsim_obj *o, aclsim_kind kind, void (*destroy)(aclsim_obj *))
{
    o->handle = 0;
    o->kind = (int32_t)kind;
    atomic_init(&o->refs, 1);
    o->destroy = destroy;
    o->hnext = NULL;
    atomic_fetch_add(&g_live[kind], 1);
}

void *aclsim_obj_register(aclsim_obj *o)
{
    pthread_mutex_lock(&g_lock);
    maybe_grow();
    if (!g_buckets) { /* could not allocate even the first table */
        pthread_mutex_unlock(&g_lock);
        return NULL;
    }
    uint64_t h = HANDLE_TAG | ((uint64_t)o->kind << HANDLE_KIND_SHIFT) | (++g_serial & 0xFFFFFFFFFFFFull);
    o->handle = h;
    size_t b = bucket_of(h, g_nbuckets);
    o->hnext = g_buckets[b];
    g_buckets[b] = o;
    g_count++;
    pthread_mutex_unlock(&g_lock);
    return rt_p(h);
}

/* Find (g_lock held); *link receives the pointer that points at the object. */
static aclsim_obj *find_locked(uint64_t h, aclsim_obj ***link)
{
    if (!g_buckets)
        return NULL;
    aclsim_obj **l = &g_buckets[bucket_of(h, g_nbuckets)];
    for (; *l; l = &(*l)->hnext) {
        if ((*l)->handle == h) {
            if (link)
                *link = l;
            return *l;
        }
    }
    return NULL;
}

aclsim_obj *aclsim_obj_acquire(const void *handle, uint32_t kind_mask)
{
    uint64_t h = rt_h(handle);
    int k = handle_kind(h);
    if (k < 0 || !(kind_mask & ACLSIM_KIND_BIT(k)))
        return NULL;
    pthread_mutex_lock(&g_lock);
    aclsim_obj *o = find_locked(h, NULL);
    if (o)
        atomic_fetch_add(&o->refs, 1);
    pthread_mutex_unlock(&g_lock);
    return o;
}

aclsim_obj *aclsim_obj_unregister(const void *handle, uint32_t kind_mask)
{
    uint64_t h = rt_h(handle);
    int k = handle_kind(h);
    if (k < 0 || !(kind_mask & ACLSIM_KIND_BIT(k)))
        return NULL;
    aclsim_obj **link = NULL;
    pthread_mutex_lock(&g_lock);
    aclsim_obj *o = find_locked(h, &link);
    if (o) {
        *link = o->hnext;
        o->hnext = NULL;
        g_count--;
    }
    pthread_mutex_unlock(&g_lock);
    return o;
}

void aclsim_obj_retain(aclsim_obj *o)
{
    atomic_fetch_add(&o->refs, 1);
}

void aclsim_obj_release(aclsim_obj *o)
{
    if (!o)
        return;
    if (atomic_fetch_sub(&o->refs, 1) == 1) {
        int kind = o->kind;
        if (o->destroy)
            o->destroy(o);
        atomic_fetch_sub(&g_live[kind], 1);
    }
}

int64_t aclsim_obj_live(aclsim_kind kind)
{
    if ((int)kind <= 0 || kind >= ACLSIM_KIND_COUNT)
        return 0;
    return (int64_t)atomic_load(&g_live[kind]);
}
