#include "ui/AboutDialog.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QUrl>
#include <QVBoxLayout>

#include "core/config/BuildInfo.h"
#include "core/probe/Environment.h"

// Q_INIT_RESOURCE must be called outside a namespace. The resources live in a static
// library, so this call is also what keeps the linker from dropping them.
static void initAmpbenchResources() {
    Q_INIT_RESOURCE(ampbench);
}

namespace ampbench::ui {

QIcon applicationIcon() {
    static const bool loaded = (initAmpbenchResources(), true);
    (void)loaded;
    QIcon icon;
    for (int size : {16, 32, 64, 256}) {
        icon.addFile(QString(":/ampbench/icon-%1.png").arg(size), QSize(size, size));
    }
    return icon;
}

QString readmePath(const QString& applicationDir) {
    const QString installed =
        QDir(applicationDir).absoluteFilePath("../share/doc/ampbench/README.md");
    if (QFileInfo::exists(installed)) {
        return QDir::cleanPath(installed);
    }
#ifdef AMPBENCH_SOURCE_README
    if (QFileInfo::exists(AMPBENCH_SOURCE_README)) {
        return AMPBENCH_SOURCE_README;
    }
#endif
    return {};
}

QList<QPair<QString, QString>> aboutFacts(const QString& databasePath) {
    const probe::Environment env = probe::probeEnvironment("cpu");
    QString cuda;
#ifdef AMPBENCH_WITH_CUDA
    if (probe::cudaAvailable()) {
        const probe::Environment gpu = probe::probeEnvironment("cuda");
        cuda = QString("%1 (driver %2, cuDNN %3), %4")
                   .arg(QString::fromStdString(gpu.cuda_version),
                        QString::fromStdString(gpu.driver_version),
                        QString::fromStdString(gpu.cudnn_version),
                        QString::fromStdString(gpu.device_name));
    } else {
        cuda = QObject::tr("built in; no CUDA device visible");
    }
#else
    cuda = QObject::tr("none (LibTorch for CPU only)");
#endif
    return {
        {QObject::tr("Version"), QString::fromUtf8(config::buildVersion())},
        {QObject::tr("Commit"), QString::fromUtf8(config::buildCommit())},
        {QObject::tr("Build type"), QString::fromUtf8(config::buildType())},
        {QObject::tr("Qt"), QObject::tr("%1 (built with %2)").arg(qVersion(), QT_VERSION_STR)},
        {QObject::tr("LibTorch"), QString::fromStdString(env.libtorch_version)},
        {QObject::tr("CUDA"), cuda},
        {QObject::tr("Database"), databasePath.isEmpty() ? QObject::tr("none open")
                                                         : QDir::toNativeSeparators(databasePath)},
    };
}

AboutDialog::AboutDialog(const QString& databasePath, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("About AMP Workbench"));
    auto* icon = new QLabel;
    icon->setPixmap(applicationIcon().pixmap(96, 96));
    icon->setAlignment(Qt::AlignTop);

    QString html = "<h2>" + tr("AMP Workbench") + "</h2><p>" +
                   tr("Does automatic mixed precision pay for this model, and does it still "
                      "train the same?") +
                   "</p><table cellspacing='2' cellpadding='2'>";
    for (const auto& [label, value] : aboutFacts(databasePath)) {
        html += "<tr><td><b>" + label.toHtmlEscaped() + "</b></td><td>" + value.toHtmlEscaped() +
                "</td></tr>";
    }
    html += "</table>";
    const QString readme = readmePath(QCoreApplication::applicationDirPath());
    if (!readme.isEmpty()) {
        html += "<p><a href='" + QUrl::fromLocalFile(readme).toString().toHtmlEscaped() + "'>" +
                tr("README: the CLI, the verdict, the install") + "</a></p>";
    }
    text_ = new QLabel(html);
    text_->setTextFormat(Qt::RichText);
    text_->setTextInteractionFlags(Qt::TextBrowserInteraction);
    text_->setOpenExternalLinks(true);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* row = new QHBoxLayout;
    row->addWidget(icon);
    row->addWidget(text_, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(row);
    layout->addWidget(buttons);
}

QString AboutDialog::text() const {
    return text_->text();
}

}  // namespace ampbench::ui
