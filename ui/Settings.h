#pragma once
// The one owner of every QSettings key: window layout, databases, plot options.
// Preferences only; domain data lives in the store.
#include <QByteArray>
#include <QSize>
#include <QString>
#include <QStringList>
#include <memory>

#include "core/analysis/PlotSeries.h"
#include "ui/remote/RemoteHost.h"

class QSettings;
class QWidget;

namespace ampbench::ui {

/// GUI thread only (QSettings is reentrant, not shared across threads here).
class Settings {
  public:
    static constexpr int kMaxRecentDatabases = 8;
    static constexpr int kDefaultSmoothing = 60;

    /// The user's settings (organization "ampbench", application "ampbench").
    Settings();
    /// Settings kept in an INI file, e.g. a temporary one in tests.
    explicit Settings(const QString& iniPath);
    ~Settings();
    Settings(const Settings&) = delete;
    Settings& operator=(const Settings&) = delete;

    QByteArray windowGeometry() const;
    void setWindowGeometry(const QByteArray& geometry);
    QByteArray windowState() const;
    void setWindowState(const QByteArray& state);
    /// Every named QSplitter under `root` (its objectName the key) as the user left it:
    /// stored when the window closes, restored when it opens. A restored splitter
    /// carries kRestoredSizes, so a view that fits a splitter on its first show
    /// leaves that one alone. Unnamed splitters (sized by their view) are not kept.
    void storeSplitters(const QWidget* root);
    void restoreSplitters(QWidget* root) const;
    static constexpr const char* kRestoredSizes = "ampbenchRestoredSizes";

    QString lastDatabase() const;
    void setLastDatabase(const QString& path);
    /// Most recent first, at most kMaxRecentDatabases, no duplicates.
    QStringList recentDatabases() const;
    void addRecentDatabase(const QString& path);
    void removeRecentDatabase(const QString& path);

    QString lastSpecFolder() const;
    void setLastSpecFolder(const QString& folder);

    analysis::XAxis plotXAxis() const;
    void setPlotXAxis(analysis::XAxis axis);
    /// EMA smoothing control, 0 (raw) … 100.
    int plotSmoothing() const;
    void setPlotSmoothing(int percent);
    bool plotLogY() const;
    void setPlotLogY(bool on);
    /// What each plot panel shows, by metric key (ui/plots/PlotMetric.h), in panel
    /// order; empty for the defaults.
    QStringList plotPanelMetrics() const;
    void setPlotPanelMetrics(const QStringList& keys);
    bool plotLegendShown() const;
    void setPlotLegendShown(bool on);
    /// The size and folder of the last image exported from a plot; 1200 × 700 and the
    /// user's documents folder before the first.
    QSize plotExportSize() const;
    void setPlotExportSize(const QSize& size);
    QString plotExportFolder() const;
    void setPlotExportFolder(const QString& folder);
    /// View › Colours: "system" (the desktop's palette), "light" or "dark".
    QString colorScheme() const;
    void setColorScheme(const QString& scheme);

    /// Machines that train for this desktop (Run › Hosts…), in the order shown.
    QList<RemoteHost> remoteHosts() const;
    void setRemoteHosts(const QList<RemoteHost>& hosts);
    /// The transport program and its own options; "ssh" unless set.
    QString sshCommand() const;
    void setSshCommand(const QString& command);
    /// The label of the host experiments run on; empty: this machine.
    QString runOn() const;
    void setRunOn(const QString& label);

    void sync();

  private:
    std::unique_ptr<QSettings> settings_;
};

}  // namespace ampbench::ui
