#ifndef CEDIT_H
#define CEDIT_H
// libedit's readline-compatible interface for the interactive prompt, loaded on first use instead of linked
// (with the libraries it brings, libtinfo, libbsd and libmd): only `tartil` at a terminal edits lines, and every
// other start of tartil would pay for loading them.

// Loads libedit.so.2 (once, from any thread). Returns 0, or -1 when it cannot be loaded (the prompt then reads
// plain lines).
int cedit_load(void);

// readline(3): the line without its newline, to be released with free(); NULL at the end of input.
char *cedit_readline(const char *prompt);
void cedit_add_history(const char *line);
int cedit_read_history(const char *file);
int cedit_write_history(const char *file);
#endif
