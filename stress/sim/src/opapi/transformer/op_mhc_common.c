/*
 * op_mhc_common.c - helpers shared by the mHC operators (see mhc_common.h): the tiling, the
 * executor's tensors, input views, bf16/fp16 rows, the thread fan-out.  Their phase-1 checks are
 * in op_mhc_checks.c.  Compiled into libopapi; every symbol here is hidden.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mhc_common.h"
#include "mhc_view_stage.h"

/* ---- tiling ----------------------------------------------------------------------------------- */

static int online_cpus(void)
{
    static atomic_int cached;
    int n = atomic_load(&cached);
    if (n <= 0) {
        long v = sysconf(_SC_NPROCESSORS_ONLN);
        n = v < 1 ? 1 : v > 1024 ? 1024 : (int)v;
        atomic_store(&cached, n);
    }
    return n;
}

void mhc_tiling_blocks(mhc_tiling *t, uint64_t partial_floats_per_block)
{
    int64_t max_blocks = MHC_CORES;
    if (partial_floats_per_block > 0) {
        uint64_t fit = MHC_PARTIALS_CAP / (partial_floats_per_block * sizeof(float));
        if (fit < 1)
            fit = 1;
        if ((uint64_t)max_blocks > fit)
            max_blocks = (int64_t)fit;
    }
    t->threads = 1;
    if (t->M <= 0) {
        t->blocks = 0;
        t->tokens_per_block = 1;
        return;
    }
    /* at least one full tile of tokens per block: fewer, fuller blocks for small M */
    t->tokens_per_block = (t->M + max_blocks - 1) / max_blocks;
    if (t->tokens_per_block < MHC_TILE)
        t->tokens_per_block = MHC_TILE;
    t->blocks = (t->M + t->tokens_per_block - 1) / t->tokens_per_block;
    /* Threads only pay off beyond a few hundred microseconds of work. */
    int64_t threads = t->M * t->K >= (1 << 17) ? MHC_MAX_THREADS : 1;
    if (threads > online_cpus())
        threads = online_cpus();
    if (threads > t->blocks)
        threads = t->blocks;
    t->threads = (int32_t)threads;
}

void mhc_tiling_shape(mhc_tiling *t, const aclsim_tensor_desc *x)
{
    t->B = x->dims[0];
    t->S = x->dims[1];
    t->M = t->B * t->S;
    t->C = x->dims[3];
    t->K = MHC_N * t->C;
    t->N = MHC_N;
    t->D = MHC_D;
    t->x_dtype = x->dtype;
}

/* ---- executors ---------------------------------------------------------------------------------- */

int mhc_executor_add_tensors(aclsim_executor *ex, const char *const *names,
                             const aclsim_tensor_desc *d, int n_in, int n)
{
    int rc = 0;
    for (int i = 0; i < n_in && !rc; i++)
        rc = aclsim_executor_add_input(ex, names[i], &d[i]);
    for (int i = n_in; i < n && !rc; i++)
        rc = aclsim_executor_add_output(ex, names[i], &d[i]);
    return rc;
}

/* ---- views --------------------------------------------------------------------------------------- */

int mhc_is_contiguous(const aclsim_tensor_desc *d)
{
    if (aclsim_numel(d) == 0)
        return 1;
    int64_t expect = 1;
    for (int i = d->ndim - 1; i >= 0; i--) {
        if (d->dims[i] != 1 && d->strides[i] != expect)
            return 0;
        expect *= d->dims[i];
    }
    return 1;
}

/* ---- kernel helpers ---------------------------------------------------------------------------- */

int mhc_input_open(aclsim_kernel_ctx *k, int index, mhc_input *in)
{
    const aclsim_tensor_desc *d = &k->inputs[index];
    int es = aclsim_dtype_size(d->dtype);
    const uint8_t *base = (const uint8_t *)d->data;
    in->owned = NULL;
    if (aclsim_sanitize_on) /* the kernel's load of this input */
        aclsim_san_tensor(d, ACLSIM_SAN_R, __FILE__, __LINE__);
    if (mhc_is_contiguous(d)) {
        in->p = base + d->offset * es;
        return 0;
    }
    /* Gather the strided view into a contiguous host copy (like l0op::Contiguous); under the
     * fault `view-staging` into a staging slot shared by every call (op_mhc_view_stage.c). */
    int64_t numel = aclsim_numel(d);
    uint8_t *staged = mhc_view_stage(index, (uint64_t)numel * (uint64_t)es);
    uint8_t *dst = staged ? staged : malloc((size_t)numel * (size_t)es);
    if (!dst)
        return aclsim_kernel_fail(k, ACL_ERROR_RT_INTERNAL_ERROR,
                                  "kernel %s: out of host memory (contiguous copy of input %d)",
                                  k->op, index);
    int64_t idx[ACLSIM_MAX_DIMS] = {0};
    int64_t src = d->offset;
    for (int64_t n = 0; n < numel; n++) {
        memcpy(dst + n * es, base + src * es, (size_t)es);
        for (int i = d->ndim - 1; i >= 0; i--) {
            src += d->strides[i];
            if (++idx[i] < d->dims[i])
                break;
            src -= d->strides[i] * d->dims[i];
            idx[i] = 0;
        }
    }
    in->p = dst;
    in->owned = staged ? NULL : dst;
    return 0;
}

void mhc_input_close(mhc_input *in)
{
    free(in->owned);
    in->owned = NULL;
    in->p = NULL;
}

int mhc_inputs_open(aclsim_kernel_ctx *k, mhc_input *in, int n)
{
    int rc = 0;
    memset(in, 0, (size_t)n * sizeof *in);
    for (int i = 0; i < n && !rc; i++)
        rc = mhc_input_open(k, i, &in[i]);
    return rc;
}

void mhc_inputs_close(mhc_input *in, int n)
{
    for (int i = 0; i < n; i++)
        mhc_input_close(&in[i]);
}

float *mhc_thread_scratch(aclsim_kernel_ctx *k, int threads, size_t floats_per_thread, int *rc)
{
    float *p = malloc((size_t)threads * floats_per_thread * sizeof(float));
    if (!p)
        *rc = aclsim_kernel_fail(k, ACL_ERROR_RT_INTERNAL_ERROR, "kernel %s: out of host memory",
                                 k->op);
    return p;
}

void *mhc_output_ptr(const aclsim_kernel_ctx *k, int index)
{
    const aclsim_tensor_desc *d = &k->outputs[index];
    return (uint8_t *)d->data + d->offset * aclsim_dtype_size(d->dtype);
}

/* float16 -> float32 through a 64K-entry table (exact; built once).  A pure cache: its contents
 * follow from the format alone, so the copy in each library that links this object agrees with
 * the other (the one writable static allowed in operator objects, see aclsim_nnop.h). */
static float g_f16_table[65536];
static pthread_once_t g_f16_once = PTHREAD_ONCE_INIT;

static void f16_table_init(void)
{
    for (uint32_t h = 0; h < 65536; h++)
        g_f16_table[h] = aclsim_f16_to_f32((uint16_t)h);
}

MHC_HOT static void bf16_row_to_f32(const uint16_t *src, float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)src[i] << 16;
        memcpy(&dst[i], &u, sizeof u);
    }
}

void mhc_half_to_f32(const void *src, int32_t dtype, float *dst, int64_t n)
{
    const uint16_t *s = src;
    if (dtype == ACL_BF16) {
        bf16_row_to_f32(s, dst, n);
        return;
    }
    pthread_once(&g_f16_once, f16_table_init);
    for (int64_t i = 0; i < n; i++)
        dst[i] = g_f16_table[s[i]];
}

MHC_HOT static void f32_row_to_bf16(const float *src, uint16_t *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = aclsim_f32_to_bf16(src[i]);
}

void mhc_f32_to_half(const float *src, int32_t dtype, void *dst, int64_t n)
{
    uint16_t *d = dst;
    if (dtype == ACL_BF16) {
        f32_row_to_bf16(src, d, n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        d[i] = aclsim_f32_to_f16(src[i]);
}

/* ---- threads ------------------------------------------------------------------------------------ */

typedef struct {
    mhc_thread_fn fn;
    void *arg;
    int tid;
    const void *san; /* the launching thread's sanitizer context (NULL when off) */
} thread_start;

static void *thread_main(void *p)
{
    thread_start *s = p;
    if (s->san)
        aclsim_san_ctx_set(s->san); /* this thread's accesses belong to the same launch */
    s->fn(s->arg, s->tid);
    return NULL;
}

void mhc_parallel(int nthreads, mhc_thread_fn fn, void *arg)
{
    if (nthreads > MHC_MAX_THREADS)
        nthreads = MHC_MAX_THREADS;
    if (nthreads <= 1) {
        fn(arg, 0);
        return;
    }
    pthread_t th[MHC_MAX_THREADS];
    thread_start st[MHC_MAX_THREADS];
    int started[MHC_MAX_THREADS] = {0};
    for (int i = 1; i < nthreads; i++) {
        st[i] = (thread_start){fn, arg, i, aclsim_sanitize_on ? aclsim_san_ctx_get() : NULL};
        started[i] = pthread_create(&th[i], NULL, thread_main, &st[i]) == 0;
    }
    fn(arg, 0);
    for (int i = 1; i < nthreads; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            fn(arg, i); /* could not start it: do its share here */
    }
}
