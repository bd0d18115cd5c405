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

// Before the first readline: while readline waits, `output` becoming readable makes it call `print` (on the
// thread in readline, between keys) and then redraw the prompt and the line being typed
// (rl_forced_update_display); `interrupt` becoming readable ends the wait (readline returns NULL). Uses
// libedit's rl_getc_function hook. Returns 0, or -1 when this libedit lacks the hook (output is then printed
// as it comes).
int cedit_set_output_source(int output, int interrupt, void (*print)(void));

// Tab completion through libedit's rl_attempted_completion_function: `complete` gets the line and the cursor (in
// characters as libedit counts them) and returns the candidates for the word before the cursor, separated by
// newlines, in memory from malloc (released here); or NULL to have libedit complete file names. Returns 0, or -1
// when this libedit lacks the hooks (Tab then completes file names).
int cedit_set_completion(char *(*complete)(const char *line, int cursor));
#endif
