/*
 * op_cat.h - what the files of aclnnCat share (hidden symbols of libopapi):
 *   op_cat.c        phase 1 (checks), the kernel, phase 2
 *   op_cat_side.c   the `side-stream` fault: the last member copied on an internal stream
 */
#ifndef OP_CAT_H
#define OP_CAT_H

#include "op_elem.h"

#define CAT_HIDDEN __attribute__((visibility("hidden")))

/* One element, converted from dtype sdt at s to dtype ddt at d. */
static inline void cat_convert(const uint8_t *s, int32_t sdt, uint8_t *d, int32_t ddt)
{
    if (op_is_complex(sdt) || op_is_complex(ddt) || op_is_floating(sdt)) {
        double re, im;
        op_load_c(s, sdt, &re, &im);
        op_store_c(d, ddt, re, im);
    } else {
        op_store_i64(d, ddt, op_load_i64(s, sdt));
    }
}

/* Copy x into out's elements from `along` on along `dim`, through out's view (op_iter). */
static inline void cat_copy_member(const aclsim_tensor_desc *x, const aclsim_tensor_desc *o,
                                   int dim, int64_t along)
{
    aclsim_tensor_desc od = *o;
    od.offset += along * o->strides[dim];
    op_iter it;
    op_iter_init(&it, x->ndim, x->dims);
    op_iter_add(&it, x);
    op_iter_add(&it, &od);
    for (int64_t j = aclsim_numel(x); j > 0; j--) {
        cat_convert(op_iter_ptr(&it, 0), x->dtype, (uint8_t *)op_iter_ptr(&it, 1), o->dtype);
        op_iter_next(&it);
    }
}

/* side-stream: hand the copy of member x (at `along` on `dim` of out) to the operator's internal
 * stream, joined to the kernel's launch stream; returns 0 (copies here when it cannot hand it
 * over). */
CAT_HIDDEN int cat_side_post(const aclsim_kernel_ctx *k, const aclsim_tensor_desc *x,
                             const aclsim_tensor_desc *o, int dim, int64_t along);

#endif /* OP_CAT_H */
