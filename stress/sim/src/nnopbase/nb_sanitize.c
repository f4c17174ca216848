/*
 * nb_sanitize.c - the sanitizer's view of tensors (libnnopbase): a tensor view as contiguous
 * byte runs, checked or declared through libascendcl's sanitizer (runtime/rt_sanitize*.c).
 */
#include "aclsim_dtype.h"
#include "nb_private.h"

/* ---- tensor views as byte runs -------------------------------------------------------------- */

typedef void (*run_fn)(const void *p, uint64_t n, void *arg);

/* Call fn for each contiguous byte run of d's view (innermost unit-stride dim coalesced). */
static void view_runs(const aclsim_tensor_desc *d, run_fn fn, void *arg)
{
    int64_t numel = aclsim_numel(d);
    int64_t es = aclsim_dtype_size(d->dtype);
    uint64_t first, nbytes;
    if (numel <= 0 || !d->data || aclsim_extent(d, &first, &nbytes) != 0 || !nbytes)
        return;
    if (es <= 0 || (uint64_t)(numel * es) == nbytes || d->ndim == 0) {
        fn((const uint8_t *)d->data + first, nbytes, arg); /* contiguous (or sub-byte) */
        return;
    }
    int nd = d->ndim, inner = d->strides[nd - 1] == 1;
    int64_t run = inner ? d->dims[nd - 1] : 1;
    int outer_nd = inner ? nd - 1 : nd;
    int64_t idx[ACLSIM_MAX_DIMS] = {0}, off = d->offset;
    for (int64_t done = 0; done < numel; done += run) {
        fn((const uint8_t *)d->data + off * es, (uint64_t)(run * es), arg);
        for (int k = outer_nd - 1; k >= 0; k--) {
            off += d->strides[k];
            if (++idx[k] < d->dims[k])
                break;
            off -= d->strides[k] * d->dims[k];
            idx[k] = 0;
        }
    }
}

typedef struct {
    int mode;
    const char *file;
    int line;
    uint64_t call;
    const char *op, *name;
} run_args;

static void access_run(const void *p, uint64_t n, void *arg)
{
    const run_args *a = arg;
    aclsim_san_access(p, n, a->mode, a->file, a->line);
}

static void output_run(const void *p, uint64_t n, void *arg)
{
    const run_args *a = arg;
    aclsim_san_output_range(p, n, a->call, a->op, a->name);
}

void aclsim_san_tensor(const aclsim_tensor_desc *d, int mode, const char *file, int line)
{
    run_args a = {.mode = mode, .file = file, .line = line};
    view_runs(d, access_run, &a);
}

/* 1 if the byte extents of a and b intersect. */
static int overlap(const aclsim_tensor_desc *a, const aclsim_tensor_desc *b)
{
    uint64_t fa, na, fb, nb;
    if (!a->data || !b->data || aclsim_extent(a, &fa, &na) || aclsim_extent(b, &fb, &nb) || !na ||
        !nb)
        return 0;
    uintptr_t la = (uintptr_t)a->data + fa, lb = (uintptr_t)b->data + fb;
    return la < lb + nb && lb < la + na;
}

void aclsim_san_output(const aclsim_tensor_desc *d, const aclsim_tensor_desc *inputs, int n_inputs,
                       uint64_t call, const char *op, const char *name)
{
    if (!(aclsim_sanitize_on & ACLSIM_SAN_INITCHECK))
        return;
    for (int i = 0; i < n_inputs; i++)
        if (overlap(d, &inputs[i]))
            return;
    run_args a = {.call = call, .op = aclsim_san_intern(op), .name = name};
    view_runs(d, output_run, &a);
}
