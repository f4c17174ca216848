/* Test fixture: phase one without its phase-two function. */
ACLNN_API aclnnStatus aclnnHalfGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
