#pragma once
// CPU reference of tropical-gemm: the semantics, written as plainly as possible. It is the oracle of
// the tests and the CPU path of the PyTorch op, so it follows the definition, not the kernels' tricks.
//
// Semantics
//   C[i,j] = (+)_k A[i,k] (x) B[k,j] over k in [0, K); with K = 0 every output is the zero.
//   With accumulate: C = C_old (+) that.
//
//   | semiring | (+) | (x) | zero                              | one |
//   | MaxPlus  | max |  +  | -inf (integers: the type's minimum) |  0  |
//   | MinPlus  | min |  +  | +inf (integers: the type's maximum) |  0  |
//   | MaxMul   | max |  *  | 0                                 |  1  |
//
//   Floating point: (x) is IEEE + or *, so -inf + +inf = NaN and 0 * inf = NaN; a -0 input is read
//   as +0.
//   NaN: if any term (or, with accumulate, C_old) is NaN, the result is NaN.
//   Integers, MaxPlus/MinPlus: the zero is exact and absorbing, zero (x) x = zero for every x.
//     Finite inputs must satisfy |x| <= 2^28 (i32) or |x| <= 2^60 (i64); within that range no sum
//     overflows and no finite result is ever clipped.
//   MaxMul is defined on non-negative inputs: 0 <= x <= 46340 (i32), 0 <= x <= 3037000499 (i64),
//     any non-negative float. The accumulator starts at the zero 0, so negative inputs give
//     max(0, max_k a*b).
//   Argmax (int32): the smallest k whose term attains C[i,j]; -1 where no term beats the zero
//     strictly; if the result is NaN, the smallest k whose term is NaN.
//   Backward, for every (i,j) with k = argmax[i,j] in [0, K) (-1 is skipped):
//     grad_A[i,k] += grad_C[i,j] * (MaxMul ? B[k,j] : 1)
//     grad_B[k,j] += grad_C[i,j] * (MaxMul ? A[i,k] : 1)
#include <tropical/types.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace tropical::reference {

// A strided matrix in host memory: element (i,j) is data[i*row_stride + j*col_stride].
template <class T>
struct HostView {
    T* data;
    std::int64_t rows, cols, row_stride, col_stride;

    T& operator()(std::int64_t i, std::int64_t j) const { return data[i * row_stride + j * col_stride]; }

    operator HostView<const T>() const
        requires(!std::is_const_v<T>)
    {
        return {data, rows, cols, row_stride, col_stride};
    }
};

template <class T>
constexpr T zero(Semiring s) {
    using L = std::numeric_limits<T>;
    switch (s) {
    case Semiring::MaxPlus: return std::is_floating_point_v<T> ? -L::infinity() : L::min();
    case Semiring::MinPlus: return std::is_floating_point_v<T> ? L::infinity() : L::max();
    case Semiring::MaxMul: return T(0);
    }
    return T(0);
}

template <class T>
constexpr T one(Semiring s) {
    return s == Semiring::MaxMul ? T(1) : T(0);
}

// The documented range of finite inputs (see the table above).
template <class T>
struct FiniteRange {
    static constexpr T lowest(Semiring s) {
        if (s == Semiring::MaxMul) return T(0);
        if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::lowest();
        else return -highest(s);
    }
    static constexpr T highest(Semiring s) {
        if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::max();
        else if constexpr (sizeof(T) == 4) return s == Semiring::MaxMul ? T(46340) : T(1) << 28;
        else return s == Semiring::MaxMul ? T(3037000499LL) : T(1) << 60;
    }
};

namespace detail {

template <class T>
bool is_nan(T x) {
    if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
    else return false;
}

template <class T>
T times(Semiring s, T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        // Inputs are read as x + 0, which turns -0 into +0 (and leaves everything else alone), as
        // the kernels do: equal values then have equal bits, and a zero result is +0.
        a = a + T(0);
        b = b + T(0);
    }
    if (s == Semiring::MaxMul) return a * b;
    if constexpr (std::is_integral_v<T>) {
        if (a == zero<T>(s) || b == zero<T>(s)) return zero<T>(s);
    }
    return a + b;
}

// x is strictly better than y (neither is NaN).
template <class T>
bool better(Semiring s, T x, T y) {
    return s == Semiring::MinPlus ? x < y : x > y;
}

template <class T>
T plus(Semiring s, T x, T y) {
    if (is_nan(x)) return x;
    if (is_nan(y)) return y;
    return better(s, y, x) ? y : x;
}

inline void require(bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(what);
}

template <class T, class U, class V>
void check_product(const HostView<T>& a, const HostView<U>& b, const HostView<V>& c) {
    require(a.cols == b.rows, "reference: A is M x K and B must be K x N");
    require(c.rows == a.rows && c.cols == b.cols, "reference: C must be M x N");
}

}  // namespace detail

template <class T>
void gemm(Semiring s, HostView<const T> a, HostView<const T> b, HostView<T> c, bool accumulate = false) {
    detail::check_product(a, b, c);
    for (std::int64_t i = 0; i < c.rows; ++i) {
        for (std::int64_t j = 0; j < c.cols; ++j) {
            T acc = zero<T>(s);
            for (std::int64_t k = 0; k < a.cols; ++k) acc = detail::plus(s, acc, detail::times(s, a(i, k), b(k, j)));
            c(i, j) = accumulate ? detail::plus(s, c(i, j), acc) : acc;
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

// The gradient of A (of_a: grad is M x K, other is B, K x N) or of B (grad is K x N, other is A,
// M x K): grad += the route of grad_c (M x N) through argmax; other is read for MaxMul only.
template <class T>
void backward(Semiring s, bool of_a, HostView<const T> grad_c, HostView<const std::int32_t> argmax,
              HostView<const T> other, HostView<T> grad) {
    const std::int64_t m = grad_c.rows, n = grad_c.cols, k_count = of_a ? other.rows : other.cols;
    detail::require(argmax.rows == m && argmax.cols == n, "reference: argmax must be M x N");
    detail::require(of_a ? other.cols == n : other.rows == m, of_a ? "reference: B must be K x N" : "reference: A must be M x K");
    detail::require(of_a ? grad.rows == m && grad.cols == k_count : grad.rows == k_count && grad.cols == n,
                    of_a ? "reference: grad_A must be M x K" : "reference: grad_B must be K x N");
    for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t k = argmax(i, j);
            if (k < 0 || k >= k_count) continue;
            const T factor = s == Semiring::MaxMul ? (of_a ? other(k, j) : other(i, k)) : T(1);
            (of_a ? grad(i, k) : grad(k, j)) += grad_c(i, j) * factor;
        }
    }
}

// grad_a (M x K) += the route of grad_c (M x N) through argmax; b is K x N.
template <class T>
void backward_a(Semiring s, HostView<const T> grad_c, HostView<const std::int32_t> argmax, HostView<const T> b,
                HostView<T> grad_a) {
    backward<T>(s, true, grad_c, argmax, b, grad_a);
}

// grad_b (K x N) += the route of grad_c (M x N) through argmax; a is M x K.
template <class T>
void backward_b(Semiring s, HostView<const T> grad_c, HostView<const std::int32_t> argmax, HostView<const T> a,
                HostView<T> grad_b) {
    backward<T>(s, false, grad_c, argmax, a, grad_b);
}

}  // namespace tropical::reference
