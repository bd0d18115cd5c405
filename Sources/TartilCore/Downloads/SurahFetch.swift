/// How a prefetch fetches the parts of a reciter of one file per surah that the cache lacks: a surah whose missing
/// parts make up at least half its file is fetched whole, in one request, checked against the file's own size and
/// SHA-256 and only then cut into its parts (each checked against its own); any other surah's parts are fetched
/// with a range request each. One request instead of hundreds, a hash over the whole recording, and bytes on
/// the wire close to the file's own size even from a server that ignores range requests (where each part's
/// request would bring the file up to that part).
///
/// ```swift
/// SurahFetch.plan(missing: partsOfSurah2, ranges: ranges, fileBytes: [2: 92_000_000])  // [.wholeFile(surah: 2, parts: …)]
/// SurahFetch.plan(missing: [AyahRef(2, 255)], ranges: ranges, fileBytes: [2: 92_000_000])  // [.part(2:255)]
/// ```
public enum SurahFetch: Sendable, Hashable {
    /// The surah's whole file, standing for these missing parts (in order).
    case wholeFile(surah: Int, parts: [AyahRef])
    /// One part by its byte range.
    case part(AyahRef)

    /// The parts a step stands for.
    public var parts: [AyahRef] {
        switch self {
        case .wholeFile(_, let parts): parts
        case .part(let part): [part]
        }
    }

    /// The steps fetching `missing` (parts, in the order asked), in that order: a surah fetched whole takes the
    /// place of its first missing part. `ranges`: each part's bytes of its surah's file; `fileBytes`: each
    /// surah's file size. A part without a range, or of a surah whose size is not known, is fetched by itself.
    public static func plan(missing: [AyahRef], ranges: [AyahRef: ClosedRange<Int>], fileBytes: [Int: Int]) -> [SurahFetch] {
        var missingBytes: [Int: Int] = [:]
        for part in missing { missingBytes[part.surah, default: 0] += ranges[part]?.count ?? 0 }
        var whole: Set<Int> = []
        for (surah, bytes) in missingBytes {
            if let size = fileBytes[surah], size > 0, bytes * 2 >= size { whole.insert(surah) }
        }
        var steps: [SurahFetch] = []
        var placed: Set<Int> = []
        for part in missing {
            guard whole.contains(part.surah), ranges[part] != nil else {
                steps.append(.part(part))
                continue
            }
            guard placed.insert(part.surah).inserted else { continue }
            steps.append(.wholeFile(surah: part.surah, parts: missing.filter { $0.surah == part.surah && ranges[$0] != nil }))
        }
        return steps
    }
}

extension DownloadEvent {
    /// The file the event is about (nil for a mirror given up).
    public var ayah: AyahRef? {
        switch self {
        case .started(let ayah, _), .retrying(let ayah, _, _, _), .marked(let ayah, _, _), .cached(let ayah, _, _),
            .failed(let ayah, _), .cancelled(let ayah), .heldElsewhere(let ayah):
            ayah
        case .mirrorAbandoned: nil
        }
    }

    /// Whether the event settles a request (it is stored, found, failed or cancelled).
    public var settlesRequest: Bool {
        switch self {
        case .cached, .failed, .cancelled: true
        case .started, .retrying, .marked, .mirrorAbandoned, .heldElsewhere: false
        }
    }

    /// The event as it stands for each part, when it is about a surah's whole file fetched for `parts` (its ayah is
    /// the first part's): stored, failed or cancelled, each part is; starts and retries stay one event, the first
    /// part's. `bytes`: each part's size.
    public func spread(over parts: [AyahRef], bytes: [AyahRef: Int]) -> [DownloadEvent] {
        switch self {
        case .cached(_, _, let already): parts.map { .cached($0, bytes: bytes[$0] ?? 0, alreadyCached: already) }
        case .failed(_, let reason): parts.map { .failed($0, reason: reason) }
        case .cancelled: parts.map { .cancelled($0) }
        case .started, .retrying, .marked, .mirrorAbandoned, .heldElsewhere: [self]
        }
    }
}
