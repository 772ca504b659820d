#pragma once
// What every C entry point of the library does around its body: exceptions become a status and a
// message for the calling thread (tropical_last_error_message()). Shared by the C ABI and the Python
// package's CPU helpers (python/src/host_api.cpp), so that both report alike.
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>

#include <tropical/c_api.h>
#include <tropical/error.hpp>

namespace tropical::detail {

// The calling thread's last message: set by a failed call, cleared by a successful one.
void set_last_error(const char* message) noexcept;

template <class Body>
tropical_status guarded(Body&& body) noexcept {
    try {
        body();
        set_last_error("");
        return TROPICAL_SUCCESS;
    } catch (const Error& e) {
        set_last_error(e.what());
        return static_cast<tropical_status>(e.status());
    } catch (const std::bad_alloc&) {
        set_last_error("out of host memory");
        return TROPICAL_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
        set_last_error(e.what());
        return TROPICAL_INTERNAL_ERROR;
    } catch (...) {
        set_last_error("unknown exception");
        return TROPICAL_INTERNAL_ERROR;
    }
}

// C enums arrive as whatever int the caller passed (C allows any, and so does ctypes). In C++ a
// value outside an enum's range (0..3 for tropical_dtype) must not even be read through the enum
// type, so the argument's bits are read as the int32 they are, then range-checked.
template <class CEnum>
std::int32_t raw(const CEnum& value) noexcept {
    static_assert(sizeof(CEnum) == sizeof(std::int32_t));
    std::int32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

// Throws InvalidArgument naming `what` where the pointer the caller gave is NULL.
void require_pointer(const void* pointer, const char* what);

}  // namespace tropical::detail
