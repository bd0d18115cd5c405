import Foundation

/// Paths the tests read: the repository, its fixtures, and the real recordings beside the checkout.
public enum TestPaths {
    /// The repository root (this file is Tests/TestSupport/TestPaths.swift).
    public static let repository: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// Tests/Fixtures.
    public static let fixtures = repository + "/Tests/Fixtures"

    /// `../shared/real` beside the checkout, or nil when it is absent (tests that need it skip).
    public static let sharedReal: String? = {
        let path = (repository as NSString).deletingLastPathComponent + "/shared/real"
        return FileManager.default.fileExists(atPath: path + "/audio") ? path : nil
    }()

    /// The built `tartil` executable, next to the test bundle.
    public static let executable: String = {
        let testBinary = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        var directory = (testBinary as NSString).deletingLastPathComponent
        if directory.hasSuffix(".xctest") || directory.hasSuffix("/Contents/MacOS") {
            directory = (directory as NSString).deletingLastPathComponent
        }
        return directory + "/tartil"
    }()

    /// A fresh temporary directory, removed by the caller with `removeTemporary`.
    public static func makeTemporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "tartil-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// One row of a `manifest.csv` (the real recordings' and the fixtures').
public struct ManifestRow: Sendable {
    public let surah: Int
    public let ayah: Int
    public let file: String
    public let bytes: Int
    public let sha256: String
    public let sampleRate: Int
    public let samples: Int

    /// Reads `directory/manifest.csv` by its header names.
    public static func read(_ directory: String) throws -> [ManifestRow] {
        let text = try String(contentsOfFile: directory + "/manifest.csv", encoding: .utf8)
        let lines = text.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let header = lines[0]
        func column(_ name: String) -> Int { header.firstIndex(of: name)! }
        return lines.dropFirst().map { fields in
            ManifestRow(
                surah: Int(fields[column("surah")])!, ayah: Int(fields[column("ayah")])!, file: fields[column("file")],
                bytes: Int(fields[column("bytes")])!, sha256: fields[column("sha256")],
                sampleRate: Int(fields[column("sample_rate")])!, samples: Int(fields[column("samples")])!)
        }
    }
}
