import Foundation

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
    let process = Process()
    process.executableURL = URL(fileURLWithPath: TestPaths.executable)
    process.arguments = arguments
    let isolatedHome = home ?? TestPaths.makeTemporaryDirectory()
    var env = [
        "HOME": isolatedHome, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
        "XDG_CONFIG_HOME": isolatedHome + "/config", "XDG_DATA_HOME": isolatedHome + "/data",
        "XDG_CACHE_HOME": isolatedHome + "/cache", "XDG_STATE_HOME": isolatedHome + "/state",
    ]
    env.merge(environment) { $1 }
    process.environment = env
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
