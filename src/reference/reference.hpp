#pragma once
// CPU reference of tropical-gemm: the semantics, written as plainly as possible. It is the oracle of
// the tests and the CPU path of the PyTorch op, so it follows the definition, not the kernels' tricks.
//
// Semantics
//   C[i,j] = (+)_k A[i,k] (x) B[k,j] over k in [0, K); with K = 0 every output is the zero.
//   With accumulate: C = C_old (+) that.
//
//   | semiring | (+) | (x) | zero                                | one                        |
//   | MaxPlus  | max |  +  | -inf (integers: the type's minimum) |  0                         |
//   | MinPlus  | min |  +  | +inf (integers: the type's maximum) |  0                         |
//   | MaxMul   | max |  *  | 0                                   |  1                         |
//   | MaxMin   | max | min | -inf (integers: the type's minimum) | +inf (integers: maximum)   |
//   | MinMax   | min | max | +inf (integers: the type's maximum) | -inf (integers: minimum)   |
//   | OrAnd    | OR  | AND | false (0)                           | true (1)                   |
//   | LogPlus  | log-sum-exp | + | -inf                             |  0                         |
//
//   Floating point: (x) is IEEE + or * (or min, max), so -inf + +inf = NaN and 0 * inf = NaN; a -0
//   input (C_old with accumulate too) is read as +0, so no result is ever -0.
//   bfloat16, float16: each term is its IEEE result in the type (a + b or a * b rounded once, to
//     nearest even: it may overflow to an infinity), and (+) selects among the terms exactly, so a
//     result is the 16-bit rounding of the exact max or min of the exact terms (rounding is monotone)
//     and the argmax is the smallest k among the terms that round to it. They are computed in float
//     (arithmetic_t), whose single rounding of a 16-bit sum or product rounds to 16 bits as one.
//   NaN: if any term (or, with accumulate, C_old) is NaN, the result is NaN.
//   Integers, MaxPlus/MinPlus: the zero is exact and absorbing, zero (x) x = zero for every x.
//     Finite inputs must satisfy |x| <= 2^12 (i16), |x| <= 2^28 (i32) or |x| <= 2^60 (i64); within
//     that range no sum overflows and no finite result is ever clipped.
//   Integers, MaxMin/MinMax: every value of the type is a valid input; the zero is exact and
//     absorbing by itself (min(lowest, x) = lowest).
//   MaxMul is defined on non-negative inputs: 0 <= x <= 46340 (i32), 0 <= x <= 3037000499 (i64),
//     any non-negative float. The accumulator starts at the zero 0, so negative inputs give
//     max(0, max_k a*b).
//   OrAnd is defined on booleans in bytes (std::uint8_t, and bool): any nonzero byte is true;
//     results are written 0 or 1 (with accumulate, C = (C_old != 0) OR the product). Operands
//     packed along K into 32-bit words (pack_bits) hold element k in bit k % 32 of word k / 32; the
//     bits past K in the last word are ignored, whatever they hold.
//   LogPlus (f32, f64; bf16 and f16 computed in float, the result rounded once to the type):
//     C[i,j] = log sum_k exp(A[i,k] + B[k,j]), probabilities kept as logarithms
//     (log_gemm below): a NaN term gives NaN; else a +inf term gives +inf; a sum of zeros (every term
//     -inf, or K = 0) gives -inf. Accumulate: C = log(exp(C_old) + exp(that)). No argmax: (+)
//     combines every term.
//   Argmax (int32): the smallest k whose term attains C[i,j]; -1 where no term beats the zero
//     strictly; if the result is NaN, the smallest k whose term is NaN. OrAnd: the smallest k whose
//     term is true, -1 where none is.
//   Backward, for every (i,j) with k = argmax[i,j] in [0, K) (-1 is skipped):
//     MaxPlus, MinPlus: grad_A[i,k] += grad_C[i,j] and grad_B[k,j] += grad_C[i,j]
//     MaxMul (the product rule): grad_A[i,k] += grad_C[i,j] * B[k,j], grad_B[k,j] += grad_C[i,j] * A[i,k]
//     MaxMin, MinMax: grad_C[i,j] goes to the operand whose value the term took: A[i,k] where
//       min(A[i,k], B[k,j]) (MaxMin) or max (MinMax) is A[i,k] (A's on a tie, and where A is NaN),
//       else B[k,j].
//     OrAnd is Boolean: it has no gradient (refused everywhere).
//     bfloat16, float16: each contribution formed and summed in float, the gradient rounded once to
//       the type at the end (with the gradient's old value as the sum's start).
//     LogPlus (softmax_backward below): every term gets its share, from the forward's C instead of
//       an argmax: grad_A[i,k] += sum_j grad_C[i,j] * w and grad_B[k,j] += sum_i grad_C[i,j] * w, with
//       w = exp(A[i,k] + B[k,j] - C[i,j]) as IEEE computes it (a term of -inf weighs 0, +inf against
//       C = +inf and anything against C = NaN give NaN), and w = 0 where C[i,j] = -inf (every term of
//       it is -inf).
//
// Counting (max-plus with multiplicities; counting_gemm below): each element is a pair (value, count),
//   values f32 or f64, counts f64, in two arrays per operand.
//     (x): (va, ca) (x) (vb, cb) = (va + vb, ca * cb)
//     (+): the larger value with its count; equal values (IEEE ==) add their counts
//     zero (-inf, 0), one (0, 1); K = 0 gives the zero; accumulate gives C = C_old (+) that.
//   So C[i,j] is (the max-plus product, the sum over the k that attain it of A's count times B's).
//   Rules, the same in every path:
//     a value -inf is the zero whatever its count: a term, or C_old, of value -inf counts 0, so a
//       result of value -inf has count 0 (also where counts were inf or NaN);
//     +inf is an ordinary value (+inf terms tie with each other and add their counts), but
//       -inf + +inf is NaN, as in MaxPlus;
//     NaN: if any term's value (or C_old's) is NaN, the result is (NaN, NaN);
//     counts follow IEEE arithmetic as they are given (a term of count 0 still sets the value);
//       they are exact integers while every partial sum and product stays at or below 2^53,
//       beyond which they round (and the paths may round differently: they add in other orders);
//     values tie only when they are equal after rounding: for ties that mean something, use values
//       whose sums are exact (integers, or multiples of a power of two, within the mantissa);
//     a -0 value is read, and written, as +0.
#include <tropical/types.hpp>
#include "semiring/gradient_route.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace tropical::reference {

// A strided matrix in host memory: element (i,j) is data[i*row_stride + j*col_stride].
template <class T>
struct HostView {
    T* data;
    std::int64_t rows, cols, row_stride, col_stride;

    T& operator()(std::int64_t i, std::int64_t j) const { return data[i * row_stride + j * col_stride]; }

    operator HostView<const T>() const requires(!std::is_const_v<T>) {
        return {data, rows, cols, row_stride, col_stride};
    }
};

// The semiring's zero and one (the semiring table's, tropical/types.hpp).
template <class T>
constexpr T zero(Semiring s) {
    return zero_of<T>(s);
}
template <class T>
constexpr T one(Semiring s) {
    return one_of<T>(s);
}

// Whether (x) of a semiring is min or max (MaxMin, MinMax) rather than + or *.
constexpr bool is_bottleneck(Semiring s) { return info(s).times == TimesKind::Min || info(s).times == TimesKind::Max; }

// The documented range of finite inputs (see the table above).
template <class T>
struct FiniteRange {
    static constexpr T lowest(Semiring s) {
        if (s == Semiring::MaxMul) return T(0);
        if constexpr (is_floating_element_v<T>) return std::numeric_limits<T>::lowest();
        // MaxMin, MinMax: the whole type, less the zero itself.
        else if (s == Semiring::MaxMin) return std::numeric_limits<T>::min() + 1;
        else if (s == Semiring::MinMax) return std::numeric_limits<T>::min();
        else return -highest(s);
    }
    static constexpr T highest(Semiring s) {
        if constexpr (is_floating_element_v<T>) return std::numeric_limits<T>::max();
        else if (s == Semiring::MaxMin) return std::numeric_limits<T>::max();
        else if (s == Semiring::MinMax) return std::numeric_limits<T>::max() - 1;
        else if constexpr (sizeof(T) == 2) return T(1) << 12;  // (MaxMul does not take i16)
        else if constexpr (sizeof(T) == 4) return s == Semiring::MaxMul ? T(46340) : T(1) << 28;
        else return s == Semiring::MaxMul ? T(3037000499LL) : T(1) << 60;
    }
};

namespace detail {

using tropical::detail::is_nan;

template <class T>
T times(Semiring s, T a, T b) {
    if constexpr (!std::is_same_v<arithmetic_t<T>, T>) {  // 16-bit floats: in float, rounded once
        return T(times<arithmetic_t<T>>(s, a, b));
    } else {
        const TimesKind kind = info(s).times;
        if (kind == TimesKind::And) return T(a != T(0) && b != T(0));
        if constexpr (std::is_floating_point_v<T>) {
            // Inputs are read as x + 0, which turns -0 into +0 (and leaves everything else alone), as
            // the kernels do: equal values then have equal bits, and a zero result is +0.
            a = a + T(0);
            b = b + T(0);
        }
        if (kind == TimesKind::Mul) return T(a * b);
        if (kind == TimesKind::Min || kind == TimesKind::Max) {
            if (is_nan(a)) return a;
            if (is_nan(b)) return b;
            return (kind == TimesKind::Min) == (a < b) ? a : b;
        }
        if constexpr (std::is_integral_v<T>) {
            if (a == zero<T>(s) || b == zero<T>(s)) return zero<T>(s);
        }
        return T(a + b);
    }
}

// x is strictly better than y (neither is NaN): smaller where (+) is min, larger otherwise.
template <class T>
bool better(Semiring s, T x, T y) {
    return info(s).plus == PlusKind::Min ? x < y : x > y;
}

template <class T>
T plus(Semiring s, T x, T y) {
    if (info(s).plus == PlusKind::Or) return T(x != T(0) || y != T(0));
    if (is_nan(x)) return x;
    if (is_nan(y)) return y;
    return better(s, y, x) ? y : x;
}

inline void require(bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(what);
}

// A gradient's sums in T's arithmetic type (float for the 16-bit floats), starting from its values
// and stored back rounded once: the same additions in the same order as adding to it directly.
template <class T>
class Sums {
public:
    explicit Sums(const HostView<T>& grad) : cols_(grad.cols), sums_(static_cast<std::size_t>(grad.rows * grad.cols)) {
        for (std::int64_t r = 0; r < grad.rows; ++r)
            for (std::int64_t q = 0; q < grad.cols; ++q) (*this)(r, q) = arithmetic_t<T>(grad(r, q));
    }
    arithmetic_t<T>& operator()(std::int64_t r, std::int64_t q) {
        return sums_[static_cast<std::size_t>(r * cols_ + q)];
    }
    void store(const HostView<T>& grad) {
        for (std::int64_t r = 0; r < grad.rows; ++r)
            for (std::int64_t q = 0; q < grad.cols; ++q) grad(r, q) = T((*this)(r, q));
    }

private:
    std::int64_t cols_;
    std::vector<arithmetic_t<T>> sums_;
};

template <class T, class U, class V>
void check_product(const HostView<T>& a, const HostView<U>& b, const HostView<V>& c) {
    require(a.cols == b.rows, "reference: A is M x K and B must be K x N");
    require(c.rows == a.rows && c.cols == b.cols, "reference: C must be M x N");
}

}  // namespace detail

template <class T>
void log_gemm(HostView<const T> a, HostView<const T> b, HostView<T> c, bool accumulate = false);

template <class T>
void gemm(Semiring s, HostView<const T> a, HostView<const T> b, HostView<T> c, bool accumulate = false) {
    if constexpr (is_floating_element_v<T>) {
        if (info(s).plus == PlusKind::LogSumExp) return log_gemm(a, b, c, accumulate);
    }
    detail::check_product(a, b, c);
    for (std::int64_t i = 0; i < c.rows; ++i) {
        for (std::int64_t j = 0; j < c.cols; ++j) {
            T acc = zero<T>(s);
            for (std::int64_t k = 0; k < a.cols; ++k) acc = detail::plus(s, acc, detail::times(s, a(i, k), b(k, j)));
            // C_old is an input: -0 reads as +0 (and OrAnd's nonzero as 1; its acc is 0 or 1 already).
            c(i, j) = accumulate ? detail::plus(s, T(c(i, j) + T(0)), acc) : acc;
        }
    }
}

template <class T>
void gemm_argmax(Semiring s, HostView<const T> a, HostView<const T> b, HostView<T> c, HostView<std::int32_t> argmax) {
    detail::check_product(a, b, c);
    detail::require(argmax.rows == c.rows && argmax.cols == c.cols, "reference: argmax must be M x N");
    for (std::int64_t i = 0; i < c.rows; ++i) {
        for (std::int64_t j = 0; j < c.cols; ++j) {
            T best = zero<T>(s);
            std::int32_t best_k = -1;
            for (std::int64_t k = 0; k < a.cols && !detail::is_nan(best); ++k) {
                const T t = detail::times(s, a(i, k), b(k, j));
                if (detail::is_nan(t) || detail::better(s, t, best)) {
                    best = t;
                    best_k = static_cast<std::int32_t>(k);
                }
            }
            c(i, j) = best;
            argmax(i, j) = best_k;
        }
    }
}

// The gradient of A (of_a: grad is M x K) or of B (grad is K x N): grad += the route of grad_c
// (M x N) through argmax. a (M x K) and b (K x N) are read where the semiring needs them
// (gradient_reads_a/b: MaxMul the other operand, MaxMin and MinMax both) and may be empty elsewhere.
template <class T>
void backward(Semiring s, bool of_a, HostView<const T> grad_c, HostView<const std::int32_t> argmax, HostView<const T> a,
              HostView<const T> b, HostView<T> grad) {
    const std::int64_t m = grad_c.rows, n = grad_c.cols, k_count = of_a ? grad.cols : grad.rows;
    detail::require(argmax.rows == m && argmax.cols == n, "reference: argmax must be M x N");
    detail::require(of_a ? grad.rows == m : grad.cols == n,
                    of_a ? "reference: grad_A must be M x K" : "reference: grad_B must be K x N");
    if (gradient_reads_a(s, of_a)) detail::require(a.rows == m && a.cols == k_count, "reference: A must be M x K");
    if (gradient_reads_b(s, of_a)) detail::require(b.rows == k_count && b.cols == n, "reference: B must be K x N");
    using A = arithmetic_t<T>;
    detail::Sums<T> sums(grad);
    for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t k = argmax(i, j);
            if (k < 0 || k >= k_count) continue;
            // MaxMin, MinMax: only the operand whose value the term took gets the gradient.
            A g = grad_c(i, j);
            const A a_ik = gradient_reads_a(s, of_a) ? A(a(i, k)) : A(0),
                    b_kj = gradient_reads_b(s, of_a) ? A(b(k, j)) : A(0);
            if (!tropical::detail::route_term(info(s).gradient, of_a, a_ik, b_kj, g)) continue;
            (of_a ? sums(i, k) : sums(k, j)) += g;
        }
    }
    sums.store(grad);
}

// grad_a (M x K) += the route of grad_c (M x N) through argmax; a (M x K) and b (K x N) as backward() reads them.
template <class T>
void backward_a(Semiring s, HostView<const T> grad_c, HostView<const std::int32_t> argmax, HostView<const T> a,
                HostView<const T> b, HostView<T> grad_a) {
    backward<T>(s, true, grad_c, argmax, a, b, grad_a);
}

// grad_b (K x N) += the route of grad_c (M x N) through argmax.
template <class T>
void backward_b(Semiring s, HostView<const T> grad_c, HostView<const std::int32_t> argmax, HostView<const T> a,
                HostView<const T> b, HostView<T> grad_b) {
    backward<T>(s, false, grad_c, argmax, a, b, grad_b);
}

// --- LogPlus -----------------------------------------------------------------------------------

namespace detail {

// log(sum_t exp(t)) over the `count` terms term(0), term(1), ..., by the rules above, summed in long
// double from the largest term so that nothing over- or underflows: the oracle the f32 and f64
// paths are held to. Two passes over the terms (the largest, then the sum), nothing stored.
template <class T, class Term>
T log_sum(std::int64_t count, Term term) {
    long double top = -std::numeric_limits<long double>::infinity();
    for (std::int64_t k = 0; k < count; ++k) {
        const T t = term(k);
        if (std::isnan(t)) return std::numeric_limits<T>::quiet_NaN();
        top = std::max(top, static_cast<long double>(t));
    }
    if (std::isinf(top)) return static_cast<T>(top);  // +inf, or -inf: every term the zero
    long double sum = 0;
    for (std::int64_t k = 0; k < count; ++k) sum += std::exp(static_cast<long double>(term(k)) - top);
    return static_cast<T>(top + std::log(sum));
}

// A term's share of C (its softmax weight): exp(term - C) as IEEE computes it, and 0 where C is -inf
// (a sum of zeros: every term is -inf).
template <class T>
T softmax_weight(T term, T c) {
    if (c == -std::numeric_limits<T>::infinity()) return T(0);
    return static_cast<T>(std::exp(static_cast<long double>(term) - static_cast<long double>(c)));
}

}  // namespace detail

// bfloat16 and float16: the operands widened to float, the terms and the sum as float's, the result
// rounded once to the type.
template <class T>
void log_gemm(HostView<const T> a, HostView<const T> b, HostView<T> c, bool accumulate) {
    static_assert(is_floating_element_v<T>, "LogPlus takes floats");
    using A = arithmetic_t<T>;
    detail::check_product(a, b, c);
    for (std::int64_t i = 0; i < c.rows; ++i)
        for (std::int64_t j = 0; j < c.cols; ++j) {
            // The terms, then C_old as one more where accumulating.
            const auto term = [&](std::int64_t k) {
                return k < a.cols ? A(A(a(i, k)) + A(0)) + A(A(b(k, j)) + A(0)) : A(A(c(i, j)) + A(0));
            };
            c(i, j) = T(detail::log_sum<A>(a.cols + (accumulate ? 1 : 0), term) + A(0));
        }
}

// The gradient of A (of_a: grad is M x K) or of B (grad is K x N) of a LogPlus product: grad += the
// shares of grad_c (M x N) by softmax weights, from a (M x K), b (K x N) and the forward's c (M x N).
template <class T>
void softmax_backward(bool of_a, HostView<const T> grad_c, HostView<const T> c, HostView<const T> a,
                      HostView<const T> b, HostView<T> grad) {
    const std::int64_t m = grad_c.rows, n = grad_c.cols, k_count = a.cols;
    detail::require(c.rows == m && c.cols == n, "reference: C must be M x N");
    detail::require(a.rows == m && b.rows == k_count && b.cols == n, "reference: A must be M x K and B K x N");
    detail::require(of_a ? grad.rows == m && grad.cols == k_count : grad.rows == k_count && grad.cols == n,
                    of_a ? "reference: grad_A must be M x K" : "reference: grad_B must be K x N");
    using A = arithmetic_t<T>;
    detail::Sums<T> sums(grad);
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t k = 0; k < k_count; ++k) {
                const A w = detail::softmax_weight<A>(A(A(a(i, k)) + A(0)) + A(A(b(k, j)) + A(0)), A(c(i, j)));
                (of_a ? sums(i, k) : sums(k, j)) += A(grad_c(i, j)) * w;
            }
    sums.store(grad);
}

// --- OrAnd on packed operands ----------------------------------------------------------------

// Booleans in bytes packed along K into 32-bit words: bytes is M x K with words M x ceil(K/32) when
// packing along its columns (an A), K x N with words ceil(K/32) x N along its rows (a B). Bit k % 32
// of word k / 32 is element k along K; the bits past K are 0.
inline void pack_bits(HostView<const std::uint8_t> bytes, bool along_rows, HostView<std::uint32_t> words) {
    const std::int64_t k_count = along_rows ? bytes.rows : bytes.cols, outer = along_rows ? bytes.cols : bytes.rows;
    const std::int64_t word_count = (k_count + 31) / 32;
    detail::require(
        along_rows ? words.rows == word_count && words.cols == outer : words.rows == outer && words.cols == word_count,
        "reference: the words must be the bytes' shape with K in words of 32");
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t w = 0; w < word_count; ++w) {
            std::uint32_t word = 0;
            for (std::int64_t t = 0; t < 32 && 32 * w + t < k_count; ++t) {
                const std::int64_t k = 32 * w + t;
                if ((along_rows ? bytes(k, o) : bytes(o, k)) != 0) word |= std::uint32_t{1} << t;
            }
            (along_rows ? words(w, o) : words(o, w)) = word;
        }
}

// Element k along K of a packed operand's line of words (the bits past K never are read).
inline bool packed_bit(std::uint32_t word, std::int64_t k) { return ((word >> (k % 32)) & 1u) != 0; }

// C = A (x) B for OrAnd with A (M x ceil(K/32) words) and B (ceil(K/32) x N words) packed along K.
inline void gemm_packed(HostView<const std::uint32_t> a, HostView<const std::uint32_t> b, std::int64_t k_count,
                        HostView<std::uint8_t> c, bool accumulate = false) {
    const std::int64_t word_count = (k_count + 31) / 32;
    detail::require(a.cols == word_count && b.rows == word_count,
                    "reference: A and B must hold ceil(K/32) words along K");
    detail::require(c.rows == a.rows && c.cols == b.cols, "reference: C must be M x N");
    for (std::int64_t i = 0; i < c.rows; ++i)
        for (std::int64_t j = 0; j < c.cols; ++j) {
            std::uint8_t acc = 0;
            for (std::int64_t k = 0; k < k_count; ++k)
                if (packed_bit(a(i, k / 32), k) && packed_bit(b(k / 32, j), k)) acc = 1;
            c(i, j) = accumulate ? detail::plus(Semiring::OrAnd, c(i, j), acc) : acc;
        }
}

inline void gemm_packed_argmax(HostView<const std::uint32_t> a, HostView<const std::uint32_t> b, std::int64_t k_count,
                               HostView<std::uint8_t> c, HostView<std::int32_t> argmax) {
    const std::int64_t word_count = (k_count + 31) / 32;
    detail::require(a.cols == word_count && b.rows == word_count,
                    "reference: A and B must hold ceil(K/32) words along K");
    detail::require(c.rows == a.rows && c.cols == b.cols && argmax.rows == c.rows && argmax.cols == c.cols,
                    "reference: C and argmax must be M x N");
    for (std::int64_t i = 0; i < c.rows; ++i)
        for (std::int64_t j = 0; j < c.cols; ++j) {
            std::int32_t first = -1;
            for (std::int64_t k = 0; k < k_count && first < 0; ++k)
                if (packed_bit(a(i, k / 32), k) && packed_bit(b(k / 32, j), k)) first = static_cast<std::int32_t>(k);
            c(i, j) = first >= 0 ? 1 : 0;
            argmax(i, j) = first;
        }
}

// ---------------------------------------------------------------------------------------------
// Counting (the rules are in the header comment above).

template <class T>
struct Counted {
    T value;
    double count;
};

namespace detail {

// A pair as the rules read it: -0 as +0, a value -inf as the zero (count 0), a NaN value with count NaN.
template <class T>
Counted<T> counted(T value, double count) {
    value = value + T(0);
    if (std::isnan(value)) return {value, std::numeric_limits<double>::quiet_NaN()};
    if (value == -std::numeric_limits<T>::infinity()) return {value, 0.0};
    return {value, count};
}

template <class T>
Counted<T> counting_plus(Counted<T> x, Counted<T> y) {
    if (std::isnan(x.value) || std::isnan(y.value))
        return {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
    if (x.value > y.value) return x;
    if (y.value > x.value) return y;
    return {x.value, x.count + y.count};
}

}  // namespace detail

// C = A (x) B in the counting semiring: values a_value (M x K), b_value (K x N), c_value (M x N) and
// counts of the same shapes; with accumulate, C = C_old (+) that.
template <class T>
void counting_gemm(HostView<const T> a_value, HostView<const double> a_count, HostView<const T> b_value,
                   HostView<const double> b_count, HostView<T> c_value, HostView<double> c_count,
                   bool accumulate = false) {
    detail::check_product(a_value, b_value, c_value);
    detail::require(a_count.rows == a_value.rows && a_count.cols == a_value.cols && b_count.rows == b_value.rows &&
                        b_count.cols == b_value.cols && c_count.rows == c_value.rows && c_count.cols == c_value.cols,
                    "reference: each count matrix must have its value matrix's shape");
    for (std::int64_t i = 0; i < c_value.rows; ++i) {
        for (std::int64_t j = 0; j < c_value.cols; ++j) {
            Counted<T> acc = {-std::numeric_limits<T>::infinity(), 0.0};
            for (std::int64_t k = 0; k < a_value.cols; ++k) {
                const Counted<T> a = detail::counted(a_value(i, k), a_count(i, k));
                const Counted<T> b = detail::counted(b_value(k, j), b_count(k, j));
                acc = detail::counting_plus(acc, detail::counted(a.value + b.value, a.count * b.count));
            }
            if (accumulate) acc = detail::counting_plus(detail::counted(c_value(i, j), c_count(i, j)), acc);
            acc = detail::counted(acc.value, acc.count);
            c_value(i, j) = acc.value;
            c_count(i, j) = acc.count;
        }
    }
}

}  // namespace tropical::reference
