/*
 * aclnn_mhc_pre_sinkhorn.h - aclnnMhcPreSinkhorn (mHC pre-projection + Sinkhorn, forward) as the
 * aclnn-stress CANN simulator implements it.  Installed as <root>/include/aclnnop/; compile with
 * -I<root>/include (for aclsim.h, which declares the CANN types).
 *
 * Same declaration as ops-transformer's mhc/mhc_pre_sinkhorn/op_host/op_api/ (current trees:
 * hcEps and normEps are C doubles; older trees declared them float).
 *
 * x: (B, S, N, C) BF16/FLOAT16 with N == hcMult == 4, 0 < C < 100000, C % 128 == 0;
 * phi: (N*N+2N, N*C), alpha: (3), bias: (N*N+2N), all FLOAT; numIters must be 20.
 * Outputs: hin (B, S, C) in x's dtype; hPost (B, S, N), hRes (B, S, N*N), and, when needBackward,
 * hPre (B, S, N), hcBeforeNorm (B, S, N*N+2N), invRms (B, S, 1), sumOut (2*numIters, B, S, N),
 * normOut (2*numIters, B, S, N, N), all FLOAT (they may be NULL when needBackward is false).
 */
#ifndef ACLNN_MHC_PRE_SINKHORN_H_
#define ACLNN_MHC_PRE_SINKHORN_H_

#include "aclsim.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLSIM_API aclnnStatus aclnnMhcPreSinkhornGetWorkspaceSize(
    const aclTensor *x, const aclTensor *phi, const aclTensor *alpha, const aclTensor *bias,
    int64_t hcMult, int64_t numIters, double hcEps, double normEps, bool needBackward,
    aclTensor *hin, aclTensor *hPost, aclTensor *hRes, aclTensor *hPre, aclTensor *hcBeforeNorm,
    aclTensor *invRms, aclTensor *sumOut, aclTensor *normOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);

ACLSIM_API aclnnStatus aclnnMhcPreSinkhorn(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif /* ACLNN_MHC_PRE_SINKHORN_H_ */
