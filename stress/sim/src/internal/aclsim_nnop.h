/*
 * aclsim_nnop.h - the internal API that libnnopbase exports to the operator library (libopapi).
 *
 * The kernel API itself (descriptors, executors, kernels, shared state) is public: it is declared
 * in include/aclsim.h, so a custom operator package can use it too.  This header only adds the
 * runtime-internal API of aclsim_internal.h.
 */
#ifndef ACLSIM_NNOP_H
#define ACLSIM_NNOP_H

#include "aclsim.h"
#include "aclsim_internal.h"

#endif /* ACLSIM_NNOP_H */
