import TartilCore

/// A reciter of one file per surah has its parts cached (each ayah's byte range of the surah's file, as a file of
/// its own). `prefetch` of a whole surah fetches the surah's file at once instead: it is written, hashed as it
/// comes, to `.SSS.surah.mp3.part` (resumed like any partial download), checked against the file's own size and
/// SHA-256, and cut into its parts, each checked against its own expectation and committed like a downloaded
/// file; the whole file is never published and goes once it is cut.
extension Cache {
    /// One part of a surah's file: the key it is cached under, its bytes of the file, what it must be.
    public struct SurahFilePart: Sendable, Hashable {
        public let ayah: AyahRef
        public let bytes: ClosedRange<Int>
        public let expectation: FileExpectation

        public init(ayah: AyahRef, bytes: ClosedRange<Int>, expectation: FileExpectation) {
            self.ayah = ayah
            self.bytes = bytes
            self.expectation = expectation
        }
    }

    /// A surah's whole file and the parts to cut it into.
    public struct SurahFileCut: Sendable, Hashable {
        public let surah: Int
        public let parts: [SurahFilePart]

        public init(surah: Int, parts: [SurahFilePart]) {
            self.surah = surah
            self.parts = parts
        }
    }

    /// Parts committed at once while a file is cut: each holds two descriptors until its commit.
    static let partsPerCommit = 32

    /// Starts (or resumes) writing a surah's whole file, locked like an ayah's file (under a key no ayah has).
    public func surahFileWriter(reciter: ReciterID, surah: Int, expectation: FileExpectation) throws(CacheError) -> CacheWriter {
        try CacheWriter(
            folder: try folder(reciter.rawValue, create: true)!, finalName: "\(AyahRef.pad3(surah)).surah.mp3",
            lockFile: try lockFile(".\(reciter.rawValue).lock"), lockKey: surah * 1000 + 999, expectation: expectation)
    }

    /// Checks the finished whole file against its expectation (on a mismatch it is removed and `.mismatch`
    /// thrown), then cuts `cut`'s parts out of it and commits them (`commit(parts:…)`). The whole file goes either
    /// way. Returns the bytes of the parts committed.
    public func commit(surahFile whole: CacheWriter, cut: SurahFileCut, reciter: ReciterID, source: String?) throws(CacheError) -> Int {
        defer { whole.abandon(keepPartial: false) }
        _ = try whole.check(validate: { _ in nil })
        return try commit(parts: cut, reciter: reciter, source: source) { range, writer throws(CacheError) in try whole.copy(range, to: writer) }
    }

    /// Commits `cut`'s parts of a surah's whole file, a group of `partsPerCommit` at a time (so that the writers
    /// open at once, each with its descriptors and a block of memory, are few whatever the surah's length), each
    /// written by `copy` (which appends the given bytes of the whole file to the part's writer) and checked against
    /// its own expectation. Parts already verified in the cache, or being written by another process, are passed
    /// over. Returns the bytes of the parts committed; a part that does not match its own expectation (the table
    /// and the file disagree) throws `.mismatch` naming it, after the others are committed.
    ///
    /// `mark`: what vouches for a learned surah's parts (single-source when one mirror served its file), recorded
    /// with each part, and set on those already there (with `source`, the URL the file came from).
    public func commit(
        parts cut: SurahFileCut, reciter: ReciterID, source: String?, mark: SourceMark? = nil,
        copy: (ClosedRange<Int>, CacheWriter) throws(CacheError) -> Void
    ) throws(CacheError) -> Int {
        var stored = 0
        var problems: [String] = []
        var already: [AyahRef] = []
        defer { if mark != nil { try? index.setMark(mark, source: source, reciter: reciter.rawValue, ayat: already) } }
        var start = 0
        while start < cut.parts.count {
            let group = cut.parts[start..<min(cut.parts.count, start + Self.partsPerCommit)]
            start += group.count
            var pending: [PendingFile] = []
            do throws(CacheError) {
                for part in group {
                    if try containsVerified(reciter: reciter, ayah: part.ayah, expectation: part.expectation) {
                        already.append(part.ayah)
                        continue
                    }
                    let writer: CacheWriter
                    do {
                        writer = try self.writer(reciter: reciter, ayah: part.ayah, expectation: part.expectation)
                    } catch where error.code == .busy {
                        continue  // another process is writing it
                    }
                    pending.append(PendingFile(writer: writer, reciter: reciter, ayah: part.ayah, mark: mark, source: source))
                    if writer.offset > 0 { try writer.restart() }
                    try copy(part.bytes, writer)
                }
            } catch {
                for file in pending { file.writer.abandon(keepPartial: false) }
                throw error
            }
            for (file, outcome) in zip(pending, try commit(pending, validate: { _ in nil })) {
                switch outcome {
                case .success(let finished): stored += finished.bytes
                case .failure(let error): problems.append("\(file.ayah): \(error.message)")
                }
            }
        }
        if !problems.isEmpty {
            throw CacheError(
                .mismatch,
                "the surah file matches its hash but \(problems.count) of its parts do not match the table (\(problems.prefix(3).joined(separator: "; "))\(problems.count > 3 ? "; …" : ""))")
        }
        return stored
    }
}
