#ifndef CSQLITE_H
#define CSQLITE_H
// SQLite for TartilSQLite, linked from Debian's static archive (libsqlite3-dev's libsqlite3.a: the same SQLite as
// libsqlite3.so.0, built the same way). The shared library bound some 1,600 symbols as it was loaded, about a
// million instructions at the first open of every process; the archive's code is bound when tartil is linked. Its
// symbols are kept out of the executable's dynamic symbol table (`--exclude-libs`, see Package.swift), so a
// library loaded later that uses a shared SQLite of its own keeps its own.
#include <sqlite3.h>
#include <stddef.h>

// SQLite's process-wide settings, once (any thread), before the first connection opens: memory statistics off,
// since they take a process-wide mutex on every allocation (threads using separate databases contended for it).
void csqlite_prepare(void);

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import: bind text and
// blobs through wrappers that ask SQLite to copy the bytes.
int csqlite_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length);
int csqlite_bind_blob_transient(sqlite3_stmt *statement, int index, const void *bytes, int length);

// sqlite3_db_config is variadic: this sets SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE (the last connection to close
// leaves the write-ahead log for the next one instead of checkpointing it with two fsyncs).
int csqlite_no_checkpoint_on_close(sqlite3 *db);
#endif
