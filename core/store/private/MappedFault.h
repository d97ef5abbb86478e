#pragma once
// SQLite maps a WAL database's -shm file into memory (and the data readers map large
// files). When the system refuses access to such pages (the file was made immutable
// or truncated, its disk failed), the process gets SIGBUS and would die with a bare
// "Bus error". This names the mapped file and the likely reasons instead, then exits
// with the store-error status (4) for a database's -shm/-wal file, else 3: every row
// committed before is in the file, and readers show the run as interrupted.

namespace ampbench::store::fault {

/// Installs the SIGBUS handler once per process, unless the program has its own.
void watchMappedFiles();

}  // namespace ampbench::store::fault
