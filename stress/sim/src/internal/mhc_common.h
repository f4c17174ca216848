/*
 * mhc_common.h - shared by the two mHC operator files (op_mhc_pre_sinkhorn.c,
 * op_mhc_pre_sinkhorn_backward.c) and implemented in op_mhc_common.c (hidden symbols of
 * libopapi).  Their shared phase-1 checks: mhc_checks.h.
 *
 * Contents:
 *   constants      the A2/A3 constraints (N = 4, 20 Sinkhorn iterations, C % 128 == 0, ...)
 *   mhc_tiling     what phase 1 computes for the kernel: shape numbers, blocks, threads
 *   executors      the tensors of a phase 1's executor, inputs then outputs
 *   kernel helpers input views (non-contiguous inputs are gathered), row conversions between
 *                  bf16/fp16 and fp32, a small pthread fan-out that runs the kernel's blocks
 *   vectors        an 8 x float GCC vector type with fixed-order arithmetic
 *
 * Arithmetic is plain float32 in a fixed order (GCC vector extensions, no FMA: the build uses
 * -ffp-contract=off), so the hot loops compiled for AVX2 (target_clones) and for the baseline
 * ISA give the same bits, and so does every machine.
 */
#ifndef MHC_COMMON_H
#define MHC_COMMON_H

#include <stdint.h>
#include <string.h>

#include "aclsim_dtype.h"
#include "aclsim_nnop.h"

#define MHC_HIDDEN __attribute__((visibility("hidden")))

/* ---- constants (spec/acl-api.md 4.1 / 4.3, A2/A3) ------------------------------------------ */
#define MHC_N 4                          /* hyper-connection count: the only one supported   */
#define MHC_D (MHC_N * MHC_N + 2 * MHC_N) /* pre | post | res columns of phi: 24             */
#define MHC_ITERS 20                     /* Sinkhorn iterations: the only one supported       */
#define MHC_C_ALIGN 128                  /* C must be a multiple of this ...                  */
#define MHC_C_LIMIT 100000               /* ... and 0 < C < MHC_C_LIMIT                        */
#define MHC_CORES 24                     /* AI cores of an Ascend 910B3: blocks per launch    */
#define MHC_MAX_THREADS 4                /* host threads per launch (at most, and <= CPUs)    */
/* Cap on the backward's per-block partials in the workspace (fewer blocks for a huge N*C). */
#define MHC_PARTIALS_CAP ((uint64_t)256 << 20)
#define MHC_TILE 8 /* tokens processed together inside a block (register blocking) */

/* ---- tiling ------------------------------------------------------------------------------------
 * Computed in phase 1 and stored (by value) in the executor's attribute blob; the kernel reads
 * it from there.  Block b covers tokens [b * tokens_per_block, min(M, (b+1) * tokens_per_block));
 * tokens_per_block = max(MHC_TILE, ceil(M / max_blocks)), max_blocks = MHC_CORES (fewer for the
 * backward when its partials would exceed MHC_PARTIALS_CAP).
 */
typedef struct {
    int64_t B, S, M;          /* M = B * S tokens                                          */
    int64_t C, K;             /* K = N * C                                                 */
    int32_t N, D, iters;      /* 4, 24, 20                                                 */
    int32_t x_dtype;          /* ACL_BF16 / ACL_FLOAT16                                    */
    int32_t out_dtype;        /* forward: hin's dtype; backward: gradHin's = gradX's dtype */
    int32_t gh_dtype;         /* backward: gradHin's dtype                                 */
    int64_t blocks;           /* AI-core blocks (0 when M == 0)                            */
    int64_t tokens_per_block; /* >= 1                                                      */
    int32_t threads;          /* host threads for one launch, 1..MHC_MAX_THREADS           */
    float hc_eps, norm_eps;
    int32_t need_backward;    /* forward only                                              */
    /* backward workspace layout, in floats from the workspace start (see the .c file) */
    uint64_t ws_phi, ws_bias, ws_alpha, ws_floats;
} mhc_tiling;

/* Fill blocks / tokens_per_block / threads for M tokens.  partial_floats_per_block > 0 limits the
 * number of blocks so that blocks * partial_floats_per_block * 4 <= MHC_PARTIALS_CAP. */
MHC_HIDDEN void mhc_tiling_blocks(mhc_tiling *t, uint64_t partial_floats_per_block);
/* The shape numbers (B, S, M, C, K, N, D) and x_dtype from x (B, S, N, C); the rest untouched. */
MHC_HIDDEN void mhc_tiling_shape(mhc_tiling *t, const aclsim_tensor_desc *x);

/* ---- executors ------------------------------------------------------------------------------ */
/* Add d[0 .. n_in) as inputs and d[n_in .. n) as outputs, named names[i]: 0 or the error. */
MHC_HIDDEN int mhc_executor_add_tensors(aclsim_executor *ex, const char *const *names,
                                        const aclsim_tensor_desc *d, int n_in, int n);

/* ---- views ---------------------------------------------------------------------------------- */

/* 1 if the view is row-major contiguous (strides of size-1 dims are ignored). */
MHC_HIDDEN int mhc_is_contiguous(const aclsim_tensor_desc *d);

/* ---- kernel helpers ---------------------------------------------------------------------------- */
/* A contiguous view of a kernel input: the tensor itself, or a gathered host copy. */
typedef struct {
    const void *p;
    void *owned; /* free() when done (NULL if p points into the tensor) */
} mhc_input;

/* 0, or an error code after aclsim_kernel_fail (out of host memory). */
MHC_HIDDEN int mhc_input_open(aclsim_kernel_ctx *k, int index, mhc_input *in);
MHC_HIDDEN void mhc_input_close(mhc_input *in);
/* Inputs 0 .. n-1 into in[] (zeroed first; stops at the first failure): 0 or the error; close
 * all n whatever it returned. */
MHC_HIDDEN int mhc_inputs_open(aclsim_kernel_ctx *k, mhc_input *in, int n);
MHC_HIDDEN void mhc_inputs_close(mhc_input *in, int n);
/* The kernel's per-thread host scratch, threads * floats_per_thread floats (free() it), or NULL
 * with *rc set by aclsim_kernel_fail (out of host memory). */
MHC_HIDDEN float *mhc_thread_scratch(aclsim_kernel_ctx *k, int threads, size_t floats_per_thread,
                                     int *rc);
/* Address of element 0 of an output's (contiguous) view. */
MHC_HIDDEN void *mhc_output_ptr(const aclsim_kernel_ctx *k, int index);

/* dst[0..n) = src (BF16 or FLOAT16 elements) as float32 (exact). */
MHC_HIDDEN void mhc_half_to_f32(const void *src, int32_t dtype, float *dst, int64_t n);
/* dst (BF16 or FLOAT16) = src rounded to nearest even. */
MHC_HIDDEN void mhc_f32_to_half(const float *src, int32_t dtype, void *dst, int64_t n);

/* Run fn(arg, tid) for tid = 0 .. nthreads-1, tid 0 on the calling thread, and join.  If a
 * thread cannot be created, the calling thread runs that share itself (same result). */
typedef void (*mhc_thread_fn)(void *arg, int tid);
MHC_HIDDEN void mhc_parallel(int nthreads, mhc_thread_fn fn, void *arg);

/* ---- vectors -------------------------------------------------------------------------------- */
/* Static inline helpers pass 32-byte vectors by value; they never cross a library boundary, so
 * GCC's note about the AVX calling convention does not apply. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float mhc_v8 __attribute__((vector_size(32)));

static inline mhc_v8 mhc_ld(const float *p)
{
    mhc_v8 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void mhc_st(float *p, mhc_v8 v)
{
    memcpy(p, &v, sizeof v);
}

static inline mhc_v8 mhc_splat(float f)
{
    return (mhc_v8){f, f, f, f, f, f, f, f};
}

/* Horizontal sum in a fixed order: ((0+1)+(2+3)) + ((4+5)+(6+7)). */
static inline float mhc_hsum(mhc_v8 v)
{
    return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

/* Hot loops get an AVX2 clone next to the baseline one (no -march=native in the build).  Both
 * compute the same bits: explicit vector ops, fixed order, no contraction into FMA. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MHC_HOT __attribute__((target_clones("avx2", "default")))
#else
#define MHC_HOT
#endif

#endif /* MHC_COMMON_H */
