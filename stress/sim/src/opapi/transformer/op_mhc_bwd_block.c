/*
 * op_mhc_bwd_block.c - one block of tokens of aclnnMhcPreSinkhornBackward's kernel, MHC_TILE
 * tokens at a time: per token the logits' gradient (op_mhc_bwd_token.c), then the tile's gradX
 * rows, then the block's gradPhi partial; non-deterministic mode adds the finished block's
 * partials into the outputs at once (like the kernel's atomics).  And the helper threads' loop
 * that takes blocks from the shared counter.
 */
#include "mhc_bwd.h"

/* gradX rows of a tile (float32, into out): g_hcbn @ phi - coef * xf + hPre[n] * gradHin[c]. */
MHC_HOT static void bwd_gradx_tile(const float *phi, int64_t C, const float (*g)[MHC_D],
                                   const float *coef, const float (*hp)[MHC_N], const float *xf,
                                   const float *ghf, int tt, float *out)
{
    const int64_t K = MHC_N * C;
    for (int n = 0; n < MHC_N; n++) {
        for (int64_t c = 0; c < C; c += 8) {
            const int64_t k = n * C + c;
            mhc_v8 acc[MHC_TILE];
            mhc_v8 p = mhc_ld(phi + k);
            for (int t = 0; t < MHC_TILE; t++)
                acc[t] = mhc_splat(g[t][0]) * p;
            for (int d = 1; d < MHC_D; d++) {
                p = mhc_ld(phi + d * K + k);
                for (int t = 0; t < MHC_TILE; t++)
                    acc[t] += mhc_splat(g[t][d]) * p;
            }
            for (int t = 0; t < tt; t++) {
                mhc_v8 v = acc[t] - mhc_splat(coef[t]) * mhc_ld(xf + t * K + k);
                v += mhc_splat(hp[t][n]) * mhc_ld(ghf + t * C + c);
                mhc_st(out + t * K + k, v);
            }
        }
    }
}

/* The block's gradPhi partial P (D x K) += sum over the tile's tokens of g_hcbn^T (x) xf,
 * token by token in order. */
static inline void gradphi_tile(float *P, int64_t K, const float (*g)[MHC_D], const float *xf,
                                int tt, int lowp)
{
    const int64_t KC = 512; /* keep the tile's xf columns in L1 across the 24 rows */
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
        const int64_t k1 = k0 + KC < K ? k0 + KC : K;
        for (int d = 0; d < MHC_D; d++) {
            float *prow = P + d * K;
            for (int64_t k = k0; k < k1; k += 8) {
                mhc_v8 acc = mhc_ld(prow + k);
                for (int t = 0; t < tt; t++)
                    acc = grad_add8(acc, mhc_splat(g[t][d]) * mhc_ld(xf + t * K + k), lowp);
                mhc_st(prow + k, acc);
            }
        }
    }
}

MHC_HOT static void bwd_gradphi_tile(float *P, int64_t K, const float (*g)[MHC_D],
                                     const float *xf, int tt, int lowp)
{
    if (lowp)
        gradphi_tile(P, K, g, xf, tt, 1); /* grad-drift: a bf16 running sum */
    else if (tt == MHC_TILE)
        gradphi_tile(P, K, g, xf, MHC_TILE, 0); /* constant trip count: unrolled */
    else
        gradphi_tile(P, K, g, xf, tt, 0);
}

/* out[e] += part[e] for e < n (non-deterministic path: one block's partial into an output). */
MHC_HOT static void add_partial(float *out, const float *part, int64_t n)
{
    int64_t e = 0;
    for (; e + 8 <= n; e += 8)
        mhc_st(out + e, grad_add8(mhc_ld(out + e), mhc_ld(part + e), 0));
    for (; e < n; e++)
        out[e] = grad_add(out[e], part[e], 0);
}

static void bwd_block(bwd_run *r, int64_t b, float *xf, float *ghf, float *gxf)
{
    const mhc_tiling *t = r->t;
    const int64_t C = t->C, K = t->K, DK = MHC_D * K;
    float *P = r->part + t->ws_phi + b * DK;
    float *pbias = r->part + t->ws_bias + b * MHC_D;
    float *palpha = r->part + t->ws_alpha + b * 3;
    memset(P, 0, (size_t)DK * sizeof(float));
    memset(pbias, 0, MHC_D * sizeof(float));
    memset(palpha, 0, 3 * sizeof(float));

    const int xs = aclsim_dtype_size(t->x_dtype), gs = aclsim_dtype_size(t->gh_dtype);
    const int os = aclsim_dtype_size(t->out_dtype);
    /* Block b of the launch's grid covers tpb tokens from b * tpb, the grid's last block the
     * rest (with the tiling's own tpb that is exactly the tiling's split). */
    int64_t m_begin = b * r->tpb, m_end = m_begin + r->tpb;
    if (m_begin > t->M)
        m_begin = t->M;
    if (m_end > t->M || b == t->blocks - 1)
        m_end = t->M;
    float g[MHC_TILE][MHC_D], coef[MHC_TILE], hp[MHC_TILE][MHC_N];
    for (int64_t m = m_begin; m < m_end; m += MHC_TILE) {
        const int tt = m_end - m < MHC_TILE ? (int)(m_end - m) : MHC_TILE;
        mhc_half_to_f32((const uint8_t *)r->x + m * K * xs, t->x_dtype, xf, tt * K);
        mhc_half_to_f32((const uint8_t *)r->gh + m * C * gs, t->gh_dtype, ghf, tt * C);
        for (int i = 0; i < tt; i++)
            bwd_token(r, m + i, xf + i * K, ghf + i * C, g[i], &coef[i], hp[i], pbias, palpha);
        for (int i = tt; i < MHC_TILE; i++) /* unused rows of the gradX tile: computed, dropped */
            memset(g[i], 0, sizeof g[i]);
        bwd_gradx_tile(r->phi, C, (const float(*)[MHC_D])g, coef, (const float(*)[MHC_N])hp, xf,
                       ghf, tt, gxf);
        for (int i = 0; i < tt; i++)
            mhc_f32_to_half(gxf + i * K, t->out_dtype, (uint8_t *)r->gx + (m + i) * K * os, K);
        ACLSIM_SAN_STORE((uint8_t *)r->gx + m * K * os, tt * K * os);
        bwd_gradphi_tile(P, K, (const float(*)[MHC_D])g, xf, tt, (r->faults & BWD_F_DRIFT) != 0);
    }
    /* like atomics: into the outputs as soon as the block is done (tiling-race: only the blocks
     * the published tiling says to reduce; stale-tail: gradBias/gradAlpha go through the UB) */
    if (!r->deterministic && b < r->reduce_n) {
        pthread_mutex_lock(&r->out_mu);
        add_partial(r->gphi, P, DK);
        ACLSIM_SAN_UPDATE(r->gphi, DK * sizeof(float));
        if (!r->ub) {
            add_partial(r->gbias, pbias, MHC_D);
            add_partial(r->galpha, palpha, 3);
            ACLSIM_SAN_UPDATE(r->gbias, MHC_D * sizeof(float));
            ACLSIM_SAN_UPDATE(r->galpha, 3 * sizeof(float));
        }
        pthread_mutex_unlock(&r->out_mu);
    }
}

void bwd_thread(void *arg, int tid)
{
    bwd_run *r = arg;
    const mhc_tiling *t = r->t;
    const int64_t K = t->K, C = t->C;
    float *xf = r->scratch + (size_t)tid * (size_t)(2 * MHC_TILE * K + MHC_TILE * C);
    float *ghf = xf + MHC_TILE * K;
    float *gxf = ghf + MHC_TILE * C;
    memset(xf, 0, (size_t)MHC_TILE * (size_t)K * sizeof(float)); /* rows past a short tile */
    for (;;) {
        int64_t i = atomic_fetch_add(&r->next_block, 1);
        if (i >= t->blocks)
            break;
        bwd_block(r, (r->first_block + i) % t->blocks, xf, ghf, gxf);
    }
}
