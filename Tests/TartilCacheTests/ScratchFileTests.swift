import Foundation
import TestSupport
import Testing
import TartilSystem

@testable import TartilCache
@testable import TartilCore

/// The file a surah is learned from (`ScratchFile`): never visible in the cache, hashed as it is written, read
/// back by mapping it; and the mapping (`MappedFile`) holds no more of a large file resident than a pass needs.
@Suite struct ScratchFileTests {
    @Test func aScratchFileIsHashedAsWrittenReadByMappingAndNeverVisible() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try Cache(directory: directory)
        let copy = try cache.scratchFile(reciter: try ReciterID("r"))
        var random = SeededRandom(seed: 7)
        let bytes = (0..<300_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        for piece in stride(from: 0, to: bytes.count, by: 70_001) {
            try bytes[piece..<min(bytes.count, piece + 70_001)].withUnsafeBytes { try copy.append($0) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/r").isEmpty, "nothing of it has a name")
        #expect(try copy.fingerprint() == FileFingerprint(bytes: bytes.count, sha256: SHA256.hash(bytes: bytes[...])))
        let mapped = try copy.map()
        #expect(Array(mapped.bytes) == bytes)
        // Started over: empty, and hashed from the start again.
        try copy.restart()
        let three: [UInt8] = [1, 2, 3]
        try three.withUnsafeBytes { try copy.append($0) }
        #expect(try copy.fingerprint() == FileFingerprint(bytes: 3, sha256: SHA256.hash(bytes: three[...])))
        let remapped = try copy.map()
        #expect(Array(remapped.bytes) == three)
        copy.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/r").isEmpty)
    }

    /// A pass over a mapped 48 MiB file that says how far it has come never has more than `releaseStep` of it
    /// resident (and a second pass likewise); the same pass without saying so has all of it (the test can fail).
    @Test func aMappedFileLetsGoOfThePagesBehindEachPass() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let copy = try Cache(directory: directory).scratchFile(reciter: try ReciterID("r"))
        let block = [UInt8](repeating: 0x5A, count: 1 << 20)
        for _ in 0..<48 { try block.withUnsafeBytes { try copy.append($0) } }
        /// Reads a byte of every page, front to back (telling `mapped` when `telling`); the most KiB of the mapping
        /// resident at any MiB.
        func pass(_ mapped: MappedFile, telling: Bool) throws -> Int {
            var sum = 0
            var most = 0
            for offset in stride(from: 0, to: mapped.bytes.count, by: 4096) {
                sum &+= Int(mapped.bytes[offset])
                if telling { mapped.passed(offset + 1) }
                if offset % (1 << 20) == 0 { most = max(most, try Self.residentKiB(of: mapped)) }
            }
            #expect(sum == 0x5A * mapped.bytes.count / 4096)
            return max(most, try Self.residentKiB(of: mapped))
        }
        let mapped = try copy.map()
        let bound = (MappedFile.releaseStep >> 10) + 1024  // the step, and the kernel's fault-around ahead of the pass
        let first = try pass(mapped, telling: true)
        #expect(first <= bound, "\(first) KiB resident")
        #expect(try pass(mapped, telling: true) <= bound, "a second pass")
        mapped.releaseAll()
        #expect(try Self.residentKiB(of: mapped) < 1024)
        let again = try copy.map()
        #expect(try pass(again, telling: false) >= 40 << 10, "without telling, the whole file stays resident")
    }

    /// The KiB of `mapped`'s bytes present in this process's page tables (what its RSS counts of them): the
    /// "present" bit of each page's entry in `/proc/self/pagemap`. (`/proc/self/smaps` says the same, but reading
    /// and parsing it for a test process of many threads and mappings, 150 times, took two minutes.)
    static func residentKiB(of mapped: MappedFile) throws -> Int {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let first = UInt(bitPattern: mapped.bytes.baseAddress) / UInt(page)
        let count = (mapped.bytes.count + page - 1) / page
        let descriptor = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CacheError(.io, "cannot open /proc/self/pagemap") }
        defer { close(descriptor) }
        var entries = [UInt64](repeating: 0, count: count)
        let wanted = count * 8
        let read = entries.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, wanted, off_t(first * 8)) }
        guard read == wanted else { throw CacheError(.io, "read \(read) of \(wanted) bytes of /proc/self/pagemap") }
        return entries.filter { $0 & (1 << 63) != 0 }.count * page / 1024
    }
}
