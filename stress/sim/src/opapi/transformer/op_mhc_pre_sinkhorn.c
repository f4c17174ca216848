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
 * Tiling: the M = B*S tokens are split into at most 24 blocks (AI cores); up to 4 host threads
 * take blocks from a shared counter.  Every output element is written by exactly one token, so
 * the result does not depend on the thread count or timing (deterministic; no workspace).
 * Dot products and sums of squares accumulate 8 lanes in k order, then add the lanes in a fixed
 * order: a token's result does not depend on which tokens share its tile.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "aclnn_mhc_pre_sinkhorn.h"
#include "mhc_common.h"

#define OP "aclnnMhcPreSinkhorn"
#define API OP "GetWorkspaceSize"

enum { IN_X, IN_PHI, IN_ALPHA, IN_BIAS };
enum { OUT_HIN, OUT_HPOST, OUT_HRES, OUT_HPRE, OUT_HCBN, OUT_INVRMS, OUT_SUM, OUT_NORM, N_OUT };

typedef struct {
    mhc_tiling tiling;
} fwd_attrs;

/* ---- kernel ------------------------------------------------------------------------------------ */

typedef struct {
    const mhc_tiling *t;
    const void *x;
    const float *phi, *alpha, *bias;
    void *hin;
    float *hpost, *hres, *hpre, *hcbn, *invrms, *sum, *norm; /* last five NULL unless needed */
    float *scratch;  /* per thread: MHC_TILE * K floats (x rows) + C floats (hin row) */
    atomic_llong next_block;
} fwd_run;

static inline float sigmoidf(float v)
{
    return 1.0f / (1.0f + expf(-v));
}

/* Sums of squares and hcBeforeNorm for MHC_TILE rows of xf (unused rows are zero). */
MHC_HOT static void fwd_dots(const float *xf, const float *phi, int64_t K, int tt, float *ss,
                             float (*hc)[MHC_D])
{
    for (int t = 0; t < tt; t++) {
        const float *row = xf + t * K;
        mhc_v8 acc = mhc_splat(0.0f);
        for (int64_t k = 0; k < K; k += 8) {
            mhc_v8 v = mhc_ld(row + k);
            acc += v * v;
        }
        ss[t] = mhc_hsum(acc);
    }
    for (int d = 0; d < MHC_D; d++) {
        const float *prow = phi + d * K;
        mhc_v8 acc[MHC_TILE];
        for (int t = 0; t < MHC_TILE; t++)
            acc[t] = mhc_splat(0.0f);
        for (int64_t k = 0; k < K; k += 8) {
            mhc_v8 p = mhc_ld(prow + k);
            for (int t = 0; t < MHC_TILE; t++)
                acc[t] += mhc_ld(xf + t * K + k) * p;
        }
        for (int t = 0; t < tt; t++)
            hc[t][d] = mhc_hsum(acc[t]);
    }
}

/* hin row: sum_n hPre[n] * xf[n, c], n in order. */
MHC_HOT static void fwd_hin_row(const float *xf, const float *hp, int64_t C, float *out)
{
    mhc_v8 h0 = mhc_splat(hp[0]), h1 = mhc_splat(hp[1]), h2 = mhc_splat(hp[2]),
           h3 = mhc_splat(hp[3]);
    for (int64_t c = 0; c < C; c += 8) {
        mhc_v8 v = h0 * mhc_ld(xf + c);
        v += h1 * mhc_ld(xf + C + c);
        v += h2 * mhc_ld(xf + 2 * C + c);
        v += h3 * mhc_ld(xf + 3 * C + c);
        mhc_st(out + c, v);
    }
}

/* The Sinkhorn forward of one token on R (4x4 logits); writes sumOut/normOut (when saved) and
 * hRes.  Operation order as in _mhc_reference._sinkhorn_forward. */
static void fwd_sinkhorn(const fwd_run *r, int64_t m, const float *R)
{
    const mhc_tiling *t = r->t;
    const int64_t M = t->M;
    const float eps = t->hc_eps;
    float p[MHC_N][MHC_N];
    float s[MHC_N];
#define SAVE_SUM(kk)                                                                            \
    do {                                                                                        \
        if (r->sum) {                                                                           \
            memcpy(r->sum + ((int64_t)(kk) * M + m) * MHC_N, s, sizeof s);                      \
            ACLSIM_SAN_STORE(r->sum + ((int64_t)(kk) * M + m) * MHC_N, sizeof s);               \
        }                                                                                       \
    } while (0)
#define SAVE_NORM(kk)                                                                           \
    do {                                                                                        \
        if (r->norm) {                                                                          \
            memcpy(r->norm + ((int64_t)(kk) * M + m) * MHC_N * MHC_N, p, sizeof p);             \
            ACLSIM_SAN_STORE(r->norm + ((int64_t)(kk) * M + m) * MHC_N * MHC_N, sizeof p);      \
        }                                                                                       \
    } while (0)

    /* k = 0: row softmax (+ eps); sumOut[0] = row sums of exp (no eps) */
    for (int i = 0; i < MHC_N; i++) {
        float mx = R[i * MHC_N];
        for (int j = 1; j < MHC_N; j++)
            mx = R[i * MHC_N + j] > mx ? R[i * MHC_N + j] : mx;
        float e[MHC_N], sum = 0.0f;
        for (int j = 0; j < MHC_N; j++) {
            e[j] = expf(R[i * MHC_N + j] - mx);
            sum += e[j];
        }
        s[i] = sum;
        for (int j = 0; j < MHC_N; j++)
            p[i][j] = e[j] / sum + eps;
    }
    SAVE_SUM(0);
    SAVE_NORM(0);
    /* k = 1: column sums stored without eps, divided by (sum + eps) */
    for (int j = 0; j < MHC_N; j++) {
        float sum = 0.0f;
        for (int i = 0; i < MHC_N; i++)
            sum += p[i][j];
        s[j] = sum;
    }
    for (int i = 0; i < MHC_N; i++)
        for (int j = 0; j < MHC_N; j++)
            p[i][j] = p[i][j] / (s[j] + eps);
    SAVE_SUM(1);
    SAVE_NORM(1);
    for (int it = 1; it < t->iters; it++) {
        for (int i = 0; i < MHC_N; i++) {
            float sum = 0.0f;
            for (int j = 0; j < MHC_N; j++)
                sum += p[i][j];
            s[i] = sum + eps;
        }
        for (int i = 0; i < MHC_N; i++)
            for (int j = 0; j < MHC_N; j++)
                p[i][j] = p[i][j] / s[i];
        SAVE_SUM(2 * it);
        SAVE_NORM(2 * it);
        for (int j = 0; j < MHC_N; j++) {
            float sum = 0.0f;
            for (int i = 0; i < MHC_N; i++)
                sum += p[i][j];
            s[j] = sum + eps;
        }
        for (int i = 0; i < MHC_N; i++)
            for (int j = 0; j < MHC_N; j++)
                p[i][j] = p[i][j] / s[j];
        SAVE_SUM(2 * it + 1);
        SAVE_NORM(2 * it + 1);
    }
#undef SAVE_SUM
#undef SAVE_NORM
    memcpy(r->hres + m * MHC_N * MHC_N, p, sizeof p);
    ACLSIM_SAN_STORE(r->hres + m * MHC_N * MHC_N, sizeof p);
}

/* Everything after the dot products, for token m. */
static void fwd_token(const fwd_run *r, int64_t m, const float *xf, float ss, const float *hc,
                      float *hin_row)
{
    const mhc_tiling *t = r->t;
    const int64_t C = t->C, K = t->K;
    float inv = 1.0f / sqrtf(ss / (float)K + t->norm_eps);
    float z[MHC_D];
    for (int j = 0; j < MHC_D; j++) {
        float a = r->alpha[j < MHC_N ? 0 : j < 2 * MHC_N ? 1 : 2];
        z[j] = hc[j] * inv * a + r->bias[j];
    }
    float hp[MHC_N], hq[MHC_N];
    for (int n = 0; n < MHC_N; n++) {
        hp[n] = sigmoidf(z[n]) + t->hc_eps;
        hq[n] = 2.0f * sigmoidf(z[MHC_N + n]);
    }
    fwd_hin_row(xf, hp, C, hin_row);
    mhc_f32_to_half(hin_row, t->out_dtype, (uint16_t *)r->hin + m * C, C);
    ACLSIM_SAN_STORE((uint16_t *)r->hin + m * C, C * sizeof(uint16_t));
    memcpy(r->hpost + m * MHC_N, hq, sizeof hq);
    ACLSIM_SAN_STORE(r->hpost + m * MHC_N, sizeof hq);
    if (r->hpre) {
        memcpy(r->hpre + m * MHC_N, hp, sizeof hp);
        memcpy(r->hcbn + m * MHC_D, hc, MHC_D * sizeof(float));
        r->invrms[m] = inv;
        ACLSIM_SAN_STORE(r->hpre + m * MHC_N, sizeof hp);
        ACLSIM_SAN_STORE(r->hcbn + m * MHC_D, MHC_D * sizeof(float));
        ACLSIM_SAN_STORE(&r->invrms[m], sizeof(float));
    }
    fwd_sinkhorn(r, m, z + 2 * MHC_N);
}

static void fwd_thread(void *arg, int tid)
{
    fwd_run *r = arg;
    const mhc_tiling *t = r->t;
    const int64_t K = t->K;
    float *xf = r->scratch + (size_t)tid * (size_t)(MHC_TILE * K + t->C);
    float *hin_row = xf + MHC_TILE * K;
    float ss[MHC_TILE], hc[MHC_TILE][MHC_D];
    const int es = aclsim_dtype_size(t->x_dtype);
    for (;;) {
        int64_t b = atomic_fetch_add(&r->next_block, 1);
        if (b >= t->blocks)
            break;
        int64_t m0 = b * t->tokens_per_block;
        int64_t m1 = m0 + t->tokens_per_block < t->M ? m0 + t->tokens_per_block : t->M;
        for (int64_t m = m0; m < m1; m += MHC_TILE) {
            int tt = m1 - m < MHC_TILE ? (int)(m1 - m) : MHC_TILE;
            mhc_half_to_f32((const uint8_t *)r->x + m * K * es, t->x_dtype, xf, tt * K);
            if (tt < MHC_TILE)
                memset(xf + tt * K, 0, (size_t)(MHC_TILE - tt) * (size_t)K * sizeof(float));
            fwd_dots(xf, r->phi, K, tt, ss, hc);
            for (int i = 0; i < tt; i++)
                fwd_token(r, m + i, xf + i * K, ss[i], hc[i], hin_row);
        }
    }
}

static int fwd_kernel(aclsim_kernel_ctx *k)
{
    const fwd_attrs *a = k->attrs;
    const mhc_tiling *t = &a->tiling;
    mhc_input in[4] = {{0}};
    int rc = 0;
    for (int i = 0; i < 4 && !rc; i++)
        rc = mhc_input_open(k, i, &in[i]);
    fwd_run r = {
        .t = t,
        .x = in[IN_X].p,
        .phi = in[IN_PHI].p,
        .alpha = in[IN_ALPHA].p,
        .bias = in[IN_BIAS].p,
    };
    if (!rc) {
        r.hin = mhc_output_ptr(k, OUT_HIN);
        r.hpost = mhc_output_ptr(k, OUT_HPOST);
        r.hres = mhc_output_ptr(k, OUT_HRES);
        if (t->need_backward) {
            r.hpre = mhc_output_ptr(k, OUT_HPRE);
            r.hcbn = mhc_output_ptr(k, OUT_HCBN);
            r.invrms = mhc_output_ptr(k, OUT_INVRMS);
            r.sum = mhc_output_ptr(k, OUT_SUM);
            r.norm = mhc_output_ptr(k, OUT_NORM);
        }
        size_t per_thread = (size_t)(MHC_TILE * t->K + t->C);
        r.scratch = malloc((size_t)t->threads * per_thread * sizeof(float));
        if (!r.scratch)
            rc = aclsim_kernel_fail(k, ACL_ERROR_RT_INTERNAL_ERROR, "kernel %s: out of host memory",
                                    k->op);
    }
    if (!rc) {
        atomic_init(&r.next_block, 0);
        mhc_parallel(t->threads, fwd_thread, &r);
    }
    free(r.scratch);
    for (int i = 0; i < 4; i++)
        mhc_input_close(&in[i]);
    return rc;
}

/* ---- phase 1 ----------------------------------------------------------------------------------- */

static const char *const k_names[] = {"x",   "phi",  "alpha", "bias",         "hin",
                                      "hPost", "hRes", "hPre",  "hcBeforeNorm", "invRms",
                                      "sumOut", "normOut"};

/* 1. NULL pointers (161001), then the descriptors of the n used tensors. */
static int fwd_read_handles(const aclTensor *const *handles, int n, const uint64_t *workspaceSize,
                            aclOpExecutor *const *executor, aclsim_tensor_desc *d)
{
    int rc;
    for (int i = 0; i < n; i++)
        if (!handles[i])
            return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL%s", API, k_names[i],
                                    i >= 7 ? " (required when needBackward is true)" : "");
    if (!workspaceSize)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: workspaceSize is NULL", API);
    if (!executor)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is NULL", API);
    for (int i = 0; i < n; i++)
        if ((rc = aclsim_tensor_get(API, k_names[i], handles[i], &d[i])))
            return rc;
    return 0;
}

/* 2a. dtypes, x's rank and the operator's constraints on the attributes (161002). */
static int fwd_check_dtypes(const aclsim_tensor_desc *d, int n_tensors, int64_t hcMult,
                            int64_t numIters)
{
    const aclsim_tensor_desc *dx = &d[0];
    int rc;
    if ((rc = mhc_check_dtype(API, "x", dx, 1)))
        return rc;
    for (int i = 1; i < n_tensors; i++) {
        if (i == 4) { /* hin: x's dtype */
            if (d[4].dtype != dx->dtype)
                return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                        "%s: hin: dtype must equal x's dtype %s, got %s", API,
                                        aclsim_dtype_name(dx->dtype), aclsim_dtype_name(d[4].dtype));
            continue;
        }
        if ((rc = mhc_check_dtype(API, k_names[i], &d[i], 0)))
            return rc;
    }
    if (dx->ndim == 3) {
        char b[256];
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: x: must be 4-D [B, S, N, C] (3-D TND input is supported only "
                                "on Ascend 950), got shape %s",
                                API, aclsim_shape_str(dx->dims, dx->ndim, b, sizeof b));
    }
    if ((rc = mhc_check_rank(API, "x", dx, 4, "[B, S, N, C]")) || (rc = mhc_check_x_dims(API, dx)))
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
    int rc;
    const int64_t B = dx->dims[0], S = dx->dims[1], N = MHC_N, C = dx->dims[3], D = MHC_D;
    const int64_t T2 = 2 * numIters;
    struct {
        int64_t dims[5];
        int nd;
        const char *layout;
    } want[12] = {
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
    for (int i = 1; i < n_tensors; i++)
        if ((rc = mhc_check_shape(API, k_names[i], &d[i], want[i].dims, want[i].nd, want[i].layout)))
            return rc;
    for (int i = 0; i < n_tensors; i++)
        if ((rc = mhc_check_format(API, k_names[i], &d[i])))
            return rc;
    for (int i = 4; i < n_tensors; i++)
        if ((rc = mhc_check_contiguous_output(API, k_names[i], &d[i])))
            return rc;

    return 0;
}

/* 3. the tiling, into attrs (zeroed here). */
static void fwd_plan(const aclsim_tensor_desc *d, int64_t numIters, double hcEps, double normEps,
                     bool needBackward, fwd_attrs *out)
{
    const aclsim_tensor_desc *dx = &d[0];
    const int64_t B = dx->dims[0], S = dx->dims[1], N = MHC_N, C = dx->dims[3];
    memset(out, 0, sizeof *out);
    mhc_tiling *t = &out->tiling;
    t->B = B;
    t->S = S;
    t->M = B * S;
    t->C = C;
    t->K = N * C;
    t->N = MHC_N;
    t->D = MHC_D;
    t->iters = (int32_t)numIters;
    t->x_dtype = dx->dtype;
    t->out_dtype = d[4].dtype;
    t->gh_dtype = dx->dtype;
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
    if ((rc = fwd_read_handles(handles, n_tensors, workspaceSize, executor, d)) ||
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
    for (int i = 0; i < 4 && !rc; i++)
        rc = aclsim_executor_add_input(ex, k_names[i], &d[i]);
    for (int i = 4; i < n_tensors && !rc; i++)
        rc = aclsim_executor_add_output(ex, k_names[i], &d[i]);
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
