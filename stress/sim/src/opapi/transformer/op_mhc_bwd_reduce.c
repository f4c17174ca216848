/*
 * op_mhc_bwd_reduce.c - the reduction of aclnnMhcPreSinkhornBackward's per-block partials
 * (the workspace, see op_mhc_pre_sinkhorn_backward.c) into gradPhi / gradBias / gradAlpha in
 * deterministic mode (block order, threads split the elements), and stale-tail's reduction
 * through the executing core's buffer.
 */
#include "mhc_bwd.h"

/* Deterministic reduction: out[e] = sum over blocks 0..blocks-1, in that order.  Thread tid
 * reduces its own slice of the gradPhi elements; thread 0 also gradBias and gradAlpha. */
MHC_HOT static void reduce_slice(float *out, const float *part, int64_t stride, int64_t nblocks,
                                 int64_t e0, int64_t e1, int accumulate)
{
    int64_t e = e0;
    for (; e + 8 <= e1; e += 8) {
        mhc_v8 acc = accumulate ? mhc_ld(out + e) : mhc_splat(0.0f);
        for (int64_t b = 0; b < nblocks; b++)
            acc = grad_add8(acc, mhc_ld(part + b * stride + e), 0);
        mhc_st(out + e, acc);
    }
    for (; e < e1; e++) {
        mhc_grad_acc acc = accumulate ? out[e] : 0.0f;
        for (int64_t b = 0; b < nblocks; b++)
            acc = grad_add(acc, part[b * stride + e], 0);
        out[e] = acc;
    }
}

void bwd_reduce_thread(void *arg, int tid)
{
    bwd_run *r = arg;
    const mhc_tiling *t = r->t;
    const int64_t DK = MHC_D * t->K, nblocks = r->reduce_n;
    const int acc = (r->faults & BWD_F_SHARED_SCRATCH) != 0; /* into the (zeroed) scratch */
    const int64_t chunk = (DK / t->threads + 7) / 8 * 8;
    int64_t e0 = tid * chunk, e1 = e0 + chunk;
    if (e1 > DK)
        e1 = DK;
    const int mode = acc ? ACLSIM_SAN_RW : ACLSIM_SAN_W;
    if (e0 < e1) {
        reduce_slice(r->gphi, r->part + t->ws_phi, DK, nblocks, e0, e1, acc);
        if (aclsim_sanitize_on)
            aclsim_san_access(r->gphi + e0, (e1 - e0) * sizeof(float), mode, __FILE__, __LINE__);
    }
    if (tid == 0 && !r->ub) {
        reduce_slice(r->gbias, r->part + t->ws_bias, MHC_D, nblocks, 0, MHC_D, acc);
        reduce_slice(r->galpha, r->part + t->ws_alpha, 3, nblocks, 0, 3, acc);
        if (aclsim_sanitize_on) {
            aclsim_san_access(r->gbias, MHC_D * sizeof(float), mode, __FILE__, __LINE__);
            aclsim_san_access(r->galpha, 3 * sizeof(float), mode, __FILE__, __LINE__);
        }
    }
}

/* stale-tail: the final gradBias/gradAlpha reduction on the executing core.  The partials of
 * the blocks this launch reduces are staged in the core's buffer (slot b = block b), then every
 * slot of the buffer is summed, in slot order: slots past the launch's block count still hold
 * what the previous kernel on this worker staged there. */
void ub_reduce(bwd_run *r, int64_t nblocks)
{
    const mhc_tiling *t = r->t;
    float(*ub)[MHC_D + 3] = r->ub;
    for (int64_t b = 0; b < nblocks; b++) {
        memcpy(ub[b], r->part + t->ws_bias + b * MHC_D, MHC_D * sizeof(float));
        memcpy(ub[b] + MHC_D, r->part + t->ws_alpha + b * 3, 3 * sizeof(float));
    }
    /* all slots, not just the nblocks staged */
    const int acc = (r->faults & BWD_F_SHARED_SCRATCH) != 0;
    reduce_slice(r->gbias, ub[0], MHC_D + 3, MHC_CORES, 0, MHC_D, acc);
    reduce_slice(r->galpha, ub[0] + MHC_D, MHC_D + 3, MHC_CORES, 0, 3, acc);
    if (aclsim_sanitize_on) {
        const int mode = acc ? ACLSIM_SAN_RW : ACLSIM_SAN_W;
        aclsim_san_access(r->gbias, MHC_D * sizeof(float), mode, __FILE__, __LINE__);
        aclsim_san_access(r->galpha, 3 * sizeof(float), mode, __FILE__, __LINE__);
    }
}
