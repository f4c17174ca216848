/*
 * aclnnop/aclnn_matmul.h - aclnnMatmul, for the aclnn-stress CANN simulator.
 * Declarations as in CANN's ops-nn; the comments are the simulator's.
 */
#ifndef ACLSIM_ACLNN_MATMUL_H_
#define ACLSIM_ACLNN_MATMUL_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnMatmul: out = self @ mat2 with torch.matmul's rules for 1-D and
 * batched (broadcast) operands; FLOAT, FLOAT16, BF16.
 * @param [in] self: left operand, 1 to 8 dims.
 * @param [in] mat2: right operand, 1 to 8 dims.
 * @param [out] out: the product.
 * @param [in] cubeMathType: 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32.
 * @param [out] workspaceSize: the device workspace the second phase needs.
 * @param [out] executor: the operator executor for the second phase.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2,
                                                  aclTensor *out, int8_t cubeMathType,
                                                  uint64_t *workspaceSize,
                                                  aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnMatmul: runs the executor built by aclnnMatmulGetWorkspaceSize on a
 * stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnMatmul(void *workspace, uint64_t workspaceSize,
                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNN_MATMUL_H_ */
