/* The semiring table and the element-type table: every semiring and every element type tropical-gemm
 * knows, one row each, with the facts that the rest of the library derives from them. The C ABI's
 * enums (tropical/c_api.h), the C++ enums and their facts (tropical/types.hpp), validation, the
 * reference, the CPU path, the contraction and the Python package (through tropical_semiring_facts and
 * tropical_dtype_facts) all read these rows; none keeps a list of its own. The device algebra of a
 * semiring (kernels/semiring.cuh) and of a type is code, not data: ARCHITECTURE.md, "Adding a
 * semiring" and "Adding an element type", lists what a new row needs beside it.
 *
 * C, so that the C ABI can include it: the lists are X-macros, and the enums of the kinds below are
 * made from them. */
#ifndef TROPICAL_SEMIRING_TABLE_H
#define TROPICAL_SEMIRING_TABLE_H

/* How a semiring's (+) combines its terms. Max, Min and Or select one term (so the index of that term,
 * the argmax, exists); MaxCount keeps the largest value and adds the counts of the terms that attain
 * it (the counting semiring's pairs), and LogSumExp is log(exp(x) + exp(y)) (probabilities kept as
 * logarithms), so for those two no single term is the result. */
#define TROPICAL_PLUS_KIND_LIST(X) \
    X(MAX, Max, 0, "max")          \
    X(MIN, Min, 1, "min") X(OR, Or, 2, "or") X(MAX_COUNT, MaxCount, 3, "max") X(LOG_SUM_EXP, LogSumExp, 4, "log")

/* What a semiring's (x) does to two elements, with the word its name uses and the symbol messages use. */
#define TROPICAL_TIMES_KIND_LIST(X) \
    X(ADD, Add, 0, "plus", "+")     \
    X(MUL, Mul, 1, "mul", "x")      \
    X(MIN, Min, 2, "min", "min")    \
    X(MAX, Max, 3, "max", "max")    \
    X(AND, And, 4, "and", "and")

/* The element of a type that a semiring's zero or one is: LOWEST is -inf for floats, the type's minimum
 * for integers and false for booleans; HIGHEST is +inf, the maximum, true; ZERO and ONE are 0 and 1 (false
 * and true). The element-type table gives each its bits (tropical_dtype_facts.identity_bits). */
#define TROPICAL_IDENTITY_LIST(X) X(LOWEST, Lowest, 0) X(HIGHEST, Highest, 1) X(ZERO, Zero, 2) X(ONE, One, 3)

/* Where a gradient goes through a term k = argmax[i,j] (grad_C[i,j] to A[i,k] and B[k,j]):
 *   NONE     the semiring has no gradient (booleans, counts)
 *   AS_IS    to both, unchanged (MaxPlus, MinPlus): reads neither operand
 *   PRODUCT  times the other operand (MaxMul, the product rule): grad_A reads B, grad_B reads A
 *   TO_MIN   to the operand whose value the term took, the smaller (MaxMin: (x) is min), A's on a tie
 *            and where A is NaN: reads both
 *   TO_MAX   likewise the larger (MinMax: (x) is max)
 *   SOFTMAX  (+) combines every term (LogPlus): grad_C[i,j] reaches every k, weighted by the term's share
 *            of the sum, exp(A[i,k] + B[k,j] - C[i,j]); reads both operands and the forward's C, which
 *            takes the argmax's place */
#define TROPICAL_GRADIENT_LIST(X) \
    X(NONE, None, 0)              \
    X(AS_IS, AsIs, 1) X(PRODUCT, Product, 2) X(TO_MIN, ToMin, 3) X(TO_MAX, ToMax, 4) X(SOFTMAX, Softmax, 5)

/* What kind of number an element type holds. */
#define TROPICAL_DTYPE_KIND_LIST(X) \
    X(FLOAT, Float, 0, "float") X(SIGNED, Signed, 1, "signed") X(BOOLEAN, Boolean, 2, "boolean")

/* The element types.
 * X(C suffix, C++ name, value, C type, device type, tag, name, kind)
 *   C type       the host's type of an element (bool also reads as U8; C++'s, for BF16 and F16:
 *                tropical/float16.hpp; C passes them as 16-bit words)
 *   device type  its spelling in the device code that NVRTC compiles (no system headers there)
 *   tag          the short name used in kernel names and messages ("f32")
 *   name         PyTorch's and NumPy's name of the type ("float32"; U8: "uint8", and bool too) */
#define TROPICAL_DTYPE_LIST(X)                                                    \
    X(F32, F32, 0, float, "float", "f32", "float32", FLOAT)                       \
    X(F64, F64, 1, double, "double", "f64", "float64", FLOAT)                     \
    X(I32, I32, 2, int32_t, "int", "i32", "int32", SIGNED)                        \
    X(I64, I64, 3, int64_t, "long long", "i64", "int64", SIGNED)                  \
    X(U8, U8, 4, uint8_t, "unsigned char", "u8", "uint8", BOOLEAN)                \
    X(BF16, BF16, 5, ::tropical::bfloat16, "tg::bf16", "bf16", "bfloat16", FLOAT) \
    X(F16, F16, 6, ::tropical::float16, "tg::f16", "f16", "float16", FLOAT)       \
    X(I16, I16, 7, int16_t, "short", "i16", "int16", SIGNED)

/* Sets of element types a semiring takes, as bits by tropical_dtype value. */
#define TROPICAL_DTYPES_WIDE_NUMBERS \
    ((1u << TROPICAL_F32) | (1u << TROPICAL_F64) | (1u << TROPICAL_I32) | (1u << TROPICAL_I64))
#define TROPICAL_DTYPES_HALF_FLOATS ((1u << TROPICAL_BF16) | (1u << TROPICAL_F16))
#define TROPICAL_DTYPES_NUMBERS (TROPICAL_DTYPES_WIDE_NUMBERS | TROPICAL_DTYPES_HALF_FLOATS | (1u << TROPICAL_I16))
#define TROPICAL_DTYPES_PRODUCTS (TROPICAL_DTYPES_WIDE_NUMBERS | TROPICAL_DTYPES_HALF_FLOATS)
#define TROPICAL_DTYPES_FLOATS ((1u << TROPICAL_F32) | (1u << TROPICAL_F64))
#define TROPICAL_DTYPES_BOOLEANS (1u << TROPICAL_U8)

/* The semirings. Semantics in full: README.md ("Semantics") and src/reference/reference.hpp.
 * X(C suffix, C++ name, value, name, (+), (x), zero, one, gradient, element types)
 *   (+)            a TROPICAL_PLUS_KIND_LIST suffix; (x) a TROPICAL_TIMES_KIND_LIST one
 *   zero, one      TROPICAL_IDENTITY_LIST suffixes (COUNTING: its values'; its counts' are 0 and 1)
 *   gradient       a TROPICAL_GRADIENT_LIST suffix
 *   element types  a TROPICAL_DTYPES_ set (COUNTING: the values' types; counts are f64) */
#define TROPICAL_SEMIRING_LIST(X)                                                                    \
    X(MAXPLUS, MaxPlus, 0, "maxplus", MAX, ADD, LOWEST, ZERO, AS_IS, TROPICAL_DTYPES_NUMBERS)        \
    X(MINPLUS, MinPlus, 1, "minplus", MIN, ADD, HIGHEST, ZERO, AS_IS, TROPICAL_DTYPES_NUMBERS)       \
    X(MAXMUL, MaxMul, 2, "maxmul", MAX, MUL, ZERO, ONE, PRODUCT, TROPICAL_DTYPES_PRODUCTS)           \
    X(MAXMIN, MaxMin, 3, "maxmin", MAX, MIN, LOWEST, HIGHEST, TO_MIN, TROPICAL_DTYPES_NUMBERS)       \
    X(MINMAX, MinMax, 4, "minmax", MIN, MAX, HIGHEST, LOWEST, TO_MAX, TROPICAL_DTYPES_NUMBERS)       \
    X(COUNTING, Counting, 5, "counting", MAX_COUNT, ADD, LOWEST, ZERO, NONE, TROPICAL_DTYPES_FLOATS) \
    X(ORAND, OrAnd, 6, "orand", OR, AND, ZERO, ONE, NONE, TROPICAL_DTYPES_BOOLEANS)                  \
    X(LOGPLUS, LogPlus, 7, "logplus", LOG_SUM_EXP, ADD, LOWEST, ZERO, SOFTMAX, TROPICAL_DTYPES_FLOATS)

/* The kinds as C enums: TROPICAL_PLUS_MAX, TROPICAL_TIMES_ADD, TROPICAL_IDENTITY_LOWEST,
 * TROPICAL_GRADIENT_AS_IS, TROPICAL_DTYPE_KIND_FLOAT, ... */
#define TROPICAL_PLUS_ENUMERATOR(c_suffix, name, value, ...) TROPICAL_PLUS_##c_suffix = value,
#define TROPICAL_TIMES_ENUMERATOR(c_suffix, name, value, ...) TROPICAL_TIMES_##c_suffix = value,
#define TROPICAL_IDENTITY_ENUMERATOR(c_suffix, name, value) TROPICAL_IDENTITY_##c_suffix = value,
#define TROPICAL_GRADIENT_ENUMERATOR(c_suffix, name, value) TROPICAL_GRADIENT_##c_suffix = value,
#define TROPICAL_DTYPE_KIND_ENUMERATOR(c_suffix, name, value, ...) TROPICAL_DTYPE_KIND_##c_suffix = value,
typedef enum tropical_plus_kind { TROPICAL_PLUS_KIND_LIST(TROPICAL_PLUS_ENUMERATOR) } tropical_plus_kind;
typedef enum tropical_times_kind { TROPICAL_TIMES_KIND_LIST(TROPICAL_TIMES_ENUMERATOR) } tropical_times_kind;
typedef enum tropical_identity { TROPICAL_IDENTITY_LIST(TROPICAL_IDENTITY_ENUMERATOR) } tropical_identity;
typedef enum tropical_gradient { TROPICAL_GRADIENT_LIST(TROPICAL_GRADIENT_ENUMERATOR) } tropical_gradient;
typedef enum tropical_dtype_kind { TROPICAL_DTYPE_KIND_LIST(TROPICAL_DTYPE_KIND_ENUMERATOR) } tropical_dtype_kind;
#undef TROPICAL_PLUS_ENUMERATOR
#undef TROPICAL_TIMES_ENUMERATOR
#undef TROPICAL_IDENTITY_ENUMERATOR
#undef TROPICAL_GRADIENT_ENUMERATOR
#undef TROPICAL_DTYPE_KIND_ENUMERATOR

/* The semirings and the element types as C enums: TROPICAL_MAXPLUS, ..., TROPICAL_F32, ... */
#define TROPICAL_TABLE_ENUMERATOR(c_suffix, name, value, ...) TROPICAL_##c_suffix = value,
typedef enum tropical_semiring { TROPICAL_SEMIRING_LIST(TROPICAL_TABLE_ENUMERATOR) } tropical_semiring;
typedef enum tropical_dtype { TROPICAL_DTYPE_LIST(TROPICAL_TABLE_ENUMERATOR) } tropical_dtype;
#undef TROPICAL_TABLE_ENUMERATOR

#endif /* TROPICAL_SEMIRING_TABLE_H */
