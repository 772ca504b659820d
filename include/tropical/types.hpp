#pragma once
// Vocabulary shared by the whole public API: semirings, element types and layouts.
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace tropical {

// Counting: max-plus with multiplicities; its elements are (value, count) pairs, so it has its own
// entry points (tropical/counting.hpp) and the scalar ones refuse it. OrAnd: the Boolean semiring.
enum class Semiring : std::uint8_t { MaxPlus, MinPlus, MaxMul, MaxMin, MinMax, Counting, OrAnd };
// U8: booleans in bytes (nonzero is true; results are written 0 or 1), the type of OrAnd alone.
enum class DType : std::uint8_t { F32, F64, I32, I64, U8 };
enum class Layout : std::uint8_t { RowMajor, ColMajor };

// Every semiring and element type, in their enums' order.
inline constexpr Semiring all_semirings[] = {Semiring::MaxPlus, Semiring::MinPlus,  Semiring::MaxMul, Semiring::MaxMin,
                                             Semiring::MinMax,  Semiring::Counting, Semiring::OrAnd};
inline constexpr DType all_dtypes[] = {DType::F32, DType::F64, DType::I32, DType::I64, DType::U8};

// Whether an element type fits a semiring: U8 is OrAnd's alone, and OrAnd takes nothing else (the
// counting semiring's value types are checked by its own entry points). Loops over all_semirings x
// all_dtypes skip the other pairs.
constexpr bool supports(Semiring s, DType t) { return (s == Semiring::OrAnd) == (t == DType::U8); }

// Whether a semiring's elements are (value, count) pairs rather than scalars.
constexpr bool is_counting(Semiring s) { return s == Semiring::Counting; }

// Whether a semiring has gradients (the backward kernels serve it): all but OrAnd, which is Boolean,
// and counting, which has no backward.
constexpr bool has_gradient(Semiring s) { return s != Semiring::OrAnd && !is_counting(s); }

// Tag types, so that a call reads as tropical::gemm<tropical::MaxPlus>(A, B, C).
struct MaxPlus {
    static constexpr Semiring value = Semiring::MaxPlus;
};
struct MinPlus {
    static constexpr Semiring value = Semiring::MinPlus;
};
struct MaxMul {
    static constexpr Semiring value = Semiring::MaxMul;
};
struct MaxMin {
    static constexpr Semiring value = Semiring::MaxMin;
};
struct MinMax {
    static constexpr Semiring value = Semiring::MinMax;
};
struct Counting {
    static constexpr Semiring value = Semiring::Counting;
};
// C[i,j] = OR_k (A[i,k] AND B[k,j]) on booleans (reachability, transitive closure): std::uint8_t or
// bool elements, or operands packed along K into 32-bit words (tropical::pack_bits, gemm_packed).
struct OrAnd {
    static constexpr Semiring value = Semiring::OrAnd;
};

template <class T>
concept SemiringTag = std::is_same_v<T, MaxPlus> || std::is_same_v<T, MinPlus> || std::is_same_v<T, MaxMul> ||
    std::is_same_v<T, MaxMin> || std::is_same_v<T, MinMax> || std::is_same_v<T, OrAnd>;

// bool counts as U8: one byte, read as nonzero = true, written 0 or 1 (a valid bool).
template <class T>
concept Element = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t> ||
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, bool>;

template <Element T>
constexpr DType dtype_of() {
    if constexpr (std::is_same_v<T, float>) return DType::F32;
    else if constexpr (std::is_same_v<T, double>) return DType::F64;
    else if constexpr (std::is_same_v<T, std::int32_t>) return DType::I32;
    else if constexpr (std::is_same_v<T, std::int64_t>) return DType::I64;
    else return DType::U8;
}

// Whether semiring tag S is defined on element type T (supports(), at compile time).
template <class S, class T>
inline constexpr bool semiring_supports = supports(S::value, dtype_of<T>());

constexpr std::size_t size_of(DType t) { return t == DType::U8 ? 1 : (t == DType::F32 || t == DType::I32) ? 4 : 8; }
constexpr bool is_floating(DType t) { return t == DType::F32 || t == DType::F64; }

constexpr std::string_view to_string(Semiring s) {
    switch (s) {
    case Semiring::MaxPlus: return "maxplus";
    case Semiring::MinPlus: return "minplus";
    case Semiring::MaxMul: return "maxmul";
    case Semiring::MaxMin: return "maxmin";
    case Semiring::MinMax: return "minmax";
    case Semiring::Counting: return "counting";
    case Semiring::OrAnd: return "orand";
    }
    return "?";
}

constexpr std::string_view to_string(DType t) {
    switch (t) {
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::U8: return "u8";
    }
    return "?";
}

constexpr std::string_view to_string(Layout l) { return l == Layout::RowMajor ? "row-major" : "column-major"; }

}  // namespace tropical
