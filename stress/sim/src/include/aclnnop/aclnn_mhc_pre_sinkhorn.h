/*
 * aclnn_mhc_pre_sinkhorn.h - aclnnMhcPreSinkhorn (mHC pre-projection + Sinkhorn, forward) as the
 * aclnn-stress CANN simulator implements it.  Installed as <root>/include/aclnnop/; compile with
 * -I<root>/include.
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

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnMhcPreSinkhorn: check, size the workspace, build the executor.
 * @domain aclnn_transformer
 * @param [in] x: device tensor (B, S, N, C), BF16 or FLOAT16.
 * @param [in] phi: device tensor (N*N+2N, N*C), FLOAT.
 * @param [in] alpha: device tensor (3), FLOAT.
 * @param [in] bias: device tensor (N*N+2N), FLOAT.
 * @param [in] hcMult: N, the hyper-connection count (4).
 * @param [in] numIters: Sinkhorn iterations (20).
 * @param [in] hcEps: epsilon of the Sinkhorn normalisation.
 * @param [in] normEps: epsilon of the RMS normalisation.
 * @param [in] needBackward: whether to write the tensors the backward needs.
 * @param [out] hin: device tensor (B, S, C) in x's dtype.
 * @param [out] hPost: device tensor (B, S, N), FLOAT.
 * @param [out] hRes: device tensor (B, S, N*N), FLOAT.
 * @param [out] hPre: device tensor (B, S, N), FLOAT; may be NULL without needBackward.
 * @param [out] hcBeforeNorm: device tensor (B, S, N*N+2N), FLOAT; may be NULL likewise.
 * @param [out] invRms: device tensor (B, S, 1), FLOAT; may be NULL likewise.
 * @param [out] sumOut: device tensor (2*numIters, B, S, N), FLOAT; may be NULL likewise.
 * @param [out] normOut: device tensor (2*numIters, B, S, N, N), FLOAT; may be NULL likewise.
 * @param [out] workspaceSize: the device workspace the second phase needs, in bytes.
 * @param [out] executor: the executor to pass to aclnnMhcPreSinkhorn.
 * @return aclnnStatus: ACLNN_SUCCESS or the failure's code.
 */
ACLNN_API aclnnStatus aclnnMhcPreSinkhornGetWorkspaceSize(
    const aclTensor *x, const aclTensor *phi, const aclTensor *alpha, const aclTensor *bias,
    int64_t hcMult, int64_t numIters, double hcEps, double normEps, bool needBackward,
    aclTensor *hin, aclTensor *hPost, aclTensor *hRes, aclTensor *hPre, aclTensor *hcBeforeNorm,
    aclTensor *invRms, aclTensor *sumOut, aclTensor *normOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnMhcPreSinkhorn: queue the computation on a stream.
 * @param [in] workspace: device workspace of at least workspaceSize bytes.
 * @param [in] workspaceSize: the size the first phase returned.
 * @param [in] executor: the executor the first phase returned.
 * @param [in] stream: the stream to run on.
 * @return aclnnStatus: ACLNN_SUCCESS or the failure's code.
 */
ACLNN_API aclnnStatus aclnnMhcPreSinkhorn(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif /* ACLNN_MHC_PRE_SINKHORN_H_ */
