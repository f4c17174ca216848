/*
 * rt_copy.c - aclrtMemcpy / aclrtMemset and their stream-ordered Async forms.
 *
 * Every kind of aclrtMemcpyKind (0-7) is accepted.  The arguments are checked at the call (as
 * CANN does), device ranges must lie in one live allocation, host ranges must not touch device
 * memory.  An Async copy pins the device allocations it touches and runs on the stream's worker
 * behind everything queued before it, so reading the destination before synchronizing the
 * stream sees the old bytes, as on a device.  HOST_TO_BUF_TO_DEVICE copies the host source at
 * the call (the caller may free it at once); other async host sides are read / written when the
 * task runs (keep them alive until the stream is synchronized).
 */
#include <stdlib.h>
#include <string.h>

#include "rt_private.h"

static const char *kind_name(int kind)
{
    static const char *const names[] = {
        "ACL_MEMCPY_HOST_TO_HOST",          "ACL_MEMCPY_HOST_TO_DEVICE",
        "ACL_MEMCPY_DEVICE_TO_HOST",        "ACL_MEMCPY_DEVICE_TO_DEVICE",
        "ACL_MEMCPY_DEFAULT",               "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE",
        "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE", "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE"};
    return kind >= 0 && kind <= 7 ? names[kind] : "?";
}

/* Which sides are device memory for kind k (DEFAULT: decided by the addresses). */
static void sides(int k, const void *dst, const void *src, int *dst_dev, int *src_dev)
{
    if (k == ACL_MEMCPY_DEFAULT) {
        *dst_dev = aclsim_devmem_lookup(dst, 0, NULL);
        *src_dev = aclsim_devmem_lookup(src, 0, NULL);
        return;
    }
    *dst_dev = k == ACL_MEMCPY_HOST_TO_DEVICE || k == ACL_MEMCPY_DEVICE_TO_DEVICE ||
               k == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE || k == ACL_MEMCPY_INNER_DEVICE_TO_DEVICE ||
               k == ACL_MEMCPY_INTER_DEVICE_TO_DEVICE;
    *src_dev = k == ACL_MEMCPY_DEVICE_TO_HOST || k == ACL_MEMCPY_DEVICE_TO_DEVICE ||
               k == ACL_MEMCPY_INNER_DEVICE_TO_DEVICE || k == ACL_MEMCPY_INTER_DEVICE_TO_DEVICE;
}

/* One side: device sides must lie in one live allocation (pinned into *pin), host sides must
 * not touch device memory. */
static int check_side(const char *api, const char *what, const void *p, uint64_t n, int is_dev,
                      int kind, aclsim_devmem_ref **pin)
{
    *pin = NULL;
    if (is_dev) {
        *pin = aclsim_devmem_pin(p, n);
        if (!*pin && aclsim_sanitize_on)
            aclsim_san_bad_range(api, p, n, what[0] == 'd' ? ACLSIM_SAN_W : ACLSIM_SAN_R);
        if (!*pin)
            return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                    "%s: %s range %p + %llu bytes is not inside one live device "
                                    "allocation (kind %s)",
                                    api, what, p, (unsigned long long)n, kind_name(kind));
    } else if (rt_overlaps_device(p, n)) {
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "%s: %s %p is device memory but kind %s says host memory", api,
                                what, p, kind_name(kind));
    }
    return 0;
}

/* A checked copy: both sides pinned where they are device memory. */
typedef struct {
    void *dst;
    const void *src;
    size_t count;
    aclsim_devmem_ref *pd, *ps;
    void *staged; /* HOST_TO_BUF_TO_DEVICE async: a copy of the source */
} copy_plan;

static void plan_release(copy_plan *c)
{
    aclsim_devmem_unpin(c->pd);
    aclsim_devmem_unpin(c->ps);
    free(c->staged);
}

/* The inner / inter device kinds also name which devices the two sides are on. */
static int check_devices(const char *api, int k, const copy_plan *c)
{
    if (k != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE && k != ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
        return 0;
    aclsim_devmem_info di, si;
    aclsim_devmem_ref_info(c->pd, &di);
    aclsim_devmem_ref_info(c->ps, &si);
    int same = di.device == si.device;
    if (k == ACL_MEMCPY_INNER_DEVICE_TO_DEVICE && !same)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "%s: kind ACL_MEMCPY_INNER_DEVICE_TO_DEVICE but dst is on device "
                                "%d and src on device %d (use INTER_DEVICE_TO_DEVICE)",
                                api, (int)di.device, (int)si.device);
    return 0;
}

static int plan_copy(const char *api, void *dst, size_t destMax, const void *src, size_t count,
                     int k, copy_plan *c)
{
    memset(c, 0, sizeof *c);
    if (k < 0 || k > 7)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "%s: kind %d is not an aclrtMemcpyKind (0..7)", api, k);
    if (count > destMax)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "%s: count %zu exceeds destMax %zu", api,
                                count, destMax);
    if (count == 0)
        return 0;
    if (!dst || !src)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", api, dst ? "src" : "dst");
    int dst_dev, src_dev;
    sides(k, dst, src, &dst_dev, &src_dev);
    if ((dst_dev || src_dev) && !aclsim_current_context())
        return aclsim_set_error(ACL_ERROR_RT_CONTEXT_NULL,
                                "%s: no current context in this thread (a copy involving device "
                                "memory needs one: call aclrtSetDevice or aclrtSetCurrentContext)",
                                api);
    int rc = check_side(api, "dst", dst, count, dst_dev, k, &c->pd);
    if (!rc)
        rc = check_side(api, "src", src, count, src_dev, k, &c->ps);
    if (!rc)
        rc = check_devices(api, k, c);
    if (rc) {
        plan_release(c);
        return rc;
    }
    c->dst = dst;
    c->src = src;
    c->count = count;
    return 0;
}

ACLSIM_API aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                aclrtMemcpyKind kind)
{
    copy_plan c;
    int rc = plan_copy("aclrtMemcpy", dst, destMax, src, count, (int)kind, &c);
    if (rc || !c.count)
        return rc;
    memmove(c.dst, c.src, c.count);
    if (aclsim_sanitize_on)
        aclsim_san_copy(c.dst, c.src, c.count, "aclrtMemcpy", __FILE__, __LINE__);
    plan_release(&c);
    return ACL_SUCCESS;
}

static int copy_task(void *arg, char *msg, size_t cap)
{
    (void)msg;
    (void)cap;
    copy_plan *c = arg;
    if (c->count)
        memmove(c->dst, c->staged ? c->staged : c->src, c->count);
    if (c->count && aclsim_sanitize_on)
        aclsim_san_copy(c->dst, c->staged ? c->staged : c->src, c->count, "aclrtMemcpyAsync",
                        __FILE__, __LINE__);
    return 0;
}

static void copy_release(void *arg)
{
    plan_release(arg);
    free(arg);
}

/* Queue fn(plan) on stream (NULL: the current context's default stream); consumes c. */
static int enqueue(const char *api, aclrtStream stream, aclsim_task_fn fn, copy_plan *c)
{
    aclsim_stream *s;
    int rc = aclsim_stream_resolve(stream, &s);
    if (rc) {
        copy_release(c);
        return aclsim_set_error(rc, "%s: %s", api,
                                rc == ACL_ERROR_RT_CONTEXT_NULL
                                    ? "no current context in this thread (NULL stream)"
                                    : "stream is not a live stream");
    }
    rc = aclsim_stream_enqueue(s, fn, c, copy_release);
    aclsim_stream_put(s);
    if (rc) {
        copy_release(c);
        return aclsim_set_error(rc, "%s: the stream is being destroyed", api);
    }
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                                     aclrtMemcpyKind kind, aclrtStream stream)
{
    const char *api = "aclrtMemcpyAsync";
    copy_plan *c = calloc(1, sizeof *c);
    if (!c)
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    int rc = plan_copy(api, dst, destMax, src, count, (int)kind, c);
    if (!rc && c->count && kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE) {
        if (!(c->staged = malloc(c->count)))
            rc = aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
        else
            memcpy(c->staged, c->src, c->count); /* the source may be freed after the call */
    }
    if (rc) {
        copy_release(c);
        return rc;
    }
    return enqueue(api, stream, copy_task, c);
}

/* ---- memset ---------------------------------------------------------------------------------- */

/* Checks of aclrtMemset(Async): the pin (device memory) or NULL (host memory) in c->pd. */
static int plan_set(const char *api, void *devPtr, size_t maxCount, size_t count, copy_plan *c)
{
    memset(c, 0, sizeof *c);
    if (!devPtr)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "%s: devPtr is NULL", api);
    if (count > maxCount)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "%s: count %zu exceeds maxCount %zu", api,
                                count, maxCount);
    c->dst = devPtr;
    c->count = count;
    if (count == 0)
        return 0;
    if (!aclsim_devmem_lookup(devPtr, 0, NULL)) {
        if (rt_overlaps_device(devPtr, count))
            return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                    "%s: host range %p + %zu bytes runs into device memory", api,
                                    devPtr, count);
        return 0; /* host memory */
    }
    if (!aclsim_current_context())
        return aclsim_set_error(ACL_ERROR_RT_CONTEXT_NULL,
                                "%s: no current context in this thread (call aclrtSetDevice or "
                                "aclrtSetCurrentContext first)",
                                api);
    if (!(c->pd = aclsim_devmem_pin(devPtr, count)) && aclsim_sanitize_on)
        aclsim_san_bad_range(api, devPtr, count, ACLSIM_SAN_W);
    if (!c->pd)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "%s: range %p + %zu bytes is not inside one live device allocation",
                                api, devPtr, count);
    return 0;
}

ACLSIM_API aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    copy_plan c;
    int rc = plan_set("aclrtMemset", devPtr, maxCount, count, &c);
    if (!rc && c.count)
        memset(c.dst, value, c.count);
    if (!rc && c.count && aclsim_sanitize_on)
        aclsim_san_access(c.dst, c.count, ACLSIM_SAN_W, __FILE__, __LINE__);
    plan_release(&c);
    return rc;
}

static int set_task(void *arg, char *msg, size_t cap)
{
    (void)msg;
    (void)cap;
    copy_plan *c = arg;
    if (c->count) /* src carries the value */
        memset(c->dst, (int)(intptr_t)c->src, c->count);
    if (c->count && aclsim_sanitize_on)
        aclsim_san_access(c->dst, c->count, ACLSIM_SAN_W, __FILE__, __LINE__);
    return 0;
}

ACLSIM_API aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                                     aclrtStream stream)
{
    const char *api = "aclrtMemsetAsync";
    copy_plan *c = calloc(1, sizeof *c);
    if (!c)
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    int rc = plan_set(api, devPtr, maxCount, count, c);
    if (rc) {
        copy_release(c);
        return rc;
    }
    c->src = (const void *)(intptr_t)value;
    return enqueue(api, stream, set_task, c);
}
