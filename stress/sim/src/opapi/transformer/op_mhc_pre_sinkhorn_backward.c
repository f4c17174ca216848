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
 *
 * Faults (ACLSIM_FAULTS, read once per call in phase 1 and kept in the executor's attrs; see
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
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aclnn_mhc_pre_sinkhorn_backward.h"
#include "mhc_common.h"
#include "mhc_tiling_ring.h"

#define OP "aclnnMhcPreSinkhornBackward"
#define API OP "GetWorkspaceSize"

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

/* ---- fault state (process-wide; see the file comment) ----------------------------------------- */

/* This object is linked into libopapi_transformer.so and libopapi.so, so the state lives in
 * libnnopbase (aclsim_shared_state): one per process whichever library runs the operator. */

/* shared-scratch: one device-wide reduction buffer, big enough for the largest legal shape. */
#define BWD_SCRATCH_FLOATS ((size_t)MHC_D * MHC_N * MHC_C_LIMIT + MHC_D + 3)
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

static float (*thread_ub(void))[MHC_D + 3]
{
    bwd_ub *ub = aclsim_thread_state("mhc_bwd.ub", sizeof(bwd_ub));
    return ub ? *ub : NULL;
}

static mhc_tiling *heap_alloc_tiling(void)
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

static void heap_free(void *p)
{
    bwd_shared *g = shared(); /* not NULL: p came from heap_alloc_tiling */
    madvise(p, g->page_size, MADV_DONTNEED);
    mprotect(p, g->page_size, PROT_NONE);
}

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

/* ---- kernel ------------------------------------------------------------------------------------ */

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
static void bwd_token(const bwd_run *r, int64_t m, const float *xf, const float *ghf,
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

static void bwd_thread(void *arg, int tid)
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

static void bwd_reduce_thread(void *arg, int tid)
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
static void ub_reduce(bwd_run *r, int64_t nblocks)
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

/* hang: the kernel's side of the lock order (B, then A while holding B). */
static void hang_reduce_begin(const bwd_run *r)
{
    if (r->faults & BWD_F_HANG)
        pthread_mutex_lock(&shared()->reduce_mu); /* B: the reduction unit, held throughout */
}

static void hang_reduce_end(const bwd_run *r, uint64_t launch_id)
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

static int bwd_kernel(aclsim_kernel_ctx *k)
{
    const bwd_attrs *a = k->attrs;
    const mhc_tiling *t = bwd_tiling(k); /* crash: a freed tiling object faults here */
    mhc_input in[N_IN];
    memset(in, 0, sizeof in);
    int rc = 0;
    for (int i = 0; i < N_IN && !rc; i++)
        rc = mhc_input_open(k, i, &in[i]);
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
        float *scratch = shared() ? shared()->scratch : NULL;
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
        size_t per_thread = (size_t)(2 * MHC_TILE * t->K + MHC_TILE * t->C);
        r.scratch = malloc((size_t)t->threads * per_thread * sizeof(float));
        if (!r.scratch)
            rc = aclsim_kernel_fail(k, ACL_ERROR_RT_INTERNAL_ERROR, "kernel %s: out of host memory",
                                    k->op);
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
    for (int i = 0; i < N_IN; i++)
        mhc_input_close(&in[i]);
    return rc;
}

/* B*S == 0: the gradients of phi, alpha and bias are sums over no tokens. */
static int bwd_zero_kernel(aclsim_kernel_ctx *k)
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

/* ---- phase 1 ----------------------------------------------------------------------------------- */

enum { N_T = N_IN + N_OUT, T_GX = N_IN + OUT_GX };
static const char *const k_names[N_T] = {
    "gradHin", "gradHPost",    "gradHRes", "x",      "phi",     "alpha",
    "bias",    "hPre",         "hcBeforeNorm", "invRms", "sumOut", "normOut",
    "gradX",   "gradPhi",      "gradAlpha", "gradBias"};

/* 1. NULL pointers (161001), then the descriptors. */
static int bwd_read_handles(const aclTensor *const *handles, const uint64_t *workspaceSize,
                            aclOpExecutor *const *executor, aclsim_tensor_desc *d)
{
    int rc;
    for (int i = 0; i < N_T; i++)
        if (!handles[i])
            return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", API, k_names[i]);
    if (!workspaceSize)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: workspaceSize is NULL", API);
    if (!executor)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is NULL", API);
    for (int i = 0; i < N_T; i++)
        if ((rc = aclsim_tensor_get(API, k_names[i], handles[i], &d[i])))
            return rc;
    return 0;
}

/* 2a. dtypes, x's rank and the operator's constraints, sumOut's leading dim (161002). */
static int bwd_check_dtypes_ranks(const aclsim_tensor_desc *d)
{
    const aclsim_tensor_desc *dx = &d[IN_X];
    int rc;
    for (int i = 0; i < N_T; i++) {
        if (i == T_GX) {
            if (d[i].dtype != d[IN_GHIN].dtype)
                return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                        "%s: gradX: dtype must equal gradHin's dtype %s, got %s",
                                        API, aclsim_dtype_name(d[IN_GHIN].dtype),
                                        aclsim_dtype_name(d[i].dtype));
            continue;
        }
        if ((rc = mhc_check_dtype(API, k_names[i], &d[i], i == IN_GHIN || i == IN_X)))
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
    int rc;
    const int64_t B = dx->dims[0], S = dx->dims[1], N = MHC_N, C = dx->dims[3], D = MHC_D;
    const int64_t T2 = 2 * MHC_ITERS;
    struct {
        int64_t dims[5];
        int nd;
        const char *layout;
    } want[N_T] = {
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
    for (int i = 0; i < N_T; i++)
        if (i != IN_X &&
            (rc = mhc_check_shape(API, k_names[i], &d[i], want[i].dims, want[i].nd, want[i].layout)))
            return rc;
    for (int i = 0; i < N_T; i++)
        if ((rc = mhc_check_format(API, k_names[i], &d[i])))
            return rc;
    for (int i = N_IN; i < N_T; i++)
        if ((rc = mhc_check_contiguous_output(API, k_names[i], &d[i])))
            return rc;

    return 0;
}

/* 3. tiling and workspace layout, into attrs (zeroed here). */
static void bwd_plan(const aclsim_tensor_desc *d, double hcEps, bwd_attrs *out)
{
    const aclsim_tensor_desc *dx = &d[IN_X];
    const int64_t B = dx->dims[0], S = dx->dims[1], N = MHC_N, C = dx->dims[3], D = MHC_D;
    memset(out, 0, sizeof *out);
    mhc_tiling *t = &out->tiling;
    t->B = B;
    t->S = S;
    t->M = B * S;
    t->C = C;
    t->K = N * C;
    t->N = MHC_N;
    t->D = MHC_D;
    t->iters = MHC_ITERS;
    t->x_dtype = dx->dtype;
    t->gh_dtype = d[IN_GHIN].dtype;
    t->out_dtype = d[T_GX].dtype;
    t->hc_eps = (float)hcEps;
    t->norm_eps = 0.0f;
    const uint64_t DK = (uint64_t)(D * t->K);
    mhc_tiling_blocks(t, DK + D + 3);
    const uint64_t nb = (uint64_t)t->blocks;
    t->ws_phi = 0;
    t->ws_bias = nb * DK;
    t->ws_alpha = t->ws_bias + nb * D;
    t->ws_floats = t->ws_alpha + nb * 3;
}

/* 5. the faults of a non-empty call (see the file comment): flags into attrs, and the shared
 * state phase 1 touches.  0 or an error (message set). */
static int bwd_faults(bwd_attrs *attrs)
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

/* 6. the executor (consumes `published` on failure). */
static int bwd_publish(const aclsim_tensor_desc *d, aclsim_kernel_fn fn, bwd_attrs *attrs,
                       mhc_tiling *published, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    int rc = 0;
    aclsim_executor *ex = aclsim_executor_create(OP, fn, attrs->tiling.ws_floats * sizeof(float));
    if (ex && aclsim_sanitize_on)
        aclsim_executor_san_own_loads(ex); /* mhc_input_open reports the loads */
    if (!ex) {
        if (published)
            heap_free(published);
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    for (int i = 0; i < N_IN && !rc; i++)
        rc = aclsim_executor_add_input(ex, k_names[i], &d[i]);
    for (int i = N_IN; i < N_T && !rc; i++)
        rc = aclsim_executor_add_output(ex, k_names[i], &d[i]);
    if (!rc)
        rc = aclsim_executor_set_attrs(ex, attrs, sizeof *attrs);
    if (!rc && (attrs->faults & BWD_F_TILING_RACE))
        aclsim_executor_set_launch_hook(ex, race_launch_hook);
    if (!rc && (attrs->faults & BWD_F_TILING_RING))
        aclsim_executor_set_launch_hook(ex, ring_launch_hook);
    if (rc) {
        aclsim_executor_discard(ex);
        if (published)
            heap_free(published);
        return rc;
    }
    if (published) {
        /* crash: publish this call's tiling object as the cache entry and free the previous
         * one, assuming its call is done with it: true only if that call's kernel has already
         * run, i.e. when calls do not overlap */
        mhc_tiling *previous = atomic_exchange(&shared()->tiling_cache, published);
        if (previous)
            heap_free(previous);
    }
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
    if ((rc = bwd_read_handles(handles, workspaceSize, executor, d)) ||
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
