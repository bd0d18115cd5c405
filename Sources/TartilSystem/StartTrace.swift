import Glibc

/// An opt-in trace of the moments of start-up, for `tools/bench/play`: with `TARTIL_TRACE_START=1` in the
/// environment, tartil writes a line to standard error at each moment, with the time on `CLOCK_MONOTONIC` (the
/// clock a benchmark reads just before it starts the process):
///
/// ```
/// tartil-trace: main 1234567890123
/// tartil-trace: first-sample 1234569012345
/// ```
///
/// `main` is the first line of the executable's code (after the loader and the Swift runtime's start); `first-sample`
/// is the moment the first PCM of a play is handed to the output (written to the ALSA device, the WAV file, the
/// null or silent output). Off (the variable unset or anything but `1`), each place costs one test of a flag that
/// was read once.
public enum StartTrace {
    /// Whether `TARTIL_TRACE_START=1` (read once, from the process environment).
    public static let isOn: Bool = {
        guard let value = getenv("TARTIL_TRACE_START") else { return false }
        return strcmp(value, "1") == 0
    }()

    /// Writes `tartil-trace: MOMENT NANOSECONDS` to standard error when the trace is on.
    public static func mark(_ moment: StaticString) {
        guard isOn else { return }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let line = "tartil-trace: \(moment) \(Int(now.tv_sec) * 1_000_000_000 + Int(now.tv_nsec))\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }
}
