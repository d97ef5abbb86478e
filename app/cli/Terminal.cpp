#include "cli/Terminal.h"

#include <unistd.h>

#include <cstdarg>
#include <vector>

#include "core/analysis/Format.h"

namespace ampbench::cli {

void say(std::FILE* out, const char* format, ...) {
    va_list args;
    va_start(args, format);
    va_list again;
    va_copy(again, args);
    const int n = std::vsnprintf(nullptr, 0, format, args);
    va_end(args);
    if (n <= 0) {
        va_end(again);
        return;
    }
    std::vector<char> text(static_cast<size_t>(n) + 1);
    std::vsnprintf(text.data(), text.size(), format, again);
    va_end(again);
    const std::string shown = analysis::printable(std::string(text.data(), static_cast<size_t>(n)));
    std::fwrite(shown.data(), 1, shown.size(), out);
}

std::string jsonText(const nlohmann::json& value, int indent, std::FILE* out) {
    const bool terminal = ::isatty(::fileno(out)) == 1;
    return value.dump(indent, ' ', /*ensure_ascii=*/terminal,
                      nlohmann::json::error_handler_t::replace);
}

void printJson(const nlohmann::json& value, int indent) {
    const std::string text = jsonText(value, indent, stdout) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace ampbench::cli
