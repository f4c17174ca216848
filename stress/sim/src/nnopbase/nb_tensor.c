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
    /* lowest / highest element index: offset + the negative / positive (dim - 1) * stride terms */
    int64_t lo = d->offset, hi = d->offset;
    for (int i = 0; i < d->ndim; i++) {
        int64_t t;
        if (__builtin_mul_overflow(d->dims[i] - 1, d->strides[i], &t) ||
            __builtin_add_overflow(t < 0 ? lo : hi, t, t < 0 ? &lo : &hi))
            return -1;
    }
    int64_t first_bit, end_bit;
    if (lo < 0 || __builtin_mul_overflow(lo, (int64_t)bits, &first_bit) ||
        __builtin_mul_overflow(hi + 1, (int64_t)bits, &end_bit))
        return -1; /* a view reaching before the address cannot be checked: refused at launch */
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
    free(t->view);
    free(t);
}

/* Contiguous strides, like torch: stride[i] = prod(max(dims[j], 1)) for j > i. */
static void contiguous_strides(const int64_t *dims, uint64_t n, int64_t *strides)
{
    int64_t s = 1;
    for (uint64_t k = n; k-- > 0;) {
        strides[k] = s;
        if (__builtin_mul_overflow(s, dims[k] > 1 ? dims[k] : 1, &s))
            s = INT64_MAX;
    }
}

/* The full view dims / strides / storage dims (any count) in one block: t->view holds
 * [view | strides | storage]; the descriptor gets a copy when they fit ACLSIM_MAX_DIMS. */
static int tensor_fill(nb_tensor *t, const int64_t *viewDims, uint64_t nview,
                       const int64_t *stride, const int64_t *storageDims, uint64_t nstorage)
{
    size_t count = (size_t)(2 * nview + nstorage);
    if (count && !(t->view = malloc(count * sizeof(int64_t))))
        return -1;
    t->nview = nview;
    t->nstorage = nstorage;
    t->strides = t->view + nview;
    t->storage = t->view + 2 * nview;
    if (nview) {
        memcpy(t->view, viewDims, (size_t)nview * sizeof(int64_t));
        if (stride)
            memcpy(t->strides, stride, (size_t)nview * sizeof(int64_t));
        else
            contiguous_strides(viewDims, nview, t->strides);
    }
    if (nstorage)
        memcpy(t->storage, storageDims, (size_t)nstorage * sizeof(int64_t));
    aclsim_tensor_desc *d = &t->d;
    d->ndim = nview <= ACLSIM_MAX_DIMS ? (int32_t)nview : -1; /* -1: refused by tensor_get */
    d->storage_ndim = nstorage <= ACLSIM_MAX_DIMS ? (int32_t)nstorage : -1;
    for (int i = 0; i < d->ndim; i++) {
        d->dims[i] = t->view[i];
        d->strides[i] = t->strides[i];
    }
    for (int i = 0; i < d->storage_ndim; i++)
        d->storage_dims[i] = t->storage[i];
    return 0;
}

/* As in CANN (nnopbase acl_op_api.cpp): NULL only for a NULL dims pointer with a non-zero count
 * (or out of memory).  dtype, format, the signs of dims / strides / offset and the dim count are
 * not checked here; operators check what they use (aclsim_tensor_get, phase 1). */
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
    nb_tensor *t = calloc(1, sizeof *t);
    if (!t || viewDimsNum > (1u << 20) || storageDimsNum > (1u << 20) ||
        tensor_fill(t, viewDims, viewDimsNum, stride, storageDims, storageDimsNum) != 0) {
        free(t);
        aclsim_set_error(ACLNN_ERR_INNER, "%s: out of host memory", api);
        return NULL;
    }
    t->d.dtype = (int32_t)dataType;
    t->d.format = (int32_t)format;
    t->d.offset = offset;
    t->d.data = tensorData;
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
    int rc = 0;
    if (out->ndim < 0 || out->storage_ndim < 0)
        rc = aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                              "%s: %s has %llu view / %llu storage dims; operators accept at most "
                              "%d", api, arg, (unsigned long long)t->nview,
                              (unsigned long long)t->nstorage, ACLSIM_MAX_DIMS);
    for (int i = 0; !rc && i < out->ndim; i++)
        if (out->dims[i] < 0)
            rc = aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                  "%s: %s: dim %d is negative (%lld)", api, arg, i,
                                  (long long)out->dims[i]);
    out->handle = tensor;
    aclsim_obj_release(&t->obj);
    return rc;
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
