/* Test fixture: a header with no aclnn operator. */
int aclnnHelper(int x);
