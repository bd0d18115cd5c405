import Foundation

/// A server on loopback started for tests: nginx from a private configuration, tartil's fault-injecting server,
/// or the slow-link proxy in front of one of them. It stops when `stop()` is called or when the test process ends (its standard input
/// is a pipe held by the test process).
public final class TestServer: @unchecked Sendable {
    public let port: Int
    private let process: Process
    private let stdin: Pipe

    private init(process: Process, stdin: Pipe, port: Int) {
        self.process = process
        self.stdin = stdin
        self.port = port
    }

    /// Base URL, e.g. `http://127.0.0.1:41234`.
    public var base: String { "http://127.0.0.1:\(port)" }

    /// tartil's fault-injecting server over `root` (see tools/testserver/faultserver.py).
    public static func faults(root: String) throws -> TestServer {
        let state = TestPaths.makeTemporaryDirectory()
        let portFile = state + "/port"
        let (process, stdin) = try launch(
            "/usr/bin/env", ["python3", TestPaths.repository + "/tools/testserver/faultserver.py", root, "--port-file", portFile, "--exit-on-eof"])
        return TestServer(process: process, stdin: stdin, port: try waitForPortFile(portFile))
    }

    /// nginx serving `root`.
    public static func nginx(root: String) throws -> TestServer {
        let state = TestPaths.makeTemporaryDirectory()
        for _ in 0..<20 {
            let port = Int.random(in: 20000..<60000)
            let (process, stdin) = try launch(
                TestPaths.repository + "/tools/testserver/nginx-serve", [root, String(port), state + "/nginx", "--exit-on-eof"])
            if waitForListening(port: port, process: process) { return TestServer(process: process, stdin: stdin, port: port) }
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        throw TestServerError(message: "nginx did not start (see \(state)/nginx/error.log)")
    }

    /// tools/netproxy in front of `port` on loopback: a link with `rttMilliseconds` of round trip and
    /// `megabitsPerSecond` per direction shared by every connection.
    public static func slowLink(to port: Int, rttMilliseconds: Int, megabitsPerSecond: Int) throws -> TestServer {
        let state = TestPaths.makeTemporaryDirectory()
        let portFile = state + "/port"
        let (process, stdin) = try launch(
            "/usr/bin/env",
            ["python3", TestPaths.repository + "/tools/netproxy", "--listen", "0", "--to", "127.0.0.1:\(port)",
             "--rtt-ms", String(rttMilliseconds), "--mbit", String(megabitsPerSecond), "--port-file", portFile, "--exit-on-eof"])
        return TestServer(process: process, stdin: stdin, port: try waitForPortFile(portFile))
    }

    public func stop() {
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private static func launch(_ executable: String, _ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, stdin)
    }

    private static func waitForPortFile(_ path: String) throws -> Int {
        for _ in 0..<200 {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), let port = Int(text) { return port }
            usleep(25_000)
        }
        throw TestServerError(message: "the server did not write its port to \(path)")
    }

    private static func waitForListening(port: Int, process: Process) -> Bool {
        for _ in 0..<200 {
            guard process.isRunning else { return false }
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(descriptor)
            if connected == 0 { return true }
            usleep(25_000)
        }
        return false
    }
}

public struct TestServerError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
