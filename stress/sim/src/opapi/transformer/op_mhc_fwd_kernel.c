/*
 * op_mhc_fwd_kernel.c - the kernel of aclnnMhcPreSinkhorn (phase 1: op_mhc_pre_sinkhorn.c, which
 * has the equations).
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

#include "mhc_fwd.h"

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

int fwd_kernel(aclsim_kernel_ctx *k)
{
    const fwd_attrs *a = k->attrs;
    const mhc_tiling *t = &a->tiling;
    mhc_input in[4];
    int rc = mhc_inputs_open(k, in, 4);
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
        r.scratch = mhc_thread_scratch(k, t->threads, (size_t)(MHC_TILE * t->K + t->C), &rc);
    }
    if (!rc) {
        atomic_init(&r.next_block, 0);
        mhc_parallel(t->threads, fwd_thread, &r);
    }
    free(r.scratch);
    mhc_inputs_close(in, 4);
    return rc;
}
