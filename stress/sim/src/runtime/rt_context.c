/*
 * rt_context.c - devices, contexts, the per-thread current context, system parameters.
 *
 * - The current context is thread-local and stored as a handle: a context destroyed by another
 *   thread simply stops resolving (the thread then has "no context", 107002), nothing dangles.
 * - aclrtSetDevice(d) uses the device's default context, shared by every thread that sets d and
 *   reference-counted across all aclrtSetDevice/aclrtResetDevice calls of the process; it
 *   becomes the calling thread's current context, replacing an explicit one.  When the count
 *   reaches 0 the default context and every stream created in it are destroyed.
 * - aclrtCreateContext creates an explicit context (with its own default stream) and makes it
 *   current.  aclrtDestroyContext refuses default contexts, destroys the context's streams,
 *   and clears the calling thread's current context if it was this one.
 * - System parameters (aclSysParamOpt): a process-level value, and an optional per-context
 *   override; aclsim_sys_param() gives the effective one for the calling thread.
 */
#include <pthread.h>
#include <stdlib.h>

#include "rt_private.h"

#define N_OPTS 4

typedef struct {
    aclsim_obj obj;
    int32_t device;
    void *default_stream;       /* handle; immutable after creation */
    pthread_mutex_t mu;         /* guards opt_* */
    int64_t opt_value[N_OPTS];
    unsigned char opt_set[N_OPTS];
} rt_context;

typedef struct {
    void *ctx;   /* default context handle, NULL when refs == 0 */
    int32_t refs;
} rt_device;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* guards g_devices */
static rt_device g_devices[RT_MAX_DEVICES];
static atomic_llong g_opts[N_OPTS];
static __thread void *tls_ctx;

#define CTX_KINDS (ACLSIM_KIND_BIT(ACLSIM_KIND_CONTEXT) | ACLSIM_KIND_BIT(ACLSIM_KIND_CONTEXT_DEFAULT))

static void context_destroy(aclsim_obj *o)
{
    rt_context *c = (rt_context *)o;
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static rt_context *ctx_acquire(void *handle)
{
    return (rt_context *)aclsim_obj_acquire(handle, CTX_KINDS);
}

/* Create a context with its default stream; returns its handle or an error via *rc. */
static void *context_new(const char *api, int32_t device, int is_default, int *rc)
{
    rt_context *c = calloc(1, sizeof *c);
    if (!c) {
        *rc = aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
        return NULL;
    }
    aclsim_obj_init(&c->obj, is_default ? ACLSIM_KIND_CONTEXT_DEFAULT : ACLSIM_KIND_CONTEXT,
                    context_destroy);
    pthread_mutex_init(&c->mu, NULL);
    c->device = device;
    void *h = aclsim_obj_register(&c->obj);
    if (!h) {
        aclsim_obj_release(&c->obj);
        *rc = aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
        return NULL;
    }
    /* default_stream is written before the handle is returned to anyone. */
    *rc = rt_stream_create(api, h, device, 1, &c->default_stream);
    if (*rc) {
        aclsim_obj_release(aclsim_obj_unregister(h, CTX_KINDS));
        return NULL;
    }
    return h;
}

/* Unregister and tear down a context (its streams first).  `h` must have been unregistered
 * from g_devices already if it is a default context. */
static void context_teardown(void *h)
{
    aclsim_obj *o = aclsim_obj_unregister(h, CTX_KINDS);
    if (!o)
        return;
    rt_streams_destroy_for_context(h);
    if (tls_ctx == h)
        tls_ctx = NULL;
    aclsim_obj_release(o);
}

void *rt_context_default_stream(void *ctx)
{
    rt_context *c = ctx_acquire(ctx);
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
    rt_context *c = ctx_acquire(h);
    if (!c) {
        tls_ctx = NULL; /* destroyed meanwhile (possibly by another thread) */
        return NULL;
    }
    aclsim_obj_release(&c->obj);
    return h;
}

int32_t aclsim_current_device(void)
{
    rt_context *c = ctx_acquire(tls_ctx);
    if (!c)
        return -1;
    int32_t d = c->device;
    aclsim_obj_release(&c->obj);
    return d;
}

int64_t aclsim_sys_param(int32_t opt)
{
    if (opt < 0 || opt >= N_OPTS)
        return 0;
    rt_context *c = ctx_acquire(tls_ctx);
    if (c) {
        pthread_mutex_lock(&c->mu);
        int set = c->opt_set[opt];
        int64_t v = c->opt_value[opt];
        pthread_mutex_unlock(&c->mu);
        aclsim_obj_release(&c->obj);
        if (set)
            return v;
    }
    return (int64_t)atomic_load(&g_opts[opt]);
}

int aclsim_deterministic(void)
{
    return aclsim_sys_param(ACL_OPT_DETERMINISTIC) != 0;
}

static int check_device(const char *api, int32_t deviceId)
{
    if (!aclsim_initialized())
        return aclsim_set_error(ACL_ERROR_UNINITIALIZE, "%s: aclInit has not been called", api);
    int32_t n = aclsim_device_count();
    if (deviceId < 0 || deviceId >= n)
        return aclsim_set_error(ACL_ERROR_RT_INVALID_DEVICEID,
                                "%s: deviceId %d is invalid (the simulator has %d devices: "
                                "0..%d; set ACLSIM_DEVICES to change)",
                                api, (int)deviceId, (int)n, (int)n - 1);
    return 0;
}

ACLSIM_API aclError aclrtSetDevice(int32_t deviceId)
{
    int rc = check_device("aclrtSetDevice", deviceId);
    if (rc)
        return rc;
    pthread_mutex_lock(&g_lock);
    rt_device *d = &g_devices[deviceId];
    if (d->refs == 0) {
        d->ctx = context_new("aclrtSetDevice", deviceId, 1, &rc);
        if (!d->ctx) {
            pthread_mutex_unlock(&g_lock);
            return rc;
        }
    }
    d->refs++;
    tls_ctx = d->ctx;
    pthread_mutex_unlock(&g_lock);
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtResetDevice(int32_t deviceId)
{
    int rc = check_device("aclrtResetDevice", deviceId);
    if (rc)
        return rc;
    void *dead = NULL;
    pthread_mutex_lock(&g_lock);
    rt_device *d = &g_devices[deviceId];
    if (d->refs == 0) {
        pthread_mutex_unlock(&g_lock);
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "aclrtResetDevice: device %d is not set (more aclrtResetDevice "
                                "than aclrtSetDevice calls)",
                                (int)deviceId);
    }
    if (--d->refs == 0) {
        dead = d->ctx;
        d->ctx = NULL;
    }
    pthread_mutex_unlock(&g_lock);
    if (dead)
        context_teardown(dead); /* joins stream workers: outside g_lock */
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtGetDevice(int32_t *deviceId)
{
    if (!deviceId)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is NULL");
    int32_t d = aclsim_current_device();
    if (d < 0)
        return aclsim_set_error(ACL_ERROR_RT_CONTEXT_NULL,
                                "aclrtGetDevice: no current context in this thread (call "
                                "aclrtSetDevice or aclrtSetCurrentContext first)");
    *deviceId = d;
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
    if (!context)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext: context is NULL");
    int rc = check_device("aclrtCreateContext", deviceId);
    if (rc)
        return rc;
    void *h = context_new("aclrtCreateContext", deviceId, 0, &rc);
    if (!h)
        return rc;
    tls_ctx = h;
    *context = h;
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtDestroyContext(aclrtContext context)
{
    if (!context)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext: context is NULL");
    rt_context *c = ctx_acquire(context);
    if (!c)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "aclrtDestroyContext: context %p is not a live context (destroyed "
                                "already, or not a context handle)",
                                context);
    int is_default = c->obj.kind == ACLSIM_KIND_CONTEXT_DEFAULT;
    int32_t dev = c->device;
    aclsim_obj_release(&c->obj);
    if (is_default)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "aclrtDestroyContext: context %p is the default context of device "
                                "%d; release it with aclrtResetDevice",
                                context, (int)dev);
    /* A concurrent destroy of the same context makes the unregister in teardown a no-op. */
    context_teardown(context);
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtSetCurrentContext(aclrtContext context)
{
    if (!context)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtSetCurrentContext: context is NULL");
    rt_context *c = ctx_acquire(context);
    if (!c)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "aclrtSetCurrentContext: context %p is not a live context "
                                "(destroyed, or its device was reset)",
                                context);
    tls_ctx = context;
    aclsim_obj_release(&c->obj);
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtGetCurrentContext(aclrtContext *context)
{
    if (!context)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext: context is NULL");
    void *h = aclsim_current_context();
    if (!h)
        return aclsim_set_error(ACL_ERROR_RT_CONTEXT_NULL,
                                "aclrtGetCurrentContext: no current context in this thread");
    *context = h;
    return ACL_SUCCESS;
}

/* ---- system parameters --------------------------------------------------------------------- */

static int check_opt(const char *api, int32_t opt)
{
    if (opt < 0 || opt >= N_OPTS)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "%s: opt %d is not an aclSysParamOpt (0 DETERMINISTIC, "
                                "1 ENABLE_DEBUG_KERNEL, 2 STRONG_CONSISTENCY, 3 "
                                "ENABLE_KERNEL_EARLY_START)",
                                api, (int)opt);
    return 0;
}

ACLSIM_API aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    int rc = check_opt("aclrtSetSysParamOpt", (int32_t)opt);
    if (rc)
        return rc;
    atomic_store(&g_opts[opt], (long long)value);
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    int rc = check_opt("aclrtGetSysParamOpt", (int32_t)opt);
    if (rc)
        return rc;
    if (!value)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtGetSysParamOpt: value is NULL");
    *value = (int64_t)atomic_load(&g_opts[opt]);
    return ACL_SUCCESS;
}

static rt_context *current_for(const char *api, int *rc)
{
    rt_context *c = ctx_acquire(tls_ctx);
    if (!c)
        *rc = aclsim_set_error(ACL_ERROR_RT_CONTEXT_NULL,
                               "%s: no current context in this thread (call aclrtSetDevice or "
                               "aclrtSetCurrentContext first)",
                               api);
    return c;
}

ACLSIM_API aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    int rc = check_opt("aclrtCtxSetSysParamOpt", (int32_t)opt);
    if (rc)
        return rc;
    rt_context *c = current_for("aclrtCtxSetSysParamOpt", &rc);
    if (!c)
        return rc;
    pthread_mutex_lock(&c->mu);
    c->opt_value[opt] = value;
    c->opt_set[opt] = 1;
    pthread_mutex_unlock(&c->mu);
    aclsim_obj_release(&c->obj);
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    int rc = check_opt("aclrtCtxGetSysParamOpt", (int32_t)opt);
    if (rc)
        return rc;
    if (!value)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtCtxGetSysParamOpt: value is NULL");
    rt_context *c = current_for("aclrtCtxGetSysParamOpt", &rc);
    if (!c)
        return rc;
    aclsim_obj_release(&c->obj);
    *value = aclsim_sys_param((int32_t)opt); /* context value if set there, else process value */
    return ACL_SUCCESS;
}
