#include "ui/Settings.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QSplitter>
#include <QStandardPaths>
#include <algorithm>

#include "core/launch/Scheduler.h"

namespace ampbench::ui {
namespace {

// Every key, in one place.
constexpr const char* kGeometry = "window/geometry";
constexpr const char* kState = "window/state";
constexpr const char* kSplitters = "window/splitters/";  // + the splitter's objectName
constexpr const char* kLastDatabase = "database/last";
constexpr const char* kRecentDatabases = "database/recent";
constexpr const char* kSpecFolder = "editor/specFolder";
constexpr const char* kXAxis = "plots/xAxis";
constexpr const char* kSmoothing = "plots/smoothing";
constexpr const char* kLogY = "plots/logY";
constexpr const char* kPanelMetrics = "plots/panelMetrics";
constexpr const char* kLegendShown = "plots/legendShown";
constexpr const char* kExportSize = "plots/exportSize";
constexpr const char* kExportFolder = "plots/exportFolder";
constexpr const char* kRemoteHosts = "remote/hosts";  // an array of the fields below
constexpr const char* kHostLabel = "label";
constexpr const char* kHostDestination = "destination";
constexpr const char* kHostPort = "port";
constexpr const char* kHostCli = "cli";
constexpr const char* kHostDatabase = "database";
constexpr const char* kHostData = "data";
constexpr const char* kHostTransport = "transport";
// A host's scheduler by name (empty: none), and for each scheduler its switch under its
// name ("slurm": true, all a desktop before the others kept) and each option under
// launch::settingsKey ("slurm_partition"): keys its declaration makes.
constexpr const char* kHostScheduler = "scheduler";
constexpr const char* kSshCommand = "remote/ssh";
constexpr const char* kRunOn = "remote/runOn";

QString normalized(const QString& path) {
    return path.isEmpty() ? path : QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

}  // namespace

Settings::Settings() : settings_(std::make_unique<QSettings>("ampbench", "ampbench")) {}

Settings::Settings(const QString& iniPath)
    : settings_(std::make_unique<QSettings>(iniPath, QSettings::IniFormat)) {}

Settings::~Settings() = default;

QByteArray Settings::windowGeometry() const {
    return settings_->value(kGeometry).toByteArray();
}
void Settings::setWindowGeometry(const QByteArray& geometry) {
    settings_->setValue(kGeometry, geometry);
}
QByteArray Settings::windowState() const {
    return settings_->value(kState).toByteArray();
}
void Settings::setWindowState(const QByteArray& state) {
    settings_->setValue(kState, state);
}

void Settings::storeSplitters(const QWidget* root) {
    for (const QSplitter* splitter : root->findChildren<QSplitter*>()) {
        if (!splitter->objectName().isEmpty()) {
            settings_->setValue(kSplitters + splitter->objectName(), splitter->saveState());
        }
    }
}
void Settings::restoreSplitters(QWidget* root) const {
    for (QSplitter* splitter : root->findChildren<QSplitter*>()) {
        if (splitter->objectName().isEmpty()) {
            continue;
        }
        const QByteArray state =
            settings_->value(kSplitters + splitter->objectName()).toByteArray();
        // restoreState refuses what is not a splitter's state; the splitter then keeps
        // its own sizes.
        if (!state.isEmpty() && splitter->restoreState(state)) {
            splitter->setProperty(kRestoredSizes, true);
        }
    }
}

QString Settings::lastDatabase() const {
    return settings_->value(kLastDatabase).toString();
}
void Settings::setLastDatabase(const QString& path) {
    settings_->setValue(kLastDatabase, normalized(path));
}

QStringList Settings::recentDatabases() const {
    QStringList list = settings_->value(kRecentDatabases).toStringList();
    list.removeAll(QString());
    list.removeDuplicates();
    while (list.size() > kMaxRecentDatabases) {
        list.removeLast();
    }
    return list;
}

void Settings::addRecentDatabase(const QString& path) {
    const QString p = normalized(path);
    if (p.isEmpty()) {
        return;
    }
    QStringList list = recentDatabases();
    list.removeAll(p);
    list.prepend(p);
    while (list.size() > kMaxRecentDatabases) {
        list.removeLast();
    }
    settings_->setValue(kRecentDatabases, list);
}

void Settings::removeRecentDatabase(const QString& path) {
    QStringList list = recentDatabases();
    list.removeAll(normalized(path));
    settings_->setValue(kRecentDatabases, list);
}

QString Settings::lastSpecFolder() const {
    return settings_->value(kSpecFolder, QDir::homePath()).toString();
}
void Settings::setLastSpecFolder(const QString& folder) {
    settings_->setValue(kSpecFolder, folder);
}

analysis::XAxis Settings::plotXAxis() const {
    const int v = settings_->value(kXAxis, static_cast<int>(analysis::XAxis::Samples)).toInt();
    switch (v) {
        case static_cast<int>(analysis::XAxis::Step):
            return analysis::XAxis::Step;
        case static_cast<int>(analysis::XAxis::WallSeconds):
            return analysis::XAxis::WallSeconds;
        default:
            return analysis::XAxis::Samples;
    }
}
void Settings::setPlotXAxis(analysis::XAxis axis) {
    settings_->setValue(kXAxis, static_cast<int>(axis));
}

int Settings::plotSmoothing() const {
    return std::clamp(settings_->value(kSmoothing, kDefaultSmoothing).toInt(), 0, 100);
}
void Settings::setPlotSmoothing(int percent) {
    settings_->setValue(kSmoothing, std::clamp(percent, 0, 100));
}

bool Settings::plotLogY() const {
    return settings_->value(kLogY, false).toBool();
}
void Settings::setPlotLogY(bool on) {
    settings_->setValue(kLogY, on);
}

QStringList Settings::plotPanelMetrics() const {
    return settings_->value(kPanelMetrics).toStringList();
}
void Settings::setPlotPanelMetrics(const QStringList& keys) {
    settings_->setValue(kPanelMetrics, keys);
}

bool Settings::plotLegendShown() const {
    return settings_->value(kLegendShown, true).toBool();
}
void Settings::setPlotLegendShown(bool on) {
    settings_->setValue(kLegendShown, on);
}

QSize Settings::plotExportSize() const {
    const QSize size = settings_->value(kExportSize).toSize();
    return size.isValid() && size.width() >= 16 && size.height() >= 16 ? size : QSize(1200, 700);
}
void Settings::setPlotExportSize(const QSize& size) {
    settings_->setValue(kExportSize, size);
}

QString Settings::plotExportFolder() const {
    const QString folder = settings_->value(kExportFolder).toString();
    if (!folder.isEmpty() && QFileInfo(folder).isDir()) {
        return folder;
    }
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    return QFileInfo(documents).isDir() ? documents : QDir::homePath();
}
void Settings::setPlotExportFolder(const QString& folder) {
    settings_->setValue(kExportFolder, normalized(folder));
}

QString Settings::colorScheme() const {
    const QString scheme = settings_->value(QStringLiteral("view/colorScheme")).toString();
    return scheme == QLatin1String("light") || scheme == QLatin1String("dark")
               ? scheme
               : QStringLiteral("system");
}
void Settings::setColorScheme(const QString& scheme) {
    settings_->setValue(QStringLiteral("view/colorScheme"), scheme);
}

QList<RemoteHost> Settings::remoteHosts() const {
    QList<RemoteHost> hosts;
    const int n = settings_->beginReadArray(kRemoteHosts);
    for (int i = 0; i < n; ++i) {
        settings_->setArrayIndex(i);
        RemoteHost h;
        h.label = settings_->value(kHostLabel).toString();
        h.destination = settings_->value(kHostDestination).toString();
        h.port = settings_->value(kHostPort, 0).toInt();
        h.cli = settings_->value(kHostCli, h.cli).toString();
        h.database = settings_->value(kHostDatabase).toString();
        h.dataDir = settings_->value(kHostData).toString();
        h.transport = settings_->value(kHostTransport, h.transport).toString();
        h.scheduler = settings_->value(kHostScheduler).toString();
        for (const launch::Scheduler* s : launch::schedulers()) {
            const launch::SchedulerInfo& info = s->info();
            if (h.scheduler.isEmpty() && !settings_->contains(kHostScheduler) &&
                settings_->value(QString::fromStdString(info.name), false).toBool()) {
                h.scheduler = QString::fromStdString(info.name);
            }
            for (const auto& option : info.options) {
                const QString key = QString::fromStdString(launch::settingsKey(info, option));
                const QString text = settings_->value(key).toString();
                // Empty, or a count at its least ("none asked for"): not set.
                if (!text.trimmed().isEmpty() && !(option.kind == launch::OptionKind::Count &&
                                                   text.trimmed() == QString::number(option.min))) {
                    h.schedulerOptions[key] = text;
                }
            }
        }
        if (!h.label.isEmpty()) {
            hosts << h;
        }
    }
    settings_->endArray();
    return hosts;
}

void Settings::setRemoteHosts(const QList<RemoteHost>& hosts) {
    settings_->remove(kRemoteHosts);
    settings_->beginWriteArray(kRemoteHosts, static_cast<int>(hosts.size()));
    for (int i = 0; i < hosts.size(); ++i) {
        settings_->setArrayIndex(i);
        const RemoteHost& h = hosts[i];
        settings_->setValue(kHostLabel, h.label);
        settings_->setValue(kHostDestination, h.destination);
        settings_->setValue(kHostPort, h.port);
        settings_->setValue(kHostCli, h.cli);
        settings_->setValue(kHostDatabase, h.database);
        settings_->setValue(kHostData, h.dataDir);
        settings_->setValue(kHostTransport, h.transport);
        settings_->setValue(kHostScheduler, h.scheduler);
        for (const launch::Scheduler* s : launch::schedulers()) {
            const QString name = QString::fromStdString(s->info().name);
            settings_->setValue(name, h.scheduler == name);
        }
        for (auto it = h.schedulerOptions.begin(); it != h.schedulerOptions.end(); ++it) {
            settings_->setValue(it.key(), it.value());
        }
    }
    settings_->endArray();
}

QString Settings::sshCommand() const {
    return settings_->value(kSshCommand, QStringLiteral("ssh")).toString();
}

void Settings::setSshCommand(const QString& command) {
    settings_->setValue(kSshCommand, command);
}

QString Settings::runOn() const {
    return settings_->value(kRunOn).toString();
}

void Settings::setRunOn(const QString& label) {
    settings_->setValue(kRunOn, label);
}

void Settings::sync() {
    settings_->sync();
}

}  // namespace ampbench::ui
