// The peer of tools/bench/control's status round trip: the least a client process can do for a status. It starts,
// connects to the control socket named by its argument, sends `status` as a JSON line, reads the reply line and
// writes it to standard output. No parsing, no rendering, no checks: a lower bound, not a tartil feature.
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) return 64;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    if (s < 0 || connect(s, (struct sockaddr *)&address, sizeof address) != 0) return 3;
    const char *request = "{\"command\":[\"status\",\"--json\"],\"request_id\":1}\n";
    if (write(s, request, strlen(request)) != (ssize_t)strlen(request)) return 1;
    static char reply[1 << 16];
    size_t length = 0;
    ssize_t count;
    while (length < sizeof reply && (count = read(s, reply + length, sizeof reply - length)) > 0) {
        length += (size_t)count;
        if (memchr(reply, '\n', length)) break;
    }
    fwrite(reply, 1, length, stdout);
    return length > 0 && memchr(reply, '\n', length) ? 0 : 1;
}
