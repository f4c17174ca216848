/*
 * acl/acl.h - AscendCL umbrella header, written for the aclnn-stress CANN simulator from the
 * public API facts (docs/simulator.md, "Headers").  As in CANN it includes the runtime, the
 * single-operator and the model headers; the simulator implements only the runtime part.
 */
#ifndef ACLSIM_ACL_ACL_H_
#define ACLSIM_ACL_ACL_H_

#include "acl_rt.h"
#include "acl_op.h"
#include "acl_mdl.h"

#endif /* ACLSIM_ACL_ACL_H_ */
