"""What tartil's Python test servers share: announcing the port and living as long as their test process."""
import os
import threading


def serve(server, port_file=None, exit_on_eof=False):
    """Prints the server's port (and writes it to `port_file`, atomically), then serves for ever or, with
    `exit_on_eof`, until standard input closes (so a test process that dies takes its server with it)."""
    server.daemon_threads = True
    port = server.server_address[1]
    if port_file:
        with open(port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.rename(port_file + ".tmp", port_file)
    print(port, flush=True)
    if exit_on_eof:
        def watch():
            while os.read(0, 4096):
                pass
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()
    server.serve_forever()
