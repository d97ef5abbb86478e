#pragma once
// Run › Hosts…: the machines experiments can run on (label, user@host, port, the
// remote ampbench-cli, database and data folder) and the transport, kept in Settings;
// Test connection checks the selected host as it is filled in.
#include <QCheckBox>
#include <QDialog>
#include <QList>

#include "ui/remote/ConnectionTest.h"
#include "ui/remote/RemoteHost.h"

class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;

namespace ampbench::ui {

class Settings;

class HostsDialog : public QDialog {
    Q_OBJECT
  public:
    explicit HostsDialog(Settings& settings, QWidget* parent = nullptr);

    QList<RemoteHost> hosts() const { return hosts_; }
    /// Adds an empty host and selects it.
    void addHost();
    void removeHost();
    void selectHost(int row);
    /// Tests the selected host as it is filled in; the result shows under the form.
    void testConnection();
    /// Saves the hosts when each is complete; otherwise selects the first that is not
    /// and says what it lacks.
    void accept() override;

    QLineEdit* labelEdit() const { return label_; }
    QLineEdit* destinationEdit() const { return destination_; }
    QCheckBox* localBox() const { return local_; }
    QSpinBox* portEdit() const { return port_; }
    QLineEdit* cliEdit() const { return cli_; }
    QLineEdit* databaseEdit() const { return database_; }
    QLineEdit* dataEdit() const { return data_; }
    QCheckBox* slurmBox() const { return slurm_; }
    QLineEdit* partitionEdit() const { return partition_; }
    QSpinBox* gpusEdit() const { return gpus_; }
    QLineEdit* timeLimitEdit() const { return timeLimit_; }
    QLineEdit* sbatchEdit() const { return sbatch_; }
    QLineEdit* transportEdit() const { return ssh_; }
    QLabel* resultLabel() const { return result_; }
    QPushButton* testButton() const { return test_; }
    QListWidget* list() const { return list_; }

  Q_SIGNALS:
    void tested(const ampbench::ui::ConnectionResult& result);

  private:
    void storeForm();        // the form into hosts_[current_]
    void showSlurmFields();  // the Slurm settings editable only for a Slurm host
    void showSshFields();    // host and port editable only for a host reached by ssh
    void showForm();
    void showResult(const ConnectionResult& r);

    Settings& settings_;
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
    QCheckBox* slurm_ = nullptr;  ///< scheduler: Slurm
    QLineEdit* partition_ = nullptr;
    QSpinBox* gpus_ = nullptr;
    QLineEdit* timeLimit_ = nullptr;
    QLineEdit* sbatch_ = nullptr;
    QLineEdit* ssh_ = nullptr;
    QPushButton* test_ = nullptr;
    QPushButton* remove_ = nullptr;
    QLabel* result_ = nullptr;
    ConnectionTest* tester_ = nullptr;
};

}  // namespace ampbench::ui
