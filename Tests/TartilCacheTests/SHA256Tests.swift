import Synchronization
import Foundation
import TestSupport
import Testing
import TartilSystem

@testable import TartilCache

@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func knownVectors(input: String, digest: String) throws {
        #expect(try SHA256.hash(Data(input.utf8)) == digest)
    }

    @Test func streamingEqualsOneShot() throws {
        let data = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let hasher = try SHA256()
        var offset = 0
        for size in [1, 63, 64, 65, 4096, 10_000] {
            try hasher.update(data[offset..<(offset + size)])
            offset += size
        }
        try hasher.update(data[offset...])
        #expect(try hasher.finalize() == (try SHA256.hash(data)))
    }

    @Test func fileHashMatchesTheFixturesManifest() throws {
        let directory = TestPaths.fixtures + "/fixture"
        for row in try ManifestRow.read(directory) {
            let hashed = try SHA256.hash(fileAt: "\(directory)/\(row.file)")
            #expect(hashed.sha256 == row.sha256, "\(row.file)")
            #expect(hashed.bytes == row.bytes, "\(row.file)")
        }
    }

    @Test func missingFileIsAnIOError() {
        #expect(throws: CacheError.self) { try SHA256.hash(fileAt: "/nonexistent/file.mp3") }
    }
}

@Suite struct AtomicFileTests {
    @Test func writesReplacesAndLeavesNoTemporaryFiles() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/sub/table.tsv"
        try AtomicFile.write(Array("one\n".utf8), to: path)
        try AtomicFile.write(Array("two\n".utf8), to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "two\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/sub") == ["table.tsv"])
    }

    /// A FIFO or a character device at the path is written through, never replaced by a file renamed over it
    /// (as root, `table build -o /dev/null` once replaced /dev/null); a folder is refused.
    @Test func aFIFOOrADeviceIsWrittenThroughNotReplaced() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let received = Mutex<[UInt8]>([])
        let reader = Thread {
            let descriptor = open(fifo, O_RDONLY)
            var buffer = [UInt8](repeating: 0, count: 64)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count <= 0 { break }
                received.withLock { $0 += buffer[..<count] }
            }
            close(descriptor)
        }
        reader.start()
        try AtomicFile.write(Array("a table\n".utf8), to: fifo)
        while !reader.isFinished { usleep(1000) }
        #expect(received.withLock { $0 } == Array("a table\n".utf8))
        var status = stat()
        #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["fifo"], "no temporary file left")
        if getuid() == 0 {  // a null device of the test's own (mknod needs root)
            let device = directory + "/null"
            #expect(mknod(device, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)  // makedev(1, 3)
            try AtomicFile.write(Array("discarded".utf8), to: device)
            #expect(lstat(device, &status) == 0 && status.st_mode & S_IFMT == S_IFCHR)
        }
        #expect(throws: CacheError.self) { try AtomicFile.write(Array("x".utf8), to: directory) }
    }

    @Test func failureLeavesTheOldFileAlone() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A directory where the file should go: the rename fails, nothing else changes.
        try FileManager.default.createDirectory(atPath: directory + "/taken/x", withIntermediateDirectories: true)
        #expect(throws: CacheError.self) { try AtomicFile.write(Array("x".utf8), to: directory + "/taken") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["taken"])
    }
}

/// `ResidentPages` unmaps this process's clean code pages; the code still runs and hashes the same afterwards.
@Suite struct ResidentPagesTests {
    @Test func releasedCodeRunsAgain() throws {
        let before = try SHA256.hash(Data("abc".utf8))
        let released = try ResidentPages.releaseStartupPages()
        #expect(released.mappings > 0 && released.residentKiB > 0)
        #expect(try SHA256.hash(Data("abc".utf8)) == before)
    }
}
