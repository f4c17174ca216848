/*
 * mhc_fwd.h - what the two files of aclnnMhcPreSinkhorn share: phase 1
 * (op_mhc_pre_sinkhorn.c) fills fwd_attrs and names fwd_kernel (op_mhc_fwd_kernel.c) as the
 * executor's kernel.  Hidden symbols of libopapi.
 */
#ifndef MHC_FWD_H
#define MHC_FWD_H

#include "mhc_common.h"

/* The executor's inputs and outputs, in the order phase 1 adds them. */
enum { IN_X, IN_PHI, IN_ALPHA, IN_BIAS };
enum { OUT_HIN, OUT_HPOST, OUT_HRES, OUT_HPRE, OUT_HCBN, OUT_INVRMS, OUT_SUM, OUT_NORM, N_OUT };

/* The executor's attribute blob. */
typedef struct {
    mhc_tiling tiling;
} fwd_attrs;

/* The kernel: every output of the M tokens (see op_mhc_fwd_kernel.c). */
MHC_HIDDEN int fwd_kernel(aclsim_kernel_ctx *k);

#endif /* MHC_FWD_H */
