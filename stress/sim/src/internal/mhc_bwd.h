/*
 * mhc_bwd.h - what the files of aclnnMhcPreSinkhornBackward share (hidden symbols of libopapi):
 *   op_mhc_pre_sinkhorn_backward.c  phase 1 (checks, tiling, workspace layout, the executor)
 *   op_mhc_bwd_faults.c             the simulated faults' process-wide state and both sides
 *   op_mhc_bwd_kernel.c             the kernel: the launch's run state, dispatch, copy-out
 *   op_mhc_bwd_block.c              one block of tokens: gradX tiles, the block's partials
 *   op_mhc_bwd_token.c              one token: the Sinkhorn backward and the logits' gradient
 *   op_mhc_bwd_reduce.c             the reduction of the block partials into the outputs
 * The math and the workspace layout are described in op_mhc_pre_sinkhorn_backward.c, the faults
 * in op_mhc_bwd_faults.c.
 */
#ifndef MHC_BWD_H
#define MHC_BWD_H

#include <pthread.h>
#include <stdatomic.h>

#include "mhc_common.h"

#define BWD_OP "aclnnMhcPreSinkhornBackward"

/* The executor's inputs and outputs, in the order phase 1 adds them. */
enum {
    IN_GHIN,
    IN_GHPOST,
    IN_GHRES,
    IN_X,
    IN_PHI,
    IN_ALPHA,
    IN_BIAS,
    IN_HPRE,
    IN_HCBN,
    IN_INVRMS,
    IN_SUM,
    IN_NORM,
    N_IN
};
enum { OUT_GX, OUT_GPHI, OUT_GALPHA, OUT_GBIAS, N_OUT };

/* Fault switches, read in phase 1 (aclsim_fault) and kept in the attrs. */
enum {
    BWD_F_TILING_RACE = 1u << 0,
    BWD_F_SHARED_SCRATCH = 1u << 1,
    BWD_F_STALE_TAIL = 1u << 2,
    BWD_F_DRIFT = 1u << 3, /* grad-drift AND M*K >= 2^21 */
    BWD_F_HANG = 1u << 4,
    BWD_F_TILING_RING = 1u << 5, /* tiling-ring: the partition comes from a cache slot */
};

/* grad-drift applies from this many elements M*K (M = B*S tokens, K = N*C). */
#define BWD_DRIFT_MIN_MK ((int64_t)1 << 21)

typedef struct {
    mhc_tiling tiling;
    uint32_t faults;
    /* crash: the tiling object this call published (page heap), read by the kernel */
    const mhc_tiling *published;
    /* tiling-ring: the cache slot phase 1 left its partition in (op_mhc_tiling_ring.c) */
    int32_t ring_slot;
} bwd_attrs;

/* ---- accumulation of the gradients' partial sums ------------------------------------------- */

/* The accumulation type of gradPhi / gradBias / gradAlpha partial sums, and the one place
 * where a term is added to one.  lowp (grad-drift): the running sum is kept in bf16, i.e.
 * rounded to nearest even bf16 after every addition. */
typedef float mhc_grad_acc;
typedef uint32_t bwd_u8 __attribute__((vector_size(32)));

static inline float bf16_round(float v)
{
    return aclsim_bf16_to_f32(aclsim_f32_to_bf16(v));
}

static inline mhc_v8 bf16_round8(mhc_v8 v)
{
    bwd_u8 u;
    memcpy(&u, &v, sizeof u);
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u; /* finite values: RNE to bf16 */
    memcpy(&v, &u, sizeof v);
    return v;
}

static inline mhc_grad_acc grad_add(mhc_grad_acc acc, float term, int lowp)
{
    return lowp ? bf16_round(acc + term) : acc + term;
}

static inline mhc_v8 grad_add8(mhc_v8 acc, mhc_v8 term, int lowp)
{
    return lowp ? bf16_round8(acc + term) : acc + term;
}

/* ---- the kernel's run state ----------------------------------------------------------------- */

typedef struct {
    const mhc_tiling *t;
    const void *gh, *x;
    const float *ghpost, *ghres, *phi, *alpha, *bias, *hpre, *hcbn, *invrms, *sum, *norm;
    void *gx;
    float *gphi, *galpha, *gbias;
    float *part;    /* reduction scratch (per-block partials)                              */
    float *scratch; /* per thread: xf (TILE*K), gradHin rows (TILE*C), gradX rows (TILE*K) */
    int deterministic;
    uint32_t faults;      /* BWD_F_*                                                        */
    int64_t tpb;          /* tokens per block of the partition (tiling-race: the static's)  */
    float (*ub)[MHC_D + 3]; /* stale-tail: the executing core's buffer (else NULL)          */
    int64_t first_block; /* non-deterministic dispatch rotation */
    int64_t reduce_n;    /* block partials reduced: the launch's blocks, or (tiling-race) the
                          * published partition's, bounded by the launch's (its workspace) */
    atomic_llong next_block;
    pthread_mutex_t out_mu; /* non-deterministic: one block adds into the outputs at a time */
} bwd_run;


/* op_mhc_bwd_token.c: per token, dz and everything derived from it.  Outputs g_hcbn (24), the
 * gradX coefficient of xf, hPre; adds dz into the block's gradBias partial and nf*dz into its
 * gradAlpha partial. */
MHC_HIDDEN void bwd_token(const bwd_run *r, int64_t m, const float *xf, const float *ghf,
                          float *g_hcbn, float *coef, float *hp, float *pbias, float *palpha);
/* op_mhc_bwd_block.c: a helper thread's loop over the blocks (mhc_parallel). */
MHC_HIDDEN void bwd_thread(void *arg, int tid);
/* op_mhc_bwd_reduce.c: the deterministic reduction (mhc_parallel); stale-tail's through the UB. */
MHC_HIDDEN void bwd_reduce_thread(void *arg, int tid);
MHC_HIDDEN void ub_reduce(bwd_run *r, int64_t nblocks);
/* op_mhc_bwd_kernel.c: the kernels phase 1 chooses from. */
MHC_HIDDEN int bwd_kernel(aclsim_kernel_ctx *k);
MHC_HIDDEN int bwd_zero_kernel(aclsim_kernel_ctx *k);

/* ---- op_mhc_bwd_faults.c ---------------------------------------------------------------------- */
/* Phase 1 of a non-empty call: the fault flags into attrs, and the shared state phase 1 touches.
 * 0 or an error (message set). */
MHC_HIDDEN int bwd_faults(bwd_attrs *attrs);
/* The launch hook the faults give the executor (tiling-race, tiling-ring), or NULL. */
MHC_HIDDEN aclsim_launch_hook bwd_launch_hook(uint32_t faults);
/* crash: a page-heap object for this call's tiling (NULL: fault off), its release, and its
 * publication as the process-wide cache entry (freeing the previous one). */
MHC_HIDDEN mhc_tiling *heap_alloc_tiling(void);
MHC_HIDDEN void heap_free(void *p);
MHC_HIDDEN void bwd_publish_tiling(mhc_tiling *published);
/* shared-scratch: the device-wide reduction buffer (NULL: out of memory) and its size. */
MHC_HIDDEN float *bwd_shared_scratch(void);
#define BWD_SCRATCH_FLOATS ((size_t)MHC_D * MHC_N * MHC_C_LIMIT + MHC_D + 3)
/* stale-tail: the executing core's buffer; one per stream worker thread, never cleared. */
MHC_HIDDEN float (*thread_ub(void))[MHC_D + 3];
/* hang: the kernel's side of the lock order (B, then A while holding B). */
MHC_HIDDEN void hang_reduce_begin(const bwd_run *r);
MHC_HIDDEN void hang_reduce_end(const bwd_run *r, uint64_t launch_id);

#endif /* MHC_BWD_H */
