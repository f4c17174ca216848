/*
 * rt_sanitize_calls.c - which call and stage an access belongs to, and tensor views as byte runs.
 *
 * A call is one aclnn call: its phase 1 (...GetWorkspaceSize), phase 2 (the launch, on the
 * host) and kernel (on the stream worker, and the helper threads the kernel fans out to).  Calls
 * are numbered in creation order: aclnnMhcPreSinkhornBackward#3.  A phase-1 access made before
 * the executor exists opens the thread's pending call, which aclsim_executor_create adopts.
 * (Tensor views are walked in libnnopbase: nnopbase/nb_sanitize.c.)
 */
#define _GNU_SOURCE /* strdup */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define ACLSIM_SAN_PRIVATE
#include "rt_private.h"
#include "sanitize.h"

static atomic_ullong g_calls;

/* Operator names outlive executors in the records: keep one copy of each. */
#define NAMES_CAP 512
static const char *g_names[NAMES_CAP];
static int g_n_names;
static pthread_mutex_t g_names_mu = PTHREAD_MUTEX_INITIALIZER;

const char *aclsim_san_intern(const char *s)
{
    if (!s)
        return NULL;
    pthread_mutex_lock(&g_names_mu);
    const char *r = NULL;
    for (int i = 0; i < g_n_names && !r; i++)
        if (strcmp(g_names[i], s) == 0)
            r = g_names[i];
    if (!r && g_n_names < NAMES_CAP && (r = strdup(s)) != NULL)
        g_names[g_n_names++] = r;
    pthread_mutex_unlock(&g_names_mu);
    return r ? r : "?";
}

uint64_t aclsim_san_call_new(const char *op)
{
    uint64_t id = rt_san_ctx.pending;
    if (!id || !rt_san_ctx.pending_op || strcmp(rt_san_ctx.pending_op, op) != 0)
        id = atomic_fetch_add(&g_calls, 1) + 1;
    rt_san_ctx.pending = 0;
    rt_san_ctx.pending_op = NULL;
    return id;
}

void aclsim_san_call_enter(uint64_t call, const char *op, const char *stage)
{
    rt_san_ctx.call = call;
    rt_san_ctx.op = aclsim_san_intern(op);
    rt_san_ctx.stage = stage;
}

void aclsim_san_call_leave(void)
{
    rt_san_ctx.call = 0;
    rt_san_ctx.op = NULL;
    rt_san_ctx.stage = NULL;
}

void aclsim_san_phase1(const char *op, const void *p, uint64_t n, int mode, const char *file,
                       int line)
{
    if (!rt_san_ctx.pending || !rt_san_ctx.pending_op || strcmp(rt_san_ctx.pending_op, op) != 0) {
        rt_san_ctx.pending = atomic_fetch_add(&g_calls, 1) + 1;
        rt_san_ctx.pending_op = aclsim_san_intern(op);
    }
    rt_san_ctx_t saved = rt_san_ctx;
    aclsim_san_call_enter(rt_san_ctx.pending, op, "phase1");
    aclsim_san_access(p, n, mode, file, line);
    rt_san_ctx = saved;
}

const void *aclsim_san_ctx_get(void)
{
    return &rt_san_ctx;
}

void aclsim_san_ctx_set(const void *ctx)
{
    const rt_san_ctx_t *c = ctx;
    if (c && c != &rt_san_ctx) {
        rt_san_ctx.tok = c->tok;
        rt_san_ctx.call = c->call;
        rt_san_ctx.op = c->op;
        rt_san_ctx.stage = c->stage;
    }
}

void aclsim_san_task_begin(void *token)
{
    rt_san_ctx.tok = token;
}

void aclsim_san_task_end(void *token)
{
    rt_san_ctx.tok = NULL;
    aclsim_san_drop(token);
}

void rt_san_calls_reset(void)
{
    atomic_store(&g_calls, 0);
}
