/*
 * sanitize.h - the simulator sanitizer (ACLSIM_SANITIZE=initcheck,racecheck,memcheck), exported
 * by libascendcl: rt_sanitize_state.c (the tools on, the lock, the thread's place),
 * rt_sanitize.c (configuration, the shadow entries), rt_sanitize_access.c (initcheck and
 * racecheck of each access), rt_sanitize_mem.c (memcheck), rt_sanitize_order.c (stream / event /
 * synchronisation ordering for racecheck), rt_sanitize_calls.c (calls and stages),
 * rt_sanitize_report.c (findings, log).  docs/sanitizer.md describes the checks and the findings
 * format.
 *
 * Every hook in the other files is guarded by `if (aclsim_sanitize_on)`: off, a hook costs one
 * predictable branch.  aclsim_sanitize_on is a bit mask of ACLSIM_SAN_* tools, set at aclInit.
 *
 * Kernels report their device accesses with ACLSIM_SAN_LOAD / ACLSIM_SAN_STORE (the address
 * range and the source location); the executor adds the call (operator, serial number, stage).
 */
#ifndef ACLSIM_SANITIZE_H
#define ACLSIM_SANITIZE_H

#include <stdint.h>

#include "aclsim.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACLSIM_INTERNAL
#define ACLSIM_INTERNAL ACLSIM_API
#endif

enum { ACLSIM_SAN_INITCHECK = 1, ACLSIM_SAN_RACECHECK = 2, ACLSIM_SAN_MEMCHECK = 4 };
enum { ACLSIM_SAN_R = 1, ACLSIM_SAN_W = 2, ACLSIM_SAN_RW = 3 };

/* Tools switched on (0: off).  Written only by aclInit / aclFinalize. */
extern ACLSIM_INTERNAL int aclsim_sanitize_on;
#ifdef ACLSIM_NO_SANITIZE /* compile every hook out (benchmarks/bench_sanitizer.py's baseline) */
#define aclsim_sanitize_on 0
#endif

/* ---- lifecycle (rt_init.c) ---- */
/* Parse ACLSIM_SANITIZE / ACLSIM_SANITIZE_LOG: 0, or -1 with a message in err. */
ACLSIM_INTERNAL int aclsim_san_configure(const char *spec, const char *log, char *err, size_t cap);
/* aclFinalize: leak report (memcheck), summary line, state cleared. */
ACLSIM_INTERNAL void aclsim_san_finalize(void);

/* ---- device memory (rt_devmem.c, rt_copy.c) ---- */
ACLSIM_INTERNAL void aclsim_san_alloc(const void *base, uint64_t size);
/* found: whether aclrtFree found the allocation; inside: the allocation ptr lies inside, if any */
ACLSIM_INTERNAL void aclsim_san_free(const void *ptr, int found, const void *inside);
/* A range an API or a kernel was refused (not inside one live allocation): classify it. */
ACLSIM_INTERNAL void aclsim_san_bad_range(const char *who, const void *p, uint64_t n, int mode);
/* The guard bytes after an allocation were overwritten (a write past its end). */
ACLSIM_INTERNAL void aclsim_san_guard(const void *base, uint64_t size, uint64_t first_bad,
                                      const char *who);
/* A host-side copy between any two sides (device sides are recognised by address). */
ACLSIM_INTERNAL void aclsim_san_copy(void *dst, const void *src, uint64_t n, const char *api,
                                     const char *file, int line);

/* ---- accesses (kernels, executors, memset) ---- */
ACLSIM_INTERNAL void aclsim_san_access(const void *p, uint64_t n, int mode, const char *file,
                                       int line);
/* Every element of a tensor view (contiguous runs coalesced; libnnopbase). */
ACLSIM_INTERNAL void aclsim_san_tensor(const aclsim_tensor_desc *d, int mode, const char *file,
                                       int line);
/* Register a simulator-internal buffer that faults share between calls (scratch, tiling): it
 * is then race-checked like device memory.  Idempotent. */
ACLSIM_INTERNAL void aclsim_san_region(const void *p, uint64_t n, const char *name);
/* Forget the registered buffer `name` at `p` (it is being freed; its history goes with it). */
ACLSIM_INTERNAL void aclsim_san_region_drop(const void *p, const char *name);
/* A hand-over of the simulator object `key` between tasks under a host mutex (nnopbase's staging
 * pool): release stores the calling actor's clock in the key's; acquire joins it into the
 * caller's, so the previous holder's accesses are ordered before the new holder's. */
ACLSIM_INTERNAL void aclsim_san_handover(const void *key, int release);
/* Phase-1 access (before the executor exists) by operator `op` on the calling thread. */
ACLSIM_INTERNAL void aclsim_san_phase1(const char *op, const void *p, uint64_t n, int mode,
                                       const char *file, int line);

/* ---- calls (nb_executor.c) ---- */
/* A call id for an executor created by `op` (adopts the thread's phase-1 call, if any). */
ACLSIM_INTERNAL uint64_t aclsim_san_call_new(const char *op);
/* Enter / leave a stage ("phase2", "kernel") of a call on the calling thread. */
ACLSIM_INTERNAL void aclsim_san_call_enter(uint64_t call, const char *op, const char *stage);
ACLSIM_INTERNAL void aclsim_san_call_leave(void);
/* (libnnopbase) Output `name` of a call about to be launched: its bytes are the call's to
 * write (what the host wrote there before, e.g. a canary, does not count as the call's result).
 * An output that overlaps one of the call's inputs (in-place operators) keeps its history. */
ACLSIM_INTERNAL void aclsim_san_output(const aclsim_tensor_desc *d,
                                       const aclsim_tensor_desc *inputs, int n_inputs,
                                       uint64_t call, const char *op, const char *name);
/* Output bytes [p, p+n) of a call about to run: unwritten, owned by the call (libascendcl). */
ACLSIM_INTERNAL void aclsim_san_output_range(const void *p, uint64_t n, uint64_t call,
                                             const char *op, const char *name);
/* A lasting copy of an operator name (records outlive executors). */
ACLSIM_INTERNAL const char *aclsim_san_intern(const char *s);
/* (libnnopbase) The executor's kernel reports its own input loads (ACLSIM_SAN_LOAD or
 * aclsim_san_tensor where it reads them); otherwise the launch counts every input as read. */
typedef struct aclsim_executor aclsim_executor;
ACLSIM_INTERNAL void aclsim_executor_san_own_loads(aclsim_executor *ex);
/* Kernel helper threads (mhc_parallel): carry the launching thread's context over. */
ACLSIM_INTERNAL const void *aclsim_san_ctx_get(void);
ACLSIM_INTERNAL void aclsim_san_ctx_set(const void *ctx);

/* ---- ordering (rt_stream.c, rt_event.c) ---- */
/* Called with the stream's lock held, in FIFO order: the task's ordering token (or NULL). */
ACLSIM_INTERNAL void *aclsim_san_enqueue(const void *stream);
ACLSIM_INTERNAL void aclsim_san_task_begin(void *token);
ACLSIM_INTERNAL void aclsim_san_task_end(void *token); /* frees the token */
ACLSIM_INTERNAL void aclsim_san_drop(void *token);     /* a token whose task was not queued */
ACLSIM_INTERNAL void aclsim_san_sync_stream(const void *stream);
ACLSIM_INTERNAL void aclsim_san_event(const void *event, const void *stream, int record);
ACLSIM_INTERNAL void aclsim_san_event_sync(const void *event);

#define ACLSIM_SAN_LOAD(p, n)                                                                      \
    do {                                                                                           \
        if (aclsim_sanitize_on)                                                                    \
            aclsim_san_access((p), (uint64_t)(n), ACLSIM_SAN_R, __FILE__, __LINE__);               \
    } while (0)
#define ACLSIM_SAN_STORE(p, n)                                                                     \
    do {                                                                                           \
        if (aclsim_sanitize_on)                                                                    \
            aclsim_san_access((p), (uint64_t)(n), ACLSIM_SAN_W, __FILE__, __LINE__);               \
    } while (0)
#define ACLSIM_SAN_UPDATE(p, n)                                                                    \
    do {                                                                                           \
        if (aclsim_sanitize_on)                                                                    \
            aclsim_san_access((p), (uint64_t)(n), ACLSIM_SAN_RW, __FILE__, __LINE__);              \
    } while (0)


#ifdef ACLSIM_SAN_PRIVATE /* shared by the rt_sanitize*.c files of libascendcl only */
#include <pthread.h>
#define SAN_ACTORS 64
typedef struct {
    uint32_t vc[SAN_ACTORS];
    int actor;
} rt_san_token;
__attribute__((visibility("hidden"))) extern pthread_mutex_t rt_san_mu;
__attribute__((visibility("hidden"))) void rt_san_clock(const rt_san_token *task, int *actor,
                                                        const uint32_t **vc);
__attribute__((visibility("hidden"))) void rt_san_order_reset(void);

/* One side of a finding: the call and stage that made an access, and where (simulator source). */
typedef struct {
    uint64_t call; /* 0: not inside an aclnn call (a runtime API) */
    const char *op, *stage, *access, *file;
    int line;
    int actor; /* 0 host, else the stream's slot */
} rt_san_side;

typedef struct {
    const char *tool, *kind; /* "initcheck" / "uninitialized read", "racecheck" / "RAW", ... */
    uint64_t bytes;
    uint64_t alloc_id;       /* 0: none */
    const char *alloc_kind;  /* "device" or the region's name */
    uint64_t alloc_size;
    const void *address;     /* first byte concerned */
    uint64_t offset;         /* from the allocation's start */
    const char *tensor;      /* the output that owns the bytes ("" if none) */
    uint64_t owner_call;
    const char *owner_op;
    int n_sides;
    rt_san_side sides[2];
    const char *note;        /* extra words ("" if none) */
} rt_san_finding;

__attribute__((visibility("hidden"))) void rt_san_report(const rt_san_finding *f);
__attribute__((visibility("hidden"))) int rt_san_report_open(const char *log, char *err,
                                                             size_t cap);
__attribute__((visibility("hidden"))) void rt_san_report_close(void);

/* The calling thread's place: the task being executed (NULL on the host), the call and stage. */
typedef struct {
    rt_san_token *tok;
    uint64_t call, pending;
    const char *op, *stage, *pending_op;
} rt_san_ctx_t;
__attribute__((visibility("hidden"))) extern __thread rt_san_ctx_t rt_san_ctx;
__attribute__((visibility("hidden"))) void rt_san_calls_reset(void);

/* The shadow entry of an allocation or registered buffer (rt_sanitize.c, rt_sanitize_mem.c). */
#define OWNERS 8
#define WRITERS 8
#define REC_CAP 512

typedef struct {
    uint64_t lo, hi;
    int mode, actor;
    uint32_t clock;
    rt_san_side side;
} san_rec;

typedef struct {
    uint64_t lo, hi, call;
    const char *op;
    char name[32];
} san_owner;

typedef struct {
    uintptr_t base;
    uint64_t size, id;
    const char *kind; /* "device" or the region's name */
    uint8_t *written; /* initcheck shadow (device allocations only) */
    san_rec *recs;
    int nrec, caprec;
    san_owner owners[OWNERS];
    int nown;
    uint64_t writers[WRITERS]; /* regions: the last calls that wrote it */
    int nwriters;
    rt_san_side last_write;
} san_alloc;

#define RT_SAN_HIDDEN __attribute__((visibility("hidden")))
RT_SAN_HIDDEN extern san_alloc **rt_san_tab; /* sorted by base, rt_san_n entries */
RT_SAN_HIDDEN extern int rt_san_n;
RT_SAN_HIDDEN int rt_san_find_le(uintptr_t p);
RT_SAN_HIDDEN san_alloc *rt_san_find(const void *p);
RT_SAN_HIDDEN void rt_san_remove_at(int i);
RT_SAN_HIDDEN rt_san_side rt_san_side_here(int mode, const char *file, int line, const char *api);
RT_SAN_HIDDEN void rt_san_fill_where(rt_san_finding *f, const san_alloc *a, uint64_t lo);
#endif

#ifdef __cplusplus
}
#endif
#endif /* ACLSIM_SANITIZE_H */
