/*
 * nb_getters.c - the aclTensor getters of acl_meta.h (aclGetViewShape, ...).
 *
 * As in CANN: a NULL tensor or output pointer gives 161001 (ACLNN_ERR_PARAM_NULLPTR); shape and
 * stride getters return a new array the caller frees (CANN allocates it with new[]: C++ callers
 * use delete[], C callers free()).  A handle that is not a live tensor gives 161002 with a
 * message (real CANN would read freed memory).
 */
#include <stdlib.h>
#include <string.h>

#include "nb_private.h"

/* Acquire a live tensor for a getter; NULL after setting the error in *rc. */
static nb_tensor *acquire(const char *api, const aclTensor *tensor, const void *out, int *rc)
{
    if (!tensor || !out) {
        *rc = aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api,
                               tensor ? "an output pointer" : "tensor");
        return NULL;
    }
    nb_tensor *t = (nb_tensor *)aclsim_obj_acquire(tensor, TENSOR_KIND);
    if (!t)
        *rc = aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                               "%s: %p is not a live aclTensor (destroyed already?)", api,
                               (const void *)tensor);
    return t;
}

static aclnnStatus copy_dims(const char *api, const aclTensor *tensor, int which, int64_t **dims,
                             uint64_t *num)
{
    int rc = 0;
    nb_tensor *t = acquire(api, tensor, dims && num ? dims : NULL, &rc);
    if (!t)
        return rc;
    const int64_t *src = which == 0 ? t->view : which == 1 ? t->strides : t->storage;
    uint64_t n = which == 2 ? t->nstorage : t->nview;
    int64_t *copy = malloc((n ? n : 1) * sizeof *copy);
    if (!copy) {
        rc = aclsim_set_error(ACLNN_ERR_INNER_NULLPTR, "%s: out of host memory", api);
    } else {
        if (n)
            memcpy(copy, src, n * sizeof *copy);
        *dims = copy;
        *num = n;
    }
    aclsim_obj_release(&t->obj);
    return rc;
}

ACLSIM_API aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims,
                                       uint64_t *viewDimsNum)
{
    return copy_dims("aclGetViewShape", tensor, 0, viewDims, viewDimsNum);
}

ACLSIM_API aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue,
                                         uint64_t *stridesNum)
{
    return copy_dims("aclGetViewStrides", tensor, 1, stridesValue, stridesNum);
}

ACLSIM_API aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims,
                                          uint64_t *storageDimsNum)
{
    return copy_dims("aclGetStorageShape", tensor, 2, storageDims, storageDimsNum);
}

enum { VIEW_OFFSET, FORMAT, DATA_TYPE };

/* One of a tensor's scalar properties (which) into *out, typed as the getter's output. */
static aclnnStatus get_scalar(const char *api, const aclTensor *tensor, int which, void *out)
{
    int rc = 0;
    nb_tensor *t = acquire(api, tensor, out, &rc);
    if (!t)
        return rc;
    if (which == VIEW_OFFSET)
        *(int64_t *)out = t->d.offset;
    else if (which == FORMAT)
        *(aclFormat *)out = (aclFormat)t->d.format;
    else
        *(aclDataType *)out = (aclDataType)t->d.dtype;
    aclsim_obj_release(&t->obj);
    return rc;
}

ACLSIM_API aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset)
{
    return get_scalar("aclGetViewOffset", tensor, VIEW_OFFSET, offset);
}

ACLSIM_API aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format)
{
    return get_scalar("aclGetFormat", tensor, FORMAT, format);
}

ACLSIM_API aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType)
{
    return get_scalar("aclGetDataType", tensor, DATA_TYPE, dataType);
}
