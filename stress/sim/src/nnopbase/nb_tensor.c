/*
 * nb_tensor.c - aclTensor: creation/destruction and descriptor helpers.
 *
 * A tensor is a descriptor (dtype, format, view dims, strides and offset in elements, storage
 * dims, device address); it never owns memory.  The address is not checked here: 0-element
 * tensors may have NULL data, and every address is validated when a kernel runs.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclsim_dtype.h"
#include "nb_private.h"

typedef struct {
    aclsim_obj obj;
    pthread_mutex_t mu; /* guards d.data (aclSetInput/OutputTensorAddr) */
    aclsim_tensor_desc d;
} nb_tensor;

#define TENSOR_KIND ACLSIM_KIND_BIT(ACLSIM_KIND_TENSOR)

static int format_known(int32_t f)
{
    switch (f) {
    case ACL_FORMAT_NCHW:
    case ACL_FORMAT_NHWC:
    case ACL_FORMAT_ND:
    case ACL_FORMAT_NC1HWC0:
    case ACL_FORMAT_FRACTAL_Z:
    case ACL_FORMAT_NC1HWC0_C04:
    case ACL_FORMAT_HWCN:
    case ACL_FORMAT_NDHWC:
    case ACL_FORMAT_FRACTAL_NZ:
    case ACL_FORMAT_NCDHW:
    case ACL_FORMAT_NDC1HWC0:
    case ACL_FRACTAL_Z_3D:
    case ACL_FORMAT_NC:
    case ACL_FORMAT_NCL:
    case ACL_FORMAT_FRACTAL_NZ_C0_16:
    case ACL_FORMAT_FRACTAL_NZ_C0_32:
    case ACL_FORMAT_FRACTAL_NZ_C0_2:
    case ACL_FORMAT_FRACTAL_NZ_C0_4:
    case ACL_FORMAT_FRACTAL_NZ_C0_8:
        return 1;
    default:
        return 0;
    }
}

int64_t aclsim_numel(const aclsim_tensor_desc *d)
{
    int64_t n = 1;
    for (int i = 0; i < d->ndim; i++) {
        if (d->dims[i] == 0)
            return 0;
    }
    for (int i = 0; i < d->ndim; i++) {
        if (__builtin_mul_overflow(n, d->dims[i], &n))
            return -1;
    }
    return n;
}

int aclsim_extent(const aclsim_tensor_desc *d, uint64_t *first, uint64_t *nbytes)
{
    int bits = aclsim_dtype_bits(d->dtype);
    int64_t numel = aclsim_numel(d);
    if (bits == 0 || numel < 0)
        return -1;
    if (numel == 0) {
        *first = 0;
        *nbytes = 0;
        return 0;
    }
    /* last element index = offset + sum((dim - 1) * stride) */
    int64_t last = d->offset;
    for (int i = 0; i < d->ndim; i++) {
        int64_t t;
        if (__builtin_mul_overflow(d->dims[i] - 1, d->strides[i], &t) ||
            __builtin_add_overflow(last, t, &last))
            return -1;
    }
    int64_t first_bit, end_bit;
    if (__builtin_mul_overflow(d->offset, (int64_t)bits, &first_bit) ||
        __builtin_mul_overflow(last + 1, (int64_t)bits, &end_bit))
        return -1;
    *first = (uint64_t)first_bit / 8;
    *nbytes = ((uint64_t)end_bit + 7) / 8 - *first;
    return 0;
}

int aclsim_broadcast_shape(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out,
                           int *nout)
{
    int n = na > nb ? na : nb;
    if (n > ACLSIM_MAX_DIMS)
        return -1;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - na), ib = i - (n - nb);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (da == db || db == 1)
            out[i] = da;
        else if (da == 1)
            out[i] = db;
        else
            return -1;
    }
    *nout = n;
    return 0;
}

const char *aclsim_shape_str(const int64_t *dims, int n, char *buf, size_t cap)
{
    size_t used = 0;
    if (cap == 0)
        return buf;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%lld", i ? ", " : "", (long long)dims[i]);
    if (used < cap)
        snprintf(buf + used, cap - used, "]");
    return buf;
}

static void tensor_free(aclsim_obj *o)
{
    nb_tensor *t = (nb_tensor *)o;
    pthread_mutex_destroy(&t->mu);
    free(t);
}

ACLSIM_API aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum,
                                      aclDataType dataType, const int64_t *stride, int64_t offset,
                                      aclFormat format, const int64_t *storageDims,
                                      uint64_t storageDimsNum, void *tensorData)
{
    const char *api = "aclCreateTensor";
    if (!viewDims && viewDimsNum > 0) {
        aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: viewDims is NULL but viewDimsNum is %llu",
                         api, (unsigned long long)viewDimsNum);
        return NULL;
    }
    if (!storageDims && storageDimsNum > 0) {
        aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR,
                         "%s: storageDims is NULL but storageDimsNum is %llu", api,
                         (unsigned long long)storageDimsNum);
        return NULL;
    }
    if (viewDimsNum > ACLSIM_MAX_DIMS || storageDimsNum > ACLSIM_MAX_DIMS) {
        int view = viewDimsNum > ACLSIM_MAX_DIMS;
        aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %s must be <= %d (got %llu)", api,
                         view ? "viewDimsNum" : "storageDimsNum", ACLSIM_MAX_DIMS,
                         (unsigned long long)(view ? viewDimsNum : storageDimsNum));
        return NULL;
    }
    if (aclsim_dtype_bits((int32_t)dataType) == 0) {
        aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: dataType %d (%s) is not supported", api,
                         (int)dataType, aclsim_dtype_name((int32_t)dataType));
        return NULL;
    }
    if (!format_known((int32_t)format)) {
        aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: format %d is not a known aclFormat", api,
                         (int)format);
        return NULL;
    }
    if (offset < 0) {
        aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: offset must be >= 0 (got %lld)", api,
                         (long long)offset);
        return NULL;
    }
    nb_tensor *t = calloc(1, sizeof *t);
    if (!t) {
        aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
        return NULL;
    }
    aclsim_tensor_desc *d = &t->d;
    d->dtype = (int32_t)dataType;
    d->format = (int32_t)format;
    d->ndim = (int32_t)viewDimsNum;
    d->storage_ndim = (int32_t)storageDimsNum;
    d->offset = offset;
    d->data = tensorData;
    for (int i = 0; i < d->ndim; i++) {
        if (viewDims[i] < 0 || (stride && stride[i] < 0)) {
            int bad_dim = viewDims[i] < 0;
            aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %s[%d] must be >= 0 (got %lld)", api,
                             bad_dim ? "viewDims" : "stride", i,
                             (long long)(bad_dim ? viewDims[i] : stride[i]));
            free(t);
            return NULL;
        }
        d->dims[i] = viewDims[i];
    }
    if (stride) {
        memcpy(d->strides, stride, (size_t)d->ndim * sizeof *stride);
    } else { /* contiguous, like torch: stride[i] = prod(max(dims[j], 1)) for j > i */
        int64_t s = 1;
        for (int i = d->ndim - 1; i >= 0; i--) {
            d->strides[i] = s;
            if (__builtin_mul_overflow(s, d->dims[i] > 1 ? d->dims[i] : 1, &s))
                s = INT64_MAX;
        }
    }
    for (int i = 0; i < d->storage_ndim; i++) {
        if (storageDims[i] < 0) {
            aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: storageDims[%d] must be >= 0 (got %lld)",
                             api, i, (long long)storageDims[i]);
            free(t);
            return NULL;
        }
        d->storage_dims[i] = storageDims[i];
    }
    uint64_t first, nbytes;
    if (aclsim_extent(d, &first, &nbytes) != 0) {
        aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                         "%s: the view (dims, strides, offset) overflows 64-bit byte offsets", api);
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    aclsim_obj_init(&t->obj, ACLSIM_KIND_TENSOR, tensor_free);
    void *h = aclsim_obj_register(&t->obj);
    if (!h) {
        aclsim_obj_release(&t->obj);
        aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
    }
    return (aclTensor *)h;
}

ACLSIM_API aclnnStatus aclDestroyTensor(const aclTensor *tensor)
{
    if (!tensor)
        return ACLNN_SUCCESS;
    aclsim_obj *o = aclsim_obj_unregister(tensor, TENSOR_KIND);
    if (!o)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "aclDestroyTensor: %p is not a live aclTensor (destroyed already?)",
                                (const void *)tensor);
    aclsim_obj_release(o);
    return ACLNN_SUCCESS;
}

int aclsim_tensor_get(const char *api, const char *arg, const aclTensor *tensor,
                      aclsim_tensor_desc *out)
{
    if (!tensor)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", api, arg);
    nb_tensor *t = (nb_tensor *)aclsim_obj_acquire(tensor, TENSOR_KIND);
    if (!t)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: %s (%p) is not a live aclTensor (destroyed already?)", api, arg,
                                (const void *)tensor);
    pthread_mutex_lock(&t->mu);
    *out = t->d;
    pthread_mutex_unlock(&t->mu);
    aclsim_obj_release(&t->obj);
    return 0;
}

int nb_tensor_set_data(const aclTensor *tensor, void *addr)
{
    nb_tensor *t = (nb_tensor *)aclsim_obj_acquire(tensor, TENSOR_KIND);
    if (!t)
        return -1;
    pthread_mutex_lock(&t->mu);
    t->d.data = addr;
    pthread_mutex_unlock(&t->mu);
    aclsim_obj_release(&t->obj);
    return 0;
}
