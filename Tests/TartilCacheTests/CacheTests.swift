import Foundation
import TestSupport
import Testing
import TartilSystem

@testable import TartilCache
@testable import TartilCore

@Suite struct CacheTests {
    let fixture = TestPaths.fixtures + "/fixture/112001.mp3"

    func pinned() throws -> PinnedFile {
        let row = try #require(try ManifestRow.read(TestPaths.fixtures + "/fixture").first { $0.file == "112001.mp3" })
        return PinnedFile(bytes: row.bytes, sha256: row.sha256, samples: row.samples, sampleRate: row.sampleRate)
    }

    /// Writes the fixture through a writer in two pieces and commits it.
    func store(_ data: Data, in cache: Cache, expectation: FileExpectation) throws {
        let writer = try cache.writer(reciter: try ReciterID("r"), ayah: try AyahRef(112, 1), expectation: expectation)
        try data.prefix(1000).withUnsafeBytes { try writer.append($0) }
        try data.dropFirst(1000).withUnsafeBytes { try writer.append($0) }
        try cache.commit(writer, reciter: try ReciterID("r"), ayah: try AyahRef(112, 1), validate: { _ in nil })
    }

    @Test func verifiedWriteThenVerifiedRead() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try Cache(directory: directory)
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture))
        try store(data, in: cache, expectation: .pinned(try pinned()))
        #expect(try cache.readVerified(reciter: try ReciterID("r"), ayah: try AyahRef(112, 1), expectation: .pinned(try pinned())) == Array(data))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/r") == ["112001.mp3"])
    }

    /// An unpinned file's length counted while it was checked, and the mirror it came from, are in the index;
    /// a length decoded later is remembered beside them.
    @Test func lengthsAndSourcesAreRemembered() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try Cache(directory: directory)
        let reciter = try ReciterID("r")
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture))
        let writer = try cache.writer(reciter: reciter, ayah: try AyahRef(112, 1), expectation: .unknown(maxBytes: 1 << 20))
        try data.withUnsafeBytes { try writer.append($0) }
        try cache.commit(writer, reciter: reciter, ayah: try AyahRef(112, 1), source: "m1", validate: { _ in AudioLength(samples: 72432, sampleRate: 44100) })
        #expect(try cache.rememberedLengths(reciter: reciter) == [try AyahRef(112, 1): AudioLength(samples: 72432, sampleRate: 44100)])
        #expect(try cache.files(reciter: "r").map(\.source) == ["m1"])
        try store(data, in: cache, expectation: .pinned(try pinned()))  // recorded again: its former length goes
        #expect(try cache.rememberedLengths(reciter: reciter).isEmpty)
        try cache.rememberLengths(reciter: reciter, [try AyahRef(112, 1): AudioLength(samples: 72432, sampleRate: 44100), try AyahRef(1, 1): AudioLength(samples: 1, sampleRate: 22050)])
        #expect(try Cache(directory: directory).rememberedLengths(reciter: reciter) == [try AyahRef(112, 1): AudioLength(samples: 72432, sampleRate: 44100)])
    }

    /// Access times (what eviction goes by) are the wall time of the cache's clock.
    @Test func accessTimesComeFromTheCachesClock() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock(wallMilliseconds: 1_700_000_000_000)
        let cache = try Cache(directory: directory, clock: clock)
        let ayah = try AyahRef(112, 1)
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture))
        try store(data, in: cache, expectation: .pinned(try pinned()))
        #expect(try cache.files(reciter: "r").map(\.accessedMilliseconds) == [1_700_000_000_000])
        clock.advance(by: 60)
        _ = try cache.readVerified(reciter: try ReciterID("r"), ayah: ayah, expectation: .pinned(try pinned()))
        #expect(try cache.files(reciter: "r").map(\.accessedMilliseconds) == [1_700_000_060_000])
        // It is the file's own access time: reading the file without playing it (listing, verifying) leaves it.
        clock.advance(by: 60)
        _ = try cache.readVerified(reciter: try ReciterID("r"), ayah: ayah, expectation: .pinned(try pinned()), touching: false)
        _ = Cache.verify(try cache.files(reciter: "r"), tables: [:])
        var status = stat()
        #expect(stat(cache.path(reciter: try ReciterID("r"), ayah: ayah), &status) == 0)
        #expect(Int64(status.st_atim.tv_sec) * 1000 + Int64(status.st_atim.tv_nsec) / 1_000_000 == 1_700_000_060_000)
    }

    /// Measuring or hashing a file (`UntouchedReads`, `SHA256.hash(fileAt:)`) leaves its access time. (Its access
    /// time is more than a day old, so on a file system mounted `relatime`, Linux's default, a plain read would
    /// move it.)
    @Test func untouchedReadsLeaveTheAccessTime() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/a.mp3"
        try Data(try Data(contentsOf: URL(fileURLWithPath: fixture))).write(to: URL(fileURLWithPath: path))
        func accessSeconds() -> Int {
            var status = stat()
            return stat(path, &status) == 0 ? Int(status.st_atim.tv_sec) : -1
        }
        var old = [timespec(tv_sec: 1_600_000_000, tv_nsec: 0), timespec(tv_sec: 1_600_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &old, 0) == 0)
        _ = try UntouchedReads.contents(of: path)
        _ = try SHA256.hash(fileAt: path)
        #expect(accessSeconds() == 1_600_000_000)
    }

    /// An index made by the version before lengths (user_version 1) gains the columns, its rows kept.
    @Test func aVersion1IndexIsMigrated() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = """
            CREATE TABLE files(reciter TEXT NOT NULL, surah INTEGER NOT NULL, ayah INTEGER NOT NULL, bytes INTEGER NOT NULL,
              sha256 TEXT NOT NULL, accessed_ms INTEGER NOT NULL, mark TEXT, PRIMARY KEY(reciter, surah, ayah));
            CREATE TABLE pins(reciter TEXT NOT NULL, surah INTEGER NOT NULL, ayah INTEGER NOT NULL, PRIMARY KEY(reciter, surah, ayah));
            INSERT INTO files VALUES ('r', 112, 1, 13582, 'ab', 5, 'cross-checked');
            PRAGMA user_version = 1;
            """
        let python = ChildProcess()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = ["-c", "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.executescript(sys.argv[2]); db.commit()", directory + "/index.sqlite", script]
        try python.run()
        python.waitUntilExit()
        #expect(python.terminationStatus == 0)
        let cache = try Cache(directory: directory)
        let entry = try #require(try cache.index.entry(reciter: "r", ayah: try AyahRef(112, 1)))
        #expect(entry.bytes == 13582 && entry.mark == .crossChecked && entry.length == nil && entry.source == nil)
        try cache.rememberLengths(reciter: try ReciterID("r"), [try AyahRef(112, 1): AudioLength(samples: 7, sampleRate: 44100)])
        #expect(try Cache(directory: directory).rememberedLengths(reciter: try ReciterID("r")) == [try AyahRef(112, 1): AudioLength(samples: 7, sampleRate: 44100)])
    }

    @Test func aFlippedBitOnDiskIsCaughtByTheReadPathAndTheFileRemoved() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try Cache(directory: directory)
        try store(try Data(contentsOf: URL(fileURLWithPath: fixture)), in: cache, expectation: .pinned(try pinned()))
        let path = cache.path(reciter: try ReciterID("r"), ayah: try AyahRef(112, 1))
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count / 3] ^= 0x04
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(throws: CacheError.self) {
            try cache.readVerified(reciter: try ReciterID("r"), ayah: try AyahRef(112, 1), expectation: .pinned(try pinned()))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func wrongBytesNeverReachTheFinalName() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try Cache(directory: directory)
        var data = try Data(contentsOf: URL(fileURLWithPath: fixture))
        data[100] ^= 0x01
        #expect(throws: CacheError.self) { try store(data, in: cache, expectation: .pinned(try pinned())) }
        #expect((try? FileManager.default.contentsOfDirectory(atPath: directory + "/r")) == [])
    }

    @Test func moreBytesThanExpectedAreRefusedWhileWriting() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try Cache(directory: directory)
        let writer = try cache.writer(reciter: try ReciterID("r"), ayah: try AyahRef(1, 1), expectation: .unknown(maxBytes: 10))
        let eleven = Data(repeating: 7, count: 11)
        do {
            try eleven.withUnsafeBytes { try writer.append($0) }
            Issue.record("expected tooLarge")
        } catch let error as CacheError {
            #expect(error.code == .tooLarge)
        }
        writer.abandon(keepPartial: false)
    }

    @Test func unpinnedFilesAreValidatedThenTheirHashIsRecorded() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try Cache(directory: directory)
        let reciter = try ReciterID("r")
        let ayah = try AyahRef(112, 1)
        let writer = try cache.writer(reciter: reciter, ayah: ayah, expectation: .unknown(maxBytes: 1 << 20))
        try Data("<html>".utf8).withUnsafeBytes { try writer.append($0) }
        struct NotAudio: Error {}
        #expect(throws: CacheError.self) { try cache.commit(writer, reciter: reciter, ayah: ayah, validate: { _ -> AudioLength? in throw NotAudio() }) }
        #expect(try cache.expectation(reciter: reciter, ayah: ayah, pinned: nil, unpinnedLimit: 99).source == "none")
        try store(try Data(contentsOf: URL(fileURLWithPath: fixture)), in: cache, expectation: .unknown(maxBytes: 1 << 20))
        let recorded = try cache.expectation(reciter: reciter, ayah: ayah, pinned: nil, unpinnedLimit: 99)
        #expect(recorded.source == "recorded")
        #expect(recorded.sha256 == (try pinned()).sha256)
    }

    @Test func aPartialFileIsResumedWithItsBytesHashedAgain() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try Cache(directory: directory)
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture))
        let reciter = try ReciterID("r")
        let ayah = try AyahRef(112, 1)
        let first = try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned()))
        try data.prefix(5000).withUnsafeBytes { try first.append($0) }
        first.abandon(keepPartial: true)
        let second = try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned()))
        #expect(second.offset == 5000)
        // Only one writer at a time: a second one on the same file is refused while this one holds it.
        #expect(throws: CacheError.self) { try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())) }
        try data.dropFirst(5000).withUnsafeBytes { try second.append($0) }
        try cache.commit(second, reciter: reciter, ayah: ayah, validate: { _ in nil })
        #expect(try cache.readVerified(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())) == Array(data))
    }

    @Test func evictionIsLeastRecentlyUsedAndSparesPins() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Access times come from the cache's clock: a manual one moved between the commits orders them exactly
        // (real time slept for it before, 2 ms each, and a coarse clock could have tied them).
        let clock = ManualClock(wallMilliseconds: 1_700_000_000_000)
        let cache = try Cache(directory: directory, clock: clock)
        let reciter = try ReciterID("r")
        for number in 1...4 {
            let ayah = try AyahRef(112, number)
            let writer = try cache.writer(reciter: reciter, ayah: ayah, expectation: .unknown(maxBytes: 100))
            try Data(repeating: UInt8(number), count: 100).withUnsafeBytes { try writer.append($0) }
            try cache.commit(writer, reciter: reciter, ayah: ayah, validate: { _ in nil })
            clock.advance(by: 0.002)
        }
        try cache.setPinned(true, reciter: reciter, ayat: [try AyahRef(112, 1)])
        _ = try cache.readVerified(reciter: reciter, ayah: try AyahRef(112, 2), expectation: try cache.expectation(reciter: reciter, ayah: try AyahRef(112, 2), pinned: nil, unpinnedLimit: 100))
        let removed = try cache.evict(toFit: 300, protecting: [Cache.key("r", try AyahRef(112, 4))])
        #expect(removed.map(\.ayah.description) == ["112:3"])
        let removedMore = try cache.evict(toFit: 0)
        #expect(Set(removedMore.map(\.ayah.description)) == ["112:2", "112:4"])
        #expect(try cache.files().map(\.ayah.description) == ["112:1"])
    }

    /// A pinned ayah 1 keeps the basmala's file it is played with — 1:1 for a per-ayah reciter, the surah's own
    /// basmala part (36:0) for a surah-file one: eviction passes over what pinned ayat need (`PlayFiles.kept`),
    /// and a pin of another ayah keeps only its own file.
    @Test func evictionKeepsTheBasmalaOfAPinnedSurah() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try Cache(directory: directory)
        let reciter = try ReciterID("r")
        let files = [try AyahRef(1, 1), try AyahRef(1, 2), try AyahRef(36, 1), try AyahRef(36, 2), try AyahRef(67, 2)]
        for (number, ayah) in files.enumerated() {
            let writer = try cache.writer(reciter: reciter, ayah: ayah, expectation: .unknown(maxBytes: 100))
            try Data(repeating: UInt8(number), count: 100).withUnsafeBytes { try writer.append($0) }
            try cache.commit(writer, reciter: reciter, ayah: ayah, validate: { _ in nil })
        }
        try cache.setPinned(true, reciter: reciter, ayat: [try AyahRef(36, 1), try AyahRef(36, 2), try AyahRef(67, 2)])
        #expect(try cache.keptForPins() == Set(["r/1:1", "r/36:0", "r/36:1", "r/36:2", "r/67:2"]))
        let removed = try cache.evict(toFit: 0)
        #expect(removed.map(\.ayah.description) == ["1:2"])
        #expect(try cache.files().map(\.ayah.description) == ["1:1", "36:1", "36:2", "67:2"])
        // Unpinned, the basmala goes with the rest.
        try cache.setPinned(false, reciter: reciter, ayat: [try AyahRef(36, 1)])
        #expect(Set(try cache.evict(toFit: 0).map(\.ayah.description)) == ["1:1", "36:1"])
    }

    /// Bytes of a known pseudo-random sequence (a file whose size is no multiple of any block size).
    func randomBytes(_ count: Int, seed: UInt64) -> Data {
        var state = seed
        return Data((0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        })
    }

    func sha256(_ data: Data) throws -> String { try SHA256.hash(data) }

    @Test func aFileOfManyBlocksArrivingInOddPiecesIsWrittenAndHashedExactly() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try Cache(directory: directory)
        let reciter = try ReciterID("r")
        // Sizes around the writing threads' block (128 KiB) and the direct-I/O unit (4 KiB).
        for (number, size) in [1, 4095, 4096, 131_071, 131_072, 131_073, 700_001].enumerated() {
            let ayah = try AyahRef(2, number + 1)
            let data = randomBytes(size, seed: UInt64(size))
            let expectation = FileExpectation.recorded(bytes: size, sha256: try sha256(data))
            let writer = try cache.writer(reciter: reciter, ayah: ayah, expectation: expectation)
            var offset = 0
            var pieces = [1, 999, 16_384, 70_001].cycled().makeIterator()
            while offset < size, let piece = pieces.next() {
                let end = min(size, offset + piece)
                try data[offset..<end].withUnsafeBytes { try writer.append($0) }
                offset = end
            }
            try cache.commit(writer, reciter: reciter, ayah: ayah, validate: { _ in nil })
            #expect(try Data(contentsOf: URL(fileURLWithPath: cache.path(reciter: reciter, ayah: ayah))) == data, "\(size) bytes")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/r").allSatisfy { !$0.hasPrefix(".") })
    }

    /// The writer reads back every byte written (what the cross-check hashes and walks), whatever the pieces, and
    /// across a resume; the hash the mirrors agreed on is required at the commit.
    @Test func theWriterReadsBackTheWholeFileAndRequiresTheAgreedHash() throws {
        try withScratchCache { cache, directory, reciter, _ in
            for (number, size) in [0, 1, 100, 65_535, 65_536, 65_537, 300_001].enumerated() {
                let ayah = try AyahRef(2, number + 1)
                let data = randomBytes(size, seed: UInt64(size + 1))
                let writer = try cache.writer(reciter: reciter, ayah: ayah, expectation: .unknown(maxBytes: 1 << 20))
                var offset = 0
                var pieces = [7, 70_001, 999, 16_384].cycled().makeIterator()
                while offset < size / 2, let piece = pieces.next() {
                    let end = min(size / 2, offset + piece)
                    try data[offset..<end].withUnsafeBytes { try writer.append($0) }
                    offset = end
                }
                writer.abandon(keepPartial: true)
                let resumed = try cache.writer(reciter: reciter, ayah: ayah, expectation: .unknown(maxBytes: 1 << 20))
                #expect(resumed.offset == offset)
                try data[offset...].withUnsafeBytes { try resumed.append($0) }
                #expect(try resumed.contents() == Array(data), "\(size) bytes")
                resumed.require(sha256: String(repeating: "0", count: 64))
                #expect(throws: CacheError.self) { try cache.commit(resumed, reciter: reciter, ayah: ayah, validate: { _ in nil }) }
                #expect(!cache.hasFile(reciter: reciter, ayah: ayah))
            }
        }
    }

    /// A dispute keeps every copy aside (and moves a single-source file at the ayah's name aside too): nothing is at
    /// the name, so nothing plays; `choose` makes the chosen copy the file, checked again, and forgets the rest.
    @Test func disputedCopiesAreKeptAsideUntilOneIsChosen() throws {
        try withScratchCache { cache, directory, reciter, ayah in
            let good = Array(try Data(contentsOf: URL(fileURLWithPath: fixture)))
            var changed = good
            changed[200] ^= 0x01
            // A single-source copy from mirror "a" is cached first.
            let writer = try cache.writer(reciter: reciter, ayah: ayah, expectation: .unknown(maxBytes: 1 << 20))
            try good.withUnsafeBytes { try writer.append($0) }
            _ = try cache.commit([Cache.PendingFile(writer: writer, reciter: reciter, ayah: ayah, mark: .singleSource, source: "a")], validate: { _ in nil })
            // Compared again: b served another file, and a (asked again) is not among the answers.
            try cache.setAside([("b", changed)], reciter: reciter, ayah: ayah)
            #expect(!cache.hasFile(reciter: reciter, ayah: ayah))
            let dispute = try #require(try cache.dispute(reciter: reciter, ayah: ayah))
            #expect(dispute.copies.map(\.mirror) == ["a", "b"])
            for copy in dispute.copies {
                #expect(FileManager.default.fileExists(atPath: copy.path), "\(copy.path)")
                #expect(Path.name(copy.path).hasPrefix("."))
            }
            #expect(dispute.message.contains("tartil cache choose 112:1 --reciter r --mirror NAME"))
            #expect(try cache.files(reciter: "r").isEmpty)
            #expect(throws: CacheError.self) { try cache.choose(reciter: reciter, ayah: ayah, mirror: "c", validate: { _ in nil }) }
            // A copy changed while aside is refused.
            let aside = dispute.copies.first { $0.mirror == "a" }!.path
            var tampered = good
            tampered[300] ^= 0x40
            try Data(tampered).write(to: URL(fileURLWithPath: aside))
            #expect(throws: CacheError.self) { try cache.choose(reciter: reciter, ayah: ayah, mirror: "a", validate: { _ in nil }) }
            try cache.choose(reciter: reciter, ayah: ayah, mirror: "b", validate: { _ in nil })
            #expect(try cache.dispute(reciter: reciter, ayah: ayah) == nil)
            #expect(try Array(cache.readVerified(reciter: reciter, ayah: ayah, expectation: .unknown(maxBytes: 1 << 20))) == changed)
            #expect(try cache.mark(reciter: reciter, ayah: ayah) == .chosen)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/r").allSatisfy { !$0.contains("disputed") })
            #expect(throws: CacheError.self) { try cache.choose(reciter: reciter, ayah: ayah, mirror: "b", validate: { _ in nil }) }
        }
    }

    /// A file an older tartil kept although its mirrors disagreed (marked disputed, at its name) is not vouched
    /// for: `cache verify` reports it, and looking it up removes it so it is downloaded and compared again.
    @Test func aDisputedFileKeptByAnOlderTartilIsNotTrusted() throws {
        try withScratchCache { cache, _, reciter, ayah in
            let good = Array(try Data(contentsOf: URL(fileURLWithPath: fixture)))
            let writer = try cache.writer(reciter: reciter, ayah: ayah, expectation: .unknown(maxBytes: 1 << 20))
            try good.withUnsafeBytes { try writer.append($0) }
            _ = try cache.commit([Cache.PendingFile(writer: writer, reciter: reciter, ayah: ayah, mark: .disputed, source: "a")], validate: { _ in nil })
            let problems = Cache.verify(try cache.files(reciter: "r"), tables: [:])
            #expect(problems.count == 1 && problems[0].reason.contains("older tartil"), "\(problems.map(\.reason))")
            let expectation = try cache.expectation(reciter: reciter, ayah: ayah, pinned: nil, unpinnedLimit: 1 << 20)
            #expect(!expectation.isKnown)
            #expect(!cache.hasFile(reciter: reciter, ayah: ayah))
        }
    }

    /// A new cache in a temporary folder (removed afterwards), with the reciter `r` and the ayah 112:1.
    func withScratchCache(_ body: (Cache, String, ReciterID, AyahRef) throws -> Void) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(try Cache(directory: directory), directory, try ReciterID("r"), try AyahRef(112, 1))
    }

    @Test func nothingIsVisibleWhileAFileIsWrittenAndOnlyOneWriterWorksOnAnAyah() throws {
        try withScratchCache { cache, directory, reciter, ayah in
            let data = try Data(contentsOf: URL(fileURLWithPath: fixture))
            let writer = try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned()))
            try data.withUnsafeBytes { try writer.append($0) }
            writer.finishWriting()
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/r") == [])
            // A second writer for the same ayah, even through another cache instance (as another process would),
            // is refused while the first holds the ayah's lock; another ayah is not held up.
            let other = try Cache(directory: directory)
            #expect(throws: CacheError.self) { try other.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())) }
            try other.writer(reciter: reciter, ayah: try AyahRef(112, 2), expectation: .unknown(maxBytes: 10)).abandon(keepPartial: false)
            try cache.commit(writer, reciter: reciter, ayah: ayah, validate: { _ in nil })
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/r") == ["112001.mp3"])
            // Committed: the lock is free again.
            try other.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())).abandon(keepPartial: false)
        }
    }

    /// A cache instance keeps its reciter's folder and lock file open for all its writers (`LockFile`): a second
    /// writer of an ayah through the same instance is refused as one through another instance is, until the first
    /// closes; another ayah is not held up.
    @Test func aSecondWriterOfTheSameInstanceIsRefusedUntilTheFirstCloses() throws {
        try withScratchCache { cache, directory, reciter, ayah in
            let first = try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned()))
            let refused = #expect(throws: CacheError.self) { try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())) }
            #expect(refused?.code == .busy)
            #expect(refused?.message == "\(directory)/r/112001.mp3 is being downloaded by another tartil process")
            let neighbour = try cache.writer(reciter: reciter, ayah: try AyahRef(112, 2), expectation: .unknown(maxBytes: 10))
            first.abandon(keepPartial: false)
            let other = try Cache(directory: directory)
            try other.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())).abandon(keepPartial: false)
            // The neighbour still holds 112:2 against another instance, and frees it when it closes.
            #expect(throws: CacheError.self) { try other.writer(reciter: reciter, ayah: try AyahRef(112, 2), expectation: .unknown(maxBytes: 10)) }
            neighbour.abandon(keepPartial: false)
            try other.writer(reciter: reciter, ayah: try AyahRef(112, 2), expectation: .unknown(maxBytes: 10)).abandon(keepPartial: false)
            try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())).abandon(keepPartial: false)
        }
    }

    /// The folder and lock file a cache keeps open are opened again when their names no longer lead to them:
    /// removed by hand (the folder is made again, and the new lock file is the one other processes lock), or
    /// replaced by a link (refused, or removed, as ever), the kept folder's own inode behind the link included.
    @Test func aKeptFolderOrLockFileRemovedOrReplacedIsOpenedAgain() throws {
        try withScratchCache { cache, directory, reciter, ayah in
            let data = try Data(contentsOf: URL(fileURLWithPath: fixture))
            try store(data, in: cache, expectation: .pinned(try pinned()))
            try FileManager.default.removeItem(atPath: directory + "/r")
            #expect(unlink(directory + "/.r.lock") == 0)
            let other = try Cache(directory: directory)
            let held = try other.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned()))
            let busy = #expect(throws: CacheError.self) { try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())) }
            #expect(busy?.code == .busy)
            held.abandon(keepPartial: false)
            try store(data, in: cache, expectation: .pinned(try pinned()))
            #expect(try cache.readVerified(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())) == [UInt8](data))

            // The kept folder moved aside and reached through a link at its name: the same inode, but a link.
            #expect(rename(directory + "/r", directory + "/r.moved") == 0)
            #expect(symlink(directory + "/r.moved", directory + "/r") == 0)
            let linked = #expect(throws: CacheError.self) { try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())) }
            #expect(linked?.code == .symbolicLink)
            #expect(!cache.hasFile(reciter: reciter, ayah: ayah))
            #expect(unlink(directory + "/r") == 0)
            #expect(rename(directory + "/r.moved", directory + "/r") == 0)
            #expect(cache.hasFile(reciter: reciter, ayah: ayah))

            let lockTarget = directory + "-lock-target"
            defer { unlink(lockTarget) }
            #expect(unlink(directory + "/.r.lock") == 0)
            #expect(symlink(lockTarget, directory + "/.r.lock") == 0)
            try store(data, in: cache, expectation: .pinned(try pinned()))
            #expect(!FileManager.default.fileExists(atPath: lockTarget))
            #expect(!isSymbolicLink(directory + "/.r.lock"))
            #expect(FileManager.default.fileExists(atPath: directory + "/r/112001.mp3"))
        }
    }

    /// A fresh unpinned file's hash is in the index before its name appears, so a reader (another thread or
    /// process, with its own index connection) never finds the file without it.
    @Test func theHashIsRecordedBeforeTheNameAppears() throws {
        try withScratchCache { cache, directory, reciter, ayah in
            let reader = try Cache(directory: directory)
            var seenAtPublish: [String] = []
            cache.willPublish = { _ in
                seenAtPublish.append((try? reader.expectation(reciter: reciter, ayah: ayah, pinned: nil, unpinnedLimit: 1 << 20))?.source ?? "error")
            }
            try store(try Data(contentsOf: URL(fileURLWithPath: fixture)), in: cache, expectation: .unknown(maxBytes: 1 << 20))
            #expect(seenAtPublish == ["recorded"])
        }
    }

    /// A file at its final name that nothing vouches for yet (no table row, no recorded hash) is not cached for a
    /// reader, and is left where it is: it may be a download whose hash is being recorded.
    @Test func aReaderNeverDeletesAFileWithNoRecordedHash() throws {
        try withScratchCache { cache, directory, reciter, ayah in
            let path = cache.path(reciter: reciter, ayah: ayah)
            try FileManager.default.createDirectory(atPath: directory + "/r", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: fixture, toPath: path)
            let unknown = FileExpectation.unknown(maxBytes: 1 << 20)
            do {
                _ = try cache.readVerified(reciter: reciter, ayah: ayah, expectation: unknown)
                Issue.record("an unvouched file was read")
            } catch let error as CacheError {
                #expect(error.code == .unvouched)
            }
            #expect(try !cache.containsVerified(reciter: reciter, ayah: ayah, expectation: unknown))
            #expect(FileManager.default.fileExists(atPath: path))
            // Once its hash is recorded (by another connection), a reader holding the stale expectation finds it.
            try Cache(directory: directory).index.record([.init(reciter: "r", ayah: ayah, bytes: try pinned().bytes, sha256: try pinned().sha256)])
            #expect(try cache.readVerified(reciter: reciter, ayah: ayah, expectation: unknown).count == (try pinned()).bytes)
        }
    }

    // MARK: - Symbolic links inside the cache

    /// A file outside the cache, with known contents, that links inside the cache point at.
    func outsideFile(_ directory: String) throws -> (path: String, contents: Data) {
        let path = directory + "-outside"
        let contents = Data("not tartil's".utf8)
        try contents.write(to: URL(fileURLWithPath: path))
        return (path, contents)
    }

    func isSymbolicLink(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK
    }

    @Test func aLinkAtThePartialFilesNameIsRemovedNotWrittenThrough() throws {
        try withScratchCache { cache, directory, reciter, ayah in
            let outside = try outsideFile(directory)
            defer { unlink(outside.path) }
            try FileManager.default.createDirectory(atPath: directory + "/r", withIntermediateDirectories: true)
            #expect(symlink(outside.path, directory + "/r/.112001.mp3.part") == 0)
            let data = try Data(contentsOf: URL(fileURLWithPath: fixture))
            // A partial download that is kept goes to the partial name: a new file, not the link's target.
            let kept = try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned()))
            #expect(kept.offset == 0)
            try data.prefix(4000).withUnsafeBytes { try kept.append($0) }
            kept.abandon(keepPartial: true)
            #expect(!isSymbolicLink(directory + "/r/.112001.mp3.part"))
            let resumed = try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned()))
            #expect(resumed.offset == 4000)
            try data.dropFirst(4000).withUnsafeBytes { try resumed.append($0) }
            try cache.commit(resumed, reciter: reciter, ayah: ayah, validate: { _ in nil })
            #expect(try Data(contentsOf: URL(fileURLWithPath: outside.path)) == outside.contents)
            #expect(!isSymbolicLink(cache.path(reciter: reciter, ayah: ayah)))
            #expect(try Data(contentsOf: URL(fileURLWithPath: cache.path(reciter: reciter, ayah: ayah))) == data)
        }
    }

    @Test func aLinkAtTheFinalNameIsReplacedNotFollowedAndNeverRead() throws {
        try withScratchCache { cache, directory, reciter, ayah in
            let outside = try outsideFile(directory)
            defer { unlink(outside.path) }
            try FileManager.default.createDirectory(atPath: directory + "/r", withIntermediateDirectories: true)
            let path = cache.path(reciter: reciter, ayah: ayah)
            // A copy of the right file outside, linked in: reading it would pass the hash, and must still be refused.
            try FileManager.default.copyItem(atPath: fixture, toPath: outside.path + ".mp3")
            defer { unlink(outside.path + ".mp3") }
            #expect(symlink(outside.path + ".mp3", path) == 0)
            do {
                _ = try cache.readVerified(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned()))
                Issue.record("a link was read")
            } catch let error as CacheError {
                #expect(error.code == .symbolicLink)
                #expect(error.message.contains("symbolic link"))
            }
            #expect(throws: CacheError.self) { try cache.containsVerified(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())) }
            #expect(try cache.files().map(\.isSymbolicLink) == [true])
            // A download replaces the link itself.
            unlink(path)
            #expect(symlink(outside.path, path) == 0)
            try store(try Data(contentsOf: URL(fileURLWithPath: fixture)), in: cache, expectation: .pinned(try pinned()))
            #expect(try Data(contentsOf: URL(fileURLWithPath: outside.path)) == outside.contents)
            #expect(!isSymbolicLink(path))
            // Removing a link removes the link, not its target.
            #expect(symlink(outside.path, directory + "/r/112002.mp3") == 0)
            try cache.remove(reciter: reciter, ayah: try AyahRef(112, 2))
            #expect(!FileManager.default.fileExists(atPath: directory + "/r/112002.mp3") && !isSymbolicLink(directory + "/r/112002.mp3"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: outside.path)) == outside.contents)
        }
    }

    @Test func aLinkedReciterFolderIsRefusedAndNothingIsWrittenAtItsTarget() throws {
        try withScratchCache { cache, directory, reciter, ayah in
            let elsewhere = TestPaths.makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: elsewhere) }
            #expect(symlink(elsewhere, directory + "/r") == 0)
            do {
                _ = try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned()))
                Issue.record("a writer opened in a linked folder")
            } catch let error as CacheError {
                #expect(error.code == .symbolicLink)
                #expect(error.message.contains("\(directory)/r is a symbolic link"), "\(error)")
            }
            #expect(throws: CacheError.self) { try cache.readVerified(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())) }
            #expect(try cache.files().isEmpty)
            #expect(cache.reciterFolders().isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        }
    }

    @Test func aLinkAtTheLockFilesNameIsRemovedAndItsTargetNeverCreated() throws {
        try withScratchCache { cache, directory, reciter, ayah in
            let target = directory + "-lock-target"
            defer { unlink(target) }
            #expect(symlink(target, directory + "/.r.lock") == 0)
            try store(try Data(contentsOf: URL(fileURLWithPath: fixture)), in: cache, expectation: .pinned(try pinned()))
            #expect(!FileManager.default.fileExists(atPath: target))
            #expect(!isSymbolicLink(directory + "/.r.lock"))
        }
    }

    /// The cache's root may itself be a link (a cache on another disk): it is resolved once, at open.
    @Test func aLinkedCacheRootIsAllowed() throws {
        let real = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: real) }
        let link = real + "-link"
        #expect(symlink(real, link) == 0)
        defer { unlink(link) }
        let cache = try Cache(directory: link)
        try store(try Data(contentsOf: URL(fileURLWithPath: fixture)), in: cache, expectation: .pinned(try pinned()))
        #expect(try FileManager.default.contentsOfDirectory(atPath: real + "/r") == ["112001.mp3"])
        #expect(try cache.files().count == 1)
    }

    @Test func aNewFileReplacesOneInTheWay() throws {
        try withScratchCache { cache, directory, reciter, ayah in
            let path = cache.path(reciter: reciter, ayah: ayah)
            try FileManager.default.createDirectory(atPath: directory + "/r", withIntermediateDirectories: true)
            try Data("put there by hand".utf8).write(to: URL(fileURLWithPath: path))
            let data = try Data(contentsOf: URL(fileURLWithPath: fixture))
            try store(data, in: cache, expectation: .pinned(try pinned()))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == data)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/r") == ["112001.mp3"])
        }
    }

    @Test func anAbandonedDownloadKeepsItsBytesForTheNextRunOnlyWhenAsked() throws {
        try withScratchCache { cache, directory, reciter, ayah in
            let data = try Data(contentsOf: URL(fileURLWithPath: fixture))
            let dropped = try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned()))
            try data.prefix(3000).withUnsafeBytes { try dropped.append($0) }
            dropped.abandon(keepPartial: false)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/r") == [])
            let kept = try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned()))
            try data.prefix(9000).withUnsafeBytes { try kept.append($0) }
            kept.abandon(keepPartial: true)
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/r/.112001.mp3.part")) == data.prefix(9000))
            let resumed = try cache.writer(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned()))
            #expect(resumed.offset == 9000)
            // A server that ignores the range: the file starts over, and only the new bytes count.
            try resumed.restart()
            try data.withUnsafeBytes { try resumed.append($0) }
            try cache.commit(resumed, reciter: reciter, ayah: ayah, validate: { _ in nil })
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/r") == ["112001.mp3"])
            #expect(try cache.readVerified(reciter: reciter, ayah: ayah, expectation: .pinned(try pinned())) == Array(data))
        }
    }
}

extension Array {
    /// The elements over and over (for feeding pieces of varied sizes).
    func cycled() -> UnfoldSequence<Element, Int> {
        sequence(state: 0) { index in
            defer { index = (index + 1) % count }
            return self[index]
        }
    }
}
