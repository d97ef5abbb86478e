#include "ui/remote/HostsDialog.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "core/launch/Scheduler.h"
#include "ui/remote/SchedulerFields.h"
#include "ui/remote/Transport.h"

namespace ampbench::ui {

HostsDialog::HostsDialog(QList<RemoteHost> hosts, const QString& sshCommand, QWidget* parent)
    : QDialog(parent), hosts_(std::move(hosts)) {
    setWindowTitle(tr("Hosts"));
    list_ = new QListWidget;
    list_->setMaximumWidth(220);
    auto* add = new QPushButton(tr("&Add"));
    remove_ = new QPushButton(tr("&Remove"));
    auto* listButtons = new QHBoxLayout;
    listButtons->addWidget(add);
    listButtons->addWidget(remove_);
    auto* left = new QVBoxLayout;
    left->addWidget(list_, 1);
    left->addLayout(listButtons);

    label_ = new QLineEdit;
    label_->setPlaceholderText(tr("gpu-server"));
    destination_ = new QLineEdit;
    destination_->setPlaceholderText(tr("user@gpu.example.org"));
    // This machine through the same commands: runs launched detached, followed here.
    local_ = new QCheckBox(tr("This machine (no ssh: ampbench-cli runs here, detached)"));
    port_ = new QSpinBox;
    port_->setRange(0, 65535);
    port_->setSpecialValueText(tr("ssh's default"));
    cli_ = new QLineEdit;
    cli_->setObjectName(QStringLiteral("cli"));
    cli_->setPlaceholderText(tr("ampbench-cli (on the server's PATH)"));
    database_ = new QLineEdit;
    database_->setPlaceholderText(tr("the server's default (~/.local/share/ampbench)"));
    data_ = new QLineEdit;
    data_->setPlaceholderText(tr("e.g. /data/fashion-mnist; empty: the spec's paths"));
    auto* form = new QFormLayout;
    form->addRow(tr("&Label:"), label_);
    form->addRow(tr("&Host:"), destination_);
    form->addRow(QString(), local_);
    form->addRow(tr("&Port:"), port_);
    form->addRow(tr("ampbench-&cli:"), cli_);
    form->addRow(tr("&Database:"), database_);
    form->addRow(tr("Data &folder:"), data_);
    // A cluster's login host: the experiment goes to its scheduler as one job array,
    // with the options that scheduler declares.
    scheduler_ = new QComboBox;
    scheduler_->setObjectName(QStringLiteral("scheduler"));
    scheduler_->addItem(tr("None: the host trains the runs itself"), QString());
    for (const launch::Scheduler* s : launch::schedulers()) {
        scheduler_->addItem(QString::fromStdString(s->info().title),
                            QString::fromStdString(s->info().name));
    }
    schedulerHint_ = new QLabel;
    schedulerHint_->setWordWrap(true);
    schedulerFields_ = new SchedulerFields;
    form->addRow(tr("&Scheduler:"), scheduler_);
    form->addRow(QString(), schedulerHint_);
    form->addRow(schedulerFields_);
    test_ = new QPushButton(tr("&Test connection"));
    result_ = new QLabel;
    result_->setWordWrap(true);
    result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    result_->setMinimumHeight(90);
    result_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    auto* right = new QVBoxLayout;
    right->addLayout(form);
    auto* testRow = new QHBoxLayout;
    testRow->addWidget(test_);
    testRow->addStretch(1);
    right->addLayout(testRow);
    right->addWidget(result_, 1);

    ssh_ = new QLineEdit(sshCommand);
    ssh_->setObjectName(QStringLiteral("sshCommand"));
    ssh_->setToolTip(
        tr("The program that reaches the hosts, with its own options; "
           "BatchMode=yes, the port and the host are added"));
    // Typed into only on purpose: it is one setting for every SSH host, not this host's.
    ssh_->setFocusPolicy(Qt::ClickFocus);
    auto* sshHelp = new QLabel(
        tr("The command every SSH host is reached with (default: ssh). Give one with its "
           "options, e.g. \u201cssh -i ~/.ssh/gpu_key\u201d; hosts on \u201cThis "
           "machine\u201d do not use it."));
    sshHelp->setWordWrap(true);
    auto* transport = new QFormLayout;
    transport->addRow(tr("SSH &command:"), ssh_);
    transport->addRow(QString(), sshHelp);

    auto* columns = new QHBoxLayout;
    columns->addLayout(left);
    columns->addLayout(right, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(columns, 1);
    layout->addLayout(transport);
    layout->addWidget(buttons);

    tester_ = new ConnectionTest(this);
    connect(tester_, &ConnectionTest::finished, this, &HostsDialog::showResult);
    connect(add, &QPushButton::clicked, this, &HostsDialog::addHost);
    connect(remove_, &QPushButton::clicked, this, &HostsDialog::removeHost);
    connect(test_, &QPushButton::clicked, this, &HostsDialog::testConnection);
    connect(buttons, &QDialogButtonBox::accepted, this, &HostsDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &HostsDialog::reject);
    connect(list_, &QListWidget::currentRowChanged, this, [this](int row) {
        if (!showing_) {
            storeForm();
            current_ = row;
            showForm();
        }
    });
    for (auto* edit : {label_, destination_, cli_, database_, data_}) {
        connect(edit, &QLineEdit::textEdited, this, [this] { storeForm(); });
    }
    connect(port_, &QSpinBox::valueChanged, this, [this] { storeForm(); });
    connect(schedulerFields_, &SchedulerFields::edited, this, [this] { storeForm(); });
    connect(scheduler_, &QComboBox::currentIndexChanged, this, [this] {
        storeForm();
        showSchedulerFields();
    });
    connect(local_, &QCheckBox::toggled, this, [this] {
        storeForm();
        showSshFields();
    });

    for (const auto& h : hosts_) {
        list_->addItem(h.label);
    }
    current_ = hosts_.isEmpty() ? -1 : 0;
    showForm();
    resize(760, 560);
}

void HostsDialog::showSchedulerFields() {
    const QString name = scheduler_->currentData().toString();
    const launch::Scheduler* s = launch::schedulerNamed(name.toStdString());
    schedulerHint_->setText(
        s ? tr("A cluster's login host: each experiment goes to %1 as one job array (%2).")
                .arg(QString::fromStdString(s->info().title),
                     QString::fromStdString(s->info().summary))
          : QString());
    schedulerHint_->setVisible(s != nullptr);
    schedulerFields_->showScheduler(name);
    schedulerFields_->setEnabled(scheduler_->isEnabled());
}

QWidget* HostsDialog::schedulerField(const QString& key) const {
    return schedulerFields_->field(key);
}

QString HostsDialog::sshCommand() const {
    return ssh_->text().trimmed().isEmpty() ? QStringLiteral("ssh") : ssh_->text().trimmed();
}

void HostsDialog::showSshFields() {
    const bool ssh = local_->isEnabled() && !local_->isChecked();
    destination_->setEnabled(ssh);
    port_->setEnabled(ssh);
    if (local_->isChecked()) {
        // Empty: the CLI beside this program, the one it was installed or built with.
        const QString program = localCliProgram({}, QCoreApplication::applicationDirPath());
        cli_->setPlaceholderText(program.contains(QChar('/'))
                                     ? tr("%1 (beside this program)").arg(program)
                                     : tr("ampbench-cli (on this machine's PATH)"));
    } else {
        cli_->setPlaceholderText(tr("ampbench-cli (on the server's PATH)"));
    }
}

void HostsDialog::storeForm() {
    if (showing_ || current_ < 0 || current_ >= hosts_.size()) {
        return;
    }
    RemoteHost& h = hosts_[current_];
    h.label = label_->text().trimmed();
    h.destination = destination_->text().trimmed();
    h.port = port_->value();
    h.transport = local_->isChecked() ? QStringLiteral("local") : QStringLiteral("ssh");
    h.cli =
        cli_->text().trimmed().isEmpty() ? QStringLiteral("ampbench-cli") : cli_->text().trimmed();
    h.database = database_->text().trimmed();
    h.dataDir = data_->text().trimmed();
    h.scheduler = scheduler_->currentData().toString();
    schedulerFields_->store(h);
    if (QListWidgetItem* item = list_->item(current_)) {
        item->setText(h.label.isEmpty() ? tr("(no label)") : h.label);
    }
}

void HostsDialog::showForm() {
    showing_ = true;
    const bool any = current_ >= 0 && current_ < hosts_.size();
    const RemoteHost h = any ? hosts_[current_] : RemoteHost{};
    label_->setText(h.label);
    destination_->setText(h.destination);
    port_->setValue(h.port);
    local_->setChecked(h.transport == QStringLiteral("local"));
    // The default shows as the placeholder, which says where it is found.
    cli_->setText(any && h.cli != QStringLiteral("ampbench-cli") ? h.cli : QString());
    database_->setText(h.database);
    data_->setText(h.dataDir);
    // A scheduler this desktop does not know (a newer desktop's) shows by its name, never
    // as none: the host cannot be saved with it (hostProblem says why) until another
    // is chosen, so its runs never train on the login host by mistake.
    if (!h.scheduler.isEmpty() && scheduler_->findData(h.scheduler) < 0) {
        scheduler_->addItem(tr("%1 (this desktop cannot launch on it)").arg(h.scheduler),
                            h.scheduler);
    }
    scheduler_->setCurrentIndex(std::max(0, scheduler_->findData(h.scheduler)));
    schedulerFields_->showHost(h);
    for (QWidget* w :
         std::initializer_list<QWidget*>{label_, destination_, port_, local_, cli_, database_,
                                         data_, scheduler_, test_, remove_}) {
        w->setEnabled(any);
    }
    showSchedulerFields();
    showSshFields();
    list_->setCurrentRow(current_);
    result_->clear();
    showing_ = false;
}

void HostsDialog::addHost() {
    storeForm();
    RemoteHost h;
    hosts_ << h;
    list_->addItem(tr("(no label)"));
    current_ = static_cast<int>(hosts_.size()) - 1;
    showForm();
    label_->setFocus();
}

void HostsDialog::removeHost() {
    if (current_ < 0 || current_ >= hosts_.size()) {
        return;
    }
    showing_ = true;
    hosts_.removeAt(current_);
    delete list_->takeItem(current_);
    showing_ = false;
    current_ = std::min(current_, static_cast<int>(hosts_.size()) - 1);
    showForm();
}

void HostsDialog::selectHost(int row) {
    list_->setCurrentRow(row);
}

void HostsDialog::testConnection() {
    storeForm();
    if (current_ < 0 || current_ >= hosts_.size()) {
        return;
    }
    RemoteHost h = hosts_[current_];
    const bool local = h.transport == QStringLiteral("local");
    if (h.label.isEmpty()) {
        h.label = local ? tr("this machine") : h.destination;
    }
    if (!local && h.destination.isEmpty()) {
        result_->setText(tr("Give the host as user@host first."));
        return;
    }
    if (QString problem = local ? QString() : destinationProblem(h.destination);
        !problem.isEmpty()) {
        result_->setText(
            QStringLiteral("<p style='color:#b3261e'>%1</p>").arg(problem.toHtmlEscaped()));
        return;
    }
    test_->setEnabled(false);
    result_->setText(local ? tr("Asking ampbench-cli here\u2026")
                           : tr("Connecting to %1\u2026").arg(h.destination));
    tester_->start(ssh_->text(), h);
}

void HostsDialog::showResult(const ConnectionResult& r) {
    test_->setEnabled(current_ >= 0);
    const QString colour = r.ok() ? QStringLiteral("#1b7f3b") : QStringLiteral("#b3261e");
    result_->setText(
        QStringLiteral("<p style='color:%1'><b>%2</b></p><p>%3</p>")
            .arg(colour, r.ok() ? tr("Ready") : tr("Not ready"),
                 r.message.toHtmlEscaped().replace(QChar('\n'), QStringLiteral("<br>"))));
    Q_EMIT tested(r);
}

void HostsDialog::accept() {
    storeForm();
    for (int i = 0; i < hosts_.size(); ++i) {
        QList<RemoteHost> others = hosts_;
        others.removeAt(i);
        if (QString problem = hostProblem(hosts_[i], others); !problem.isEmpty()) {
            current_ = i;
            showForm();
            result_->setText(
                QStringLiteral("<p style='color:#b3261e'>%1</p>").arg(problem.toHtmlEscaped()));
            return;
        }
    }
    QDialog::accept();
}

}  // namespace ampbench::ui
