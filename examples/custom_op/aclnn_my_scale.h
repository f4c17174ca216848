/*
 * aclnn_my_scale.h - aclnnMyScale, an example custom operator: out = self * scale.
 * Installed as <package>/op_api/include/aclnn_my_scale.h, as CANN's generated custom-operator
 * headers are.
 */
#ifndef ACLNN_MY_SCALE_H_
#define ACLNN_MY_SCALE_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnMyScale: check the arguments, build the executor.
 * @param [in] self: device tensor, FLOAT, FLOAT16 or BF16, any strides.
 * @param [in] scale: the factor.
 * @param [out] out: device tensor of self's shape and dtype.
 * @param [out] workspaceSize: the device workspace the second phase needs (0).
 * @param [out] executor: the executor to pass to aclnnMyScale.
 * @return aclnnStatus: ACLNN_SUCCESS or the failure's code.
 */
__attribute__((visibility("default"))) aclnnStatus aclnnMyScaleGetWorkspaceSize(
    const aclTensor *self, double scale, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnMyScale: queue the computation on a stream.
 * @param [in] workspace: device workspace (may be NULL: the size is 0).
 * @param [in] workspaceSize: the size the first phase returned.
 * @param [in] executor: the executor the first phase returned.
 * @param [in] stream: the stream to run on.
 * @return aclnnStatus: ACLNN_SUCCESS or the failure's code.
 */
__attribute__((visibility("default"))) aclnnStatus aclnnMyScale(void *workspace,
                                                                uint64_t workspaceSize,
                                                                aclOpExecutor *executor,
                                                                aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif /* ACLNN_MY_SCALE_H_ */
