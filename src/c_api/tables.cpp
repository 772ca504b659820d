// The C ABI's view of the semiring and element-type tables (tropical/semiring_table.h): names,
// gradients and the facts other languages derive their own behaviour from.
#include <iterator>

#include <tropical/c_api.h>
#include <tropical/types.hpp>
#include "c_api/guard.hpp"
#include "c_api/request.hpp"

namespace {

using tropical::detail::raw;

// The words and symbols of the kinds, from their lists.
const char* plus_word(tropical::PlusKind kind) {
    switch (kind) {
#define TROPICAL_WORD(c_suffix, name, value, word) \
    case tropical::PlusKind::name: return word;
        TROPICAL_PLUS_KIND_LIST(TROPICAL_WORD)
#undef TROPICAL_WORD
    }
    return "?";
}

const char* times_word(tropical::TimesKind kind, bool symbol) {
    switch (kind) {
#define TROPICAL_WORD(c_suffix, name, value, word, sign) \
    case tropical::TimesKind::name: return symbol ? sign : word;
        TROPICAL_TIMES_KIND_LIST(TROPICAL_WORD)
#undef TROPICAL_WORD
    }
    return "?";
}

const char* kind_word(tropical::DTypeKind kind) {
    switch (kind) {
#define TROPICAL_WORD(c_suffix, name, value, word) \
    case tropical::DTypeKind::name: return word;
        TROPICAL_DTYPE_KIND_LIST(TROPICAL_WORD)
#undef TROPICAL_WORD
    }
    return "?";
}

// The semiring a C caller named, or null for a value that is no semiring.
const tropical::SemiringInfo* semiring_row(std::int32_t value) {
    if (value < 0 || value >= static_cast<std::int32_t>(std::size(tropical::semiring_table))) return nullptr;
    return &tropical::semiring_table[value];
}

}  // namespace

extern "C" {

const char* tropical_semiring_name(tropical_semiring semiring) {
    const auto* row = semiring_row(raw(semiring));
    return row ? row->name.data() : nullptr;  // a literal: NUL-terminated
}

int32_t tropical_semiring_has_gradient(tropical_semiring semiring) {
    const auto* row = semiring_row(raw(semiring));
    return row ? (row->has_gradient() ? 1 : 0) : -1;
}

tropical_status tropical_semiring_facts_of(tropical_semiring semiring, tropical_semiring_facts* facts) {
    return tropical::detail::guarded([&] {
        const tropical::SemiringInfo& row = tropical::info(tropical::detail::semiring_from_c(raw(semiring)));
        tropical::detail::require_pointer(facts, "facts");
        *facts = {row.name.data(),
                  plus_word(row.plus),
                  times_word(row.times, false),
                  times_word(row.times, true),
                  static_cast<int32_t>(row.plus),
                  static_cast<int32_t>(row.times),
                  static_cast<int32_t>(row.zero),
                  static_cast<int32_t>(row.one),
                  static_cast<int32_t>(row.gradient),
                  row.selects() ? 1 : 0,
                  row.prefers(),
                  row.pairs() ? 1 : 0,
                  row.dtypes};
    });
}

tropical_status tropical_dtype_facts_of(tropical_dtype dtype, tropical_dtype_facts* facts) {
    return tropical::detail::guarded([&] {
        const tropical::DType t = tropical::detail::dtype_from_c(raw(dtype));
        const tropical::DTypeInfo& row = tropical::info(t);
        tropical::detail::require_pointer(facts, "facts");
        *facts = {row.tag.data(),
                  row.name.data(),
                  static_cast<int32_t>(row.size),
                  static_cast<int32_t>(row.kind),
                  kind_word(row.kind),
                  {}};
        for (std::size_t i = 0; i < std::size(facts->identity_bits); ++i)
            facts->identity_bits[i] = tropical::identity_bits(static_cast<tropical::Identity>(i), t);
    });
}

}  // extern "C"
