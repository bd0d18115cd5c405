// SQLite's process-wide settings and the calls Swift cannot make itself (see CSQLite.h).
#include "CSQLite.h"
#include <pthread.h>

// Before the first connection opens: SQLite's memory statistics off.
static void prepare(void) { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

void csqlite_prepare(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, prepare);
}

int csqlite_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}
int csqlite_bind_blob_transient(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}
int csqlite_no_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}
