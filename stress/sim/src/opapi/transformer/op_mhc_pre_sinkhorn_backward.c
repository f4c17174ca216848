/*
 * op_mhc_pre_sinkhorn_backward.c - aclnnMhcPreSinkhornBackward: gradients of aclnnMhcPreSinkhorn
 * with respect to x, phi, alpha and bias (spec/acl-api.md 4.3, math 4.4).
 *
 * Math: the EXACT gradient of the forward, i.e. stress/ops/_mhc_reference.py::backward with
 * kernel_eps=False (see the DECISION in that module's docstring): column step t >= 1 divides by
 * sumOut[2t+1], t = 0 by sumOut[1] + eps; row steps by sumOut[2t]; the softmax step uses
 * normOut[0] - eps; the sigmoids are recomputed from z.  float32 throughout; gradX is rounded to
 * gradHin's dtype (RNE).
 *
 * Tiling (phase 1, stored by value in the executor, read by the kernel through bwd_tiling()):
 * the M = B*S tokens are split into `blocks` (<= 24, the AI cores of a 910B3) of
 * `tokens_per_block` tokens; up to 4 host threads take blocks from a shared counter.  A block
 * processes its tokens MHC_TILE at a time: per token the 24 logits' gradient dz (Sinkhorn
 * backward etc.), then gradX = g_hcbn @ phi - ... for the tile, then the block's gradPhi partial
 * += g_hcbn^T (x) xf.
 *
 * Workspace (the reduction scratch, bwd_partials()): per-block partial sums, in floats:
 *   [ws_phi,   + blocks * D*K)  block b's gradPhi partial at ws_phi + b*D*K
 *   [ws_bias,  + blocks * D)    block b's gradBias partial
 *   [ws_alpha, + blocks * 3)    block b's gradAlpha partial
 * i.e. blocks * (D*K + D + 3) floats, in both modes.  Reduction into gradPhi/gradBias/gradAlpha:
 *   deterministic (ACL_OPT_DETERMINISTIC captured in phase 1): after all blocks, every output
 *     element is the sum over blocks 0, 1, ..., blocks-1 in that order (threads split the
 *     elements, not the blocks): bit-reproducible, independent of threads and timing;
 *   non-deterministic (default, like the kernel's atomics): the outputs are zero-filled, blocks
 *     are dispatched starting at (launch id mod blocks), and each block adds its partial into the
 *     outputs as soon as it completes (under a lock): the summation order follows the rotation
 *     and the threads' completion order, so the low bits vary between runs.
 * All partial sums of gradPhi/gradBias/gradAlpha go through grad_add() / grad_add8().
 *
 * Empty (B*S == 0): workspace 0, and a kernel that zero-fills gradPhi, gradAlpha, gradBias
 * (gradX is empty).  The simulator fault `empty-skip` (CANN 9.2.0's bug: success, nothing
 * written) selects no kernel instead; it is read in phase 1.
 * *
 * The faults (ACLSIM_FAULTS) and where each acts: op_mhc_bwd_faults.c.  The files of this
 * operator: mhc_bwd.h.
 */
#include "aclnn_mhc_pre_sinkhorn_backward.h"
#include "mhc_bwd.h"
#include "mhc_checks.h"

#define OP BWD_OP
#define API OP "GetWorkspaceSize"

/* ---- phase 1 ----------------------------------------------------------------------------------- */

enum { N_T = N_IN + N_OUT, T_GX = N_IN + OUT_GX };
static const char *const k_names[N_T] = {
    "gradHin", "gradHPost",    "gradHRes", "x",      "phi",     "alpha",
    "bias",    "hPre",         "hcBeforeNorm", "invRms", "sumOut", "normOut",
    "gradX",   "gradPhi",      "gradAlpha", "gradBias"};

/* 2a. dtypes (gradHin and x BF16/FLOAT16, gradX gradHin's, the rest FLOAT), x's layout,
 * sumOut's rank and leading dim (161002). */
static int bwd_check_dtypes_ranks(const aclsim_tensor_desc *d)
{
    int rc;
    if ((rc = mhc_check_dtypes(API, k_names, d, N_T, (1u << IN_GHIN) | (1u << IN_X), T_GX,
                               IN_GHIN)) ||
        (rc = mhc_check_x(API, &d[IN_X])))
        return rc;
    if ((rc = mhc_check_rank(API, "sumOut", &d[IN_SUM], 4, "[2*numIters, B, S, N]")))
        return rc;
    if (d[IN_SUM].dims[0] != 2 * MHC_ITERS)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: sumOut: dim 0 (2 * Sinkhorn iterations) must be %d (%d "
                                "iterations), got %lld",
                                API, 2 * MHC_ITERS, MHC_ITERS, (long long)d[IN_SUM].dims[0]);
    return 0;
}

/* 2b. every other shape, the formats, output contiguity (161002). */
static int bwd_check_shapes(const aclsim_tensor_desc *d)
{
    const aclsim_tensor_desc *dx = &d[IN_X];
    const int64_t B = dx->dims[0], S = dx->dims[1], N = MHC_N, C = dx->dims[3], D = MHC_D;
    const int64_t T2 = 2 * MHC_ITERS;
    mhc_shape_want want[N_T] = {
        {{B, S, C}, 3, "[B, S, C]"},
        {{B, S, N}, 3, "[B, S, N]"},
        {{B, S, N, N}, 4, "[B, S, N, N]"},
        {{B, S, N, C}, 4, "[B, S, N, C]"},
        {{D, N * C}, 2, "[N*N+2N, N*C]"},
        {{3}, 1, "[3]"},
        {{D}, 1, "[N*N+2N]"},
        {{B, S, N}, 3, "[B, S, N]"},
        {{B, S, D}, 3, "[B, S, N*N+2N]"},
        {{B, S, 1}, 3, "[B, S, 1]"},
        {{T2, B, S, N}, 4, "[2*numIters, B, S, N]"},
        {{T2, B, S, N, N}, 5, "[2*numIters, B, S, N, N]"},
        {{B, S, N, C}, 4, "[B, S, N, C]"},
        {{D, N * C}, 2, "[N*N+2N, N*C]"},
        {{3}, 1, "[3]"},
        {{D}, 1, "[N*N+2N]"},
    };
    if (d[IN_GHRES].ndim == 3) { /* gradHRes may also be flattened */
        want[IN_GHRES].dims[2] = N * N;
        want[IN_GHRES].nd = 3;
        want[IN_GHRES].layout = "[B, S, N*N]";
    } else if (d[IN_GHRES].ndim != 4) {
        char b[256];
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: gradHRes: must be 4-D [B, S, N, N] or 3-D [B, S, N*N], got "
                                "%d-D shape %s",
                                API, (int)d[IN_GHRES].ndim,
                                aclsim_shape_str(d[IN_GHRES].dims, d[IN_GHRES].ndim, b, sizeof b));
    }
    return mhc_check_layouts(API, k_names, d, want, N_T, IN_X, N_IN);
}

/* 3. tiling and workspace layout, into attrs (zeroed here). */
static void bwd_plan(const aclsim_tensor_desc *d, double hcEps, bwd_attrs *out)
{
    memset(out, 0, sizeof *out);
    mhc_tiling *t = &out->tiling;
    mhc_tiling_shape(t, &d[IN_X]);
    t->iters = MHC_ITERS;
    t->gh_dtype = d[IN_GHIN].dtype;
    t->out_dtype = d[T_GX].dtype;
    t->hc_eps = (float)hcEps;
    t->norm_eps = 0.0f;
    const uint64_t DK = (uint64_t)(MHC_D * t->K);
    mhc_tiling_blocks(t, DK + MHC_D + 3);
    const uint64_t nb = (uint64_t)t->blocks;
    t->ws_phi = 0;
    t->ws_bias = nb * DK;
    t->ws_alpha = t->ws_bias + nb * MHC_D;
    t->ws_floats = t->ws_alpha + nb * 3;
}

/* 5. the faults: bwd_faults (op_mhc_bwd_faults.c). */

/* 6. the executor (consumes `published` on failure). */
static int bwd_publish(const aclsim_tensor_desc *d, aclsim_kernel_fn fn, bwd_attrs *attrs,
                       mhc_tiling *published, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    aclsim_executor *ex = aclsim_executor_create(OP, fn, attrs->tiling.ws_floats * sizeof(float));
    if (ex && aclsim_sanitize_on)
        aclsim_executor_san_own_loads(ex); /* mhc_input_open reports the loads */
    if (!ex) {
        if (published)
            heap_free(published);
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    int rc = mhc_executor_add_tensors(ex, k_names, d, N_IN, N_T);
    if (!rc)
        rc = aclsim_executor_set_attrs(ex, attrs, sizeof *attrs);
    aclsim_launch_hook hook = bwd_launch_hook(attrs->faults);
    if (!rc && hook)
        aclsim_executor_set_launch_hook(ex, hook);
    if (rc) {
        aclsim_executor_discard(ex);
        if (published)
            heap_free(published);
        return rc;
    }
    if (published)
        bwd_publish_tiling(published);
    return aclsim_executor_publish(ex, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnMhcPreSinkhornBackwardGetWorkspaceSize(
    const aclTensor *gradHin, const aclTensor *gradHPost, const aclTensor *gradHRes,
    const aclTensor *x, const aclTensor *phi, const aclTensor *alpha, const aclTensor *bias,
    const aclTensor *hPre, const aclTensor *hcBeforeNorm, const aclTensor *invRms,
    const aclTensor *sumOut, const aclTensor *normOut, double hcEps, const aclTensor *gradX,
    const aclTensor *gradPhi, const aclTensor *gradAlpha, const aclTensor *gradBias,
    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const aclTensor *handles[N_T] = {gradHin, gradHPost, gradHRes,     x,      phi,    alpha,
                                     bias,    hPre,      hcBeforeNorm, invRms, sumOut, normOut,
                                     gradX,   gradPhi,   gradAlpha,    gradBias};
    aclsim_tensor_desc d[N_T];
    int rc;
    if ((rc = mhc_read_handles(API, handles, k_names, N_T, N_T, "", workspaceSize, executor, d)) ||
        (rc = bwd_check_dtypes_ranks(d)) || (rc = bwd_check_shapes(d)))
        return rc;
    bwd_attrs attrs;
    bwd_plan(d, hcEps, &attrs);
    const mhc_tiling *t = &attrs.tiling;

    /* 4. empty (B*S == 0): zero-fill gradPhi/gradAlpha/gradBias, unless the empty-skip fault:
     * then the executor gets no kernel at all, and phase 2 succeeds without writing anything */
    aclsim_kernel_fn fn = t->M > 0 ? bwd_kernel : aclsim_fault("empty-skip") ? NULL : bwd_zero_kernel;
    if (t->M > 0 && (rc = bwd_faults(&attrs)))
        return rc;
    mhc_tiling *published = NULL;
    if (aclsim_fault("crash") && (published = heap_alloc_tiling()) != NULL) {
        *published = *t;
        attrs.published = published;
    }
    return bwd_publish(d, fn, &attrs, published, workspaceSize, executor);
}

/* ---- phase 2 ----------------------------------------------------------------------------------- */

ACLSIM_API aclnnStatus aclnnMhcPreSinkhornBackward(void *workspace, uint64_t workspaceSize,
                                                   aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_executor_run(OP, workspace, workspaceSize, executor, stream);
}
