/*
 * rt_private.h - declarations shared by the rt_*.c files of libascendcl only (hidden symbols;
 * not visible to the other libraries).  Cross-library API: aclsim_internal.h.
 */
#ifndef ACLSIM_RT_PRIVATE_H
#define ACLSIM_RT_PRIVATE_H

#include "aclsim_internal.h"

#define RT_HIDDEN __attribute__((visibility("hidden")))

/* Simulator version; the build passes the source key as ACLSIM_BUILD_KEY. */
#define ACLSIM_VERSION "0.1.0"
#ifndef ACLSIM_BUILD_KEY
#define ACLSIM_BUILD_KEY "dev"
#endif

/* Upper bound of ACLSIM_DEVICES. */
#define RT_MAX_DEVICES 64

/* rt_init.c: parse ACLSIM_DEVICES (unset/empty: 8).  0 ok, else -1 with a message in err. */
RT_HIDDEN int rt_parse_device_count(int32_t *out, char *err, size_t cap);

/* rt_faults.c */
RT_HIDDEN int rt_faults_configure(const char *spec, char *err, size_t cap);
RT_HIDDEN void rt_faults_clear(void);

/* rt_stream.c */
/* Create a stream of context `ctx` (a handle) on `device`; is_default selects the kind.
 * 0 or an aclError (message set). */
RT_HIDDEN int rt_stream_create(const char *api, void *ctx, int32_t device, int is_default,
                               void **out_handle);
/* Destroy every stream (default and explicit) of context `ctx`: waits for their queued tasks,
 * joins their workers.  Must be called without holding context locks. */
RT_HIDDEN void rt_streams_destroy_for_context(void *ctx);

/* rt_context.c: the default-stream handle of a live context (NULL if ctx is not live). */
RT_HIDDEN void *rt_context_default_stream(void *ctx);

/* rt_devmem.c */
RT_HIDDEN void rt_devmem_stats(int64_t *count, int64_t *bytes);

/* rt_memlimit.c: ACLSIM_DEVICE_MEMORY (0 ok, else -1 with a message); the limit (0: none);
 * the HBM total aclrtGetMemInfo reports (the limit, else 64 GiB). */
RT_HIDDEN int rt_devmem_configure(const char *spec, char *err, size_t cap);
RT_HIDDEN uint64_t rt_devmem_limit(void);
RT_HIDDEN uint64_t rt_devmem_total(void);

/* Handle <-> integer. */
static inline uint64_t rt_h(const void *p) { return (uint64_t)(uintptr_t)p; }
static inline void *rt_p(uint64_t h) { return (void *)(uintptr_t)h; }

/* rt_devmem.c: 1 if [p, p+n) intersects any live device allocation. */
RT_HIDDEN int rt_overlaps_device(const void *p, uint64_t n);
#endif /* ACLSIM_RT_PRIVATE_H */
