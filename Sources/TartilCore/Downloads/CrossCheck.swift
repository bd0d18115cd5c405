/// How a file of an unpinned ayah is compared between mirrors: its size and the SHA-256 of its last
/// `CrossCheck.tailBytes` bytes (all of it when it is smaller). A mirror's side costs one ranged request,
/// `Range: bytes=-16384`, whose `Content-Range` gives the size and whose body is the tail; the downloaded copy's
/// side costs nothing (the writer keeps its tail as the bytes go by).
public struct FileFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The whole file's size.
    public let bytes: Int
    /// SHA-256 of its last `min(bytes, CrossCheck.tailBytes)` bytes, 64 lowercase hex digits.
    public let tailSHA256: String

    public init(bytes: Int, tailSHA256: String) {
        self.bytes = bytes
        self.tailSHA256 = tailSHA256
    }

    public var description: String { "\(bytes) bytes, tail \(tailSHA256.prefix(12))…" }
}

/// What the cross-check found for an unpinned file, recorded with its hash and shown by `cache ls` and
/// `cache verify`.
public enum SourceMark: String, Sendable, Hashable, CaseIterable {
    /// Another mirror has the same size and the same tail.
    case crossChecked = "cross-checked"
    /// No other mirror could be asked (the reciter has one mirror, or the others did not answer).
    case singleSource = "single-source"
    /// The mirrors disagree and no two of them agree on another copy: kept, but the reciter's mirrors are not
    /// byte-identical as mirrors.json requires.
    case disputed
}

/// The decisions of the cross-check of one unpinned file (an ayah the reciter's table does not pin, with no
/// hash recorded yet), which cannot be proven right, only compared: a pure state machine. The downloader
/// reports each downloaded copy and each probe of another mirror, and carries out the returned action.
///
/// Rules, in order, after each report:
/// 1. another mirror's fingerprint equals the downloaded copy's → keep it, `cross-checked`;
/// 2. two or more mirrors agree on another fingerprint → download the file from the first of them not yet
///    downloaded from (the copy in hand is dropped; the new copy is checked the same way);
/// 3. a mirror not yet asked remains → probe it (in mirror order, starting after the copy's mirror);
/// 4. else keep the copy in hand: `single-source` when no other mirror answered, `disputed` when some did and
///    none agreed.
///
/// Every mirror is probed at most once and downloaded from at most once by rule 2, so a file costs at most
/// one probe per other mirror and the check ends.
public struct CrossCheck: Sendable, Hashable {
    /// Bytes at the end of a file that are compared. The size alone tells another ayah's file; the tail adds
    /// changed bytes near the end, and a random changed bit with the probability tail/size. Each probe costs
    /// these bytes again: 16 KiB is about 17% more bytes on a whole Qur'an of ~97 KB files (64 KiB cost 63%,
    /// and 82% on the real recordings beside the checkout, which average 48 KB: most of a second download).
    public static let tailBytes = 16 << 10

    /// What one mirror told about the file.
    public enum Observation: Sendable, Hashable {
        case fingerprint(FileFingerprint)
        /// It could not answer (an HTTP error, a timeout, an unreadable range): no opinion.
        case unavailable(String)
    }

    /// What the downloader should do next.
    public enum Action: Sendable, Hashable {
        /// Ask `mirror` for the file's size and tail.
        case probe(mirror: Int)
        /// Drop the copy in hand and download the whole file from `mirror`.
        case download(mirror: Int)
        /// Commit the copy in hand with this mark.
        case keep(SourceMark)
    }

    public let mirrorCount: Int
    /// What each mirror told, by mirror index.
    public private(set) var observations: [Int: Observation] = [:]
    /// The mirror whose copy is in hand.
    public private(set) var candidate: Int?
    /// Mirrors rule 2 has downloaded from.
    private var redownloaded: Set<Int> = []

    public init(mirrorCount: Int) {
        precondition(mirrorCount > 0, "a reciter has at least one mirror")
        self.mirrorCount = mirrorCount
    }

    /// A whole copy of the file arrived from `mirror`.
    public mutating func downloaded(from mirror: Int, _ fingerprint: FileFingerprint) -> Action {
        observations[mirror] = .fingerprint(fingerprint)
        candidate = mirror
        return decide()
    }

    /// A probe of `mirror` ended.
    public mutating func probed(_ mirror: Int, _ observation: Observation) -> Action {
        observations[mirror] = observation
        return decide()
    }

    /// The mirrors that told a fingerprint other than `fingerprint`, for messages.
    public func disagreeing(with fingerprint: FileFingerprint) -> [Int] {
        observations.keys.sorted().filter { if case .fingerprint(let other) = observations[$0], other != fingerprint { true } else { false } }
    }

    private mutating func decide() -> Action {
        guard let candidate, case .fingerprint(let mine)? = observations[candidate] else {
            preconditionFailure("CrossCheck: a probe reported before any download")
        }
        let order = (1..<max(mirrorCount, 1)).map { (candidate + $0) % mirrorCount }
        var told: [(mirror: Int, fingerprint: FileFingerprint)] = []
        for mirror in order { if case .fingerprint(let theirs)? = observations[mirror] { told.append((mirror, theirs)) } }
        // 1. Someone agrees with the copy in hand.
        if told.contains(where: { $0.fingerprint == mine }) { return .keep(.crossChecked) }
        // 2. Two others agree on something else: take it from one of them.
        for (index, entry) in told.enumerated() {
            let agreeing = told[index...].filter { $0.fingerprint == entry.fingerprint }.map(\.mirror)
            guard agreeing.count >= 2, told[..<index].allSatisfy({ $0.fingerprint != entry.fingerprint }) else { continue }
            if let mirror = agreeing.first(where: { !redownloaded.contains($0) }) {
                redownloaded.insert(mirror)
                return .download(mirror: mirror)
            }
        }
        // 3. Ask the next mirror not asked yet.
        if let next = order.first(where: { observations[$0] == nil }) { return .probe(mirror: next) }
        // 4. Nothing more to learn.
        return .keep(told.isEmpty ? .singleSource : .disputed)
    }
}
