/*
 * nb_executor.h - an aclOpExecutor as the nb_*.c files of libnnopbase see it (hidden): phase 1
 * builds it (nb_executor.c), phase 2 launches it (nb_launch.c).
 */
#ifndef ACLSIM_NB_EXECUTOR_H
#define ACLSIM_NB_EXECUTOR_H

#include "nb_private.h"

#define NAME_CAP 32
#define EXEC_KIND ACLSIM_KIND_BIT(ACLSIM_KIND_EXECUTOR)

typedef struct {
    int n, cap;
    aclsim_tensor_desc *d;
    char (*names)[NAME_CAP];
} tensor_list;

struct aclsim_executor {
    aclsim_obj obj;
    pthread_mutex_t mu; /* guards repeatable and the data addresses in in/out */
    char op[64];
    aclsim_kernel_fn kernel;
    uint64_t workspace_size;
    int deterministic;
    int repeatable;
    int unrepeatable; /* aclsim_executor_set_unrepeatable: marking it repeatable fails */
    tensor_list in, out;
    void *attrs;
    size_t attrs_size;
    aclsim_launch_hook launch_hook; /* optional, run at phase 2 on the launching thread */
    uint64_t san_call;              /* the sanitizer's call number (0 when it is off) */
    int san_own_loads;              /* the kernel reports its input loads itself */
};

#endif /* ACLSIM_NB_EXECUTOR_H */
