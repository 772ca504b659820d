#include <tropical/error.hpp>

namespace tropical {

const char* to_string(Status status) noexcept {
    switch (status) {
#define TROPICAL_STATUS_WORDS(c_suffix, name, value, words) \
    case Status::name: return words;
        TROPICAL_STATUS_LIST(TROPICAL_STATUS_WORDS)
#undef TROPICAL_STATUS_WORDS
    }
    return "unknown status";
}

}  // namespace tropical
