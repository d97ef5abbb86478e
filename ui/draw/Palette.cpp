#include "ui/draw/Palette.h"

#include <algorithm>
#include <array>

namespace ampbench::draw {

QColor armColor(int armIndex) {
    // Tableau 10: distinct for the usual 2–5 arms, readable on white.
    static const std::array<QColor, 10> colors = {
        QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0x59, 0xa1, 0x4f),
        QColor(0xe1, 0x57, 0x59), QColor(0xb0, 0x7a, 0xa1), QColor(0x76, 0xb7, 0xb2),
        QColor(0xed, 0xc9, 0x48), QColor(0xff, 0x9d, 0xa7), QColor(0x9c, 0x75, 0x5f),
        QColor(0xba, 0xb0, 0xac)};
    return colors[static_cast<size_t>(std::max(0, armIndex)) % colors.size()];
}

QColor seedShade(const QColor& arm, int seedIndex, int seedCount, bool dark) {
    if (seedCount <= 1) {
        return arm;
    }
    const double t = static_cast<double>(seedIndex) / (seedCount - 1);  // 0 … 1
    const double low = dark ? 0.40 : 0.15;
    const double high = dark ? 0.90 : 0.85;
    const float lightness =
        static_cast<float>(std::clamp(arm.lightnessF() + 0.18 - 0.36 * t, low, high));
    return QColor::fromHslF(arm.hslHueF(), arm.hslSaturationF(), lightness);
}

QColor faded(const QColor& color, int alpha) {
    QColor c = color;
    c.setAlpha(alpha);
    return c;
}

}  // namespace ampbench::draw
