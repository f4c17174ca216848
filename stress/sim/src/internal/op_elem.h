/*
 * op_elem.h - element access shared by the operator kernels (header-only, libopapi).
 *
 * Every kernel reads and writes elements through these helpers, so all operators agree on:
 *   - loads: any of the 12 aclnn dtypes (FLOAT, FLOAT16, BF16, DOUBLE, INT8/16/32/64, UINT8,
 *     BOOL, COMPLEX64, COMPLEX128) read as int64, double or a complex pair;
 *   - stores: one conversion to the destination dtype, rounding to nearest even (fp16/bf16 via
 *     aclsim_dtype.h), integers wrapped two's-complement, BOOL as v != 0;
 *   - type promotion and "can cast" (torch's rules, which the aclnn docs' promotion table
 *     follows): bool < integers < floating < complex;
 *   - broadcasting iteration over a view: an odometer that keeps byte offsets of up to
 *     OP_MAX_OPS operands, each with its own strides (0 along stretched dims), so
 *     non-contiguous views and storage offsets are honoured.
 * Compute kinds: fp16/bf16/float operands are computed in float32 and rounded once on store;
 * DOUBLE in double; integers in int64 (wrapped to the promoted width); complex in double.
 */
#ifndef ACLSIM_OP_ELEM_H
#define ACLSIM_OP_ELEM_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "aclsim_dtype.h"
#include "aclsim_nnop.h"

#define OP_MAX_DIMS 8
#define OP_MAX_OPS 4

/* ---- dtype classes ------------------------------------------------------------------------- */

/* The 12 dtypes of the aclnn math operators (Add, Mul, ReduceSum, Cat). */
static inline int op_dtype_is_math(int32_t dt)
{
    switch (dt) {
    case ACL_FLOAT: case ACL_FLOAT16: case ACL_BF16: case ACL_DOUBLE:
    case ACL_INT8: case ACL_INT16: case ACL_INT32: case ACL_INT64: case ACL_UINT8:
    case ACL_BOOL: case ACL_COMPLEX64: case ACL_COMPLEX128:
        return 1;
    default:
        return 0;
    }
}

static inline int op_is_complex(int32_t dt) { return dt == ACL_COMPLEX64 || dt == ACL_COMPLEX128; }

static inline int op_is_floating(int32_t dt)
{
    return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16 || dt == ACL_DOUBLE;
}

static inline int op_is_integral(int32_t dt)
{
    return dt == ACL_INT8 || dt == ACL_INT16 || dt == ACL_INT32 || dt == ACL_INT64 ||
           dt == ACL_UINT8;
}

/* 0 bool, 1 integral, 2 floating, 3 complex */
static inline int op_category(int32_t dt)
{
    return dt == ACL_BOOL ? 0 : op_is_integral(dt) ? 1 : op_is_floating(dt) ? 2 : 3;
}

/* Promotion of two math dtypes (torch's promote_types). */
static inline int32_t op_promote(int32_t a, int32_t b)
{
    if (a == b)
        return a;
    int ca = op_category(a), cb = op_category(b);
    if (ca != cb) {
        int32_t hi = ca > cb ? a : b, lo = ca > cb ? b : a;
        if (op_is_complex(hi) && lo == ACL_DOUBLE)
            return ACL_COMPLEX128;
        return hi;
    }
    if (ca == 1) { /* integers: by width; uint8 with a signed type needs the next signed width */
        if (a == ACL_UINT8 || b == ACL_UINT8) {
            int32_t s = a == ACL_UINT8 ? b : a;
            return s == ACL_INT8 ? ACL_INT16 : s;
        }
        return aclsim_dtype_size(a) > aclsim_dtype_size(b) ? a : b;
    }
    if (ca == 2) {
        if (a == ACL_DOUBLE || b == ACL_DOUBLE)
            return ACL_DOUBLE;
        return ACL_FLOAT; /* FLOAT with a half type, or FLOAT16 with BF16 */
    }
    return ACL_COMPLEX128; /* COMPLEX64 with COMPLEX128 */
}

/* Whether a value of dtype `from` may be written into `to` (torch's can_cast: never to a lower
 * category: complex -> real, floating -> integral, non-bool -> bool). */
static inline int op_can_cast(int32_t from, int32_t to)
{
    return op_category(from) <= op_category(to);
}

/* ---- loads and stores (p points at the element) ------------------------------------------- */

static inline int64_t op_load_i64(const uint8_t *p, int32_t dt)
{
    switch (dt) {
    case ACL_BOOL: return *p != 0;
    case ACL_UINT8: return *p;
    case ACL_INT8: return (int8_t)*p;
    case ACL_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case ACL_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case ACL_INT64: { int64_t v; memcpy(&v, p, 8); return v; }
    default: return 0;
    }
}

static inline float op_load_f32(const uint8_t *p, int32_t dt)
{
    uint16_t h;
    switch (dt) {
    case ACL_FLOAT: { float v; memcpy(&v, p, 4); return v; }
    case ACL_FLOAT16: memcpy(&h, p, 2); return aclsim_f16_to_f32(h);
    case ACL_BF16: memcpy(&h, p, 2); return aclsim_bf16_to_f32(h);
    case ACL_DOUBLE: { double v; memcpy(&v, p, 8); return (float)v; }
    case ACL_COMPLEX64: { float v; memcpy(&v, p, 4); return v; }
    case ACL_COMPLEX128: { double v; memcpy(&v, p, 8); return (float)v; }
    default: return (float)op_load_i64(p, dt);
    }
}

static inline double op_load_f64(const uint8_t *p, int32_t dt)
{
    if (dt == ACL_DOUBLE || dt == ACL_COMPLEX128) {
        double v;
        memcpy(&v, p, 8);
        return v;
    }
    if (op_is_integral(dt) || dt == ACL_BOOL)
        return (double)op_load_i64(p, dt);
    return (double)op_load_f32(p, dt);
}

/* Real and imaginary parts (imaginary 0 for real types). */
static inline void op_load_c(const uint8_t *p, int32_t dt, double *re, double *im)
{
    if (dt == ACL_COMPLEX64) {
        float v[2];
        memcpy(v, p, 8);
        *re = v[0];
        *im = v[1];
    } else if (dt == ACL_COMPLEX128) {
        double v[2];
        memcpy(v, p, 16);
        *re = v[0];
        *im = v[1];
    } else {
        *re = op_load_f64(p, dt);
        *im = 0.0;
    }
}

/* double -> int64 as a C cast would, but defined for NaN / out of range (0 / saturated). */
static inline int64_t op_f64_to_i64(double v)
{
    if (!(v == v))
        return 0;
    if (v >= 9.2233720368547758e18)
        return INT64_MAX;
    if (v <= -9.2233720368547758e18)
        return INT64_MIN;
    return (int64_t)v;
}

static inline void op_store_i64(uint8_t *p, int32_t dt, int64_t v)
{
    switch (dt) {
    case ACL_BOOL: *p = v != 0; return;
    case ACL_UINT8: case ACL_INT8: *p = (uint8_t)(uint64_t)v; return;
    case ACL_INT16: { uint16_t u = (uint16_t)(uint64_t)v; memcpy(p, &u, 2); return; }
    case ACL_INT32: { uint32_t u = (uint32_t)(uint64_t)v; memcpy(p, &u, 4); return; }
    case ACL_INT64: memcpy(p, &v, 8); return;
    case ACL_FLOAT: { float f = (float)v; memcpy(p, &f, 4); return; }
    case ACL_FLOAT16: { uint16_t h = aclsim_f32_to_f16((float)v); memcpy(p, &h, 2); return; }
    case ACL_BF16: { uint16_t h = aclsim_f32_to_bf16((float)v); memcpy(p, &h, 2); return; }
    case ACL_DOUBLE: { double d = (double)v; memcpy(p, &d, 8); return; }
    case ACL_COMPLEX64: { float c[2] = {(float)v, 0.0f}; memcpy(p, c, 8); return; }
    case ACL_COMPLEX128: { double c[2] = {(double)v, 0.0}; memcpy(p, c, 16); return; }
    default: return;
    }
}

/* Store a complex value; real destinations take the real part.  Values computed in float32
 * arrive exactly as doubles, so fp16/bf16 destinations see one rounding. */
static inline void op_store_c(uint8_t *p, int32_t dt, double re, double im)
{
    switch (dt) {
    case ACL_FLOAT: { float f = (float)re; memcpy(p, &f, 4); return; }
    case ACL_FLOAT16: { uint16_t h = aclsim_f32_to_f16((float)re); memcpy(p, &h, 2); return; }
    case ACL_BF16: { uint16_t h = aclsim_f32_to_bf16((float)re); memcpy(p, &h, 2); return; }
    case ACL_DOUBLE: memcpy(p, &re, 8); return;
    case ACL_COMPLEX64: { float c[2] = {(float)re, (float)im}; memcpy(p, c, 8); return; }
    case ACL_COMPLEX128: { double c[2] = {re, im}; memcpy(p, c, 16); return; }
    case ACL_BOOL: *p = re != 0.0 || im != 0.0; return;
    default: op_store_i64(p, dt, op_f64_to_i64(re)); return;
    }
}

static inline void op_store_f64(uint8_t *p, int32_t dt, double v) { op_store_c(p, dt, v, 0.0); }

/* Wrap an int64 result to the width of an integral dtype (sign-extended back to int64). */
static inline int64_t op_wrap(int64_t v, int32_t dt)
{
    switch (dt) {
    case ACL_BOOL: return v != 0;
    case ACL_UINT8: return (uint8_t)(uint64_t)v;
    case ACL_INT8: return (int8_t)(uint8_t)(uint64_t)v;
    case ACL_INT16: return (int16_t)(uint16_t)(uint64_t)v;
    case ACL_INT32: return (int32_t)(uint32_t)(uint64_t)v;
    default: return v;
    }
}

/* Round a float32 result to the promoted half type and back (identity for FLOAT). */
static inline float op_round_f32(float v, int32_t dt)
{
    if (dt == ACL_FLOAT16)
        return aclsim_f16_to_f32(aclsim_f32_to_f16(v));
    if (dt == ACL_BF16)
        return aclsim_bf16_to_f32(aclsim_f32_to_bf16(v));
    return v;
}

/* ---- broadcasting iteration ---------------------------------------------------------------- */

/* Walks the shape dims[0..nd) in row-major order, keeping each operand's byte offset. */
typedef struct {
    int nd, nops;
    int64_t dims[OP_MAX_DIMS];
    int64_t st[OP_MAX_OPS][OP_MAX_DIMS]; /* byte strides */
    int64_t idx[OP_MAX_DIMS];
    int64_t off[OP_MAX_OPS];              /* byte offsets from each operand's base */
    const uint8_t *base[OP_MAX_OPS];      /* element 0 of each operand's view */
} op_iter;

static inline void op_iter_init(op_iter *it, int nd, const int64_t *dims)
{
    memset(it, 0, sizeof *it);
    it->nd = nd;
    for (int i = 0; i < nd; i++)
        it->dims[i] = dims[i];
}

/* The first byte of d's view (data + offset elements). */
static inline const uint8_t *op_view_base(const aclsim_tensor_desc *d)
{
    return (const uint8_t *)d->data + d->offset * aclsim_dtype_size(d->dtype);
}

/* Add an operand whose shape broadcasts to the iterator's (right-aligned; size-1 and missing
 * dims get stride 0).  Returns its index. */
static inline int op_iter_add(op_iter *it, const aclsim_tensor_desc *d)
{
    int k = it->nops++;
    int64_t es = aclsim_dtype_size(d->dtype);
    for (int i = 0; i < it->nd; i++) {
        int j = i - (it->nd - d->ndim);
        it->st[k][i] = (j >= 0 && d->dims[j] != 1) ? d->strides[j] * es : 0;
    }
    it->base[k] = op_view_base(d);
    return k;
}

/* Add an operand with explicit element strides over the iterator's dims. */
static inline int op_iter_add_strided(op_iter *it, const uint8_t *base, const int64_t *strides,
                                      int64_t es)
{
    int k = it->nops++;
    for (int i = 0; i < it->nd; i++)
        it->st[k][i] = strides[i] * es;
    it->base[k] = base;
    return k;
}

static inline const uint8_t *op_iter_ptr(const op_iter *it, int k)
{
    return it->base[k] + it->off[k];
}

static inline void op_iter_next(op_iter *it)
{
    for (int d = it->nd - 1; d >= 0; d--) {
        for (int k = 0; k < it->nops; k++)
            it->off[k] += it->st[k][d];
        if (++it->idx[d] < it->dims[d])
            return;
        for (int k = 0; k < it->nops; k++)
            it->off[k] -= it->st[k][d] * it->dims[d];
        it->idx[d] = 0;
    }
}

/* Row-major contiguous element strides of a shape. */
static inline void op_contiguous_strides(const int64_t *dims, int nd, int64_t *strides)
{
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i] > 0 ? dims[i] : 1;
    }
}

/* Normalise a dim in [-n, n) (n 0 accepts -1 and 0, as for 0-d tensors); -1 if out of range. */
static inline int op_wrap_dim(int64_t dim, int n)
{
    int m = n > 0 ? n : 1;
    if (dim < -m || dim >= m)
        return -1;
    return (int)(dim < 0 ? dim + m : dim);
}

/* An iterator over d's dims with every dim outside keep[] collapsed to 1 (keep[i] != 0 keeps
 * dim i), starting at byte pointer base (d's view when NULL). */
static inline void op_iter_over(op_iter *it, const aclsim_tensor_desc *d, const int *keep,
                                const uint8_t *base)
{
    int64_t dims[OP_MAX_DIMS];
    for (int i = 0; i < d->ndim; i++)
        dims[i] = keep[i] ? d->dims[i] : 1;
    op_iter_init(it, d->ndim, dims);
    int k = op_iter_add_strided(it, base ? base : op_view_base(d), d->strides,
                                aclsim_dtype_size(d->dtype));
    (void)k;
}

/* Product of d's dims i with keep[i] != 0. */
static inline int64_t op_numel_over(const aclsim_tensor_desc *d, const int *keep)
{
    int64_t n = 1;
    for (int i = 0; i < d->ndim; i++)
        if (keep[i])
            n *= d->dims[i];
    return n;
}

/* Load the elements of d under keep[] starting at base, row-major, as float32 into dst. */
static inline void op_gather_f32(const aclsim_tensor_desc *d, const int *keep, const uint8_t *base,
                                 float *dst)
{
    op_iter it;
    op_iter_over(&it, d, keep, base);
    int64_t n = op_numel_over(d, keep);
    for (int64_t j = 0; j < n; j++) {
        dst[j] = op_load_f32(op_iter_ptr(&it, 0), d->dtype);
        op_iter_next(&it);
    }
}

/* Store float32 values src[0..n) into the elements of d under keep[] starting at base. */
static inline void op_scatter_f32(const aclsim_tensor_desc *d, const int *keep, uint8_t *base,
                                  const float *src)
{
    op_iter it;
    op_iter_over(&it, d, keep, base);
    int64_t n = op_numel_over(d, keep);
    for (int64_t j = 0; j < n; j++) {
        op_store_c((uint8_t *)op_iter_ptr(&it, 0), d->dtype, src[j], 0.0);
        op_iter_next(&it);
    }
}

/* 1 if shapes a and b are equal. */
static inline int op_same_shape(const int64_t *a, int na, const int64_t *b, int nb)
{
    if (na != nb)
        return 0;
    for (int i = 0; i < na; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* Phase 1's last step for a one-input, one-output operator: an executor running `kernel` (no
 * kernel when `launch` is 0, e.g. an empty output), its two tensors and its attributes,
 * published to the caller. */
static inline aclnnStatus op_publish_unary(const char *op, aclsim_kernel_fn kernel, int launch,
                                           aclsim_tensor_desc *in, aclsim_tensor_desc *out,
                                           const void *attrs, size_t attrs_size,
                                           uint64_t *workspaceSize, aclOpExecutor **executor)
{
    aclsim_executor *ex = aclsim_executor_create(op, launch ? kernel : NULL, 0);
    if (!ex)
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    int rc;
    if ((rc = aclsim_executor_add_input(ex, "self", in)) ||
        (rc = aclsim_executor_add_output(ex, "out", out)) ||
        (rc = aclsim_executor_set_attrs(ex, attrs, attrs_size))) {
        aclsim_executor_discard(ex);
        return rc;
    }
    return aclsim_executor_publish(ex, workspaceSize, executor);
}

#endif /* ACLSIM_OP_ELEM_H */
