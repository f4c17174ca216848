/*
 * op_mhc_checks.c - the phase-1 validation shared by the mHC forward and backward
 * (mhc_checks.h): NULL handles, dtypes, x's layout, every tensor's shape, formats and output
 * contiguity, each failure one "<api>: <arg>: <constraint>, got <value>" message (161001 for a
 * NULL handle, 161002 otherwise).  Hidden symbols of libopapi.
 */
#include <stdio.h>

#include "mhc_checks.h"

/* ---- one tensor ---------------------------------------------------------------------------------- */

int mhc_check_dtype(const char *api, const char *arg, const aclsim_tensor_desc *d, int allow_half)
{
    if (allow_half ? (d->dtype == ACL_BF16 || d->dtype == ACL_FLOAT16) : d->dtype == ACL_FLOAT)
        return 0;
    return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %s: dtype must be %s, got %s", api, arg,
                            allow_half ? "BF16 or FLOAT16" : "FLOAT",
                            aclsim_dtype_name(d->dtype));
}

int mhc_check_rank(const char *api, const char *arg, const aclsim_tensor_desc *d, int ndim,
                   const char *layout)
{
    if (d->ndim == ndim)
        return 0;
    char b[256];
    return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %s: must be %d-D %s, got %d-D shape %s",
                            api, arg, ndim, layout, (int)d->ndim,
                            aclsim_shape_str(d->dims, d->ndim, b, sizeof b));
}

int mhc_check_shape(const char *api, const char *arg, const aclsim_tensor_desc *d,
                    const int64_t *want, int ndim, const char *layout)
{
    int same = d->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = d->dims[i] == want[i];
    if (same)
        return 0;
    char b1[256], b2[256];
    return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: %s: shape must be %s = %s, got %s", api,
                            arg, layout, aclsim_shape_str(want, ndim, b1, sizeof b1),
                            aclsim_shape_str(d->dims, d->ndim, b2, sizeof b2));
}

int mhc_check_x_dims(const char *api, const aclsim_tensor_desc *x)
{
    int64_t n = x->dims[2], c = x->dims[3];
    if (n != MHC_N)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID, "%s: x: N (dim 2) must be %d, got %lld",
                                api, MHC_N, (long long)n);
    if (c <= 0 || c >= MHC_C_LIMIT)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: x: C (dim 3) must be > 0 and < %d, got %lld", api, MHC_C_LIMIT,
                                (long long)c);
    if (c % MHC_C_ALIGN != 0)
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: x: C (dim 3) must be a multiple of %d, got %lld", api,
                                MHC_C_ALIGN, (long long)c);
    return 0;
}

static const char *format_name(int32_t f)
{
    switch (f) {
    case ACL_FORMAT_NC1HWC0: return "NC1HWC0";
    case ACL_FORMAT_FRACTAL_Z: return "FRACTAL_Z";
    case ACL_FORMAT_NC1HWC0_C04: return "NC1HWC0_C04";
    case ACL_FORMAT_FRACTAL_NZ: return "FRACTAL_NZ";
    case ACL_FORMAT_NDC1HWC0: return "NDC1HWC0";
    case ACL_FRACTAL_Z_3D: return "FRACTAL_Z_3D";
    case ACL_FORMAT_FRACTAL_NZ_C0_16: return "FRACTAL_NZ_C0_16";
    case ACL_FORMAT_FRACTAL_NZ_C0_32: return "FRACTAL_NZ_C0_32";
    case ACL_FORMAT_FRACTAL_NZ_C0_2: return "FRACTAL_NZ_C0_2";
    case ACL_FORMAT_FRACTAL_NZ_C0_4: return "FRACTAL_NZ_C0_4";
    case ACL_FORMAT_FRACTAL_NZ_C0_8: return "FRACTAL_NZ_C0_8";
    default: return NULL; /* ND-like: ND, NCHW, NHWC, HWCN, NDHWC, NCDHW, NC, NCL */
    }
}

int mhc_check_format(const char *api, const char *arg, const aclsim_tensor_desc *d)
{
    const char *name = format_name(d->format);
    if (!name)
        return 0;
    return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                            "%s: %s: format must be ND (a plain, non-private format), got %s", api,
                            arg, name);
}

int mhc_check_contiguous_output(const char *api, const char *arg, const aclsim_tensor_desc *d)
{
    if (mhc_is_contiguous(d))
        return 0;
    char b1[256], b2[256];
    return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                            "%s: %s: outputs are written in place and must be contiguous, got "
                            "strides %s for shape %s",
                            api, arg, aclsim_shape_str(d->strides, d->ndim, b1, sizeof b1),
                            aclsim_shape_str(d->dims, d->ndim, b2, sizeof b2));
}


/* ---- a whole call ---------------------------------------------------------------------------------- */

int mhc_read_handles(const char *api, const aclTensor *const *handles, const char *const *names,
                     int n, int optional_from, const char *optional_note,
                     const uint64_t *workspaceSize, aclOpExecutor *const *executor,
                     aclsim_tensor_desc *d)
{
    int rc;
    for (int i = 0; i < n; i++)
        if (!handles[i])
            return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL%s", api, names[i],
                                    i >= optional_from ? optional_note : "");
    if (!workspaceSize)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: workspaceSize is NULL", api);
    if (!executor)
        return aclsim_set_error(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is NULL", api);
    for (int i = 0; i < n; i++)
        if ((rc = aclsim_tensor_get(api, names[i], handles[i], &d[i])))
            return rc;
    return 0;
}

int mhc_check_dtypes(const char *api, const char *const *names, const aclsim_tensor_desc *d,
                     int n, uint32_t half_mask, int same_idx, int same_as)
{
    int rc;
    for (int i = 0; i < n; i++) {
        if (i == same_idx) {
            if (d[i].dtype != d[same_as].dtype)
                return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                        "%s: %s: dtype must equal %s's dtype %s, got %s", api,
                                        names[i], names[same_as],
                                        aclsim_dtype_name(d[same_as].dtype),
                                        aclsim_dtype_name(d[i].dtype));
            continue;
        }
        if ((rc = mhc_check_dtype(api, names[i], &d[i], (half_mask >> i) & 1u)))
            return rc;
    }
    return 0;
}

int mhc_check_x(const char *api, const aclsim_tensor_desc *x)
{
    if (x->ndim == 3) {
        char b[256];
        return aclsim_set_error(ACLNN_ERR_PARAM_INVALID,
                                "%s: x: must be 4-D [B, S, N, C] (3-D TND input is supported only "
                                "on Ascend 950), got shape %s",
                                api, aclsim_shape_str(x->dims, x->ndim, b, sizeof b));
    }
    int rc = mhc_check_rank(api, "x", x, 4, "[B, S, N, C]");
    return rc ? rc : mhc_check_x_dims(api, x);
}

int mhc_check_layouts(const char *api, const char *const *names, const aclsim_tensor_desc *d,
                      const mhc_shape_want *want, int n, int skip, int first_output)
{
    int rc;
    for (int i = 0; i < n; i++)
        if (i != skip &&
            (rc = mhc_check_shape(api, names[i], &d[i], want[i].dims, want[i].nd, want[i].layout)))
            return rc;
    for (int i = 0; i < n; i++)
        if ((rc = mhc_check_format(api, names[i], &d[i])))
            return rc;
    for (int i = first_output; i < n; i++)
        if ((rc = mhc_check_contiguous_output(api, names[i], &d[i])))
            return rc;
    return 0;
}
