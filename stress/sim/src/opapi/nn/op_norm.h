/*
 * op_norm.h - what aclnnRmsNorm and aclnnLayerNorm share (libopapi, internal, header-only):
 * a tensor split into A leading "rows" and R trailing normalised elements, the shape rule of
 * their per-row statistics outputs, and the row loop.
 */
#ifndef ACLSIM_OP_NORM_H
#define ACLSIM_OP_NORM_H

#include <stdio.h>
#include <stdlib.h>

#include "op_elem.h"

static inline int op_norm_dtype(int32_t dt)
{
    return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16;
}

/* 0 if the g trailing dims of x equal dims[0..g) (1 <= g <= x->ndim), else 161002 + message. */
static inline int op_norm_trailing(const char *api, const char *what, const aclsim_tensor_desc *x,
                                   const int64_t *dims, int g)
{
    char b1[256], b2[256];
    int ok = g >= 1 && g <= x->ndim;
    for (int i = 0; ok && i < g; i++)
        ok = dims[i] == x->dims[x->ndim - g + i];
    if (!ok)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: %s %s must be 1 to %d trailing dims of the input shape %s", api,
                                what, aclsim_shape_str(dims, g, b1, sizeof b1), (int)x->ndim,
                                aclsim_shape_str(x->dims, x->ndim, b2, sizeof b2));
    return 0;
}

/* A statistics output (rstd, mean) has x's leading nd-g dims, followed by g ones or nothing. */
static inline int op_norm_stat_shape(const char *api, const char *name, const aclsim_tensor_desc *x,
                                     int g, const aclsim_tensor_desc *s)
{
    int lead = x->ndim - g, ok = s->ndim == x->ndim || s->ndim == lead;
    for (int i = 0; ok && i < s->ndim; i++)
        ok = s->dims[i] == (i < lead ? x->dims[i] : 1);
    if (!ok) {
        char b1[256], b2[256];
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: %s shape %s must be the input's leading dims followed by %d "
                                "ones (input %s)",
                                api, name, aclsim_shape_str(s->dims, s->ndim, b1, sizeof b1), g,
                                aclsim_shape_str(x->dims, x->ndim, b2, sizeof b2));
    }
    if (!op_is_floating(s->dtype))
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %s dtype %s is not floating", api,
                                name, aclsim_dtype_name(s->dtype));
    return 0;
}

/* keep[] masks of x's leading (rows) and trailing (normalised) dims. */
static inline void op_norm_masks(int nd, int g, int *lead, int *trail)
{
    for (int i = 0; i < nd; i++) {
        lead[i] = i < nd - g;
        trail[i] = !lead[i];
    }
}

#endif /* ACLSIM_OP_NORM_H */
