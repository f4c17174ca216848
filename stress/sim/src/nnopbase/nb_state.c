/*
 * nb_state.c - named state that must exist once per process (or once per thread), for operator
 * code that is linked into more than one library.
 *
 * Every operator object is linked into both its domain library (libopapi_<domain>.so) and
 * libopapi.so, so a process that loads both holds two copies of the operator's code.  A `static`
 * variable in an operator file would then exist twice and the copies would diverge (two
 * "reduction units", two staging buffers).  Operators therefore keep such state here, in
 * libnnopbase, which a process loads once: a block is looked up by name, created zeroed on first
 * use and never freed (process-wide) or freed at thread exit (per thread).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nb_private.h"

typedef struct nb_state {
    struct nb_state *next;
    char *name;
    size_t size;
    _Alignas(64) unsigned char data[];
} nb_state;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static nb_state *g_blocks; /* process-wide blocks (guarded by g_mu) */
static pthread_key_t g_thread_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

static nb_state *find(nb_state *list, const char *name)
{
    for (nb_state *s = list; s; s = s->next)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

static nb_state *make(const char *name, size_t size)
{
    nb_state *s = calloc(1, sizeof *s + size);
    if (!s)
        return NULL;
    s->name = strdup(name);
    if (!s->name) {
        free(s);
        return NULL;
    }
    s->size = size;
    return s;
}

static void *checked(nb_state *s, const char *name, size_t size)
{
    if (s->size != size) {
        aclsim_set_error(ACLNN_ERR_INNER, "aclsim_shared_state: %s was created with %zu bytes, "
                         "asked for %zu: two operator builds disagree on its layout",
                         name, s->size, size);
        return NULL;
    }
    return s->data;
}

void *aclsim_shared_state(const char *name, size_t size, void (*init)(void *state))
{
    if (!name || !size)
        return NULL;
    pthread_mutex_lock(&g_mu);
    nb_state *s = find(g_blocks, name);
    if (!s && (s = make(name, size)) != NULL) {
        if (init)
            init(s->data); /* under the lock: exactly once, before anyone sees the block */
        s->next = g_blocks;
        g_blocks = s;
    }
    pthread_mutex_unlock(&g_mu);
    return s ? checked(s, name, size) : NULL;
}

static void free_thread_blocks(void *head)
{
    for (nb_state *s = head, *next; s; s = next) {
        next = s->next;
        free(s->name);
        free(s);
    }
}

static void make_key(void)
{
    (void)pthread_key_create(&g_thread_key, free_thread_blocks);
}

void *aclsim_thread_state(const char *name, size_t size)
{
    if (!name || !size)
        return NULL;
    pthread_once(&g_key_once, make_key);
    nb_state *head = pthread_getspecific(g_thread_key);
    nb_state *s = find(head, name);
    if (!s) {
        if (!(s = make(name, size)))
            return NULL;
        s->next = head;
        pthread_setspecific(g_thread_key, s);
    }
    return checked(s, name, size);
}
