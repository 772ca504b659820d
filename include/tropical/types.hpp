#pragma once
// Vocabulary shared by the whole public API: semirings, element types and layouts, and the facts of
// each, all made from the one table of tropical/semiring_table.h.
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include <tropical/semiring_table.h>
#include <tropical/float16.hpp>

namespace tropical {

#define TROPICAL_ENUMERATOR(c_suffix, name, value, ...) name = value,
// Counting: max-plus with multiplicities; its elements are (value, count) pairs, so it has its own
// entry points (tropical/counting.hpp) and the scalar ones refuse it. OrAnd: the Boolean semiring.
enum class Semiring : std::uint8_t { TROPICAL_SEMIRING_LIST(TROPICAL_ENUMERATOR) };
// U8: booleans in bytes (nonzero is true; results are written 0 or 1), the type of OrAnd alone.
enum class DType : std::uint8_t { TROPICAL_DTYPE_LIST(TROPICAL_ENUMERATOR) };
// The kinds the table's columns take (tropical/semiring_table.h says what each means).
enum class PlusKind : std::uint8_t { TROPICAL_PLUS_KIND_LIST(TROPICAL_ENUMERATOR) };
enum class TimesKind : std::uint8_t { TROPICAL_TIMES_KIND_LIST(TROPICAL_ENUMERATOR) };
enum class Identity : std::uint8_t { TROPICAL_IDENTITY_LIST(TROPICAL_ENUMERATOR) };
enum class GradientRoute : std::uint8_t { TROPICAL_GRADIENT_LIST(TROPICAL_ENUMERATOR) };
enum class DTypeKind : std::uint8_t { TROPICAL_DTYPE_KIND_LIST(TROPICAL_ENUMERATOR) };
#undef TROPICAL_ENUMERATOR
enum class Layout : std::uint8_t { RowMajor, ColMajor };

// A semiring's row.
struct SemiringInfo {
    Semiring semiring;
    std::string_view name;  // "maxplus": the C ABI's, the Python package's and the kernels' name
    PlusKind plus;
    TimesKind times;
    Identity zero, one;  // counting: its values' (its counts' are 0 and 1)
    GradientRoute gradient;
    std::uint32_t dtypes;  // bit t: takes DType t (counting: its values' types)

    // Whether (+) selects one term, so that the index of the term that attains a result (the argmax)
    // exists; otherwise it combines terms (the counting semiring's counts, LogPlus's log-sum-exp).
    constexpr bool selects() const { return plus == PlusKind::Max || plus == PlusKind::Min || plus == PlusKind::Or; }
    // Whether elements are (value, count) pairs (the counting semiring) rather than scalars.
    constexpr bool pairs() const { return plus == PlusKind::MaxCount; }
    constexpr bool has_gradient() const { return gradient != GradientRoute::None; }
    // +1 where (+) keeps the larger of two values (max; or, as true > false; counting's values), -1
    // where it keeps the smaller (min): the order a reduction across devices must follow.
    constexpr int prefers() const { return plus == PlusKind::Min ? -1 : +1; }
};

// An element type's row.
struct DTypeInfo {
    DType dtype;
    std::string_view tag;          // "f32": kernel names and messages
    std::string_view name;         // "float32": PyTorch's and NumPy's name
    std::string_view device_type;  // "float": its spelling in the device code
    std::size_t size;              // bytes
    DTypeKind kind;
};

inline constexpr SemiringInfo semiring_table[] = {
#define TROPICAL_ROW(c_suffix, name, value, text, plus, times, zero, one, gradient, dtypes) \
    {Semiring::name,                                                                        \
     text,                                                                                  \
     PlusKind(TROPICAL_PLUS_##plus),                                                        \
     TimesKind(TROPICAL_TIMES_##times),                                                     \
     Identity(TROPICAL_IDENTITY_##zero),                                                    \
     Identity(TROPICAL_IDENTITY_##one),                                                     \
     GradientRoute(TROPICAL_GRADIENT_##gradient),                                           \
     dtypes},
    TROPICAL_SEMIRING_LIST(TROPICAL_ROW)
#undef TROPICAL_ROW
};

inline constexpr DTypeInfo dtype_table[] = {
#define TROPICAL_ROW(c_suffix, name, value, c_type, device, tag, text, kind) \
    {DType::name, tag, text, device, sizeof(c_type), DTypeKind(TROPICAL_DTYPE_KIND_##kind)},
    TROPICAL_DTYPE_LIST(TROPICAL_ROW)
#undef TROPICAL_ROW
};

// Every semiring and element type, in their enums' order (which is the table's: checked below).
inline constexpr Semiring all_semirings[] = {
#define TROPICAL_ITEM(c_suffix, name, ...) Semiring::name,
    TROPICAL_SEMIRING_LIST(TROPICAL_ITEM)
#undef TROPICAL_ITEM
};
inline constexpr DType all_dtypes[] = {
#define TROPICAL_ITEM(c_suffix, name, ...) DType::name,
    TROPICAL_DTYPE_LIST(TROPICAL_ITEM)
#undef TROPICAL_ITEM
};

namespace detail {
template <class Row, std::size_t N, class Id>
constexpr bool rows_in_value_order(const Row (&rows)[N], Id Row::*id) {
    for (std::size_t i = 0; i < N; ++i)
        if (static_cast<std::size_t>(rows[i].*id) != i) return false;
    return true;
}
}  // namespace detail
static_assert(detail::rows_in_value_order(semiring_table, &SemiringInfo::semiring),
              "TROPICAL_SEMIRING_LIST's values must be 0, 1, 2, ... in the order of its rows");
static_assert(detail::rows_in_value_order(dtype_table, &DTypeInfo::dtype),
              "TROPICAL_DTYPE_LIST's values must be 0, 1, 2, ... in the order of its rows");

// The row of a semiring or an element type (one of the enum's values).
constexpr const SemiringInfo& info(Semiring s) { return semiring_table[static_cast<std::size_t>(s)]; }
constexpr const DTypeInfo& info(DType t) { return dtype_table[static_cast<std::size_t>(t)]; }

// Whether an element type fits a semiring: U8 is OrAnd's alone, and OrAnd takes nothing else;
// counting takes f32 and f64 values. Loops over all_semirings x all_dtypes skip the other pairs.
constexpr bool supports(Semiring s, DType t) { return (info(s).dtypes >> static_cast<unsigned>(t)) & 1u; }

// Whether a semiring's elements are (value, count) pairs rather than scalars.
constexpr bool is_counting(Semiring s) { return info(s).pairs(); }

// Whether a semiring has gradients (the backward kernels serve it): all but OrAnd, which is Boolean,
// and counting, which has no backward.
constexpr bool has_gradient(Semiring s) { return info(s).has_gradient(); }

// Whether the gradient of A (of_a) or of B reads operand A, and operand B: the other operand for the
// product rule, both where the gradient goes to the operand the term took.
constexpr bool gradient_reads_a(Semiring s, bool of_a) {
    const GradientRoute r = info(s).gradient;
    return (r == GradientRoute::Product && !of_a) || r == GradientRoute::ToMin || r == GradientRoute::ToMax ||
           r == GradientRoute::Softmax;
}
constexpr bool gradient_reads_b(Semiring s, bool of_a) {
    const GradientRoute r = info(s).gradient;
    return (r == GradientRoute::Product && of_a) || r == GradientRoute::ToMin || r == GradientRoute::ToMax ||
           r == GradientRoute::Softmax;
}
// Whether a backward pass reads the forward's result C where the others read its argmax: the
// gradient then reaches every term, weighted by exp(term - C) (LogPlus).
constexpr bool gradient_reads_result(Semiring s) { return info(s).gradient == GradientRoute::Softmax; }

constexpr std::size_t size_of(DType t) { return info(t).size; }
constexpr bool is_floating(DType t) { return info(t).kind == DTypeKind::Float; }

constexpr std::string_view to_string(Semiring s) {
    return static_cast<std::size_t>(s) < std::size(semiring_table) ? info(s).name : "?";
}
constexpr std::string_view to_string(DType t) {
    return static_cast<std::size_t>(t) < std::size(dtype_table) ? info(t).tag : "?";
}
constexpr std::string_view to_string(Layout l) { return l == Layout::RowMajor ? "row-major" : "column-major"; }

// The host type of an element type's elements (element_t<DType::F32> is float).
template <DType t>
struct element_of;
#define TROPICAL_ELEMENT(c_suffix, name, value, c_type, ...) \
    template <>                                              \
    struct element_of<DType::name> {                         \
        using type = c_type;                                 \
    };
TROPICAL_DTYPE_LIST(TROPICAL_ELEMENT)
#undef TROPICAL_ELEMENT
template <DType t>
using element_t = typename element_of<t>::type;

// f(T{}) with T the host type of t's elements (t one of the enum's values), and its result.
template <class F>
constexpr decltype(auto) with_element_type(DType t, F&& f) {
    switch (t) {
#define TROPICAL_CASE(c_suffix, name, value, c_type, ...) \
    case DType::name: return f(c_type{});
        TROPICAL_DTYPE_LIST(TROPICAL_CASE)
#undef TROPICAL_CASE
    }
    return f(element_t<DType::U8>{});  // not reached for a valid t
}

namespace detail {
// The element type whose host type is T, or none.
template <class T>
constexpr int dtype_index_of() {
    for (DType t : all_dtypes)
        if (with_element_type(t, [](auto x) { return std::is_same_v<decltype(x), T>; })) return static_cast<int>(t);
    return -1;
}
}  // namespace detail

// Whether T is a floating element type: float, double, or a 16-bit one (tropical/float16.hpp).
template <class T>
inline constexpr bool is_floating_element_v =
    std::is_floating_point_v<T> || std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>;

// The host type T's arithmetic runs in: float for the 16-bit floats (a sum or a product of two of
// them formed in float and rounded once to 16 bits is their IEEE result, float carrying more than
// twice their digits), T itself otherwise (int16_t's operators promote to int by themselves).
template <class T>
using arithmetic_t = std::conditional_t<std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>, float, T>;

// bool counts as U8: one byte, read as nonzero = true, written 0 or 1 (a valid bool).
template <class T>
concept Element = std::is_same_v<T, bool> || detail::dtype_index_of<T>()
>= 0;

template <Element T>
constexpr DType dtype_of() {
    if constexpr (std::is_same_v<T, bool>) return DType::U8;
    else return static_cast<DType>(detail::dtype_index_of<T>());
}

// The element of type T that an Identity stands for: Lowest is -inf (floats), the minimum (integers)
// or false; Highest +inf, the maximum or true; Zero and One 0 and 1.
template <class T>
constexpr T identity(Identity which) {
    using L = std::numeric_limits<T>;
    switch (which) {
    case Identity::Lowest: return L::has_infinity ? T(-L::infinity()) : L::lowest();
    case Identity::Highest: return L::has_infinity ? L::infinity() : std::is_unsigned_v<T> ? T(1) : L::max();
    case Identity::Zero: return T(0);
    case Identity::One: return T(1);
    }
    return T(0);
}

// A semiring's zero (what K = 0 gives, and x (+) zero = x) and one (x (x) one = x) in type T.
template <class T>
constexpr T zero_of(Semiring s) {
    return identity<T>(info(s).zero);
}
template <class T>
constexpr T one_of(Semiring s) {
    return identity<T>(info(s).one);
}

// The bits of an Identity's element of type t, in the low size_of(t) bytes.
constexpr std::uint64_t identity_bits(Identity which, DType t) {
    return with_element_type(t, [which](auto x) -> std::uint64_t {
        using T = decltype(x);
        using Word =
            std::conditional_t<sizeof(T) == 1, std::uint8_t,
                               std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                                  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
        return std::bit_cast<Word>(identity<T>(which));
    });
}

// Tag types, so that a call reads as tropical::gemm<tropical::MaxPlus>(A, B, C); tag_of<s> is s's.
template <Semiring s>
struct tag_of;
#define TROPICAL_TAG(c_suffix, name, ...)                 \
    struct name {                                         \
        static constexpr Semiring value = Semiring::name; \
    };                                                    \
    template <>                                           \
    struct tag_of<Semiring::name> {                       \
        using type = name;                                \
    };
TROPICAL_SEMIRING_LIST(TROPICAL_TAG)
#undef TROPICAL_TAG

// The tags of the semirings on scalars (counting's pairs have entry points of their own).
template <class T>
concept SemiringTag = requires {
    { T::value } -> std::convertible_to<Semiring>;
}
&&std::is_same_v<T, typename tag_of<T::value>::type> && !is_counting(T::value);

// Whether semiring tag S is defined on element type T (supports(), at compile time).
template <class S, class T>
inline constexpr bool semiring_supports = supports(S::value, dtype_of<T>());

}  // namespace tropical
