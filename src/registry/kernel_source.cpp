#include "registry/kernel_source.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include <tropical/error.hpp>

// Generated at build time from kernels/tropical_gemm.cu (cmake/EmbedFile.cmake).
extern "C" const char tropical_gemm_kernel_source[];
extern "C" const unsigned long long tropical_gemm_kernel_source_size;

namespace tropical::detail {
namespace {

constexpr std::string_view kMarker = "//@kernel ";

[[noreturn]] void malformed(int line, std::string_view why) {
    throw Error(Status::Internal, fmt::format("kernels/tropical_gemm.cu:{}: malformed kernel marker: {}", line, why));
}

int parse_int(std::string_view value, int line, std::string_view key) {
    int out = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
    if (ec != std::errc() || end != value.data() + value.size() || out < 0)
        malformed(line, fmt::format("{}={} is not a non-negative integer", key, value));
    return out;
}

KernelFragment parse_marker(std::string_view attributes, int line) {
    KernelFragment fragment;
    fragment.first_line = line;
    while (!attributes.empty()) {
        const auto space = attributes.find(' ');
        const auto item = attributes.substr(0, space);
        attributes = space == std::string_view::npos ? std::string_view{} : attributes.substr(space + 1);
        if (item.empty()) continue;
        const auto eq = item.find('=');
        if (eq == std::string_view::npos) malformed(line, fmt::format("'{}' is not key=value", item));
        const auto key = item.substr(0, eq);
        const auto value = item.substr(eq + 1);
        if (key == "name") fragment.name = std::string(value);
        else if (key == "threads") fragment.threads = parse_int(value, line, key);
        else if (key == "tile_m") fragment.tile_m = parse_int(value, line, key);
        else if (key == "tile_n") fragment.tile_n = parse_int(value, line, key);
        else malformed(line, fmt::format("unknown key '{}'", key));
    }
    if (fragment.name.empty()) malformed(line, "no name=");
    if (fragment.threads <= 0 || fragment.threads > 1024) malformed(line, "threads= must be 1..1024");
    return fragment;
}

}  // namespace

KernelSourceFile parse_kernel_source(std::string_view text) {
    KernelSourceFile file;
    std::vector<std::size_t> starts;  // offset of each fragment's marker line
    std::size_t pos = 0;
    int line = 1;
    while (pos < text.size()) {
        const auto eol = std::min(text.find('\n', pos), text.size());
        const auto current = text.substr(pos, eol - pos);
        if (current.starts_with(kMarker)) {
            file.fragments.push_back(parse_marker(current.substr(kMarker.size()), line));
            starts.push_back(pos);
        }
        pos = eol + 1;
        ++line;
    }
    starts.push_back(text.size());
    file.preamble = text.substr(0, starts.front());
    for (std::size_t i = 0; i < file.fragments.size(); ++i)
        file.fragments[i].text = text.substr(starts[i], starts[i + 1] - starts[i]);
    for (std::size_t i = 0; i < file.fragments.size(); ++i)
        for (std::size_t j = i + 1; j < file.fragments.size(); ++j)
            if (file.fragments[i].name == file.fragments[j].name)
                malformed(file.fragments[j].first_line, fmt::format("kernel '{}' is defined twice", file.fragments[j].name));
    return file;
}

const KernelSourceFile& embedded_kernel_source() {
    static const KernelSourceFile file = parse_kernel_source(
        std::string_view(tropical_gemm_kernel_source, static_cast<std::size_t>(tropical_gemm_kernel_source_size)));
    return file;
}

const KernelFragment& fragment_of(const KernelInfo& kernel) {
    // Indexed by registry position once, so that the hot path never searches by name.
    static const std::vector<const KernelFragment*> by_index = [] {
        std::vector<const KernelFragment*> table;
        for (const auto& info : kernel_registry()) {
            const KernelFragment* found = nullptr;
            for (const auto& fragment : embedded_kernel_source().fragments)
                if (fragment.name == info.name) found = &fragment;
            table.push_back(found);
        }
        return table;
    }();
    const KernelFragment* fragment = by_index.at(kernel.index);
    if (!fragment)
        throw Error(Status::Internal,
                    fmt::format("kernels/tropical_gemm.cu has no fragment for registry kernel '{}'", kernel.name));
    return *fragment;
}

std::string translation_unit(const KernelSourceFile& file, const KernelFragment& fragment) {
    std::string unit;
    unit.reserve(file.preamble.size() + fragment.text.size() + 64);
    unit.append(file.preamble);
    unit.append(fmt::format("#line {} \"kernels/tropical_gemm.cu\"\n", fragment.first_line));
    unit.append(fragment.text);
    return unit;
}

}  // namespace tropical::detail
