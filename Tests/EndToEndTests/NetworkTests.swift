import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// Downloads over HTTPS with HTTP/2, through proxies, and with custom CA bundles, against nginx and the fault
/// server under the test CA (the fault scenarios over HTTPS are in PrefetchTests).
@Suite struct NetworkTests {
    let environment = DownloadEnvironment.shared

    func summary(_ result: RunResult) throws -> [String: Any] {
        let line = try #require(result.stdout.split(separator: "\n").last)
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// A prefetch over HTTPS multiplexes on HTTP/2: every request in nginx's log came over HTTP/2, on at most
    /// --jobs connections (two here, for eleven files: 32 streams each), and libcurl's own count agrees.
    @Test func aPrefetchOverHTTPSUsesHTTP2AndFewConnections() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer.nginx(root: TestPaths.fixtures, tls: true)
        defer { server.stop() }
        let result = try environment.tartil(
            ["prefetch", "1", "112", "--reciter", "fixture", "--jobs", "2", "--json"], urls: [server.base + "/fixture/{surah3}{ayah3}.mp3"],
            in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try environment.verifiedFiles(in: directory).count == 11)
        let summary = try summary(result)
        #expect(summary["http2_transfers"] as? Int == 11, "\(summary)")
        #expect((summary["connections"] as? Int ?? 99) <= 2, "\(summary)")
        let log = server.accessLog.filter { $0.contains("/fixture/") }
        #expect(log.count == 11, "\(log)")
        #expect(log.allSatisfy { $0.contains(" HTTP/2.0 200 ") }, "\(log)")
        let connections = Set(log.map { $0.split(separator: " ")[0] })
        #expect(connections.count <= 2, "\(log)")
    }

    /// The player's queue-ahead asks one downloader for each next file as playback goes: over HTTPS every file
    /// comes over HTTP/2 on the one connection the first opened.
    @Test func thePlayersQueueAheadReusesOneConnection() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer.nginx(root: TestPaths.fixtures, tls: true)
        defer { server.stop() }
        let result = try environment.tartil(
            ["play", "1", "--reciter", "fixture", "--output", "null"], urls: [server.base + "/fixture/{surah3}{ayah3}.mp3"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let log = server.accessLog.filter { $0.contains("/fixture/") }
        #expect(log.count == 7 && log.allSatisfy { $0.contains(" HTTP/2.0 200 ") }, "\(log)")
        #expect(Set(log.map { $0.split(separator: " ")[0] }).count == 1, "\(log)")
    }

    /// Over plain HTTP (HTTP/1.1) the files come over several connections, at most --jobs of them.
    @Test func aPrefetchOverHTTPUsesAtMostJobsConnections() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer.nginx(root: TestPaths.fixtures)
        defer { server.stop() }
        let result = try environment.tartil(
            ["prefetch", "1", "112", "--reciter", "fixture", "--jobs", "3", "--json"], urls: [server.base + "/fixture/{surah3}{ayah3}.mp3"],
            in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let log = server.accessLog.filter { $0.contains("/fixture/") }
        #expect(log.count == 11 && log.allSatisfy { $0.contains(" HTTP/1.1 200 ") }, "\(log)")
        #expect(Set(log.map { $0.split(separator: " ")[0] }).count <= 3, "\(log)")
        #expect(try summary(result)["http2_transfers"] as? Int == 0)
    }

    /// Mirrors whose certificate no trusted CA signed are given up at once, for the whole run: a prefetch of
    /// juz 30 (565 files: its 564 ayat and the basmala's 1:1) against two of them asks each for no more
    /// connections than one round of the transfers it may have in flight: before its first answer an https mirror
    /// gets --streams of them (64 by default) waiting on its first connection, and once that one fails libcurl may
    /// give each waiting transfer one of its own before the mirror's abandonment takes them back (measured: m1 1,
    /// m2 1 to 65; with --streams 8, 1 to 9). Before, it retried every file on both, thousands of handshakes and
    /// four minutes of backoff. The error names each mirror and the TLS reason, and nothing is in the cache.
    /// The mirrors count for themselves: nginx numbers every connection it accepts, a handshake the client refused
    /// too, and logs the number of each request's connection, so a trusted prefetch before and one after bracket
    /// what the untrusted one opened (a count, not a time: it holds on a loaded machine).
    @Test func mirrorsWithAnUnknownCAAreGivenUpAtOnce() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mirrors = [try TestServer.nginx(root: TestPaths.fixtures, tls: true), try TestServer.nginx(root: TestPaths.fixtures, tls: true)]
        defer { mirrors.forEach { $0.stop() } }
        let urls = mirrors.map { $0.base + "/fixture/{surah3}{ayah3}.mp3" }
        /// The connection numbers of the requests a trusted prefetch of surah 112 made of `mirror`.
        func trustedConnections(_ mirror: Int) throws -> [Int] {
            let before = mirrors[mirror].accessLog.count
            let reference = TestPaths.makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: reference) }
            let result = try environment.tartil(["prefetch", "112", "--reciter", "fixture"], urls: [urls[mirror]], in: reference)
            #expect(result.status == 0, "\(result.stderr)")
            return mirrors[mirror].accessLog.dropFirst(before).compactMap { Int($0.split(separator: " ")[0]) }
        }
        let lastBefore = try (0..<2).map { try #require(trustedConnections($0).max()) }
        let result = try environment.tartil(["prefetch", "juz", "30", "--reciter", "loose"], urls: urls, in: directory, trust: false)
        let firstAfter = try (0..<2).map { try #require(trustedConnections($0).min()) }
        for mirror in 0..<2 {
            let refused = firstAfter[mirror] - lastBefore[mirror] - 1
            #expect((1...DownloadLimits.defaultStreams + 1).contains(refused), "m\(mirror + 1) was asked for \(refused) connections")
        }
        #expect(result.status == 1)
        #expect(result.stderr.contains("Error: 565 of 565 files could not be downloaded"), "\(result.stderr)")
        for mirror in ["m1", "m2"] {
            #expect(
                result.stderr.contains("\(mirror): given up for this run: TLS: the server's certificate does not verify: SSL certificate problem: unable to get local issuer certificate"),
                "\(result.stderr.prefix(2000))")
        }
        #expect(result.stderr.contains("failed 78:1: mirror 1: TLS: "), "\(result.stderr.prefix(2000))")
        #expect(result.stderr.contains("--ca-bundle"))
        #expect(try environment.verifiedFiles(in: directory, reciter: "loose").isEmpty)
    }

    /// An untrusted first mirror fails over to a trusted second one at once, even with no retries.
    @Test func anUntrustedMirrorFailsOverToTheNext() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let other = TestPaths.makeTemporaryDirectory()
        // A server under another CA than the one trusted.
        let stranger = try TestServer.nginx(root: TestPaths.fixtures, tls: true, authority: other + "/tls")
        defer { stranger.stop() }
        let result = try environment.tartil(
            ["prefetch", "1", "112", "--reciter", "fixture", "--retries", "0"],
            urls: [stranger.base + "/fixture/{surah3}{ayah3}.mp3", environment.clean(.https)], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("m1: given up for this run: TLS: "), "\(result.stderr)")
        #expect(try environment.verifiedFiles(in: directory).count == 11)
    }

    /// The CA bundle comes from --ca-bundle, SSL_CERT_FILE, CURL_CA_BUNDLE or the config file's ca-bundle=.
    @Test(arguments: ["SSL_CERT_FILE", "CURL_CA_BUNDLE", "config"])
    func theCABundleComesFromTheStandardVariablesOrTheConfigFile(source: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var variables: [String: String] = [:]
        if source == "config" {
            let config = directory + "/config"
            try "ca-bundle=\(TestServer.testAuthorityCertificate)\n".write(toFile: config, atomically: true, encoding: .utf8)
            variables["TARTIL_CONFIG"] = config
        } else {
            variables[source] = TestServer.testAuthorityCertificate
        }
        let result = try environment.tartil(
            ["prefetch", "112", "--reciter", "fixture"], urls: [environment.clean(.https)], in: directory, trust: false, environment: variables)
        #expect(result.status == 0, "\(source): \(result.stderr)")
        #expect(try environment.verifiedFiles(in: directory).count == 5)  // 112:1-4 and the basmala's 1:1
        let version = try runTartil(["version", "--json"], environment: variables, home: directory)
        let fields = try JSONSerialization.jsonObject(with: Data(version.stdout.utf8)) as? [String: Any]
        #expect(fields?["ca_bundle"] as? String == TestServer.testAuthorityCertificate, "\(version.stdout)")
        #expect((fields?["ca_bundle_source"] as? String)?.hasPrefix(source == "config" ? directory + "/config:1" : source) == true)
        #expect(fields?["http2"] as? Bool == true)
    }

    /// SSL_CERT_DIR, a directory of certificates named by their hash (as openssl rehash makes), is trusted besides
    /// the bundle; one that is not a readable directory is a usage error naming the variable, and nothing is asked.
    @Test func aCADirectoryComesFromSSLCertDir() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let certificates = directory + "/certs"
        try FileManager.default.createDirectory(atPath: certificates, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestServer.testAuthorityCertificate, toPath: certificates + "/test-ca.pem")
        let rehash = ChildProcess()
        rehash.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        rehash.arguments = ["openssl", "rehash", certificates]  // adds <hash>.0 beside it
        try rehash.run()
        rehash.waitUntilExit()
        #expect(rehash.terminationStatus == 0)
        let trusted = try environment.tartil(
            ["prefetch", "112", "--reciter", "fixture"], urls: [environment.clean(.https)], in: directory, trust: false,
            environment: ["SSL_CERT_DIR": "/etc/ssl/certs:" + certificates])
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(try environment.verifiedFiles(in: directory).count == 5)  // 112:1-4 and the basmala's 1:1
        let version = try runTartil(["version", "--json"], environment: ["SSL_CERT_DIR": certificates], home: directory)
        let fields = try JSONSerialization.jsonObject(with: Data(version.stdout.utf8)) as? [String: Any]
        #expect(fields?["ca_directory"] as? String == certificates, "\(version.stdout)")

        let server = try TestServer.nginx(root: TestPaths.fixtures, tls: true)
        defer { server.stop() }
        let refused = try environment.tartil(
            ["prefetch", "112", "--reciter", "fixture"], urls: [server.base + "/fixture/{surah3}{ayah3}.mp3"], in: directory, trust: false,
            environment: ["SSL_CERT_DIR": certificates + ":/etc/hostname"])
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("Error: the CA directory /etc/hostname (from SSL_CERT_DIR) cannot be used: not a directory"), "\(refused.stderr)")
        #expect(server.accessLog.isEmpty)
    }

    /// A bundle that cannot be used is a usage error naming where it came from, before anything is downloaded.
    @Test(arguments: [
        ("SSL_CERT_FILE", "/nonexistent/ca.pem", "the CA bundle /nonexistent/ca.pem (from SSL_CERT_FILE) cannot be used"),
        ("CURL_CA_BUNDLE", "/", "the CA bundle / (from CURL_CA_BUNDLE) cannot be used: not a regular file"),
        ("SSL_CERT_FILE", "/etc/hostname", "the CA bundle /etc/hostname (from SSL_CERT_FILE) holds no PEM certificate"),
    ])
    func anUnusableCABundleIsAUsageError(variable: String, path: String, message: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer.nginx(root: TestPaths.fixtures, tls: true)
        defer { server.stop() }
        let result = try environment.tartil(
            ["prefetch", "112", "--reciter", "fixture"], urls: [server.base + "/fixture/{surah3}{ayah3}.mp3"], in: directory, trust: false,
            environment: [variable: path])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: " + message), "\(result.stderr)")
        #expect(server.accessLog.isEmpty)
        #expect(try environment.verifiedFiles(in: directory).isEmpty)
        let option = try environment.tartil(
            ["prefetch", "112", "--reciter", "fixture", "--ca-bundle", path], urls: [server.base + "/fixture/{surah3}{ayah3}.mp3"],
            in: directory, trust: false)
        #expect(option.status == 64)
        #expect(option.stderr.contains("(from --ca-bundle)"), "\(option.stderr)")
    }

    /// libcurl takes proxies from https_proxy and http_proxy (an HTTPS mirror through a CONNECT tunnel, a plain
    /// one forwarded), and no_proxy passes them by.
    @Test func proxiesComeFromTheStandardVariables() throws {
        let proxy = try TestServer.proxy()
        defer { proxy.stop() }
        let variables = ["https_proxy": proxy.base, "http_proxy": proxy.base]
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tunnelled = try environment.tartil(
            ["prefetch", "112", "--reciter", "fixture"], urls: [environment.clean(.https)], in: directory, environment: variables)
        #expect(tunnelled.status == 0, "\(tunnelled.stderr)")
        #expect(proxy.requestLog.contains("CONNECT 127.0.0.1:\(environment.nginxTLS.port)"), "\(proxy.requestLog)")

        let plain = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: plain) }
        let forwarded = try environment.tartil(["prefetch", "112", "--reciter", "fixture"], urls: [environment.clean], in: plain, environment: variables)
        #expect(forwarded.status == 0, "\(forwarded.stderr)")
        #expect(proxy.requestLog.contains("GET \(environment.nginx.base)/fixture/112001.mp3"), "\(proxy.requestLog)")
        #expect(try environment.verifiedFiles(in: plain).count == 5)

        let before = proxy.requestLog.count
        let bypass = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: bypass) }
        let direct = try environment.tartil(
            ["prefetch", "112", "--reciter", "fixture"], urls: [environment.clean], in: bypass,
            environment: variables.merging(["no_proxy": "127.0.0.1"]) { $1 })
        #expect(direct.status == 0, "\(direct.stderr)")
        #expect(proxy.requestLog.count == before)
    }
}
