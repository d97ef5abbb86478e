#pragma once
// UTF-8 as the workbench checks it: one decision of which bytes form a character,
// shared by what stores text (invalid bytes become U+FFFD) and what shows it on a
// terminal (invalid bytes are shown as \xNN).
#include <cstddef>
#include <string>
#include <string_view>

namespace ampbench::util {

/// The length (1 to 4) of the well-formed UTF-8 sequence that starts at `text[i]`, or
/// 0 when none does there: a stray continuation byte, a sequence cut short, an
/// overlong form, a UTF-16 surrogate or a code point beyond U+10FFFF.
size_t utf8SequenceAt(std::string_view text, size_t i);

/// Whether all of `text` is well-formed UTF-8.
bool isUtf8(std::string_view text);

/// `text` with each byte that starts no well-formed sequence replaced by U+FFFD; valid
/// text comes back unchanged.
std::string validUtf8(std::string_view text);

}  // namespace ampbench::util
