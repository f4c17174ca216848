/*
 * op_cat.c - aclnnCat(const aclTensorList *tensors, int64_t dim, out) (the real ops-math
 * signature; header aclnn_cat.h): torch.cat.
 *
 * tensors: at least one; every tensor has out's number of dims and out's dims except along
 * dim, whose sizes add up to out's; 1-D empty tensors (shape [0]) are skipped, as torch does.
 * dtypes: the 12 math dtypes; the promoted type of all tensors must cast to out's dtype, and
 * each element is converted straight from its tensor's dtype to out's (round to nearest even,
 * integers wrapped).  dim in [-ndim, ndim).  Inputs are read through their views' strides.
 * An empty out succeeds and writes nothing.
 */
#include "aclnn_cat.h"

#include <stdio.h>
#include <stdlib.h>

#include "nb_scratch_pool.h"
#include "op_cat.h"

#define OP "aclnnCat"

typedef struct {
    int32_t dim;
    int32_t side; /* side-stream: the last member is copied on the internal stream */
} cat_attrs;

static int cat_kernel(aclsim_kernel_ctx *k)
{
    const cat_attrs *a = k->attrs;
    const aclsim_tensor_desc *o = &k->outputs[0];
    const int64_t oes = aclsim_dtype_size(o->dtype);
    int64_t cst[OP_MAX_DIMS];
    op_contiguous_strides(o->dims, o->ndim, cst);
    aclsim_stage *st;
    uint8_t *dst = aclsim_stage_begin(o, &st);
    if (!dst)
        return aclsim_kernel_fail(k, ACL_ERROR_RT_INTERNAL_ERROR, "kernel %s: out of host memory",
                                  k->op);
    const int n = k->n_inputs;
    const aclsim_tensor_desc *last = &k->inputs[n - 1];
    const int side = a->side && n > 1 && last->ndim == o->ndim && aclsim_numel(last) > 0;
    int64_t along = 0;
    for (int i = 0; i < n - side; i++) {
        const aclsim_tensor_desc *x = &k->inputs[i];
        if (x->ndim != o->ndim)
            continue; /* a skipped 1-D empty tensor */
        op_iter it;
        op_iter_init(&it, x->ndim, x->dims);
        op_iter_add(&it, x);
        op_iter_add_strided(&it, dst + along * cst[a->dim] * oes, cst, oes);
        for (int64_t j = aclsim_numel(x); j > 0; j--) {
            cat_convert(op_iter_ptr(&it, 0), x->dtype, (uint8_t *)op_iter_ptr(&it, 1), o->dtype);
            op_iter_next(&it);
        }
        along += x->dims[a->dim];
    }
    aclsim_stage_commit(st, o);
    return side ? cat_side_post(k, last, o, a->dim, along) : 0; /* op_cat_side.c */
}

static int skipped(const aclsim_tensor_desc *d)
{
    return d->ndim == 1 && d->dims[0] == 0;
}

/* Checks one member against out; accumulates its size along dim. */
static int cat_member(const char *api, uint64_t i, const aclsim_tensor_desc *d,
                      const aclsim_tensor_desc *o, int dim, int64_t *along)
{
    char b1[256], b2[256];
    if (!op_dtype_is_math(d->dtype))
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: tensors[%llu] dtype %s is not supported",
                                api, (unsigned long long)i, aclsim_dtype_name(d->dtype));
    int ok = d->ndim == o->ndim;
    for (int j = 0; ok && j < d->ndim; j++)
        ok = j == dim || d->dims[j] == o->dims[j];
    if (!ok)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: tensors[%llu] shape %s does not match out shape %s except "
                                "along dim %d",
                                api, (unsigned long long)i,
                                aclsim_shape_str(d->dims, d->ndim, b1, sizeof b1),
                                aclsim_shape_str(o->dims, o->ndim, b2, sizeof b2), dim);
    *along += d->dims[dim];
    return 0;
}

static int cat_validate(const char *api, const aclsim_tensor_desc *ds, uint64_t n, int64_t dim,
                        const aclsim_tensor_desc *o, cat_attrs *a)
{
    if (n == 0)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: tensors is an empty list", api);
    if (!op_dtype_is_math(o->dtype) || o->ndim > OP_MAX_DIMS || o->ndim < 1)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: out (dtype %s, %d dims) must be a math dtype with 1 to %d dims",
                                api, aclsim_dtype_name(o->dtype), (int)o->ndim, OP_MAX_DIMS);
    int d = op_wrap_dim(dim, o->ndim);
    if (d < 0)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: dim %lld is out of range for %d dims",
                                api, (long long)dim, (int)o->ndim);
    int64_t along = 0;
    int32_t promoted = -1;
    for (uint64_t i = 0; i < n; i++) {
        if (skipped(&ds[i]) && o->ndim != 1)
            continue;
        int rc = cat_member(api, i, &ds[i], o, d, &along);
        if (rc)
            return rc;
        promoted = promoted < 0 ? ds[i].dtype : op_promote(promoted, ds[i].dtype);
    }
    if (promoted >= 0 && !op_can_cast(promoted, o->dtype))
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: the promoted type %s cannot be cast to out dtype %s", api,
                                aclsim_dtype_name(promoted), aclsim_dtype_name(o->dtype));
    if (along != o->dims[d])
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: the tensors add up to %lld along dim %d but out has %lld", api,
                                (long long)along, d, (long long)o->dims[d]);
    a->dim = d;
    return 0;
}

ACLSIM_API aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList *tensors, int64_t dim,
                                                aclTensor *out, uint64_t *workspaceSize,
                                                aclOpExecutor **executor)
{
    const char *api = OP "GetWorkspaceSize";
    const void *ptrs[] = {tensors, out, workspaceSize, executor};
    const char *names[] = {"tensors", "out", "workspaceSize", "executor"};
    for (int i = 0; i < 4; i++)
        if (!ptrs[i])
            return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api, names[i]);
    aclsim_tensor_desc *ds = NULL, dout;
    uint64_t n = 0;
    cat_attrs attrs = {0, aclsim_fault("side-stream")};
    int rc = aclsim_tensor_list_get(api, "tensors", tensors, &ds, &n);
    if (!rc)
        rc = aclsim_tensor_get(api, "out", out, &dout);
    if (!rc)
        rc = cat_validate(api, ds, n, dim, &dout, &attrs);
    aclsim_executor *ex = NULL;
    if (!rc) {
        ex = aclsim_executor_create(OP, aclsim_numel(&dout) ? cat_kernel : NULL, 0);
        rc = ex ? 0 : ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    /* The simulator models aclnnCat's host side as copying its member table to the device (an
     * L0 CopyToNpu), which CANN documents as not repeatable: marking its executor repeatable
     * fails with 561000 (corpus/ops/cat.toml declares it: not_repeatable). */
    if (!rc)
        aclsim_executor_set_unrepeatable(ex);
    for (uint64_t i = 0; !rc && i < n; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "tensors[%llu]", (unsigned long long)i);
        rc = aclsim_executor_add_input(ex, nm, &ds[i]);
    }
    if (!rc && !(rc = aclsim_executor_add_output(ex, "out", &dout)))
        rc = aclsim_executor_set_attrs(ex, &attrs, sizeof attrs);
    free(ds);
    if (rc) {
        aclsim_executor_discard(ex);
        return rc;
    }
    return aclsim_executor_publish(ex, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnCat(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    return aclsim_executor_run(OP, workspace, workspaceSize, executor, stream);
}
