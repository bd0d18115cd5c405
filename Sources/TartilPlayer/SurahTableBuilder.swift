import Glibc
import Synchronization
import TartilAudio
import TartilCache
import TartilCore
import TartilSystem

/// Builds a surah table (format 2) from a folder of `SSS.mp3` surah files and their published timing files.
///
/// For each file: its size and SHA-256; mpg123's decode of the whole file (gapless trimming on) gives its sample
/// count and, with the timing file, each ayah's samples (`SurahTimings.SampleRanges.covering`: the parts cover
/// the file with no gap). Each part then gets the shortest byte range that decodes it alone: from the frame
/// holding its first sample, and then 1, 2, … frames earlier (`PrerollSearch`: every one up to 64 frames, or
/// the bit reservoir's reach and a margin where that is further, then doubling, and at last the file's first
/// frame, which always decodes exactly), the range is decoded by a fresh decoder and kept only when the samples
/// it gives there are exactly the whole decode's (compared by SHA-256 of the PCM). Files are processed on all
/// cores; any file that cannot be read, decoded or cut fails the whole build.
public enum SurahTableBuilder {
    /// What a build produced.
    public struct Result: Sendable {
        public let table: SurahTable
        public let skipped: [TableBuilder.Skipped]
        /// The most frames any part's range starts before the frame of its first sample.
        public let largestPreroll: Int
    }

    /// Reads every `SSS.mp3` in `directory` with its timing file from `timings` (default: `directory/timings`
    /// when that folder exists, else `directory`), named `SSS.json` or `S.json`, in `format`.
    public static func build(
        directory: String, timings: String?, format: SurahTimings.Format, reciter: ReciterID, source: String,
        isCancelled: @escaping @Sendable () -> Bool = { false },
        progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws(TartilError) -> Result {
        guard FileSystem.isDirectory(directory) else {
            throw .usage("\(directory) is not a folder: give a folder of SSS.mp3 surah files (001.mp3 … 114.mp3)")
        }
        let timingFolder = timings ?? (FileSystem.isDirectory(Path.join(directory, "timings")) ? Path.join(directory, "timings") : directory)
        guard FileSystem.isDirectory(timingFolder) else { throw .usage("--timings \(timingFolder) is not a folder of timing files") }
        let timingNames = Set(try FileSystem.names(in: timingFolder))
        var jobs: [Job] = []
        var skipped: [TableBuilder.Skipped] = []
        for name in try FileSystem.names(in: directory).sorted() {
            guard !name.hasPrefix("."), !FileSystem.isDirectory(Path.join(directory, name)) else { continue }
            guard name.lowercased().hasSuffix(".mp3") else {
                if !name.lowercased().hasSuffix(".json") { skipped.append(.init(file: name, reason: "not an .mp3 file")) }
                continue
            }
            let stem = name.dropLast(4)
            guard stem.count == 3, let surah = NumberText.whole(stem, in: 1...Catalog.surahCount) else {
                skipped.append(.init(file: name, reason: "not named SSS.mp3 (001.mp3 to 114.mp3)"))
                continue
            }
            let candidates = stem == "\(surah)" ? ["\(stem).json"] : ["\(stem).json", "\(surah).json"]
            guard let timing = candidates.first(where: timingNames.contains) else {
                throw .usage("\(name) has no timing file: looked for \(candidates.joined(separator: " and ")) in \(timingFolder)")
            }
            jobs.append(Job(surah: surah, name: name, path: Path.join(directory, name), timings: Path.join(timingFolder, timing)))
        }
        guard !jobs.isEmpty else { throw .usage("\(directory) holds no SSS.mp3 surah files (e.g. 112.mp3 for surah 112)") }

        let allJobs = jobs
        let measured = try TableBuilder.onAllCores(
            names: jobs.map(\.name), failing: "could not be made into table rows", isCancelled: isCancelled, progress: progress
        ) { index throws(TartilError) in
            let job = allJobs[index]
            let timings = try SurahTimings.parse(try FileSystem.read(job.timings), format: format, surah: job.surah, file: job.timings)
            return try measure(FileSystem.read(job.path), name: job.name, timings: timings, isCancelled: isCancelled)
        }
        return Result(
            table: SurahTable(reciter: reciter, source: source, files: measured.map(\.file)), skipped: skipped,
            largestPreroll: measured.map(\.largestPreroll).max() ?? 0)
    }

    struct Job: Sendable {
        let surah: Int
        let name: String
        let path: String
        let timings: String
    }

    /// One file's rows, and the most frames of preroll any of its parts needed.
    public struct Measured: Sendable {
        public let file: SurahTable.File
        public let largestPreroll: Int
    }

    /// The rows of one surah file (`bytes`, named `name` in messages) cut at `timings`.
    public static func measure(
        _ bytes: [UInt8], name: String, timings: SurahTimings, isCancelled: @Sendable () -> Bool = { false }
    ) throws(TartilError) -> Measured {
        var result: Swift.Result<Measured, TartilError> = .failure(TartilError(.failure, "not measured"))
        bytes.withUnsafeBytes { buffer in
            result = Swift.Result { () throws(TartilError) -> Measured in try measure(buffer, name: name, timings: timings, isCancelled: isCancelled) }
        }
        return try result.get()
    }

    /// The rows of one surah file whose bytes the caller keeps in memory or maps (`MappedFile`), read in passes
    /// from front to back: the frame walk, two whole decodes (the sample count, then each part's PCM digest), the
    /// cut (each part's range decoded, in order) and, unless `sha256` gives it, the file's hash. `passing` is told
    /// how far each pass has come (`MappedFile.passed`, so that a large mapped file is never resident whole);
    /// nothing but the file grows with its size (the frame index keeps a checkpoint every 64 frames, and every
    /// range is decoded and hashed a chunk at a time).
    public static func measure(
        _ bytes: UnsafeRawBufferPointer, name: String, timings: SurahTimings, sha256: String? = nil,
        isCancelled: @Sendable () -> Bool = { false }, passing: @escaping (Int) -> Void = { _ in }
    ) throws(TartilError) -> Measured {
        let index: MPEGStream.FrameIndex
        switch MPEGStream.frameIndex(of: bytes, passing: passing) {
        case .success(let found): index = found
        case .failure(let error): throw TartilError(.invalidData, "not one whole MP3 stream: \(error.message)")
        }
        do {
            let decoder = try Mpg123Decoder()
            let whole = try decoder.countSamples(buffer: bytes, name: name, passing: passing)
            guard whole.format.sampleRate == index.sampleRate else {
                throw TartilError(.invalidData, "mpg123 decodes it at \(whole.format.sampleRate) Hz, its frames say \(index.sampleRate) Hz")
            }
            let ranges = try timings.sampleRanges(rate: whole.format.sampleRate, samples: whole.samples).covering(samples: whole.samples)
            var spans: [(ayah: Int, samples: Range<Int>)] = ranges.ayat.enumerated().map { ($0.offset + 1, $0.element) }
            if let basmala = ranges.beforeFirst { spans.insert((0, basmala), at: 0) }
            let expected = try pcmDigests(
                bytes, name: name, spans: spans.map(\.samples), prefixes: spans.map { Frames(of: $0.samples, in: index).probeCount },
                decoder: decoder, passing: passing)
            var parts: [SurahTable.Part] = []
            var largestPreroll = 0
            for (number, span) in spans.enumerated() {
                if isCancelled() { throw TartilError(.interrupted, "interrupted") }
                let (part, preroll) = try cut(
                    bytes, index: index, ayah: span.ayah, samples: span.samples, expected: expected[number], decoder: decoder,
                    label: span.ayah == 0 ? "the basmala" : "ayah \(timings.surah):\(span.ayah)")
                parts.append(part)
                largestPreroll = max(largestPreroll, preroll)
                passing(part.bytes.lowerBound)
            }
            let file = SurahTable.File(
                surah: timings.surah, bytes: bytes.count, digest: SHA256Digest(hex: try sha256 ?? hash(bytes, passing: passing))!,
                samples: whole.samples, sampleRate: whole.format.sampleRate, parts: parts)
            if let problem = file.problem() { throw TartilError(.failure, "the rows made are not a valid table: \(problem)") }
            return Measured(file: file, largestPreroll: largestPreroll)
        } catch {
            throw TartilError(failureFrom: error)
        }
    }

    /// The frames a part's samples fall in, and the first few a candidate range is probed with.
    struct Frames {
        /// Frames decoded after the one holding the part's first sample when a candidate start is probed.
        static let probeAfter = 2
        let rawFirst: Int
        let first: Int
        let last: Int
        /// The last frame of a probe, and how many of the part's samples it gives.
        let probeLast: Int
        let probeCount: Int

        init(of samples: Range<Int>, in index: MPEGStream.FrameIndex) {
            let spf = index.samplesPerFrame
            rawFirst = samples.lowerBound + index.gaplessTrimStart
            first = rawFirst / spf
            last = (samples.upperBound - 1 + index.gaplessTrimStart) / spf
            probeLast = min(last, first + Self.probeAfter)
            probeCount = min(samples.count, (probeLast + 1) * spf - rawFirst)
        }
    }

    /// The byte range that decodes `samples` (of the whole decode) alone, found as the type's documentation says:
    /// each candidate start is first probed with the few frames after it (the part's first `probeCount` samples
    /// against `expected.prefix`), and only a start that passes is decoded to the part's end and checked whole.
    private static func cut(
        _ bytes: UnsafeRawBufferPointer, index: MPEGStream.FrameIndex, ayah: Int, samples: Range<Int>,
        expected: (full: String, prefix: String), decoder: Mpg123Decoder, label: String
    ) throws -> (SurahTable.Part, preroll: Int) {
        let spf = index.samplesPerFrame
        let frames = Frames(of: samples, in: index)
        guard frames.last < index.count else {
            throw TartilError(.failure, "\(label) ends in frame \(frames.last), past the file's \(index.count) audio frames")
        }
        /// The bytes of frames `start...end`.
        func range(_ start: Int, _ end: Int) throws -> ClosedRange<Int> {
            guard let range = index.byteRange(frames: start...end, in: bytes) else {
                throw TartilError(.failure, "\(label): frames \(start)-\(end) are not where the frame index has them (the file changed while it was read)")
            }
            return range
        }
        /// The range's decode ends with frame `end`'s last sample (raw sample (end + 1) · spf − 1): counted back from
        /// there, the part starts `skip` samples in, when it has `decoded` samples.
        func skip(decoded: Int, end: Int, count: Int) -> Int? {
            let skip = decoded - ((end + 1) * spf - frames.rawFirst)
            guard skip >= 0, skip <= SurahTable.maximumSkip(firstSample: samples.lowerBound), skip + count <= decoded else { return nil }
            return skip
        }
        guard let reach = index.reservoirReach(before: frames.first, in: bytes) else {
            throw TartilError(.failure, "\(label): the frames before it are not where the frame index has them (the file changed while it was read)")
        }
        for preroll in PrerollSearch.candidates(firstFrame: frames.first, reach: reach) {
            let start = frames.first - preroll
            // The probe: from the start to a few frames in, only the samples from the part's first on kept.
            let probeRange = try range(start, frames.probeLast)
            let kept = (frames.probeLast + 1) * spf - frames.rawFirst
            let probe = try decodeTail(UnsafeRawBufferPointer(rebasing: bytes[probeRange]), keeping: kept, name: label, decoder: decoder)
            let frameBytes = decoder.format.frameBytes
            guard let probeSkip = skip(decoded: probe.samples, end: frames.probeLast, count: frames.probeCount),
                try probe.tail.withUnsafeBytes({ raw in try SHA256.hash(UnsafeRawBufferPointer(rebasing: raw[..<(frames.probeCount * frameBytes)])) })
                    == expected.prefix
            else { continue }
            // A part that ends within the probe's frames was checked whole by it (its prefix is all of it); a longer
            // one is decoded to its end, a chunk at a time, and its samples hashed from the probe's skip on: the
            // range must decode to as many samples as that skip says (so the row's skip is the range's own).
            let checked: ClosedRange<Int>
            if frames.probeLast == frames.last {
                checked = probeRange
            } else {
                checked = try range(start, frames.last)
                let decoded = try digest(
                    UnsafeRawBufferPointer(rebasing: bytes[checked]), name: label, from: probeSkip, count: samples.count, decoder: decoder)
                guard decoded.digest == expected.full, skip(decoded: decoded.samples, end: frames.last, count: samples.count) == probeSkip else {
                    continue
                }
            }
            let part = SurahTable.Part(
                ayah: ayah, samples: samples.lowerBound...(samples.upperBound - 1), bytes: checked, skip: probeSkip,
                digest: SHA256Digest(hex: try SHA256.hash(UnsafeRawBufferPointer(rebasing: bytes[checked])))!)
            return (part, preroll)
        }
        throw TartilError(
            .failure,
            "\(label) (samples \(samples.lowerBound)-\(samples.upperBound - 1)): no byte range before it, up to one from the file's first frame, decodes it exactly as the whole file does")
    }

    /// Decodes `bytes` a chunk at a time: how many samples it decodes to, and the last `keeping` of them (fewer when
    /// there are fewer) as 16-bit PCM. Only those are held, however long the range.
    private static func decodeTail(
        _ bytes: UnsafeRawBufferPointer, keeping: Int, name: String, decoder: Mpg123Decoder
    ) throws -> (samples: Int, tail: [UInt8]) {
        try decoder.open(buffer: bytes, name: name)
        defer { decoder.close() }
        let kept = keeping * decoder.format.frameBytes
        var tail: [UInt8] = []
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = try chunk.withUnsafeMutableBytes { buffer in try decoder.read(into: buffer) }
            if count == 0 { break }
            total += count
            tail.append(contentsOf: chunk[..<count])
            if tail.count >= 2 * kept + chunk.count { tail.removeFirst(tail.count - kept) }
        }
        if tail.count > kept { tail.removeFirst(tail.count - kept) }
        return (total / decoder.format.frameBytes, tail)
    }

    /// Decodes `bytes` a chunk at a time: the SHA-256 of its samples `skip ..< skip + count` (of what there is of
    /// them), and how many samples it decodes to.
    private static func digest(
        _ bytes: UnsafeRawBufferPointer, name: String, from skip: Int, count: Int, decoder: Mpg123Decoder
    ) throws -> (digest: String, samples: Int) {
        try decoder.open(buffer: bytes, name: name)
        defer { decoder.close() }
        let frameBytes = decoder.format.frameBytes
        let hasher = try SHA256()
        let wanted = (skip * frameBytes)..<((skip + count) * frameBytes)
        var position = 0  // in bytes of PCM
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let read = try chunk.withUnsafeMutableBytes { buffer in try decoder.read(into: buffer) }
            if read == 0 { break }
            let (from, to) = (max(wanted.lowerBound, position), min(wanted.upperBound, position + read))
            if from < to {
                try chunk.withUnsafeBytes { raw in try hasher.update(UnsafeRawBufferPointer(rebasing: raw[(from - position)..<(to - position)])) }
            }
            position += read
        }
        return (try hasher.finalize(), position / frameBytes)
    }

    /// The SHA-256 of `bytes`, a MiB at a time (`passing` told how far it has come).
    private static func hash(_ bytes: UnsafeRawBufferPointer, passing: (Int) -> Void) throws(CacheError) -> String {
        let hasher = try SHA256()
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + (1 << 20))
            try hasher.update(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            passing(end)
            offset = end
        }
        return try hasher.finalize()
    }

    /// The SHA-256 of the whole decode's PCM within each of `spans` (in order, covering the file), and of the
    /// first `prefixes[i]` samples of each.
    private static func pcmDigests(
        _ bytes: UnsafeRawBufferPointer, name: String, spans: [Range<Int>], prefixes: [Int], decoder: Mpg123Decoder,
        passing: @escaping (Int) -> Void
    ) throws -> [(full: String, prefix: String)] {
        try decoder.open(buffer: bytes, name: name, passing: passing)
        defer { decoder.close() }
        let frameBytes = decoder.format.frameBytes
        var digests: [(full: String, prefix: String)] = []
        var full = try SHA256()
        var prefix = try SHA256()
        var prefixDigest: String?
        var position = 0  // in samples
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while digests.count < spans.count {
            let count = try chunk.withUnsafeMutableBytes { buffer in try decoder.read(into: buffer) }
            if count == 0 { break }
            var offset = 0
            while offset < count, digests.count < spans.count {
                let span = spans[digests.count]
                let prefixEnd = span.lowerBound + prefixes[digests.count]
                // Up to the prefix's end while it is open, else to the span's end.
                let stop = prefixDigest == nil ? prefixEnd : span.upperBound
                let take = min(count - offset, (stop - position) * frameBytes)
                try chunk.withUnsafeBytes { raw in
                    let piece = UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + take)])
                    try full.update(piece)
                    if prefixDigest == nil { try prefix.update(piece) }
                }
                offset += take
                position += take / frameBytes
                if prefixDigest == nil && position == prefixEnd {
                    prefixDigest = try prefix.finalize()
                    prefix = try SHA256()
                }
                if position == span.upperBound {
                    digests.append((try full.finalize(), prefixDigest ?? ""))
                    full = try SHA256()
                    prefixDigest = nil
                }
            }
        }
        guard digests.count == spans.count else {
            throw TartilError(.failure, "\(name): the second decode ended at sample \(position), before the first's end")
        }
        return digests
    }
}
