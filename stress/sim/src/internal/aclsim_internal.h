/*
 * aclsim_internal.h - the internal API that libascendcl exports to libnnopbase and libopapi.
 *
 * Every function here is exported from libascendcl.so with a lowercase `aclsim_` prefix (public
 * CANN-like functions and the `aclsim*` extras are in aclsim.h).  The other two libraries link
 * against libascendcl, so they may call these directly.  All functions are thread-safe.
 *
 * Concepts:
 *   errors   thread-local "recent error message" (aclGetRecentErrMsg)             rt_errors.c
 *   objects  opaque handles + reference counts + live counters                     rt_objects.c
 *   context  per-thread current context, deterministic flag                        rt_context.c
 *   streams  one worker thread per stream, FIFO tasks, sticky errors               rt_stream.c
 *   devmem   registry of device allocations, pinning, guard bytes                  rt_devmem.c
 *   faults   ACLSIM_FAULTS, read at aclInit                                         rt_faults.c
 */
#ifndef ACLSIM_INTERNAL_H
#define ACLSIM_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "aclsim.h"
#include "sanitize.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACLSIM_INTERNAL ACLSIM_API
#ifndef ACLSIM_PRINTF
#define ACLSIM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#endif

/* Capacity of every error-message buffer (thread-local, sticky stream errors, kernel errors). */
#define ACLSIM_MSG_CAP 1024

/* ==== errors ==================================================================================
 * aclsim_set_error formats a message into the calling thread's pending error (appending
 * " [<code>]") and returns `code`, so a failing path can `return aclsim_set_error(...)`.
 * Messages name the API, the offending argument and the constraint, e.g.
 *   "aclrtMalloc: size must be > 0 (got 0) [100000]".
 * aclGetRecentErrMsg() returns and clears the pending message. */
ACLSIM_INTERNAL int aclsim_set_error(int code, const char *fmt, ...) ACLSIM_PRINTF(2, 3);
/* snprintf into buf (used for sticky stream/kernel errors, which carry no code suffix). */
ACLSIM_INTERNAL void aclsim_format(char *buf, size_t cap, const char *fmt, ...) ACLSIM_PRINTF(3, 4);

/* ==== objects ================================================================================
 * Every object the user gets a handle to (context, stream, tensor, scalar, array, executor)
 * starts with an aclsim_obj.  The handle given to the user is NOT the object's address but a
 * unique, never-reused 64-bit id (0xA5C<kind:4><serial:48>): a stale or foreign handle is then
 * reported as an error instead of crashing or silently aliasing a newer object.
 *
 * Lifetime: aclsim_obj_init sets refs = 1 and bumps the live counter of its kind;
 * aclsim_obj_register hands that reference to the handle table and returns the handle;
 * aclsim_obj_acquire(handle) returns the object with +1 ref (or NULL if the handle is not live);
 * aclsim_obj_unregister removes the handle (later acquires fail) and hands the table's reference
 * to the caller; aclsim_obj_release drops a reference and, at 0, calls destroy() and decrements
 * the live counter.  So an object stays valid for as long as anyone holds a reference (e.g. an
 * executor whose kernel is still queued), and "live" counters count allocated objects. */
typedef enum {
    ACLSIM_KIND_NONE = 0,
    ACLSIM_KIND_CONTEXT_DEFAULT = 1, /* default context of a device (aclrtSetDevice)   */
    ACLSIM_KIND_CONTEXT = 2,         /* aclrtCreateContext                              */
    ACLSIM_KIND_STREAM_DEFAULT = 3,  /* implicit stream of a context                    */
    ACLSIM_KIND_STREAM = 4,          /* aclrtCreateStream                               */
    ACLSIM_KIND_TENSOR = 5,
    ACLSIM_KIND_SCALAR = 6,
    ACLSIM_KIND_INT_ARRAY = 7,
    ACLSIM_KIND_FLOAT_ARRAY = 8,
    ACLSIM_KIND_BOOL_ARRAY = 9,
    ACLSIM_KIND_EXECUTOR = 10,
    ACLSIM_KIND_TENSOR_LIST = 11,
    ACLSIM_KIND_SCALAR_LIST = 12,
    ACLSIM_KIND_EVENT = 13,
    ACLSIM_KIND_COUNT = 14 /* at most 16 */
} aclsim_kind;

#define ACLSIM_KIND_BIT(k) (1u << (k))

typedef struct aclsim_obj aclsim_obj;
struct aclsim_obj {
    uint64_t handle;                 /* 0 until registered                          */
    int32_t kind;                    /* aclsim_kind                                 */
    atomic_int refs;                 /* see above                                   */
    void (*destroy)(aclsim_obj *o);  /* frees the enclosing struct; may be NULL      */
    aclsim_obj *hnext;               /* handle-table chain (private to rt_objects.c) */
};

ACLSIM_INTERNAL void aclsim_obj_init(aclsim_obj *o, aclsim_kind kind, void (*destroy)(aclsim_obj *));
ACLSIM_INTERNAL void *aclsim_obj_register(aclsim_obj *o);
ACLSIM_INTERNAL aclsim_obj *aclsim_obj_acquire(const void *handle, uint32_t kind_mask);
ACLSIM_INTERNAL void aclsim_obj_retain(aclsim_obj *o);
ACLSIM_INTERNAL void aclsim_obj_release(aclsim_obj *o);
/* Returns the object (carrying the table's reference, to be released by the caller) or NULL. */
ACLSIM_INTERNAL aclsim_obj *aclsim_obj_unregister(const void *handle, uint32_t kind_mask);
/* Allocated objects of one kind (for aclsimLiveObjects). */
ACLSIM_INTERNAL int64_t aclsim_obj_live(aclsim_kind kind);

/* ==== init / devices / context =============================================================== */
ACLSIM_INTERNAL int aclsim_initialized(void);
/* Device count fixed at aclInit (from ACLSIM_DEVICES); before aclInit, read from the env. */
ACLSIM_INTERNAL int32_t aclsim_device_count(void);
/* Handle of the calling thread's current context, or NULL (none, or destroyed meanwhile). */
ACLSIM_INTERNAL void *aclsim_current_context(void);
/* Device of the current context, or -1. */
ACLSIM_INTERNAL int32_t aclsim_current_device(void);
/* Effective ACL_OPT_DETERMINISTIC (current context's value if set there, else process value,
 * default 0): returns 1 when on.  Operators capture it in phase 1. */
ACLSIM_INTERNAL int aclsim_deterministic(void);
/* Effective value of any aclSysParamOpt (same rule); 0 for an unknown opt. */
ACLSIM_INTERNAL int64_t aclsim_sys_param(int32_t opt);

/* ==== streams ================================================================================
 * A task runs on the stream's worker thread, in FIFO order.  fn returns 0, or an error code
 * after writing a message (no code suffix) into msg[cap]; the first error becomes the stream's
 * sticky error, returned and cleared by the next synchronize.  release(arg), if not NULL, runs
 * after fn on the worker thread (also frees arg).  Neither may call synchronize on its own
 * stream. */
typedef struct aclsim_stream aclsim_stream;
typedef int (*aclsim_task_fn)(void *arg, char *msg, size_t cap);

/* Resolve a user stream handle (NULL = the current context's default stream) into a referenced
 * stream.  Returns 0, ACL_ERROR_RT_CONTEXT_NULL (NULL handle and no current context) or
 * ACL_ERROR_INVALID_PARAM (not a live stream).  Sets NO message: callers word their own. */
ACLSIM_INTERNAL int aclsim_stream_resolve(void *handle, aclsim_stream **out);
ACLSIM_INTERNAL void aclsim_stream_put(aclsim_stream *s);
/* 0, or ACL_ERROR_INVALID_PARAM if the stream is being destroyed (no message set). */
ACLSIM_INTERNAL int aclsim_stream_enqueue(aclsim_stream *s, aclsim_task_fn fn, void *arg,
                                          void (*release)(void *));
ACLSIM_INTERNAL void *aclsim_stream_handle(const aclsim_stream *s);
/* Work that runs off a stream (an operator's internal stream) but that synchronizing the stream
 * waits for: begin counts it on the stream given by handle (a referenced token in *out; 0, or
 * ACL_ERROR_INVALID_PARAM for no live stream), end uncounts it and drops the reference.  Nothing
 * queued on the stream (an event) waits for it. */
ACLSIM_INTERNAL int aclsim_stream_join_begin(void *handle, aclsim_stream **out);
ACLSIM_INTERNAL void aclsim_stream_join_end(aclsim_stream *s);

/* ==== device memory ==========================================================================
 * Device memory is host memory (64-byte aligned) registered in a sorted registry.  Each
 * allocation of `size` bytes is followed by guard bytes up to round_up(size, 32) + 32.
 * A pin keeps an allocation's memory alive (aclrtFree of a pinned allocation unregisters it at
 * once but frees the memory at the last unpin), so a kernel never touches freed memory. */
typedef struct aclsim_devmem_ref aclsim_devmem_ref;
typedef struct {
    void *base;
    uint64_t size;       /* requested size                   */
    uint64_t alloc_size; /* size + guard bytes               */
    int32_t device;
    uint64_t serial; /* which aclrtMalloc made it: never the same for two allocations */
} aclsim_devmem_info;

/* 1 if [ptr, ptr+nbytes) lies inside one live device allocation (nbytes 0: ptr inside), else 0. */
ACLSIM_INTERNAL int aclsim_devmem_lookup(const void *ptr, uint64_t nbytes, aclsim_devmem_info *info);
/* Pin the allocation containing [ptr, ptr+nbytes); NULL if there is none. */
ACLSIM_INTERNAL aclsim_devmem_ref *aclsim_devmem_pin(const void *ptr, uint64_t nbytes);
ACLSIM_INTERNAL void aclsim_devmem_unpin(aclsim_devmem_ref *ref);
ACLSIM_INTERNAL void aclsim_devmem_ref_info(const aclsim_devmem_ref *ref, aclsim_devmem_info *info);
/* 0 if the guard bytes are intact.  Otherwise writes "<who> wrote past the end of device
 * allocation 0x... of N bytes (...)" into msg, restores the guard (so one overrun is reported
 * once) and returns 1. */
ACLSIM_INTERNAL int aclsim_devmem_check_guard(aclsim_devmem_ref *ref, const char *who, char *msg,
                                              size_t cap);

/* ==== faults ================================================================================
 * 1 if the named fault was enabled through ACLSIM_FAULTS at aclInit.  The table of known names
 * is in rt_faults.c. */
ACLSIM_INTERNAL int aclsim_fault(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* ACLSIM_INTERNAL_H */
