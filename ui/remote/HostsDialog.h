#pragma once
// Run › Hosts…: the machines experiments can run on (label, user@host, port, the
// remote ampbench-cli, database and data folder, the scheduler a cluster's login host
// hands them to, with that scheduler's own fields) and the transport. It edits the
// hosts and the ssh command it is given; whoever opened it keeps them once it is
// accepted. Test connection checks the selected host as it is filled in.
#include <QCheckBox>
#include <QDialog>
#include <QList>

#include "ui/remote/ConnectionTest.h"
#include "ui/remote/RemoteHost.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;

namespace ampbench::ui {

class SchedulerFields;

class HostsDialog : public QDialog {
    Q_OBJECT
  public:
    HostsDialog(QList<RemoteHost> hosts, const QString& sshCommand, QWidget* parent = nullptr);

    /// The hosts and the ssh command as edited; once accepted, each host is complete.
    QList<RemoteHost> hosts() const { return hosts_; }
    QString sshCommand() const;
    /// Adds an empty host and selects it.
    void addHost();
    void removeHost();
    void selectHost(int row);
    /// Tests the selected host as it is filled in; the result shows under the form.
    void testConnection();
    /// Accepts the hosts when each is complete; otherwise selects the first that is not
    /// and says what it lacks.
    void accept() override;

    QLineEdit* labelEdit() const { return label_; }
    QLineEdit* destinationEdit() const { return destination_; }
    QCheckBox* localBox() const { return local_; }
    QSpinBox* portEdit() const { return port_; }
    QLineEdit* cliEdit() const { return cli_; }
    QLineEdit* databaseEdit() const { return database_; }
    QLineEdit* dataEdit() const { return data_; }
    /// The host's scheduler: none, then each of launch::schedulers() by its title.
    QComboBox* schedulerBox() const { return scheduler_; }
    /// A field of the chosen scheduler's options, by its settings key ("slurm_partition").
    QWidget* schedulerField(const QString& key) const;
    QLineEdit* transportEdit() const { return ssh_; }
    QLabel* resultLabel() const { return result_; }
    QPushButton* testButton() const { return test_; }
    QListWidget* list() const { return list_; }

  Q_SIGNALS:
    void tested(const ampbench::ui::ConnectionResult& result);

  private:
    void storeForm();            // the form into hosts_[current_]
    void showSchedulerFields();  // the chosen scheduler's fields and what it does
    void showSshFields();        // host and port editable only for a host reached by ssh
    void showForm();
    void showResult(const ConnectionResult& r);

    QList<RemoteHost> hosts_;
    int current_ = -1;
    bool showing_ = false;
    QListWidget* list_ = nullptr;
    QLineEdit* label_ = nullptr;
    QLineEdit* destination_ = nullptr;
    QCheckBox* local_ = nullptr;  ///< transport: this machine, no ssh
    QSpinBox* port_ = nullptr;
    QLineEdit* cli_ = nullptr;
    QLineEdit* database_ = nullptr;
    QLineEdit* data_ = nullptr;
    QComboBox* scheduler_ = nullptr;
    QLabel* schedulerHint_ = nullptr;
    SchedulerFields* schedulerFields_ = nullptr;
    QLineEdit* ssh_ = nullptr;
    QPushButton* test_ = nullptr;
    QPushButton* remove_ = nullptr;
    QLabel* result_ = nullptr;
    ConnectionTest* tester_ = nullptr;
};

}  // namespace ampbench::ui
