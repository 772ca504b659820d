#pragma once
// A term's gradient on the host, by its semiring's gradient route (tropical/semiring_table.h): what
// grad_C[i,j] adds to grad_A[i,k] or grad_B[k,j] at the argmax k. The reference
// (src/reference/reference.hpp) and the CPU backward (src/cpu/host_backward.cpp) both route by it;
// the device's twin is kernels/backward.cuh's, which takes the route as a TgRoute.
#include <cmath>
#include <type_traits>

#include <tropical/types.hpp>

namespace tropical::detail {

template <class T>
bool is_nan(T x) {
    if constexpr (is_floating_element_v<T>) return std::isnan(static_cast<arithmetic_t<T>>(x));
    else return false;
}

// Whether A's value is the one a ToMin (MaxMin: the smaller) or ToMax (MinMax: the larger) term took:
// A's on a tie, and where A is NaN.
template <class T>
bool a_attains(GradientRoute route, T a, T b) {
    if (is_nan(a)) return true;
    if (is_nan(b)) return false;
    return route == GradientRoute::ToMin ? a <= b : a >= b;
}

// Turns g = grad_C[i,j] into what the gradient of A (of_a) or of B receives through the term of
// a_ik = A[i,k] and b_kj = B[k,j]; false where that operand receives nothing (the other one took the
// term). a_ik and b_kj are read only where the route needs them (gradient_reads_a / _b).
template <class T>
bool route_term(GradientRoute route, bool of_a, T a_ik, T b_kj, T& g) {
    switch (route) {
    case GradientRoute::Product: g *= of_a ? b_kj : a_ik; return true;
    case GradientRoute::ToMin:
    case GradientRoute::ToMax: return a_attains(route, a_ik, b_kj) == of_a;
    case GradientRoute::AsIs: return true;
    case GradientRoute::Softmax:  // every term gets a share (reference.hpp's softmax_backward), not one k
    case GradientRoute::None: break;
    }
    return false;
}

}  // namespace tropical::detail
