/*
 * op_mhc_bwd_kernel.c - aclnnMhcPreSinkhornBackward's kernels: bwd_kernel sets up the launch's
 * run state (inputs, outputs, the partition, the faults' redirections), zero-fills the outputs
 * the blocks add into, runs the blocks (op_mhc_bwd_block.c) and the reduction
 * (op_mhc_bwd_reduce.c) on the helper threads, and copies a shared scratch out; bwd_zero_kernel
 * is the empty call's (B*S == 0).
 */
#include <stdlib.h>

#include "mhc_bwd.h"

/* The tiling this launch runs with (computed by phase 1, kept in the executor; with the crash
 * fault, the heap object phase 1 published, which a later phase 1 may have freed). */
static const mhc_tiling *bwd_tiling(const aclsim_kernel_ctx *k)
{
    const bwd_attrs *a = k->attrs;
    return a->published ? a->published : &a->tiling;
}

/* The reduction scratch: the per-block partials (layout in the file comment). */
static float *bwd_partials(const aclsim_kernel_ctx *k, const mhc_tiling *t)
{
    (void)t;
    return k->workspace;
}

int bwd_kernel(aclsim_kernel_ctx *k)
{
    const bwd_attrs *a = k->attrs;
    const mhc_tiling *t = bwd_tiling(k); /* crash: a freed tiling object faults here */
    mhc_input in[N_IN];
    int rc = mhc_inputs_open(k, in, N_IN);
    bwd_run r = {
        .t = t,
        .gh = in[IN_GHIN].p,
        .x = in[IN_X].p,
        .ghpost = in[IN_GHPOST].p,
        .ghres = in[IN_GHRES].p,
        .phi = in[IN_PHI].p,
        .alpha = in[IN_ALPHA].p,
        .bias = in[IN_BIAS].p,
        .hpre = in[IN_HPRE].p,
        .hcbn = in[IN_HCBN].p,
        .invrms = in[IN_INVRMS].p,
        .sum = in[IN_SUM].p,
        .norm = in[IN_NORM].p,
        .gx = mhc_output_ptr(k, OUT_GX),
        .gphi = mhc_output_ptr(k, OUT_GPHI),
        .galpha = mhc_output_ptr(k, OUT_GALPHA),
        .gbias = mhc_output_ptr(k, OUT_GBIAS),
        .part = bwd_partials(k, t),
        .deterministic = k->deterministic,
        .faults = a->faults,
        .tpb = t->tokens_per_block,
        .reduce_n = t->blocks,
        .first_block = t->blocks ? (int64_t)(k->launch_id % (uint64_t)t->blocks) : 0,
    };
    float *out_phi = r.gphi, *out_bias = r.gbias, *out_alpha = r.galpha;
    const size_t DK = (size_t)(MHC_D * t->K);
    if (r.faults & (BWD_F_TILING_RACE | BWD_F_TILING_RING)) {
        /* the partition as the latest phase 1 had published it when this launch was made */
        int64_t tpb = k->launch_args[0];
        r.tpb = tpb > 0 ? tpb : t->tokens_per_block;
        if (k->launch_args[1] > 0 && k->launch_args[1] < t->blocks)
            r.reduce_n = k->launch_args[1];
    }
    if (r.faults & BWD_F_STALE_TAIL)
        r.ub = thread_ub(); /* this stream worker's buffer (NULL: out of memory, fault off) */
    if (r.faults & BWD_F_SHARED_SCRATCH) {
        float *scratch = bwd_shared_scratch();
        if (scratch) { /* reduce into the device-wide buffer: [gradPhi | gradBias | gradAlpha] */
            r.gphi = scratch;
            r.gbias = scratch + DK;
            r.galpha = scratch + DK + MHC_D;
            memset(scratch, 0, (DK + MHC_D + 3) * sizeof(float));
            if (aclsim_sanitize_on)
                aclsim_san_region(scratch, BWD_SCRATCH_FLOATS * sizeof(float), "mhc_bwd.scratch");
            ACLSIM_SAN_STORE(scratch, (DK + MHC_D + 3) * sizeof(float));
        } else {
            r.faults &= ~(uint32_t)BWD_F_SHARED_SCRATCH;
        }
    }
    if (!rc) {
        r.scratch = mhc_thread_scratch(k, t->threads,
                                       (size_t)(2 * MHC_TILE * t->K + MHC_TILE * t->C), &rc);
    }
    if (!rc) {
        atomic_init(&r.next_block, 0);
        pthread_mutex_init(&r.out_mu, NULL);
        if (r.deterministic) {
            r.first_block = 0;
        } else if (!(r.faults & BWD_F_SHARED_SCRATCH)) {
            memset(r.gphi, 0, DK * sizeof(float));
            memset(r.gbias, 0, MHC_D * sizeof(float));
            memset(r.galpha, 0, 3 * sizeof(float));
            ACLSIM_SAN_STORE(r.gphi, DK * sizeof(float));
            ACLSIM_SAN_STORE(r.gbias, MHC_D * sizeof(float));
            ACLSIM_SAN_STORE(r.galpha, 3 * sizeof(float));
        }
        if (!r.deterministic) /* the blocks reduce as they complete */
            hang_reduce_begin(&r);
        mhc_parallel(t->threads, bwd_thread, &r);
        if (r.deterministic) {
            hang_reduce_begin(&r);
            mhc_parallel(t->threads, bwd_reduce_thread, &r);
        }
        if (r.ub) /* gradBias/gradAlpha through this core's buffer */
            ub_reduce(&r, r.reduce_n);
        hang_reduce_end(&r, k->launch_id);
        if (r.faults & BWD_F_SHARED_SCRATCH) { /* copy out of the device-wide buffer */
            memcpy(out_phi, r.gphi, DK * sizeof(float));
            memcpy(out_bias, r.gbias, MHC_D * sizeof(float));
            memcpy(out_alpha, r.galpha, 3 * sizeof(float));
            ACLSIM_SAN_LOAD(r.gphi, (DK + MHC_D + 3) * sizeof(float));
            ACLSIM_SAN_STORE(out_phi, DK * sizeof(float));
            ACLSIM_SAN_STORE(out_bias, MHC_D * sizeof(float));
            ACLSIM_SAN_STORE(out_alpha, 3 * sizeof(float));
        }
        pthread_mutex_destroy(&r.out_mu);
    }
    free(r.scratch);
    mhc_inputs_close(in, N_IN);
    return rc;
}

/* B*S == 0: the gradients of phi, alpha and bias are sums over no tokens. */
int bwd_zero_kernel(aclsim_kernel_ctx *k)
{
    const mhc_tiling *t = bwd_tiling(k);
    memset(mhc_output_ptr(k, OUT_GPHI), 0, (size_t)(MHC_D * t->K) * sizeof(float));
    memset(mhc_output_ptr(k, OUT_GALPHA), 0, 3 * sizeof(float));
    memset(mhc_output_ptr(k, OUT_GBIAS), 0, MHC_D * sizeof(float));
    ACLSIM_SAN_STORE(mhc_output_ptr(k, OUT_GPHI), (size_t)(MHC_D * t->K) * sizeof(float));
    ACLSIM_SAN_STORE(mhc_output_ptr(k, OUT_GALPHA), 3 * sizeof(float));
    ACLSIM_SAN_STORE(mhc_output_ptr(k, OUT_GBIAS), MHC_D * sizeof(float));
    return 0;
}
