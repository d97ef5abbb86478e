#include "core/store/OutputFile.h"

#include <cctype>

namespace ampbench::store {
namespace {

/// A number with an optional unit: sign, digits and point, an exponent, then only
/// letters, spaces, '%' or non-ASCII (units such as "ms" or "×"): no operator
/// that could make a formula.
bool looksNumeric(const std::string& s) {
    size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
    size_t digits = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
        digits += std::isdigit(static_cast<unsigned char>(s[i++])) ? 1 : 0;
    if (digits == 0)
        return false;
    if (i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E') &&
        (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '-' ||
         s[i + 1] == '+')) {
        i += 2;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
            ++i;
    }
    for (; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (!(std::isalpha(c) || c == ' ' || c == '%' || c >= 0x80))
            return false;
    }
    return true;
}

}  // namespace

std::string spreadsheetSafe(const std::string& cell) {
    if (cell.empty())
        return cell;
    const char c = cell[0];
    const bool risky = c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r';
    if (!risky || ((c == '+' || c == '-') && looksNumeric(cell)))
        return cell;
    return "'" + cell;
}

}  // namespace ampbench::store
