"""A private tartil home for the benchmarks that drive a running player (tools/bench/control, tools/bench/position).

A folder holds everything: mirrors.json (one reciter, its only mirror a closed port, so nothing is downloaded), the
reciter's table, the cache, the journal and the runtime folder of the control socket. The reciter is
ibrahim-alakhdar's real recordings from ../shared/real/audio (surah 112 and its basmala: one format, 22050 Hz mono)
when that folder is there, else the fixture reciter with `--basmala off` (112:1-4, all 44100 Hz mono), so that no
format change (a drain of the output) falls inside a measurement. RECITER=fixture takes the fixture in any case.

A folder made before is reused as it is (its cache, its journal): `fresh` says which it was.
"""

import json
import os
import shutil
import socket
import subprocess
import time

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class Home:
    def __init__(self, tartil, folder, repo):
        self.tartil, self.folder, self.repo = tartil, folder, repo
        real = os.path.join(repo, "..", "shared", "real", "audio", "ibrahim-alakhdar")
        if os.path.isfile(os.path.join(real, "112001.mp3")) and os.environ.get("RECITER") != "fixture":
            self.reciter, self.audio, self.plan_options = "ibrahim-alakhdar", real, []
            self.table_source = os.path.join(repo, "reciter-tables", "ibrahim-alakhdar.tsv")
        else:
            self.reciter, self.audio, self.plan_options = "fixture", os.path.join(repo, "Tests", "Fixtures", "fixture"), ["--basmala", "off"]
            self.table_source = None
        self.socket = os.path.join(folder, "run", "tartil", "control.sock")
        self.env = dict(
            os.environ, HOME=folder, XDG_RUNTIME_DIR=folder + "/run", XDG_CONFIG_HOME=folder + "/config",
            XDG_STATE_HOME=folder + "/state", TARTIL_RECITER=self.reciter, TARTIL_MIRRORS=folder + "/mirrors.json",
            TARTIL_TABLES=folder + "/tables", TARTIL_CACHE_DIR=folder + "/cache", TARTIL_JOURNAL=folder + "/journal.sqlite",
            TARTIL_MPRIS="0")
        for name in ("TARTIL_SOCKET", "TARTIL_CONFIG", "TARTIL_OUTPUT", "TARTIL_DEVICE"):
            self.env.pop(name, None)
        self.fresh = not os.path.exists(folder + "/mirrors.json")
        self.players = []
        if self.fresh:
            self._make()

    def _make(self):
        os.makedirs(self.folder + "/tables", exist_ok=True)
        os.makedirs(self.folder + "/run", mode=0o700, exist_ok=True)
        with open(self.folder + "/mirrors.json", "w") as f:
            json.dump({"version": 1, "reciters": [{"id": self.reciter, "name": self.reciter, "style": "murattal",
                       "mirrors": [{"name": "none", "url": "http://127.0.0.1:9/{surah3}{ayah3}.mp3"}]}]}, f)
        table = f"{self.folder}/tables/{self.reciter}.tsv"
        if self.table_source:
            shutil.copy(self.table_source, table)
        else:
            self.check(self.run("table", "build", self.audio, "--reciter", self.reciter, "-o", table))
        self.check(self.run("cache", "import", self.audio, "--reciter", self.reciter))

    def run(self, *args, **kw):
        return subprocess.run([self.tartil, *args], env=self.env, stdin=subprocess.DEVNULL, capture_output=True, text=True, **kw)

    @staticmethod
    def check(result):
        if result.returncode != 0:
            raise SystemExit(f"tartil {' '.join(result.args[1:])} failed ({result.returncode}): {result.stderr.strip()}")
        return result

    def timed(self, *args):
        """Runs tartil: (wall ms, CPU ms of the process: user + system, exit code)."""
        return self.timed_command(self.tartil, *args)

    def timed_command(self, *command):
        """Runs a command in this home: (wall ms, CPU ms of the process: user + system, exit code)."""
        started = time.perf_counter()
        process = subprocess.Popen(list(command), env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        wall = (time.perf_counter() - started) * 1000
        process.returncode = os.waitstatus_to_exitcode(status)
        return wall, (usage.ru_utime + usage.ru_stime) * 1000, process.returncode

    # MARK: - The player

    def start(self, *args, stdout=subprocess.DEVNULL):
        """Starts `tartil play ARGS --output silent` and returns once its control socket answers."""
        process = subprocess.Popen([self.tartil, "play", *args, *self.plan_options, "--output", "silent"], env=self.env,
                                   stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.DEVNULL)
        self.players.append(process)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"the player exited at once ({process.returncode})")
            try:
                with Connection(self.socket) as connection:
                    if connection.request("status")["data"]["state"] == "playing":
                        return process
            except OSError:
                pass
            time.sleep(0.01)
        raise SystemExit("the player's control socket did not answer within 10 s")

    def stop_players(self):
        """Stops the players this home started (by their pids, never by name)."""
        for process in self.players:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.players = []


class Connection:
    """A raw connection to the control socket: one JSON request per line, one reply per request."""

    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.connect(path)
        self.file = self.socket.makefile("rb")
        self.next_id = 0

    def request(self, command):
        self.next_id += 1
        self.socket.sendall(json.dumps({"command": command, "request_id": self.next_id}).encode() + b"\n")
        while True:
            line = self.file.readline()
            if not line:
                raise OSError("the player closed the connection")
            reply = json.loads(line)
            if "exit_code" in reply:
                return reply

    def close(self):
        self.file.close()
        self.socket.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def cpu_seconds(pid):
    """User + system CPU time of a process so far, from /proc (clock ticks: 10 ms)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]
