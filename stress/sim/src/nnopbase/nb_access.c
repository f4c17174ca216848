/*
 * nb_access.c - element accessors of the public kernel API (aclsim.h): read and write one
 * element of a tensor view by its row-major index, converting from / to double.
 *
 * For CPU models of operators written outside the simulator (custom operator packages), where
 * clarity beats speed: the built-in kernels walk the strides themselves.
 */
#include <string.h>

#include "aclsim_dtype.h"
#include "nb_private.h"

/* Byte address of element `index` (row-major over the view) of d, or NULL if out of range. */
void *aclsim_tensor_element(const aclsim_tensor_desc *d, int64_t index)
{
    int64_t numel = aclsim_numel(d);
    int size = aclsim_dtype_size(d->dtype);
    if (index < 0 || index >= numel || size == 0 || !d->data)
        return NULL;
    int64_t at = d->offset;
    for (int i = d->ndim - 1; i >= 0; i--) {
        int64_t dim = d->dims[i];
        at += (index % dim) * d->strides[i];
        index /= dim;
    }
    return (unsigned char *)d->data + at * size;
}

int aclsim_tensor_read(const aclsim_tensor_desc *d, int64_t index, double *value)
{
    const unsigned char *p = aclsim_tensor_element(d, index);
    if (!p)
        return -1;
    union { float f; double g; int8_t i8; int16_t i16; int32_t i32; int64_t i64; uint8_t u8;
            uint16_t u16; uint32_t u32; uint64_t u64; } u;
    memcpy(&u, p, (size_t)aclsim_dtype_size(d->dtype));
    ACLSIM_SAN_LOAD(p, aclsim_dtype_size(d->dtype));
    switch (d->dtype) {
    case ACL_FLOAT: *value = u.f; return 0;
    case ACL_DOUBLE: *value = u.g; return 0;
    case ACL_FLOAT16: *value = aclsim_f16_to_f32(u.u16); return 0;
    case ACL_BF16: *value = aclsim_bf16_to_f32(u.u16); return 0;
    case ACL_INT8: *value = u.i8; return 0;
    case ACL_INT16: *value = u.i16; return 0;
    case ACL_INT32: *value = u.i32; return 0;
    case ACL_INT64: *value = (double)u.i64; return 0;
    case ACL_UINT8: *value = u.u8; return 0;
    case ACL_UINT16: *value = u.u16; return 0;
    case ACL_UINT32: *value = u.u32; return 0;
    case ACL_UINT64: *value = (double)u.u64; return 0;
    case ACL_BOOL: *value = u.u8 != 0; return 0;
    default: return -1;
    }
}

int aclsim_tensor_write(const aclsim_tensor_desc *d, int64_t index, double value)
{
    unsigned char *p = aclsim_tensor_element(d, index);
    if (!p)
        return -1;
    union { float f; double g; int8_t i8; int16_t i16; int32_t i32; int64_t i64; uint8_t u8;
            uint16_t u16; uint32_t u32; uint64_t u64; } u;
    switch (d->dtype) { /* integers: truncation toward zero, as a C cast */
    case ACL_FLOAT: u.f = (float)value; break;
    case ACL_DOUBLE: u.g = value; break;
    case ACL_FLOAT16: u.u16 = aclsim_f32_to_f16((float)value); break;
    case ACL_BF16: u.u16 = aclsim_f32_to_bf16((float)value); break;
    case ACL_INT8: u.i8 = (int8_t)value; break;
    case ACL_INT16: u.i16 = (int16_t)value; break;
    case ACL_INT32: u.i32 = (int32_t)value; break;
    case ACL_INT64: u.i64 = (int64_t)value; break;
    case ACL_UINT8: u.u8 = (uint8_t)value; break;
    case ACL_UINT16: u.u16 = (uint16_t)value; break;
    case ACL_UINT32: u.u32 = (uint32_t)value; break;
    case ACL_UINT64: u.u64 = (uint64_t)value; break;
    case ACL_BOOL: u.u8 = value != 0; break;
    default: return -1;
    }
    memcpy(p, &u, (size_t)aclsim_dtype_size(d->dtype));
    ACLSIM_SAN_STORE(p, aclsim_dtype_size(d->dtype));
    return 0;
}
