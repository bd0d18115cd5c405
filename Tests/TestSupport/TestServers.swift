import Foundation

/// A server on loopback started for tests: nginx from a private configuration, tartil's fault-injecting server
/// (either over HTTPS too, under a throwaway test CA), a small HTTP proxy, or the slow-link proxy in front of one
/// of them. It stops when `stop()` is called or when the test process ends (its standard input is a pipe held by
/// the test process).
public final class TestServer: @unchecked Sendable {
    public let port: Int
    /// `http` or `https`.
    public let scheme: String
    /// Where the server keeps its state: nginx's `access.log`, the proxy's `requests.log`.
    public let state: String
    private let process: Process
    private let stdin: Pipe

    private init(process: Process, stdin: Pipe, port: Int, scheme: String = "http", state: String) {
        self.process = process
        self.stdin = stdin
        self.port = port
        self.scheme = scheme
        self.state = state
    }

    /// Base URL, e.g. `http://127.0.0.1:41234` or `https://127.0.0.1:41235`.
    public var base: String { "\(scheme)://127.0.0.1:\(port)" }

    /// The test CA every HTTPS test server's certificate is signed by (made once per test process by
    /// tools/testserver/test-ca): trust it with `--ca-bundle` or `SSL_CERT_FILE`. No system bundle holds it, so
    /// a client that does not trust it refuses the servers.
    public static let testAuthority: String = {
        let directory = TestPaths.makeTemporaryDirectory() + "/tls"
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.repository + "/tools/testserver/test-ca")
        process.arguments = [directory]
        try! process.run()
        process.waitUntilExit()
        precondition(process.terminationStatus == 0, "tools/testserver/test-ca failed")
        return directory
    }()

    /// The test CA's certificate (a PEM file).
    public static var testAuthorityCertificate: String { testAuthority + "/ca.pem" }

    /// tartil's fault-injecting server over `root` (see tools/testserver/faultserver.py); with `tls`, over HTTPS
    /// (HTTP/1.1) under the test CA.
    public static func faults(root: String, tls: Bool = false) throws -> TestServer {
        let state = TestPaths.makeTemporaryDirectory()
        let portFile = state + "/port"
        let (process, stdin) = try launch(
            "/usr/bin/env",
            ["python3", TestPaths.repository + "/tools/testserver/faultserver.py", root, "--port-file", portFile, "--exit-on-eof", "--log", state + "/requests.log"]
                + (tls ? ["--tls", testAuthority] : []))
        return TestServer(process: process, stdin: stdin, port: try waitForPortFile(portFile), scheme: tls ? "https" : "http", state: state)
    }

    /// A forwarding and CONNECT proxy (tools/testserver/proxy.py) that logs each request to `requestLog`.
    public static func proxy() throws -> TestServer {
        let state = TestPaths.makeTemporaryDirectory()
        let portFile = state + "/port"
        let (process, stdin) = try launch(
            "/usr/bin/env",
            ["python3", TestPaths.repository + "/tools/testserver/proxy.py", "--log", state + "/requests.log", "--port-file", portFile, "--exit-on-eof"])
        return TestServer(process: process, stdin: stdin, port: try waitForPortFile(portFile), state: state)
    }

    /// The proxy's log: one line per request (`CONNECT 127.0.0.1:4433`, `GET http://127.0.0.1:8080/a`); the fault
    /// server's: one line per answer (`200 13582 /ok/fixture/112001.mp3 -`).
    public var requestLog: [String] {
        ((try? String(contentsOfFile: state + "/requests.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// nginx's access log: one line per request, `CONNECTION_SERIAL PROTOCOL STATUS URI`
    /// (`3 HTTP/2.0 200 /fixture/001001.mp3`).
    public var accessLog: [String] {
        ((try? String(contentsOfFile: state + "/access.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// nginx serving `root`; with `tls`, over HTTPS with HTTP/2 under the test CA (or the CA made in
    /// `authority`, for a server a client does not trust).
    public static func nginx(root: String, tls: Bool = false, authority: String? = nil) throws -> TestServer {
        let state = TestPaths.makeTemporaryDirectory()
        for _ in 0..<20 {
            // Below the kernel's ephemeral range (32768-60999 here), where the servers started on port 0 and every
            // outgoing connection get theirs: a port one of those holds would look like nginx listening.
            let port = Int.random(in: 20000..<32768)
            let (process, stdin) = try launch(
                TestPaths.repository + "/tools/testserver/nginx-serve",
                [root, String(port), state + "/nginx", "--exit-on-eof"] + (tls ? ["--tls", authority ?? testAuthority] : []))
            // nginx writes its pid file only once it holds its port: a listener there before then is another's.
            let pidFile = state + "/nginx/nginx.pid"
            if waitForListening(port: port, process: process, ready: { FileManager.default.fileExists(atPath: pidFile) }) {
                return TestServer(process: process, stdin: stdin, port: port, scheme: tls ? "https" : "http", state: state + "/nginx")
            }
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        throw TestServerError(message: "nginx did not start (see \(state)/nginx/error.log)")
    }

    /// tools/netproxy in front of `port` on loopback: a link with `rttMilliseconds` of round trip and
    /// `megabitsPerSecond` per direction shared by every connection; with `freezeAfter`, the first connection goes
    /// silent towards the client after that many bytes (a dead connection).
    public static func slowLink(to port: Int, rttMilliseconds: Int, megabitsPerSecond: Int, freezeAfter: Int? = nil) throws -> TestServer {
        let state = TestPaths.makeTemporaryDirectory()
        let portFile = state + "/port"
        let (process, stdin) = try launch(
            "/usr/bin/env",
            ["python3", TestPaths.repository + "/tools/netproxy", "--listen", "0", "--to", "127.0.0.1:\(port)",
             "--rtt-ms", String(rttMilliseconds), "--mbit", String(megabitsPerSecond), "--port-file", portFile, "--exit-on-eof"]
                + (freezeAfter.map { ["--freeze-after", String($0)] } ?? []))
        return TestServer(process: process, stdin: stdin, port: try waitForPortFile(portFile), state: state)
    }

    public func stop() {
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private static func launch(_ executable: String, _ arguments: [String]) throws -> (Process, Pipe) {
        let process = ChildProcess()
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

    private static func waitForListening(port: Int, process: Process, ready: () -> Bool = { true }) -> Bool {
        for _ in 0..<200 {
            guard process.isRunning else { return false }
            guard ready() else {
                usleep(25_000)
                continue
            }
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
