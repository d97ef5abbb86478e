#pragma once
// The hosts dialog's fields of a host's scheduler, made from each scheduler's
// declaration (launch::SchedulerInfo): a page per scheduler, a field per option (a line
// for text and words, a spin box for a count), each named by its settings key. The
// page of the host's scheduler shows; every page keeps its values while another does.
#include <QList>
#include <QMap>
#include <QStackedWidget>

#include "core/launch/LaunchOption.h"
#include "ui/remote/RemoteHost.h"

namespace ampbench::ui {

class SchedulerFields : public QStackedWidget {
    Q_OBJECT
  public:
    explicit SchedulerFields(QWidget* parent = nullptr);

    /// Every page's fields from `host`, and the page of its scheduler.
    void showHost(const RemoteHost& host);
    /// The page of `scheduler` (empty or unknown: an empty page).
    void showScheduler(const QString& scheduler);
    /// Every page's fields into `host.schedulerOptions`.
    void store(RemoteHost& host) const;
    /// The field of an option by its settings key ("slurm_partition"), or null.
    QWidget* field(const QString& key) const;

  Q_SIGNALS:
    /// The user changed a field.
    void edited();

  private:
    struct Field {
        QString key;
        int min = 0;
        QWidget* widget = nullptr;
    };
    QList<Field> fields_;
    QMap<QString, int> pages_;  ///< a scheduler's name -> its page
};

}  // namespace ampbench::ui
