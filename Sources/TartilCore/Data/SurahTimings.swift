/// Where each ayah starts and ends in one surah's recording, in milliseconds, as a published timing file says:
/// the Quran Static / MemQuran shape or mp3quran's `ayat_timing`. Pure: parsed from the file's bytes, and turned
/// into sample ranges of the decoded file by `sampleRanges(rate:samples:)`.
///
/// Quran Static (`"timings_format": "quranstatic"`), one object per surah (other keys are ignored):
///
/// ```json
/// {"Number": 112, "TotalDurationMs": 16953,
///  "Segments": [{"S": 112, "V": 1, "StartMs": 3744, "EndMs": 7073, "DurationMs": 3329}, …]}
/// ```
///
/// The segments are the surah's ayat in order; what lies before ayah 1's `StartMs` is the recording's basmala.
/// A last segment whose `DurationMs` is null (or whose `EndMs` is missing or null) ends where the file ends:
/// its `EndMs` is a placeholder (Quran Static writes `StartMs + 180000` there for some reciters).
///
/// mp3quran (`"timings_format": "mp3quran"`), an array (other keys, such as `polygon`, are ignored):
///
/// ```json
/// [{"ayah": 0, "start_time": 0, "end_time": 5120}, {"ayah": 1, "start_time": 5120, "end_time": 9880}, …]
/// ```
///
/// Ayah 0, when given, is what comes before ayah 1 (the basmala); without it, the basmala is whatever precedes
/// ayah 1's start. In surahs 1 and 9 nothing before ayah 1 is a basmala (in 1 the basmala is ayah 1, 9 has
/// none), so `beforeFirst` is nil there whatever the file says.
///
/// Validation, with messages naming the file, the entry and what is allowed: every ayah of the surah exactly
/// once and in order (per the catalog), whole non-negative milliseconds of at most `maximumMs`, and times that
/// never go back (each start at or after the previous end, each end at or after its start).
public struct SurahTimings: Sendable, Hashable {
    /// The published shapes tartil reads (`"timings_format"` in `mirrors.json`).
    public enum Format: String, Sendable, Hashable, CaseIterable {
        case quranstatic
        case mp3quran
    }

    /// A stretch of the recording: from `startMs` to `endMs`, or to the end of the file when `endMs` is nil.
    public struct Span: Sendable, Hashable {
        public let startMs: Int
        public let endMs: Int?

        public init(startMs: Int, endMs: Int?) {
            self.startMs = startMs
            self.endMs = endMs
        }
    }

    /// The longest time a timing may name: 24 hours.
    public static let maximumMs = 86_400_000

    /// 1…114.
    public let surah: Int
    /// The surah's ayat in order (`ayat[0]` is ayah 1). Only the last may have no end.
    public let ayat: [Span]
    /// The basmala before ayah 1 (never in surahs 1 and 9), or nil when nothing precedes ayah 1.
    public let beforeFirst: Span?

    public init(surah: Int, ayat: [Span], beforeFirst: Span?) {
        self.surah = surah
        self.ayat = ayat
        self.beforeFirst = beforeFirst
    }

    // MARK: - Parsing

    /// Parses the timing file of `surah` in `format`. `file` names the source in errors.
    public static func parse(_ bytes: [UInt8], format: Format, surah: Int, file: String) throws(TartilError) -> SurahTimings {
        guard (1...Catalog.surahCount).contains(surah) else {
            throw TartilError(.invalidData, "\(file): surah \(surah) does not exist (1-\(Catalog.surahCount))")
        }
        let root: JSONNode
        do {
            root = try JSONNode.parse(bytes)
        } catch {
            throw TartilError(.invalidData, "\(file):\(error.line):\(error.column): not valid JSON: \(error.message)")
        }
        let count = Catalog.surahs[surah - 1].ayahCount
        var reader = Reader(file: file, surah: surah, ayahCount: count)
        switch format {
        case .quranstatic: try reader.quranStatic(root)
        case .mp3quran: try reader.mp3quran(root)
        }
        let before: Span?
        if surah == 1 || surah == 9 {
            before = nil
        } else if let given = reader.beforeFirst {
            before = given.endMs == given.startMs ? nil : given
        } else {
            before = reader.ayat[0].startMs > 0 ? Span(startMs: 0, endMs: reader.ayat[0].startMs) : nil
        }
        return SurahTimings(surah: surah, ayat: reader.ayat, beforeFirst: before)
    }

    /// Reads the entries of one file in order, checking them as they come.
    private struct Reader {
        let file: String
        let surah: Int
        let ayahCount: Int
        var ayat: [Span] = []
        var beforeFirst: Span?
        /// The end of the last span read (times never go back).
        var lastEnd = 0

        func fail(_ place: String, _ problem: String) -> TartilError {
            TartilError(.invalidData, "\(file): \(place): \(problem)")
        }

        /// A time in whole milliseconds, 0…maximumMs.
        func milliseconds(_ node: JSONNode?, _ field: String, at place: String) throws(TartilError) -> Int {
            guard let node else { throw fail(place, "\(field): missing (a whole number of milliseconds)") }
            guard case .number(let value) = node else {
                throw fail(place, "\(field): must be a whole number of milliseconds, not \(Self.kind(node))")
            }
            guard value >= 0 else { throw fail(place, "\(field): \(NumberText.format(value)) is negative (times are from 0 ms)") }
            guard let whole = node.integer(in: 0...SurahTimings.maximumMs) else {
                throw fail(
                    place,
                    "\(field): \(NumberText.format(value)) is not a whole number of milliseconds from 0 to \(SurahTimings.maximumMs) (24 hours)")
            }
            return whole
        }

        /// Checks a span's times follow the ones before and records its end.
        mutating func checked(start: Int, end: Int?, at place: String, startField: String, endField: String) throws(TartilError) -> Span {
            guard start >= lastEnd else {
                throw fail(place, "\(startField): \(start) ms is before the previous entry's end (\(lastEnd) ms): times must not go back")
            }
            if let end {
                guard end >= start else { throw fail(place, "\(endField): \(end) ms is before \(startField) (\(start) ms)") }
                lastEnd = end
            } else {
                lastEnd = start
            }
            return Span(startMs: start, endMs: end)
        }

        /// The ayah an entry must be next: 1 after the start, then each in turn.
        func checkNext(_ number: Int?, field: String, at place: String) throws(TartilError) {
            let expected = ayat.count + 1
            guard let number else { throw fail(place, "\(field): missing or not a whole number (the ayah, \(expected) here)") }
            guard number == expected else {
                if number < 1 || number > ayahCount {
                    throw fail(place, "\(field): surah \(surah) has ayat 1-\(ayahCount), not \(number)")
                }
                throw fail(place, "\(field): ayah \(number) where ayah \(expected) was expected (every ayah once, in order)")
            }
        }

        func checkComplete(at place: String) throws(TartilError) {
            guard ayat.count == ayahCount else {
                throw fail(place, "ends after ayah \(ayat.count), but surah \(surah) has \(ayahCount) ayat")
            }
        }

        mutating func quranStatic(_ root: JSONNode) throws(TartilError) {
            guard let object = root.object else { throw fail("top level", #"must be an object with "Segments""#) }
            if let number = object["Number"], number != .null, number.integer != surah {
                throw fail("Number", "the file is for surah \(Self.shown(number)), not \(surah)")
            }
            guard let segments = object["Segments"]?.array else { throw fail("Segments", "missing or not an array") }
            guard segments.count <= ayahCount else {
                throw fail("Segments", "\(segments.count) segments, but surah \(surah) has \(ayahCount) ayat")
            }
            for (index, segment) in segments.enumerated() {
                let place = "Segments[\(index)]"
                guard let fields = segment.object else { throw fail(place, "must be an object") }
                guard let number = fields["S"]?.integer else { throw fail(place, "S: missing or not a whole number (the surah, \(surah))") }
                guard number == surah else { throw fail(place, "S: \(number) is not this file's surah \(surah)") }
                try checkNext(fields["V"]?.integer, field: "V", at: place)
                let start = try milliseconds(fields["StartMs"], "StartMs", at: place)
                let isLast = index == ayahCount - 1
                var end: Int?
                let placeholder = fields["DurationMs"] == .null || fields["EndMs"] == nil || fields["EndMs"] == .null
                if !(isLast && placeholder) { end = try milliseconds(fields["EndMs"], "EndMs", at: place) }
                ayat.append(try checked(start: start, end: end, at: place, startField: "StartMs", endField: "EndMs"))
            }
            try checkComplete(at: "Segments")
        }

        mutating func mp3quran(_ root: JSONNode) throws(TartilError) {
            guard let entries = root.array else {
                throw fail("top level", #"must be an array of {"ayah", "start_time", "end_time"} objects"#)
            }
            guard entries.count <= ayahCount + 1 else {
                throw fail("top level", "\(entries.count) entries, but surah \(surah) has \(ayahCount) ayat (and an ayah 0)")
            }
            for (index, entry) in entries.enumerated() {
                let place = "[\(index)]"
                guard let fields = entry.object else { throw fail(place, "must be an object") }
                let number = fields["ayah"]?.integer
                let start = try milliseconds(fields["start_time"], "start_time", at: place)
                let end = try milliseconds(fields["end_time"], "end_time", at: place)
                if index == 0 && number == 0 {
                    beforeFirst = try checked(start: start, end: end, at: place, startField: "start_time", endField: "end_time")
                    continue
                }
                try checkNext(number, field: "ayah", at: place)
                ayat.append(try checked(start: start, end: end, at: place, startField: "start_time", endField: "end_time"))
            }
            try checkComplete(at: "top level")
        }

        static func kind(_ node: JSONNode) -> String {
            switch node {
            case .null: "null"
            case .bool: "a boolean"
            case .number: "a number"
            case .string: "a string"
            case .array: "an array"
            case .object: "an object"
            }
        }

        static func shown(_ node: JSONNode) -> String {
            if case .number(let value) = node { return NumberText.format(value) }
            return kind(node)
        }
    }

    // MARK: - Samples

    /// Each ayah's samples, and the basmala's, in a decoded file of `samples` PCM frames at `rate` Hz.
    public struct SampleRanges: Sendable, Hashable {
        /// The basmala before ayah 1, when there is one of at least one sample.
        public let beforeFirst: Range<Int>?
        /// `ayat[0]` is ayah 1; none is empty.
        public let ayat: [Range<Int>]

        /// The same boundaries made to cover a file of `samples` samples with no gap and no overlap, as a surah
        /// table's rows do: the first part (the basmala, or ayah 1) starts at sample 0, each part ends where the
        /// next starts (a pause the timings leave between two ayat belongs to the ayah before it), the last ayah
        /// ends at the file's end. Every part keeps its published start but ayah 1 when there is no basmala (none
        /// given, or an empty one), which then starts at 0; none becomes empty.
        public func covering(samples: Int) -> SampleRanges {
            var starts = ayat.map(\.lowerBound)
            if beforeFirst == nil, !starts.isEmpty { starts[0] = 0 }
            var covered: [Range<Int>] = []
            covered.reserveCapacity(ayat.count)
            for index in starts.indices {
                covered.append(starts[index]..<(index + 1 < starts.count ? starts[index + 1] : samples))
            }
            return SampleRanges(beforeFirst: beforeFirst.map { _ in 0..<starts[0] }, ayat: covered)
        }
    }

    /// The sample a boundary at `ms` falls on: round(ms · rate / 1000), halves up, exact in integers.
    public static func sample(atMs ms: Int, rate: Int) -> Int {
        (2 * ms * rate + 1000) / 2000
    }

    /// The sample ranges of the ayat (and the basmala) in a decoded file of `samples` PCM frames at `rate` Hz: a
    /// boundary at t ms is sample round(t · rate / 1000); an end past the file's end (or an open one) is the
    /// file's end. Throws when an ayah starts at or past the file's end or covers no sample at that rate.
    public func sampleRanges(rate: Int, samples: Int) throws(TartilError) -> SampleRanges {
        guard rate > 0, rate <= 1_000_000, samples > 0 else {
            throw TartilError(.invalidData, "surah \(surah): \(samples) samples at \(rate) Hz is not a decoded file")
        }
        func bound(_ ms: Int?) -> Int { ms.map { min(Self.sample(atMs: $0, rate: rate), samples) } ?? samples }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(ayat.count)
        for (index, span) in ayat.enumerated() {
            let ayah = "\(surah):\(index + 1)"
            let start = bound(span.startMs)
            let end = bound(span.endMs)
            guard start < samples else {
                throw TartilError(
                    .invalidData,
                    "ayah \(ayah) starts at \(span.startMs) ms, at or past the end of the file (\(samples) samples at \(rate) Hz, \(samples * 1000 / rate) ms)")
            }
            guard start < end else {
                throw TartilError(.invalidData, "ayah \(ayah) (\(span.startMs)-\(span.endMs ?? 0) ms) covers no sample at \(rate) Hz")
            }
            ranges.append(start..<end)
        }
        var before: Range<Int>?
        if let span = beforeFirst {
            let start = bound(span.startMs)
            let end = min(bound(span.endMs), ranges.first?.lowerBound ?? samples)
            if start < end { before = start..<end }
        }
        return SampleRanges(beforeFirst: before, ayat: ranges)
    }
}
