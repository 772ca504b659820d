// The results as one JSON document on standard output, for scripts. Fields are only ever added:
// scripts (and .ci/gpu-session.sh) read them by name.
#include <cmath>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "render.hpp"
#include "words.hpp"

namespace warmup {
namespace {

// Ordered: the fields come out in the order written, the most telling first.
using Json = nlohmann::ordered_json;

// --- text that is not UTF-8 ---------------------------------------------------------------------

// The length of the UTF-8 character that `s` starts with (1 to 4 bytes), or 0 where it starts with
// none: a stray continuation byte, an overlong form, a surrogate, a code point beyond U+10FFFF, or
// a character cut short. The same rules as the JSON writer's check, which would throw otherwise.
std::size_t utf8_length(std::string_view s) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80) return 1;
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the range of the second byte; later ones are 80..BF
    if (lead >= 0xC2 && lead <= 0xDF) length = 2;
    else if (lead == 0xE0) length = 3, low = 0xA0;
    else if (lead == 0xED) length = 3, high = 0x9F;
    else if (lead >= 0xE1 && lead <= 0xEF) length = 3;
    else if (lead == 0xF0) length = 4, low = 0x90;
    else if (lead == 0xF4) length = 4, high = 0x8F;
    else if (lead >= 0xF1 && lead <= 0xF3) length = 4;
    else return 0;
    if (s.size() < length || byte(1) < low || byte(1) > high) return 0;
    for (std::size_t i = 2; i < length; ++i)
        if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
    return length;
}

bool is_hex_digit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// JSON text must be UTF-8, and file names are bytes. Each byte outside a UTF-8 character becomes
// the four characters \xNN, and a backslash that would read as such an escape becomes \x5c, so
// that replacing every \xNN by the byte NN restores the bytes exactly (--help documents it). Text
// that is UTF-8 and holds no such backslash, nearly all of it, is left as it is.
std::string utf8_text(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t length = utf8_length(s.substr(i));
        const bool reads_as_escape =
            s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x' && is_hex_digit(s[i + 2]) && is_hex_digit(s[i + 3]);
        if (length == 0 || reads_as_escape) {
            out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
            ++i;
        } else {
            out.append(s.substr(i, length));
            i += length;
        }
    }
    return out;
}

// Applied to the whole document just before it is written, so that no string can slip past.
void make_utf8(Json& value) {
    if (value.is_string()) {
        auto& text = value.get_ref<std::string&>();
        text = utf8_text(text);
    } else if (value.is_structured()) {
        for (auto& item : value) make_utf8(item);
    }
}

void print(Json document) {
    document["warnings"] = warnings_so_far();
    make_utf8(document);
    std::printf("%s\n", document.dump().c_str());
}

// --- fields --------------------------------------------------------------------------------------

// Seconds to a tenth of a millisecond, as the tool has always written them; null if not finite.
Json seconds(double value) {
    if (!std::isfinite(value)) return nullptr;
    return std::round(value * 1e4) / 1e4;
}

// Text that may be absent: null where empty.
Json text_or_null(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

Json error_of(const std::optional<Fatal>& error) {
    if (!error) return nullptr;
    return {{"kind", exit_kind(error->code)}, {"message", error->message}};
}

// What a kernel is, after its name: the fields --group, --variant, --type and --semiring select by.
void describe_kernel(Json& out, const tropical::KernelInfo& k) {
    out["group"] = tropical::to_string(k.group);
    out["operation"] = tropical::to_string(k.operation);
    out["variant"] = tropical::to_string(k.variant);
    out["type"] = tropical::to_string(k.dtype);
    out["semiring"] = semiring_name(k);
}

Json entry_json(const tropical::CacheEntry& e) {
    Json out;
    out["kernel"] = e.kernel;
    out["known"] = e.info != nullptr;
    out["operation"] = e.info ? Json(tropical::to_string(e.info->operation)) : Json(nullptr);
    out["variant"] = e.info ? Json(tropical::to_string(e.info->variant)) : Json(nullptr);
    out["arch"] = arch_name(e.arch);
    out["kind"] = tropical::to_string(e.kind);
    out["key"] = e.key;
    out["path"] = e.path.string();
    out["bytes"] = e.bytes;
    out["last_used"] = utc_time(e.last_used);
    out["last_used_unix"] = unix_seconds(e.last_used);
    out["valid"] = e.valid;
    out["problem"] = e.valid ? Json(nullptr) : Json(e.problem);
    out["current"] = e.current ? Json(*e.current) : Json(nullptr);
    return out;
}

Json entries_json(const std::vector<tropical::CacheEntry>& entries) {
    Json out = Json::array();
    for (const auto& e : entries) out.push_back(entry_json(e));
    return out;
}

Json start(Command command, int exit_code) {
    Json out;
    out["command"] = command_name(command);
    out["exit_code"] = exit_code;
    return out;
}

void listing_header(Json& out, const tropical::CacheSettings& settings, const tropical::CacheListing& listing) {
    out["cache_dir"] = settings.root.string();
    out["format_dir"] = listing.directory.string();
    if (listing.compiler)
        out["compiler"] = {{"nvrtc", fmt::format("{}.{}", listing.compiler->major, listing.compiler->minor)},
                           {"library", listing.compiler->library_path}};
    else out["compiler"] = nullptr;
    out["entry_bytes"] = listing.entry_bytes;
    out["temp_files"] = listing.temp_files;
}

}  // namespace

void print_json(const WarmReport& r) {
    Json out = start(Command::Warm, r.exit_code);
    out["cache_dir"] = r.settings.root.string();
    out["format_dir"] = tropical::cache_format_directory(r.settings.root).string();
    out["architectures"] = Json::array();
    for (int a : r.archs) out["architectures"].push_back(arch_name(a));
    out["jobs"] = r.jobs;
    out["kernels_selected"] = r.kernels_selected;
    out["tasks"] = r.tasks.size();
    out["compiled"] = r.compiled;
    out["cached"] = r.cached;
    out["failed"] = r.failed;
    out["skipped"] = r.skipped;
    out["seconds"] = seconds(r.seconds);
    Json& groups = out["compile_seconds_by_group"] = Json::array();
    for (const auto& [id, g] : r.by_group)
        groups.push_back({{"arch", arch_name(id.first)},
                          {"group", tropical::to_string(id.second)},
                          {"kernels", g.kernels},
                          {"compiled", g.compiled},
                          {"seconds", seconds(g.seconds)}});
    Json& results = out["results"] = Json::array();
    for (const auto& t : r.tasks) {
        Json result;
        result["kernel"] = t.kernel->name;
        describe_kernel(result, *t.kernel);
        result["arch"] = arch_name(t.arch);
        result["status"] = status_name(t.status);
        result["seconds"] = seconds(t.seconds);
        result["ptx_for_jit"] = t.ptx_for_jit;
        if (t.status == WarmTask::Status::Failed) result["error"] = t.error;
        results.push_back(std::move(result));
    }
    out["error"] = error_of(r.error);
    if (!r.note.empty()) out["note"] = r.note;
    print(std::move(out));
}

void print_json(const ListReport& r) {
    Json out = start(Command::List, kSuccess);
    listing_header(out, r.settings, r.listing);
    Json& kernels = out["kernels"] = Json::array();
    for (const tropical::KernelInfo* k : r.kernels) {
        Json kernel;
        kernel["name"] = k->name;
        kernel["index"] = k->index;
        describe_kernel(kernel, *k);
        kernel["cached"] = Json::array();
        if (const auto it = r.cached.find(k->index); it != r.cached.end())
            for (int a : it->second) kernel["cached"].push_back(arch_name(a));
        kernels.push_back(std::move(kernel));
    }
    out["entries"] = entries_json(r.entries);
    print(std::move(out));
}

void print_json(const VerifyReport& r) {
    Json out = start(Command::Verify, r.exit_code);
    listing_header(out, r.settings, r.listing);
    out["checked"] = r.entries.size();
    out["invalid"] = r.invalid;
    out["loaded"] = r.loaded;
    out["load_failures"] = r.load_failures;
    out["not_loaded_because"] = text_or_null(r.no_gpu);
    Json& entries = out["entries"] = Json::array();
    for (std::size_t i = 0; i < r.entries.size(); ++i) {
        Json entry = entry_json(r.entries[i]);
        entry["loads"] = r.loads[i].ok ? Json(*r.loads[i].ok) : Json(nullptr);
        if (!r.loads[i].error.empty()) entry["load_error"] = r.loads[i].error;
        entries.push_back(std::move(entry));
    }
    print(std::move(out));
}

void print_json(const ClearReport& r) {
    Json out = start(Command::Clear, kSuccess);
    out["format_dir"] = tropical::cache_format_directory(r.settings.root).string();
    out["removed_files"] = r.removed.files;
    out["removed_entries"] = r.removed.entries.size();
    out["removed_bytes"] = r.removed.bytes;
    print(std::move(out));
}

void print_json(const TrimReport& r) {
    Json out = start(Command::Trim, kSuccess);
    out["format_dir"] = tropical::cache_format_directory(r.settings.root).string();
    out["max_bytes"] = r.max_bytes;
    out["bytes_before"] = r.bytes_before;
    out["bytes_after"] = r.bytes_after;
    out["removed"] = entries_json(r.removed.entries);
    print(std::move(out));
}

void print_json_error(Command command, int code, std::string_view message) {
    Json out = start(command, code);
    out["error"] = {{"kind", exit_kind(code)}, {"message", message}};
    print(std::move(out));
}

}  // namespace warmup
