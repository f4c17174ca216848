/*
 * mhc_checks.h - the phase-1 validation shared by the mHC forward and backward, implemented in
 * op_mhc_checks.c (hidden symbols of libopapi).  Every check returns 0, or the aclnn status with
 * the message set: 161001 (ACLNN_ERR_PARAM_NULLPTR) for a NULL handle, 161002
 * (ACLNN_ERR_PARAM_INVALID) for a constraint, worded "<api>: <arg>: <constraint>, got <value>".
 */
#ifndef MHC_CHECKS_H
#define MHC_CHECKS_H

#include "mhc_common.h"

/* ---- one tensor ------------------------------------------------------------------------------ */
MHC_HIDDEN int mhc_check_dtype(const char *api, const char *arg, const aclsim_tensor_desc *d,
                               int allow_half /* 1: BF16 or FLOAT16, 0: FLOAT */);
MHC_HIDDEN int mhc_check_rank(const char *api, const char *arg, const aclsim_tensor_desc *d,
                              int ndim, const char *layout /* e.g. "[B, S, N, C]" */);
/* Exact view shape; layout names the dims in the message ("[B, S, C]"). */
MHC_HIDDEN int mhc_check_shape(const char *api, const char *arg, const aclsim_tensor_desc *d,
                               const int64_t *want, int ndim, const char *layout);
/* N (dim 2) == 4, 0 < C < 100000, C % 128 == 0 for x (B, S, N, C). */
MHC_HIDDEN int mhc_check_x_dims(const char *api, const aclsim_tensor_desc *x);
/* ND-like formats only (no NC1HWC0 / FRACTAL_* private formats). */
MHC_HIDDEN int mhc_check_format(const char *api, const char *arg, const aclsim_tensor_desc *d);
/* Outputs are written in place: their views must be contiguous. */
MHC_HIDDEN int mhc_check_contiguous_output(const char *api, const char *arg,
                                           const aclsim_tensor_desc *d);

/* ---- a whole call ---------------------------------------------------------------------------- */
/* The shape one tensor must have; layout names its dims in the message ("[B, S, C]"). */
typedef struct {
    int64_t dims[5];
    int nd;
    const char *layout;
} mhc_shape_want;

/* NULL handles first (names[i]; i >= optional_from appends optional_note to the message), then
 * workspaceSize and executor, then the n descriptors into d. */
MHC_HIDDEN int mhc_read_handles(const char *api, const aclTensor *const *handles,
                                const char *const *names, int n, int optional_from,
                                const char *optional_note, const uint64_t *workspaceSize,
                                aclOpExecutor *const *executor, aclsim_tensor_desc *d);
/* dtypes in order: d[i] is BF16 or FLOAT16 where bit i of half_mask is set, else FLOAT; except
 * d[same_idx], whose dtype must equal d[same_as]'s. */
MHC_HIDDEN int mhc_check_dtypes(const char *api, const char *const *names,
                                const aclsim_tensor_desc *d, int n, uint32_t half_mask,
                                int same_idx, int same_as);
/* x: 4-D [B, S, N, C] (a 3-D TND x is named as Ascend 950's), then mhc_check_x_dims. */
MHC_HIDDEN int mhc_check_x(const char *api, const aclsim_tensor_desc *x);
/* Every d[i] but d[skip] has the shape want[i]; then every format is plain; then the outputs
 * d[first_output .. n) are contiguous. */
MHC_HIDDEN int mhc_check_layouts(const char *api, const char *const *names,
                                 const aclsim_tensor_desc *d, const mhc_shape_want *want, int n,
                                 int skip, int first_output);

#endif /* MHC_CHECKS_H */
