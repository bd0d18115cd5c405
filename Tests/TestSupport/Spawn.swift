import Foundation
import Synchronization

/// The outcome of running the `tartil` executable.
public struct RunResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// Runs the built `tartil` with `arguments`, feeding `input` on standard input, in an environment with private
/// XDG directories (so the user's files are never read) plus `environment`.
public func runTartil(
    _ arguments: [String], input: String? = nil, environment: [String: String] = [:], home: String? = nil
) throws -> RunResult {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: TestPaths.executable)
    process.arguments = arguments
    let isolatedHome = home ?? TestPaths.makeTemporaryDirectory()
    process.environment = isolatedEnvironment(home: isolatedHome).merging(environment) { $1 }
    let stdout = Pipe()
    let stderr = Pipe()
    let stdin = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = stdin
    try process.run()
    if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
    try stdin.fileHandleForWriting.close()
    // Read both pipes before waiting, so a large output cannot fill a pipe and stall the child.
    let group = DispatchGroup()
    nonisolated(unsafe) var errorData = Data()
    DispatchQueue.global().async(group: group) { errorData = stderr.fileHandleForReading.readDataToEndOfFile() }
    let outputData = stdout.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    if home == nil { try? FileManager.default.removeItem(atPath: isolatedHome) }
    return RunResult(
        status: process.terminationStatus, stdout: String(decoding: outputData, as: UTF8.self),
        stderr: String(decoding: errorData, as: UTF8.self))
}

/// A private environment under `home`: the XDG folders (so the user's files are never read) and a runtime
/// folder of its own (so each test's players serve a control socket of their own).
public func isolatedEnvironment(home: String) -> [String: String] {
    [
        "HOME": home, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
        "XDG_RUNTIME_DIR": home + "/run", "XDG_CONFIG_HOME": home + "/config", "XDG_DATA_HOME": home + "/data",
        "XDG_CACHE_HOME": home + "/cache", "XDG_STATE_HOME": home + "/state",
    ]
}

/// How a run of `tartil` with a deadline ended.
public struct BoundedRunResult: Sendable {
    /// The exit status, or the signal number when `signal` is true.
    public let status: Int32
    /// True when the process was ended by a signal (a crash, or the kill after the deadline).
    public let signaled: Bool
    /// True when the deadline passed and the process was killed.
    public let timedOut: Bool
    public let stdout: Data
    public let stderr: Data
}

/// Runs the built `tartil` with raw bytes on standard input (any bytes, of any length: a reader that stops early
/// is fine) and kills it when `deadline` seconds pass. The environment is private as in `runTartil`, plus
/// `environment`; the working directory is `directory`.
public func runTartilBounded(
    _ arguments: [String], input: [UInt8] = [], environment: [String: String] = [:], home: String,
    directory: String, deadline: Double
) throws -> BoundedRunResult {
    ignoreBrokenPipes
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: TestPaths.executable)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    var env = isolatedEnvironment(home: home)
    env["SWIFT_BACKTRACE"] = "enable=no"
    env.merge(environment) { $1 }
    process.environment = env
    let stdout = Pipe()
    let stderr = Pipe()
    let stdin = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = stdin
    try process.run()
    let group = DispatchGroup()
    let writeEnd = stdin.fileHandleForWriting
    let writer = writeEnd.fileDescriptor
    DispatchQueue.global().async(group: group) {
        input.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(writer, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break }  // the reader has gone (EPIPE): fine
                offset += written
            }
        }
        try? writeEnd.close()
    }
    nonisolated(unsafe) var errorData = Data()
    nonisolated(unsafe) var outputData = Data()
    DispatchQueue.global().async(group: group) { errorData = stderr.fileHandleForReading.readDataToEndOfFile() }
    DispatchQueue.global().async(group: group) { outputData = stdout.fileHandleForReading.readDataToEndOfFile() }
    let killed = Mutex(false)
    let pid = process.processIdentifier
    let timer = DispatchSource.makeTimerSource()
    timer.schedule(deadline: .now() + deadline)
    timer.setEventHandler {
        killed.withLock { $0 = true }
        kill(pid, SIGKILL)
    }
    timer.resume()
    process.waitUntilExit()
    timer.cancel()
    group.wait()
    // Close every end now: descriptors left to deinit pile up over thousands of runs.
    try? stdout.fileHandleForReading.close()
    try? stderr.fileHandleForReading.close()
    return BoundedRunResult(
        status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
        timedOut: killed.withLock { $0 }, stdout: outputData, stderr: errorData)
}

/// Writing to a pipe whose reader has gone returns EPIPE instead of killing the test process.
private let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()
