/*
 * op_mhc_bwd_token.c - one token of aclnnMhcPreSinkhornBackward's kernel: the Sinkhorn backward
 * (exact variant, see op_mhc_pre_sinkhorn_backward.c) and the gradient of the 24 logits, with
 * the token's terms of the block's gradBias / gradAlpha partials.
 */
#include <math.h>

#include "mhc_bwd.h"

static inline float sigmoidf(float v)
{
    return 1.0f / (1.0f + expf(-v));
}

MHC_HOT static float dot_c(const float *a, const float *b, int64_t n)
{
    mhc_v8 acc = mhc_splat(0.0f);
    for (int64_t i = 0; i < n; i += 8)
        acc += mhc_ld(a + i) * mhc_ld(b + i);
    return mhc_hsum(acc);
}

/* Column normalisation backwards: g1 = (g - sum_i(g*y) / c) / c  (per column j). */
static inline void col_step(const float (*g)[MHC_N], const float (*y)[MHC_N], const float *col,
                            float (*g1)[MHC_N])
{
    for (int j = 0; j < MHC_N; j++) {
        float cs = 0.0f;
        for (int i = 0; i < MHC_N; i++)
            cs += g[i][j] * y[i][j];
        for (int i = 0; i < MHC_N; i++)
            g1[i][j] = (g[i][j] - cs / col[j]) / col[j];
    }
}

/* Sinkhorn backward of one token (exact variant): g (4x4, gradHRes) -> dR (4x4). */
static void bwd_sinkhorn(const bwd_run *r, int64_t m, const float *ghres, float *dR)
{
    const int64_t M = r->t->M;
    const float eps = r->t->hc_eps;
    float g[MHC_N][MHC_N], g1[MHC_N][MHC_N], y[MHC_N][MHC_N], col[MHC_N], row[MHC_N];
    memcpy(g, ghres, sizeof g);
    for (int it = MHC_ITERS - 1; it >= 1; it--) {
        memcpy(y, r->norm + ((int64_t)(2 * it) * M + m) * MHC_N * MHC_N, sizeof y);
        memcpy(col, r->sum + ((int64_t)(2 * it + 1) * M + m) * MHC_N, sizeof col);
        memcpy(row, r->sum + ((int64_t)(2 * it) * M + m) * MHC_N, sizeof row);
        col_step((const float(*)[MHC_N])g, (const float(*)[MHC_N])y, col, g1);
        /* row normalisation: g2 = g1 / r;  g = g2 - sum_j(g2*y) */
        for (int i = 0; i < MHC_N; i++) {
            float g2[MHC_N], rs = 0.0f;
            for (int j = 0; j < MHC_N; j++) {
                g2[j] = g1[i][j] / row[i];
                rs += g2[j] * y[i][j];
            }
            for (int j = 0; j < MHC_N; j++)
                g[i][j] = g2[j] - rs;
        }
    }
    /* t = 0: column step with sumOut[1] + eps (stored without eps), then the softmax step with
     * s = normOut[0] - eps:  dR = s * (g1 - sum_l(g1*s)) */
    memcpy(y, r->norm + m * MHC_N * MHC_N, sizeof y);
    memcpy(col, r->sum + (M + m) * MHC_N, sizeof col);
    for (int j = 0; j < MHC_N; j++)
        col[j] = col[j] + eps;
    col_step((const float(*)[MHC_N])g, (const float(*)[MHC_N])y, col, g1);
    for (int i = 0; i < MHC_N; i++) {
        float s[MHC_N], rs = 0.0f;
        for (int j = 0; j < MHC_N; j++) {
            s[j] = y[i][j] - eps;
            rs += g1[i][j] * s[j];
        }
        for (int j = 0; j < MHC_N; j++)
            dR[i * MHC_N + j] = s[j] * (g1[i][j] - rs);
    }
}

/* Per token: dz and everything derived from it.  Outputs g_hcbn (24), the gradX coefficient of
 * xf, hPre; adds dz into the block's gradBias partial and nf*dz into its gradAlpha partial. */
void bwd_token(const bwd_run *r, int64_t m, const float *xf, const float *ghf,
                      float *g_hcbn, float *coef, float *hp, float *pbias, float *palpha)
{
    const mhc_tiling *t = r->t;
    const int64_t C = t->C, K = t->K;
    const int lowp = (r->faults & BWD_F_DRIFT) != 0;
    const float *hc = r->hcbn + m * MHC_D;
    const float inv = r->invrms[m];
    float a[MHC_D], nf[MHC_D], z[MHC_D], dz[MHC_D];
    for (int j = 0; j < MHC_D; j++) {
        a[j] = r->alpha[j < MHC_N ? 0 : j < 2 * MHC_N ? 1 : 2];
        nf[j] = hc[j] * inv;
        z[j] = nf[j] * a[j] + r->bias[j];
    }
    for (int n = 0; n < MHC_N; n++) {
        float g_hpre = dot_c(ghf, xf + n * C, C);
        float s = sigmoidf(z[n]);
        dz[n] = g_hpre * s * (1.0f - s);
        float q = sigmoidf(z[MHC_N + n]);
        dz[MHC_N + n] = 2.0f * r->ghpost[m * MHC_N + n] * q * (1.0f - q);
        hp[n] = r->hpre[m * MHC_N + n];
    }
    bwd_sinkhorn(r, m, r->ghres + m * MHC_N * MHC_N, dz + 2 * MHC_N);

    float ga[3] = {0.0f, 0.0f, 0.0f}, g_inv = 0.0f;
    for (int j = 0; j < MHC_D; j++) {
        pbias[j] = grad_add(pbias[j], dz[j], lowp);
        ga[j < MHC_N ? 0 : j < 2 * MHC_N ? 1 : 2] += nf[j] * dz[j];
        float g_nf = dz[j] * a[j];
        g_hcbn[j] = g_nf * inv;
        g_inv += hc[j] * g_nf;
    }
    for (int i = 0; i < 3; i++)
        palpha[i] = grad_add(palpha[i], ga[i], lowp);
    *coef = inv * inv * inv * g_inv / (float)K;
}
