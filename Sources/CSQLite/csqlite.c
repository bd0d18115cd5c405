// The sqlite3_* functions TartilSQLite calls, each forwarding to libsqlite3.so.0 (see CSQLite.h).
#include "CLoad.h"
#include <stddef.h>
// Hidden (sqlite3.h's declarations, and so the definitions below): the executable exports its symbols (the Swift
// runtime links it with -export-dynamic), and an exported sqlite3_free here would take the place of the library's
// own for the library's internal calls. The C library's headers come first, so that its functions stay default.
#pragma GCC visibility push(hidden)
#include "CSQLite.h"

#define SQLITE_FUNCTIONS(X)                                                                                         \
    X(sqlite3_backup_finish) X(sqlite3_backup_init) X(sqlite3_backup_pagecount) X(sqlite3_backup_step)               \
    X(sqlite3_bind_blob) X(sqlite3_bind_double) X(sqlite3_bind_int64) X(sqlite3_bind_null) X(sqlite3_bind_text)      \
    X(sqlite3_clear_bindings) X(sqlite3_close) X(sqlite3_close_v2) X(sqlite3_column_bytes) X(sqlite3_column_int64)   \
    X(sqlite3_column_text) X(sqlite3_column_type) X(sqlite3_config) X(sqlite3_db_config) X(sqlite3_errcode)          \
    X(sqlite3_errmsg) X(sqlite3_errstr) X(sqlite3_exec) X(sqlite3_finalize) X(sqlite3_free) X(sqlite3_interrupt)     \
    X(sqlite3_libversion) X(sqlite3_open_v2) X(sqlite3_prepare_v2) X(sqlite3_progress_handler) X(sqlite3_reset)      \
    X(sqlite3_step) X(sqlite3_wal_checkpoint_v2)

// One pointer per function, of the function's own type (from sqlite3.h), found by CLoad.
static struct {
#define POINTER(name) __typeof__(name) *name;
    SQLITE_FUNCTIONS(POINTER)
#undef POINTER
} sqlite;

static const cload_function functions[] = {
#define FUNCTION(name) {#name, (void **)&sqlite.name},
    SQLITE_FUNCTIONS(FUNCTION)
#undef FUNCTION
};

// Before the first connection opens: SQLite's memory statistics off.
static int prepare(char *failure, size_t capacity) {
    (void)failure, (void)capacity;
    sqlite.sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    return 0;
}

static cload_library library =
    CLOAD_LIBRARY("libsqlite3.so.0", "SQLite", "", functions, sizeof functions / sizeof *functions, prepare);

const char *csqlite_load(void) { return cload(&library); }

// Every call below comes after a `csqlite_load` that succeeded (TartilSQLite's Connection loads before it opens
// anything).
#define CALL(name, ...) (cload_or_stop(&library), sqlite.name(__VA_ARGS__))

int sqlite3_backup_finish(sqlite3_backup *p) { return CALL(sqlite3_backup_finish, p); }
sqlite3_backup *sqlite3_backup_init(sqlite3 *dest, const char *destName, sqlite3 *source, const char *sourceName) {
    return CALL(sqlite3_backup_init, dest, destName, source, sourceName);
}
int sqlite3_backup_pagecount(sqlite3_backup *p) { return CALL(sqlite3_backup_pagecount, p); }
int sqlite3_backup_step(sqlite3_backup *p, int pages) { return CALL(sqlite3_backup_step, p, pages); }
int sqlite3_bind_blob(sqlite3_stmt *s, int i, const void *v, int n, void (*d)(void *)) { return CALL(sqlite3_bind_blob, s, i, v, n, d); }
int sqlite3_bind_double(sqlite3_stmt *s, int i, double v) { return CALL(sqlite3_bind_double, s, i, v); }
int sqlite3_bind_int64(sqlite3_stmt *s, int i, sqlite3_int64 v) { return CALL(sqlite3_bind_int64, s, i, v); }
int sqlite3_bind_null(sqlite3_stmt *s, int i) { return CALL(sqlite3_bind_null, s, i); }
int sqlite3_bind_text(sqlite3_stmt *s, int i, const char *v, int n, void (*d)(void *)) { return CALL(sqlite3_bind_text, s, i, v, n, d); }
int sqlite3_clear_bindings(sqlite3_stmt *s) { return CALL(sqlite3_clear_bindings, s); }
int sqlite3_close(sqlite3 *db) { return CALL(sqlite3_close, db); }
int sqlite3_close_v2(sqlite3 *db) { return CALL(sqlite3_close_v2, db); }
int sqlite3_column_bytes(sqlite3_stmt *s, int c) { return CALL(sqlite3_column_bytes, s, c); }
sqlite3_int64 sqlite3_column_int64(sqlite3_stmt *s, int c) { return CALL(sqlite3_column_int64, s, c); }
const unsigned char *sqlite3_column_text(sqlite3_stmt *s, int c) { return CALL(sqlite3_column_text, s, c); }
int sqlite3_column_type(sqlite3_stmt *s, int c) { return CALL(sqlite3_column_type, s, c); }
int sqlite3_errcode(sqlite3 *db) { return CALL(sqlite3_errcode, db); }
const char *sqlite3_errmsg(sqlite3 *db) { return CALL(sqlite3_errmsg, db); }
const char *sqlite3_errstr(int code) { return CALL(sqlite3_errstr, code); }
int sqlite3_exec(sqlite3 *db, const char *sql, int (*callback)(void *, int, char **, char **), void *argument, char **message) {
    return CALL(sqlite3_exec, db, sql, callback, argument, message);
}
int sqlite3_finalize(sqlite3_stmt *s) { return CALL(sqlite3_finalize, s); }
void sqlite3_free(void *p) { CALL(sqlite3_free, p); }
void sqlite3_interrupt(sqlite3 *db) { CALL(sqlite3_interrupt, db); }
const char *sqlite3_libversion(void) { cload_or_stop(&library); return sqlite.sqlite3_libversion(); }
int sqlite3_open_v2(const char *name, sqlite3 **db, int flags, const char *vfs) { return CALL(sqlite3_open_v2, name, db, flags, vfs); }
int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int bytes, sqlite3_stmt **statement, const char **tail) {
    return CALL(sqlite3_prepare_v2, db, sql, bytes, statement, tail);
}
void sqlite3_progress_handler(sqlite3 *db, int steps, int (*handler)(void *), void *argument) {
    CALL(sqlite3_progress_handler, db, steps, handler, argument);
}
int sqlite3_reset(sqlite3_stmt *s) { return CALL(sqlite3_reset, s); }
int sqlite3_step(sqlite3_stmt *s) { return CALL(sqlite3_step, s); }
int sqlite3_wal_checkpoint_v2(sqlite3 *db, const char *name, int mode, int *log, int *checkpointed) {
    return CALL(sqlite3_wal_checkpoint_v2, db, name, mode, log, checkpointed);
}

int csqlite_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length) {
    return CALL(sqlite3_bind_text, statement, index, text, length, SQLITE_TRANSIENT);
}
int csqlite_bind_blob_transient(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return CALL(sqlite3_bind_blob, statement, index, bytes, length, SQLITE_TRANSIENT);
}
int csqlite_no_checkpoint_on_close(sqlite3 *db) {
    return CALL(sqlite3_db_config, db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}
#pragma GCC visibility pop
