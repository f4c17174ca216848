/*
 * op_mhc_pre_sinkhorn.c - aclnnMhcPreSinkhorn: the mHC pre-projection + Sinkhorn forward
 * (spec/acl-api.md 4.1, math 4.2: the A2/A3 kernel equations; numpy twin:
 * stress/ops/_mhc_reference.py::forward).
 *
 * Per token (b, s), all in float32, xf = x[b, s] (N*C values, converted exactly):
 *   invRms = 1 / sqrt(sum(xf^2) / (N*C) + normEps);  hcBeforeNorm = xf @ phi^T (24 values)
 *   z = hcBeforeNorm * invRms * alpha[group] + bias; hPre = sigmoid(z_pre) + hcEps;
 *   hPost = 2 sigmoid(z_post); hin = sum_n hPre[n] * xf[n, :] (rounded to x's dtype, RNE);
 *   Sinkhorn (20 iterations) on z_res as a 4x4 matrix -> sumOut, normOut, hRes.
 *
 * The kernel (tiling, threads, the fixed summation order): op_mhc_fwd_kernel.c.
 */
#include "aclnn_mhc_pre_sinkhorn.h"
#include "mhc_checks.h"
#include "mhc_fwd.h"

#define OP "aclnnMhcPreSinkhorn"
#define API OP "GetWorkspaceSize"

/* ---- phase 1 ----------------------------------------------------------------------------------- */

static const char *const k_names[] = {"x",   "phi",  "alpha", "bias",         "hin",
                                      "hPost", "hRes", "hPre",  "hcBeforeNorm", "invRms",
                                      "sumOut", "normOut"};

/* 2a. dtypes (x BF16/FLOAT16, hin x's, the rest FLOAT), x's layout and the operator's constraints
 * on the attributes (161002). */
static int fwd_check_dtypes(const aclsim_tensor_desc *d, int n_tensors, int64_t hcMult,
                            int64_t numIters)
{
    const aclsim_tensor_desc *dx = &d[0];
    int rc;
    if ((rc = mhc_check_dtypes(API, k_names, d, n_tensors, 1u << 0, 4, 0)) ||
        (rc = mhc_check_x(API, dx)))
        return rc;
    if (hcMult != MHC_N)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: hcMult must be %d, got %lld", API,
                                MHC_N, (long long)hcMult);
    if (hcMult != dx->dims[2])
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: hcMult must equal x's N (dim 2) = %lld, got %lld", API,
                                (long long)dx->dims[2], (long long)hcMult);
    if (numIters != MHC_ITERS)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: numIters must be %d, got %lld", API,
                                MHC_ITERS, (long long)numIters);

    return 0;
}

/* 2b. shapes, formats, output contiguity (161002). */
static int fwd_check_shapes(const aclsim_tensor_desc *d, int n_tensors, int64_t numIters)
{
    const aclsim_tensor_desc *dx = &d[0];
    const int64_t B = dx->dims[0], S = dx->dims[1], N = MHC_N, C = dx->dims[3], D = MHC_D;
    const int64_t T2 = 2 * numIters;
    const mhc_shape_want want[12] = {
        {{B, S, N, C}, 4, "[B, S, N, C]"},
        {{D, N * C}, 2, "[N*N+2N, N*C]"},
        {{3}, 1, "[3]"},
        {{D}, 1, "[N*N+2N]"},
        {{B, S, C}, 3, "[B, S, C]"},
        {{B, S, N}, 3, "[B, S, N]"},
        {{B, S, N * N}, 3, "[B, S, N*N]"},
        {{B, S, N}, 3, "[B, S, N]"},
        {{B, S, D}, 3, "[B, S, N*N+2N]"},
        {{B, S, 1}, 3, "[B, S, 1]"},
        {{T2, B, S, N}, 4, "[2*numIters, B, S, N]"},
        {{T2, B, S, N, N}, 5, "[2*numIters, B, S, N, N]"},
    };
    return mhc_check_layouts(API, k_names, d, want, n_tensors, 0, 4);
}

/* 3. the tiling, into attrs (zeroed here). */
static void fwd_plan(const aclsim_tensor_desc *d, int64_t numIters, double hcEps, double normEps,
                     bool needBackward, fwd_attrs *out)
{
    memset(out, 0, sizeof *out);
    mhc_tiling *t = &out->tiling;
    mhc_tiling_shape(t, &d[0]);
    t->iters = (int32_t)numIters;
    t->out_dtype = d[4].dtype;
    t->gh_dtype = d[0].dtype;
    t->hc_eps = (float)hcEps;
    t->norm_eps = (float)normEps;
    t->need_backward = needBackward;
    mhc_tiling_blocks(t, 0);
}

ACLSIM_API aclnnStatus aclnnMhcPreSinkhornGetWorkspaceSize(
    const aclTensor *x, const aclTensor *phi, const aclTensor *alpha, const aclTensor *bias,
    int64_t hcMult, int64_t numIters, double hcEps, double normEps, bool needBackward,
    aclTensor *hin, aclTensor *hPost, aclTensor *hRes, aclTensor *hPre, aclTensor *hcBeforeNorm,
    aclTensor *invRms, aclTensor *sumOut, aclTensor *normOut, uint64_t *workspaceSize,
    aclOpExecutor **executor)
{
    const aclTensor *handles[] = {x,   phi,  alpha, bias,         hin,    hPost,
                                  hRes, hPre, hcBeforeNorm, invRms, sumOut, normOut};
    const int n_tensors = needBackward ? 12 : 7; /* the saved five only with needBackward */
    aclsim_tensor_desc d[12];
    int rc;
    if ((rc = mhc_read_handles(API, handles, k_names, n_tensors, 7,
                               " (required when needBackward is true)", workspaceSize, executor,
                               d)) ||
        (rc = fwd_check_dtypes(d, n_tensors, hcMult, numIters)) ||
        (rc = fwd_check_shapes(d, n_tensors, numIters)))
        return rc;
    fwd_attrs attrs;
    fwd_plan(d, numIters, hcEps, normEps, needBackward, &attrs);
    const mhc_tiling *t = &attrs.tiling;

    /* 4. empty (B*S == 0): every output is empty, nothing to launch */
    aclsim_executor *ex = aclsim_executor_create(OP, t->M == 0 ? NULL : fwd_kernel, 0);
    if (ex && aclsim_sanitize_on)
        aclsim_executor_san_own_loads(ex); /* mhc_input_open reports the loads */
    if (!ex)
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    rc = mhc_executor_add_tensors(ex, k_names, d, 4, n_tensors);
    if (!rc)
        rc = aclsim_executor_set_attrs(ex, &attrs, sizeof attrs);
    if (rc) {
        aclsim_executor_discard(ex);
        return rc;
    }
    return aclsim_executor_publish(ex, workspaceSize, executor);
}

/* ---- phase 2 ----------------------------------------------------------------------------------- */

ACLSIM_API aclnnStatus aclnnMhcPreSinkhorn(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_executor_run(OP, workspace, workspaceSize, executor, stream);
}
