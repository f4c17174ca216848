/*
 * aclnnop/aclnn_cat.h - aclnnCat, for the aclnn-stress CANN simulator.
 * Declarations as in CANN's ops-math; the comments are the simulator's.
 */
#ifndef ACLSIM_ACLNN_CAT_H_
#define ACLSIM_ACLNN_CAT_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnCat: concatenates a tensor list along dim.
 * @domain aclnn_math
 * @param [in] tensors: the tensors; equal shapes except along dim (1-D empty tensors are
 * skipped); dtypes promote to a type that casts to out's.
 * @param [in] dim: the dim to concatenate along, in [-ndim, ndim).
 * @param [out] out: the concatenation.
 * @param [out] workspaceSize: the device workspace the second phase needs.
 * @param [out] executor: the operator executor for the second phase.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code (161001 NULL argument, 161002 invalid).
 */
ACLNN_API aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList *tensors, int64_t dim,
                                               aclTensor *out, uint64_t *workspaceSize,
                                               aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnCat: runs the executor built by aclnnCatGetWorkspaceSize on a stream.
 * @param [in] workspace: device memory of at least workspaceSize bytes (NULL when it is 0).
 * @param [in] workspaceSize: the size returned by the first stage.
 * @param [in] executor: the executor returned by the first stage (consumed unless repeatable).
 * @param [in] stream: the stream to launch on.
 * @return aclnnStatus: ACLNN_SUCCESS, or an error code.
 */
ACLNN_API aclnnStatus aclnnCat(void *workspace, uint64_t workspaceSize,
                               aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLSIM_ACLNN_CAT_H_ */
