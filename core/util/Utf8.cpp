#include "core/util/Utf8.h"

namespace ampbench::util {
namespace {
const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD
}

size_t utf8SequenceAt(std::string_view text, size_t i) {
    auto byte = [&text](size_t k) {
        return k < text.size() ? static_cast<unsigned char>(text[k]) : 0;
    };
    if (i >= text.size()) {
        return 0;
    }
    const unsigned char c = byte(i);
    if (c < 0x80) {
        return 1;
    }
    const size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                       : c >= 0xE0 && c <= 0xEF ? 3
                       : c >= 0xF0 && c <= 0xF4 ? 4
                                                : 0;
    if (len == 0 || i + len > text.size()) {
        return 0;
    }
    for (size_t k = 1; k < len; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) {
            return 0;
        }
    }
    const unsigned char second = byte(i + 1);
    const bool bad = (c == 0xE0 && second < 0xA0)      // overlong
                     || (c == 0xED && second > 0x9F)   // a UTF-16 surrogate
                     || (c == 0xF0 && second < 0x90)   // overlong
                     || (c == 0xF4 && second > 0x8F);  // beyond U+10FFFF
    return bad ? 0 : len;
}

bool isUtf8(std::string_view text) {
    for (size_t i = 0; i < text.size();) {
        const size_t len = utf8SequenceAt(text, i);
        if (len == 0) {
            return false;
        }
        i += len;
    }
    return true;
}

std::string validUtf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const size_t len = utf8SequenceAt(text, i);
        if (len == 0) {
            out += kReplacement;
            ++i;
        } else {
            out.append(text.substr(i, len));
            i += len;
        }
    }
    return out;
}

}  // namespace ampbench::util
