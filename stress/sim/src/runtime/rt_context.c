/*
 * rt_context.c - devices and contexts: their creation and teardown, and the APIs that set and get
 * the calling thread's current one (kept in rt_current.c; system parameters: rt_sysparam.c).
 *
 * - aclrtSetDevice(d) uses the device's default context, shared by every thread that sets d and
 *   reference-counted across all aclrtSetDevice/aclrtResetDevice calls of the process; it
 *   becomes the calling thread's current context, replacing an explicit one.  When the count
 *   reaches 0 the default context and every stream created in it are destroyed.
 * - aclrtCreateContext creates an explicit context (with its own default stream) and makes it
 *   current.  aclrtDestroyContext refuses default contexts, destroys the context's streams,
 *   and clears the calling thread's current context if it was this one.
 */
#include <stdlib.h>

#include "rt_context.h"

typedef struct {
    void *ctx;   /* default context handle, NULL when refs == 0 */
    int32_t refs;
} rt_device;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* guards g_devices */
static rt_device g_devices[RT_MAX_DEVICES];

static void context_destroy(aclsim_obj *o)
{
    rt_context *c = (rt_context *)o;
    pthread_mutex_destroy(&c->mu);
    free(c);
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
        aclsim_obj_release(aclsim_obj_unregister(h, RT_CTX_KINDS));
        return NULL;
    }
    return h;
}

/* Unregister and tear down a context (its streams first).  `h` must have been unregistered
 * from g_devices already if it is a default context. */
static void context_teardown(void *h)
{
    aclsim_obj *o = aclsim_obj_unregister(h, RT_CTX_KINDS);
    if (!o)
        return;
    rt_streams_destroy_for_context(h);
    rt_current_forget(h);
    aclsim_obj_release(o);
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
    rt_current_set(d->ctx);
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
    rt_current_set(h);
    *context = h;
    return ACL_SUCCESS;
}

/* The live context behind handle context, acquired; NULL with the API's error set in *rc
 * when it is NULL or not live (why: the likely reason, for the message). */
static rt_context *live_context(const char *api, aclrtContext context, const char *why,
                                aclError *rc)
{
    rt_context *c = context ? rt_ctx_acquire(context) : NULL;
    if (!context)
        *rc = aclsim_set_error(ACL_ERROR_INVALID_PARAM, "%s: context is NULL", api);
    else if (!c)
        *rc = aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                               "%s: context %p is not a live context (%s)", api, context, why);
    return c;
}

ACLSIM_API aclError aclrtDestroyContext(aclrtContext context)
{
    aclError rc = ACL_SUCCESS;
    rt_context *c = live_context("aclrtDestroyContext", context,
                                 "destroyed already, or not a context handle", &rc);
    if (!c)
        return rc;
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
    aclError rc = ACL_SUCCESS;
    rt_context *c = live_context("aclrtSetCurrentContext", context,
                                 "destroyed, or its device was reset", &rc);
    if (!c)
        return rc;
    rt_current_set(context);
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

