/*
 * op_mhc_bwd_faults.c - the simulated faults of aclnnMhcPreSinkhornBackward: their process-wide
 * state and both sides of each, phase 1's (bwd_faults, the published tiling) and the kernel's
 * (launch hooks, the UB, the shared scratch, the hang's lock order).
 *
 * The faults (ACLSIM_FAULTS, read once per call in phase 1 and kept in the executor's attrs; see
 * docs/simulator.md "Faults").  Each is a real mechanism, not a branch that fakes a result:
 *   tiling-race     phase 1 publishes (blocks, tokens per block) in process-wide statics;
 *                   phase 2 copies them into the launch (as CANN copies host tiling data into
 *                   a launch), and the kernel partitions its tokens and bounds its reduction by
 *                   that copy.  The race window is the host's, between a call's phase 1 and
 *                   its phase 2.  The launch's own grid (its block count, which
 *                   sized its workspace) and its own token count bound it; the last block takes
 *                   the remaining tokens, so every gradX row is still written once, but another
 *                   shape's phase 1 in between regroups the tokens (different rounding) or makes
 *                   the reduction drop blocks (tokens missing from gradPhi/gradBias/gradAlpha).
 *                   Serial replay: a call's phase 1 and phase 2 are never separated by another
 *                   call's phase 1.
 *   shared-scratch  the reduction target is one device-wide buffer (process-wide state "mhc_bwd.faults"): the kernel
 *                   zeroes it when it starts, accumulates the block partials into it, copies it
 *                   out at the end.  Two kernels executing at once (different streams) add into /
 *                   clear each other's sums.  One stream serialises kernels: no effect.
 *   stale-tail      the final gradBias/gradAlpha reduction stages each block's partial in the
 *                   executing core's buffer (per-thread state "mhc_bwd.ub" of the stream worker: the "UB")
 *                   and sums all MHC_CORES slots although the launch staged only its own block
 *                   count: the tail slots hold the partials of the last kernel on that worker
 *                   that wrote them.  Serial replay repeats the same predecessor: deterministic.
 *   grad-drift      for M*K >= 2^21 the per-block running sums (gradPhi/gradBias/gradAlpha
 *                   partials) are rounded to bf16 after every token, as an accumulator kept in a
 *                   bf16 buffer would be: ~1e-2 relative error, deterministic.
 *   crash           phase 1 puts its tiling in a heap object published through one pointer
 *                   (tiling_cache, in the process-wide state), freeing the previously published
 *                   one; the executor keeps its own object's address and the kernel reads the tiling through it.  Freed
 *                   objects are made inaccessible (page heap), so a phase 1 that runs between
 *                   another call's phase 1 and that call's kernel makes the kernel fault.
 *   tiling-ring     (op_mhc_tiling_ring.c) phase 1 leaves its partition in a two-slot cache
 *                   keyed by shape and keeps the slot's index; phase 2 copies the slot into
 *                   the launch, read as under tiling-race.  Only a third shape's phase 1
 *                   between a call's phase 1 and its launch evicts the slot: depth 3.
 *   hang            phase 1 takes the tiling-cache lock (A) then the reduction lock (B); the
 *                   kernel holds B across its reduction and then takes A: a lock-order deadlock
 *                   when a phase 1 on a host thread overlaps a reduction on a stream worker.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "mhc_bwd.h"
#include "mhc_tiling_ring.h"

#define OP BWD_OP
#define API OP "GetWorkspaceSize"

/* ---- fault state (process-wide; see the file comment) ----------------------------------------- */

/* This object is linked into libopapi_transformer.so and libopapi.so, so the state lives in
 * libnnopbase (aclsim_shared_state): one per process whichever library runs the operator. */

/* crash: a page heap.  Every object gets its own page in a reserved range; freeing one returns
 * the page to the kernel (MADV_DONTNEED) and makes it inaccessible (PROT_NONE), and the range
 * stays reserved, so no later allocation can take its place: a stale pointer faults
 * (SIGSEGV) instead of reading a recycled object.  Pages are handed out round-robin. */
#define BWD_HEAP_PAGES 65536

typedef struct {
    /* tiling-race: the last phase 1's partition, plain statics written and read without a lock
     * (the bug as it is: ThreadSanitizer variants report these accesses as a data race). */
    int64_t race_tpb, race_blocks;
    /* hang: A guards the tiling cache, B the reduction unit.  Phase 1 takes A then B; the
     * kernel takes B then A. */
    pthread_mutex_t cache_mu;  /* A */
    pthread_mutex_t reduce_mu; /* B */
    struct {
        int64_t M, K;         /* the cached tiling's shape (guarded by A) */
        uint64_t last_launch; /* the last launch that reduced with it (A) */
    } hang_cache;
    int64_t reduce_slots; /* partial slots of the reduction unit (B) */
    float *scratch;       /* shared-scratch */
    uint8_t *heap;        /* crash */
    size_t page_size;
    atomic_ullong heap_next;
    _Atomic(mhc_tiling *) tiling_cache; /* the published tiling object */
} bwd_shared;

static void bwd_shared_init(void *state)
{
    bwd_shared *g = state;
    pthread_mutex_init(&g->cache_mu, NULL);
    pthread_mutex_init(&g->reduce_mu, NULL);
    g->reduce_slots = MHC_CORES;
    void *p = mmap(NULL, BWD_SCRATCH_FLOATS * sizeof(float), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    g->scratch = p == MAP_FAILED ? NULL : p;
    long ps = sysconf(_SC_PAGESIZE);
    g->page_size = ps > 0 ? (size_t)ps : 4096;
    p = mmap(NULL, g->page_size * BWD_HEAP_PAGES, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    g->heap = p == MAP_FAILED ? NULL : p;
}

/* The process-wide state, or NULL on out-of-memory (the faults then stay off). */
static bwd_shared *shared(void)
{
    return aclsim_shared_state("mhc_bwd.faults", sizeof(bwd_shared), bwd_shared_init);
}

/* tiling-race: phase 2 copies the published partition into the launch, as CANN copies the
 * host-side tiling data into a kernel launch.  The race window is therefore the host's, between
 * this call's phase 1 and its phase 2 (the workspace allocation lies in it): another call's
 * phase 1 in that window hands this launch the other shape's partition. */
static void race_launch_hook(const void *attrs, int64_t *args)
{
    (void)attrs;
    bwd_shared *g = shared();
    if (g) {
        args[0] = g->race_tpb;
        args[1] = g->race_blocks;
        ACLSIM_SAN_LOAD(&g->race_tpb, 2 * sizeof(int64_t));
    }
}

/* tiling-ring: phase 2 copies the partition from the slot phase 1 used, which a later phase 1
 * may have given to another shape (op_mhc_tiling_ring.c). */
static void ring_launch_hook(const void *attrs, int64_t *args)
{
    mhc_ring_launch_args(((const bwd_attrs *)attrs)->ring_slot, args);
}

/* stale-tail: the executing core's buffer; one per stream worker thread, never cleared. */
typedef float bwd_ub[MHC_CORES][MHC_D + 3];

float (*thread_ub(void))[MHC_D + 3]
{
    bwd_ub *ub = aclsim_thread_state("mhc_bwd.ub", sizeof(bwd_ub));
    return ub ? *ub : NULL;
}

mhc_tiling *heap_alloc_tiling(void)
{
    bwd_shared *g = shared();
    if (!g || !g->heap)
        return NULL;
    uint64_t i = atomic_fetch_add(&g->heap_next, 1) % BWD_HEAP_PAGES;
    uint8_t *p = g->heap + i * g->page_size;
    if (mprotect(p, g->page_size, PROT_READ | PROT_WRITE) != 0)
        return NULL;
    return (mhc_tiling *)p;
}

void heap_free(void *p)
{
    bwd_shared *g = shared(); /* not NULL: p came from heap_alloc_tiling */
    madvise(p, g->page_size, MADV_DONTNEED);
    mprotect(p, g->page_size, PROT_NONE);
}

float *bwd_shared_scratch(void)
{
    bwd_shared *g = shared();
    return g ? g->scratch : NULL;
}

aclsim_launch_hook bwd_launch_hook(uint32_t faults)
{
    if (faults & BWD_F_TILING_RACE)
        return race_launch_hook;
    if (faults & BWD_F_TILING_RING)
        return ring_launch_hook;
    return NULL;
}

void bwd_publish_tiling(mhc_tiling *published)
{
    /* crash: publish this call's tiling object as the cache entry and free the previous
     * one, assuming its call is done with it: true only if that call's kernel has already
     * run, i.e. when calls do not overlap */
    mhc_tiling *previous = atomic_exchange(&shared()->tiling_cache, published);
    if (previous)
        heap_free(previous);
}

/* 5. the faults of a non-empty call (see the file comment): flags into attrs, and the shared
 * state phase 1 touches.  0 or an error (message set). */
int bwd_faults(bwd_attrs *attrs)
{
    const mhc_tiling *t = &attrs->tiling;
    bwd_shared *g = shared();
    if (!g) /* out of memory: run without faults */
        return 0;
    if (aclsim_fault("tiling-race")) {
        attrs->faults |= BWD_F_TILING_RACE;
        g->race_tpb = t->tokens_per_block; /* read back at phase 2 */
        g->race_blocks = t->blocks;
        if (aclsim_sanitize_on) {
            aclsim_san_region(&g->race_tpb, 2 * sizeof(int64_t), "mhc_bwd.tiling");
            aclsim_san_phase1(OP, &g->race_tpb, 2 * sizeof(int64_t), ACLSIM_SAN_W, __FILE__,
                              __LINE__);
        }
    }
    if (aclsim_fault("tiling-ring") && !(attrs->faults & BWD_F_TILING_RACE)) {
        attrs->ring_slot = mhc_ring_put(t);
        if (attrs->ring_slot >= 0)
            attrs->faults |= BWD_F_TILING_RING;
    }
    if (aclsim_fault("shared-scratch"))
        attrs->faults |= BWD_F_SHARED_SCRATCH;
    if (aclsim_fault("stale-tail"))
        attrs->faults |= BWD_F_STALE_TAIL;
    if (aclsim_fault("grad-drift") && t->M * t->K >= BWD_DRIFT_MIN_MK)
        attrs->faults |= BWD_F_DRIFT;
    if (!aclsim_fault("hang"))
        return 0;
    attrs->faults |= BWD_F_HANG;
    pthread_mutex_lock(&g->cache_mu); /* A: the tiling cache */
    if (g->hang_cache.M != t->M || g->hang_cache.K != t->K) {
        g->hang_cache.M = t->M;
        g->hang_cache.K = t->K;
    }
    pthread_mutex_lock(&g->reduce_mu); /* B, with A held: the reduction unit's slots */
    int64_t slots = g->reduce_slots;
    pthread_mutex_unlock(&g->reduce_mu);
    pthread_mutex_unlock(&g->cache_mu);
    if (t->blocks > slots) /* never: blocks <= MHC_CORES = slots */
        return aclsim_set_error(ACLNN_ERR_INNER, "%s: %lld blocks exceed the %lld reduction slots",
                                API, (long long)t->blocks, (long long)slots);
    return 0;
}

/* hang: the kernel's side of the lock order (B, then A while holding B). */
void hang_reduce_begin(const bwd_run *r)
{
    if (r->faults & BWD_F_HANG)
        pthread_mutex_lock(&shared()->reduce_mu); /* B: the reduction unit, held throughout */
}

void hang_reduce_end(const bwd_run *r, uint64_t launch_id)
{
    if (!(r->faults & BWD_F_HANG))
        return;
    bwd_shared *g = shared(); /* not NULL: phase 1 set BWD_F_HANG only with the state */
    pthread_mutex_lock(&g->cache_mu); /* A, with B held: mark the cached tiling as used */
    if (g->hang_cache.M == r->t->M && g->hang_cache.K == r->t->K)
        g->hang_cache.last_launch = launch_id;
    pthread_mutex_unlock(&g->cache_mu);
    pthread_mutex_unlock(&g->reduce_mu);
}
