/*
 * op_softmax.h - what aclnnSoftmax and aclnnSoftmaxBackward share (libopapi, internal,
 * header-only): the dim argument checked against the tensor's rank, and the loop over the
 * rows along that dim.
 */
#ifndef ACLSIM_OP_SOFTMAX_H
#define ACLSIM_OP_SOFTMAX_H

#include "op_elem.h"

/* dim wrapped into [0, nd) in *d, or 161002 naming what (the tensor dim indexes). */
static inline int op_softmax_dim(const char *api, const char *what, int64_t dim, int nd, int *d)
{
    *d = op_wrap_dim(dim, nd);
    if (*d < 0)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: dim %lld is out of range for a %d-d %s (expected [%d, %d])",
                                api, (long long)dim, nd, what, nd ? -nd : -1, nd ? nd - 1 : 0);
    return ACLNN_SUCCESS;
}

/* An iterator over every row of t along dim: dim collapsed to 1, every other dim kept. */
static inline void op_softmax_rows(op_iter *it, const aclsim_tensor_desc *t, int dim)
{
    int keep[OP_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++)
        keep[i] = i != dim;
    op_iter_over(it, t, keep, NULL);
}

#endif
