/*
 * rt_current.c - the calling thread's current context and what it resolves to: the context
 * handle, its device, its default stream.
 *
 * The current context is thread-local and stored as a handle: a context destroyed by another
 * thread simply stops resolving (the thread then has "no context", 107002), nothing dangles.
 * Contexts are made and destroyed in rt_context.c, which sets and forgets the current one here.
 */
#include "rt_context.h"

static __thread void *tls_ctx;

rt_context *rt_ctx_acquire(void *handle)
{
    return (rt_context *)aclsim_obj_acquire(handle, RT_CTX_KINDS);
}

rt_context *rt_current_acquire(void)
{
    return rt_ctx_acquire(tls_ctx);
}

void rt_current_set(void *handle)
{
    tls_ctx = handle;
}

void rt_current_forget(void *handle)
{
    if (tls_ctx == handle)
        tls_ctx = NULL;
}

void *rt_context_default_stream(void *ctx)
{
    rt_context *c = rt_ctx_acquire(ctx);
    if (!c)
        return NULL;
    void *s = c->default_stream;
    aclsim_obj_release(&c->obj);
    return s;
}

void *aclsim_current_context(void)
{
    void *h = tls_ctx;
    if (!h)
        return NULL;
    rt_context *c = rt_ctx_acquire(h);
    if (!c) {
        tls_ctx = NULL; /* destroyed meanwhile (possibly by another thread) */
        return NULL;
    }
    aclsim_obj_release(&c->obj);
    return h;
}

int32_t aclsim_current_device(void)
{
    rt_context *c = rt_ctx_acquire(tls_ctx);
    if (!c)
        return -1;
    int32_t d = c->device;
    aclsim_obj_release(&c->obj);
    return d;
}
