/* Test fixture: a declaration cut short. */
#include "aclnn/aclnn_base.h"
ACLNN_API aclnnStatus aclnnBrokenGetWorkspaceSize(const aclTensor *self,
    aclTensor *out uint64_t *workspaceSize, aclOpExecutor **executor);
