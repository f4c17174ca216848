/*
 * aclnnop/aclnn_add.h - aclnnAdd and its variants (out = self + alpha * other), for the
 * aclnn-stress CANN simulator.  Declarations as in CANN's ops-math; the comments are the
 * simulator's.  Note, as in CANN: `out` is a non-const tensor yet tagged [in] (the caller
 * provides it), and aclnnInplaceAdd's `selfRef` is const although it is written.
 */
#ifndef ACLSIM_ACLNN_ADD_H_
#define ACLSIM_ACLNN_ADD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief First phase of aclnnAdd: check the arguments, size the workspace, build the executor.
 * @domain aclnn_math
 *
 * out_i = self_i + alpha * other_i, with self and other broadcast together and their dtypes
 * promoted.
 *
 * @param [in] self: device tensor, integer, floating or bool dtype, ND, may be non-contiguous.
 * @param [in] other: device tensor, shape broadcastable with self's, dtype promotable with it.
 * @param [in] alpha: host scalar, convertible to the promoted dtype.
 * @param [in] out: device tensor of the broadcast shape, a dtype the promoted one converts to.
 * @param [out] workspaceSize: the device workspace the second phase needs, in bytes.
 * @param [out] executor: the executor to pass to aclnnAdd.
 * @return aclnnStatus: ACLNN_SUCCESS or the failure's code.
 */
ACLNN_API aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                               const aclScalar *alpha, aclTensor *out,
                                               uint64_t *workspaceSize, aclOpExecutor **executor);

/**
 * @brief Second phase of aclnnAdd: queue the computation on a stream.
 * @param [in] workspace: device workspace of at least workspaceSize bytes (NULL when 0).
 * @param [in] workspaceSize: the size the first phase returned.
 * @param [in] executor: the executor the first phase returned (consumed unless repeatable).
 * @param [in] stream: the stream to run on.
 * @return aclnnStatus: ACLNN_SUCCESS or the failure's code.
 */
ACLNN_API aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                               aclrtStream stream);

/**
 * @brief First phase of aclnnAdds: out = self + alpha * other with a scalar other.
 * @domain aclnn_math
 * @param [in] self: device tensor.
 * @param [in] other: host scalar.
 * @param [in] alpha: host scalar.
 * @param [in] out: device tensor of self's shape.
 * @param [out] workspaceSize: the device workspace the second phase needs, in bytes.
 * @param [out] executor: the executor to pass to aclnnAdds.
 * @return aclnnStatus: ACLNN_SUCCESS or the failure's code.
 */
ACLNN_API aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                                const aclScalar *alpha, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);

/**
 * @brief First phase of aclnnInplaceAdd: selfRef += alpha * other.
 * @domain aclnn_math
 * @param [in] selfRef: device tensor, read and written (other must broadcast to its shape).
 * @param [in] other: device tensor.
 * @param [in] alpha: host scalar.
 * @param [out] workspaceSize: the device workspace the second phase needs, in bytes.
 * @param [out] executor: the executor to pass to aclnnInplaceAdd.
 * @return aclnnStatus: ACLNN_SUCCESS or the failure's code.
 */
ACLNN_API aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef,
                                                      const aclTensor *other,
                                                      const aclScalar *alpha,
                                                      uint64_t *workspaceSize,
                                                      aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceAdd(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream);

/**
 * @brief First phase of aclnnInplaceAdds: selfRef += alpha * other with a scalar other.
 * @domain aclnn_math
 * @param [in] selfRef: device tensor, read and written.
 * @param [in] other: host scalar.
 * @param [in] alpha: host scalar.
 * @param [out] workspaceSize: the device workspace the second phase needs, in bytes.
 * @param [out] executor: the executor to pass to aclnnInplaceAdds.
 * @return aclnnStatus: ACLNN_SUCCESS or the failure's code.
 */
ACLNN_API aclnnStatus aclnnInplaceAddsGetWorkspaceSize(const aclTensor *selfRef,
                                                       const aclScalar *other,
                                                       const aclScalar *alpha,
                                                       uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceAdds(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif /* ACLSIM_ACLNN_ADD_H_ */
