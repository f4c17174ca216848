/*
 * rt_devmem.c - simulated device memory (aclrtMalloc/Free/Memcpy/Memset) and host memory
 * (aclrtMallocHost/FreeHost).
 *
 * Device memory is ordinary host memory, 64-byte aligned, kept in a registry sorted by address
 * so "which allocation contains [p, p+n)" is a binary search.  Like A2/A3, which rounds every
 * allocation up to a multiple of 32 bytes plus 32 bytes, each allocation of `size` bytes is
 * followed by guard bytes up to round_up(size, 32) + 32, filled with a known pattern; kernels
 * (after they run) and aclrtFree check that pattern to catch writes past the end.
 * New allocations are filled with 0xCD: device memory is not initialised, and garbage that is
 * not zero makes reads of never-written memory visible.
 *
 * Lifetime: an allocation has a reference count (1 for the registry + 1 per pin).  aclrtFree
 * removes it from the registry at once; the memory itself is freed at the last unpin, so a
 * kernel still running never touches freed memory.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt_private.h"

#define DEV_ALIGN 64
#define GUARD_ROUND 32
#define FILL_BYTE 0xCD
#define MAX_ALLOC ((uint64_t)64 << 30) /* 64 GiB: the HBM of a 910B3 */

static atomic_ullong g_serial; /* allocations made so far (aclsim_devmem_info.serial) */

struct aclsim_devmem_ref {
    uint8_t *base;
    uint64_t size;
    uint64_t alloc_size;
    int32_t device;
    atomic_int refs;
    uint64_t serial; /* 1, 2, ...: the allocation's identity (an address may come back) */
};
typedef struct aclsim_devmem_ref rt_alloc;

typedef struct {
    pthread_mutex_t lock;
    rt_alloc **v; /* sorted by base */
    size_t n, cap;
    int64_t bytes; /* sum of requested sizes */
} registry;

static registry g_dev = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0};
static registry g_host = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0};

static inline uint8_t guard_byte(uint64_t i)
{
    return (uint8_t)(0xA5u ^ (uint8_t)(i * 0x3Bu));
}

static uint64_t alloc_size_for(uint64_t size)
{
    return (size + GUARD_ROUND - 1) / GUARD_ROUND * GUARD_ROUND + GUARD_ROUND;
}

/* Index of the last entry with base <= p, or -1 (lock held). */
static ptrdiff_t find_le(const registry *r, const void *p)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uintptr_t)r->v[mid]->base <= (uintptr_t)p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (ptrdiff_t)lo - 1;
}

/* The entry containing [p, p+n) (n 0: containing p), or NULL (lock held). */
static rt_alloc *find_containing(const registry *r, const void *p, uint64_t n)
{
    ptrdiff_t i = find_le(r, p);
    if (i < 0)
        return NULL;
    rt_alloc *a = r->v[i];
    uintptr_t off = (uintptr_t)p - (uintptr_t)a->base;
    if (off >= a->size || n > a->size - off) /* size >= 1, so n == 0 means "p inside" */
        return NULL;
    return a;
}

static int registry_insert(registry *r, rt_alloc *a)
{
    if (r->n == r->cap) {
        size_t ncap = r->cap ? 2 * r->cap : 256;
        rt_alloc **nv = realloc(r->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        r->v = nv;
        r->cap = ncap;
    }
    size_t at = (size_t)(find_le(r, a->base) + 1);
    memmove(r->v + at + 1, r->v + at, (r->n - at) * sizeof *r->v);
    r->v[at] = a;
    r->n++;
    r->bytes += (int64_t)a->size;
    return 0;
}

/* Remove the entry whose base is exactly p; returns it, or NULL (*inside: p is interior). */
static rt_alloc *registry_take(registry *r, const void *p, rt_alloc **inside)
{
    ptrdiff_t i = find_le(r, p);
    *inside = NULL;
    if (i < 0)
        return NULL;
    rt_alloc *a = r->v[i];
    if (a->base != p) {
        if ((uintptr_t)p < (uintptr_t)a->base + a->size)
            *inside = a;
        return NULL;
    }
    memmove(r->v + i, r->v + i + 1, (r->n - (size_t)i - 1) * sizeof *r->v);
    r->n--;
    r->bytes -= (int64_t)a->size;
    return a;
}

static void alloc_unref(rt_alloc *a)
{
    if (atomic_fetch_sub(&a->refs, 1) == 1) {
        free(a->base);
        free(a);
    }
}

void rt_devmem_stats(int64_t *count, int64_t *bytes)
{
    pthread_mutex_lock(&g_dev.lock);
    *count = (int64_t)g_dev.n;
    *bytes = g_dev.bytes;
    pthread_mutex_unlock(&g_dev.lock);
}

/* ---- internal API ---------------------------------------------------------------------------- */

int aclsim_devmem_lookup(const void *ptr, uint64_t nbytes, aclsim_devmem_info *info)
{
    pthread_mutex_lock(&g_dev.lock);
    rt_alloc *a = find_containing(&g_dev, ptr, nbytes);
    if (a && info)
        aclsim_devmem_ref_info(a, info);
    pthread_mutex_unlock(&g_dev.lock);
    return a != NULL;
}

aclsim_devmem_ref *aclsim_devmem_pin(const void *ptr, uint64_t nbytes)
{
    pthread_mutex_lock(&g_dev.lock);
    rt_alloc *a = find_containing(&g_dev, ptr, nbytes);
    if (a)
        atomic_fetch_add(&a->refs, 1);
    pthread_mutex_unlock(&g_dev.lock);
    return a;
}

void aclsim_devmem_unpin(aclsim_devmem_ref *ref)
{
    if (ref)
        alloc_unref(ref);
}

void aclsim_devmem_ref_info(const aclsim_devmem_ref *ref, aclsim_devmem_info *info)
{
    info->base = ref->base;
    info->size = ref->size;
    info->alloc_size = ref->alloc_size;
    info->device = ref->device;
    info->serial = ref->serial;
}

int aclsim_devmem_check_guard(aclsim_devmem_ref *a, const char *who, char *msg, size_t cap)
{
    uint64_t first_bad = 0, n_bad = 0;
    for (uint64_t i = a->size; i < a->alloc_size; i++) {
        uint8_t want = guard_byte(i - a->size);
        if (a->base[i] != want) {
            if (!n_bad)
                first_bad = i;
            n_bad++;
            a->base[i] = want; /* restore: report each overrun once */
        }
    }
    if (!n_bad)
        return 0;
    if (aclsim_sanitize_on)
        aclsim_san_guard(a->base, a->size, first_bad - a->size, who);
    aclsim_format(msg, cap,
                  "%s wrote past the end of device allocation %p of %llu bytes (%llu of the %llu "
                  "guard bytes after it changed, first at offset %llu)",
                  who, (void *)a->base, (unsigned long long)a->size, (unsigned long long)n_bad,
                  (unsigned long long)(a->alloc_size - a->size), (unsigned long long)first_bad);
    return 1;
}

/* ---- aclrtMalloc / aclrtFree --------------------------------------------------------------- */

static int policy_known(int policy)
{
    switch (policy) {
    case ACL_MEM_MALLOC_HUGE_FIRST:
    case ACL_MEM_MALLOC_HUGE_ONLY:
    case ACL_MEM_MALLOC_NORMAL_ONLY:
    case ACL_MEM_MALLOC_HUGE_FIRST_P2P:
    case ACL_MEM_MALLOC_HUGE_ONLY_P2P:
    case ACL_MEM_MALLOC_NORMAL_ONLY_P2P:
    case ACL_MEM_MALLOC_HUGE1G_ONLY:
    case ACL_MEM_MALLOC_HUGE1G_ONLY_P2P:
    case ACL_MEM_TYPE_LOW_BAND_WIDTH:
    case ACL_MEM_TYPE_HIGH_BAND_WIDTH:
    case ACL_MEM_ACCESS_USER_SPACE_READONLY:
        return 1;
    default:
        return 0;
    }
}

/* Whether `size` more bytes fit under ACLSIM_DEVICE_MEMORY (g_dev.lock held). */
static int limit_left(uint64_t size)
{
    uint64_t limit = rt_devmem_limit();
    uint64_t used = g_dev.bytes > 0 ? (uint64_t)g_dev.bytes : 0;
    return !limit || (size <= limit && used <= limit - size);
}

static int over_limit(uint64_t size)
{
    pthread_mutex_lock(&g_dev.lock);
    int fits = limit_left(size);
    pthread_mutex_unlock(&g_dev.lock);
    return !fits;
}

static aclError out_of_device_memory(size_t size)
{
    int64_t count, bytes;
    rt_devmem_stats(&count, &bytes);
    return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                            "aclrtMalloc: out of device memory allocating %zu bytes (%lld bytes "
                            "live in %lld allocations, ACLSIM_DEVICE_MEMORY=%llu)",
                            size, (long long)bytes, (long long)count,
                            (unsigned long long)rt_devmem_limit());
}

ACLSIM_API aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    if (!devPtr)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: devPtr is NULL");
    if (size == 0)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: size must be > 0 (got 0)");
    if (!policy_known((int)policy))
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "aclrtMalloc: policy %d is not an aclrtMemMallocPolicy value "
                                "(0..7, 0x100, 0x1000, 0x100000)",
                                (int)policy);
    int32_t dev = aclsim_current_device();
    if (dev < 0)
        return aclsim_set_error(ACL_ERROR_RT_CONTEXT_NULL,
                                "aclrtMalloc: no current context in this thread (call "
                                "aclrtSetDevice or aclrtSetCurrentContext first)");
    if ((uint64_t)size > MAX_ALLOC)
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                                "aclrtMalloc: size %zu exceeds the simulated device memory "
                                "(64 GiB)",
                                size);
    if (over_limit(size))
        return out_of_device_memory(size);
    rt_alloc *a = malloc(sizeof *a);
    void *base = NULL;
    uint64_t asz = alloc_size_for(size);
    if (!a || posix_memalign(&base, DEV_ALIGN, asz) != 0) {
        free(a);
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                                "aclrtMalloc: out of memory allocating %zu bytes", size);
    }
    a->base = base;
    a->size = size;
    a->alloc_size = asz;
    a->device = dev;
    atomic_init(&a->refs, 1);
    a->serial = atomic_fetch_add(&g_serial, 1) + 1;
    memset(a->base, FILL_BYTE, size);
    for (uint64_t i = size; i < asz; i++)
        a->base[i] = guard_byte(i - size);
    pthread_mutex_lock(&g_dev.lock);
    int rc = limit_left(size) ? registry_insert(&g_dev, a) : 1; /* 1: over the limit */
    pthread_mutex_unlock(&g_dev.lock);
    if (rc) {
        free(base);
        free(a);
        if (rc > 0)
            return out_of_device_memory(size);
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc: out of host memory");
    }
    if (aclsim_sanitize_on)
        aclsim_san_alloc(base, size);
    *devPtr = base;
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtFree(void *devPtr)
{
    if (!devPtr)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtFree: devPtr is NULL");
    rt_alloc *inside;
    pthread_mutex_lock(&g_dev.lock);
    rt_alloc *a = registry_take(&g_dev, devPtr, &inside);
    void *inside_base = inside ? inside->base : NULL;
    pthread_mutex_unlock(&g_dev.lock);
    if (aclsim_sanitize_on)
        aclsim_san_free(devPtr, a != NULL, inside_base);
    if (!a) {
        if (inside_base)
            return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                    "aclrtFree: %p is inside device allocation %p but is not its "
                                    "start",
                                    devPtr, inside_base);
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "aclrtFree: %p is not a live device allocation (freed already, or "
                                "not from aclrtMalloc)",
                                devPtr);
    }
    char msg[ACLSIM_MSG_CAP];
    int damaged = aclsim_devmem_check_guard(a, "something", msg, sizeof msg);
    alloc_unref(a);
    if (damaged)
        return aclsim_set_error(ACL_ERROR_RT_AICORE_EXCEPTION, "aclrtFree: %s", msg);
    return ACL_SUCCESS;
}

/* ---- host memory ----------------------------------------------------------------------------- */

ACLSIM_API aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    if (!hostPtr)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: hostPtr is NULL");
    if (size == 0)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: size must be > 0 (got 0)");
    rt_alloc *a = malloc(sizeof *a);
    void *base = NULL;
    if (!a || posix_memalign(&base, DEV_ALIGN, size) != 0) {
        free(a);
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                                "aclrtMallocHost: out of memory allocating %zu bytes", size);
    }
    a->base = base;
    a->size = size;
    a->alloc_size = size;
    a->device = -1;
    atomic_init(&a->refs, 1);
    pthread_mutex_lock(&g_host.lock);
    int rc = registry_insert(&g_host, a);
    pthread_mutex_unlock(&g_host.lock);
    if (rc) {
        free(base);
        free(a);
        return aclsim_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMallocHost: out of host memory");
    }
    *hostPtr = base;
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtFreeHost(void *hostPtr)
{
    if (!hostPtr)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtFreeHost: hostPtr is NULL");
    rt_alloc *inside;
    pthread_mutex_lock(&g_host.lock);
    rt_alloc *a = registry_take(&g_host, hostPtr, &inside);
    pthread_mutex_unlock(&g_host.lock);
    if (!a)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "aclrtFreeHost: %p is not a live allocation from aclrtMallocHost",
                                hostPtr);
    alloc_unref(a);
    return ACL_SUCCESS;
}

/* ---- host ranges that run into device memory (rt_copy.c) ------------------------------- */

int rt_overlaps_device(const void *p, uint64_t n)
{
    pthread_mutex_lock(&g_dev.lock);
    /* any allocation intersecting [p, p+n)? the one at or before p, or the next one */
    ptrdiff_t i = find_le(&g_dev, p);
    int hit = 0;
    if (i >= 0 && (uintptr_t)p < (uintptr_t)g_dev.v[i]->base + g_dev.v[i]->alloc_size)
        hit = 1;
    if (!hit && (size_t)(i + 1) < g_dev.n &&
        (uintptr_t)g_dev.v[i + 1]->base < (uintptr_t)p + n)
        hit = 1;
    pthread_mutex_unlock(&g_dev.lock);
    return hit;
}
