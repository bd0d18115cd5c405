#ifndef CSQLITE_H
#define CSQLITE_H
// SQLite for TartilSQLite, loaded on first use instead of linked: libsqlite3 binds some 1,600 symbols as it loads
// (about 1.5 million instructions at every start of tartil), and the commands that touch no database (`status`,
// listings, help) never need it. sqlite3.h is used for its types and constants; the sqlite3_* functions TartilSQLite
// calls are defined in csqlite.c, each calling libsqlite3.so.0 through a pointer found by dlsym (hidden from the
// dynamic symbol table, so the library's own calls stay its own). `csqlite_load` must have succeeded before any of
// them is called.
#include <sqlite3.h>
#include <stddef.h>

// Loads libsqlite3.so.0 (once, from any thread) and turns off SQLite's memory statistics, which take a
// process-wide mutex on every allocation (threads using separate databases then contended for it). Returns NULL, or why not (text that
// stays as it is).
const char *csqlite_load(void);

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import: bind text and
// blobs through wrappers that ask SQLite to copy the bytes.
int csqlite_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length);
int csqlite_bind_blob_transient(sqlite3_stmt *statement, int index, const void *bytes, int length);

// sqlite3_db_config is variadic: this sets SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE (the last connection to close
// leaves the write-ahead log for the next one instead of checkpointing it with two fsyncs).
int csqlite_no_checkpoint_on_close(sqlite3 *db);
#endif
