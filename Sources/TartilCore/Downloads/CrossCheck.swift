/// What one mirror served for an unpinned ayah: the whole file's size and SHA-256. A mirror's side costs one whole
/// download (a probe: the file into memory, hashed and walked frame by frame, never written under a name); the
/// downloaded copy's side costs nothing more than reading it back once.
public struct FileFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The whole file's size.
    public let bytes: Int
    /// SHA-256 of the whole file, 64 lowercase hex digits.
    public let sha256: String

    public init(bytes: Int, sha256: String) {
        self.bytes = bytes
        self.sha256 = sha256
    }

    public var description: String { "\(bytes) bytes, sha256 \(sha256.prefix(12))…" }
}

/// What the cross-check found for an unpinned file, recorded with its hash and shown by `cache ls` and
/// `cache verify`.
public enum SourceMark: String, Sendable, Hashable, CaseIterable {
    /// Two mirrors (a majority of those that answered) served the same whole file: verified.
    case crossChecked = "cross-checked"
    /// Only one mirror could serve it so far (the reciter has one mirror, or the others did not answer): it plays,
    /// said once, and is compared again by the next `prefetch` (a learned surah's parts: `LearningOrder.toCompareAgain`).
    case singleSource = "single-source"
    /// The mirrors disagree and no majority of them agrees: nothing is kept at the file's name, the copies are kept
    /// aside, and it does not play until `cache choose` picks one.
    case disputed
    /// The user picked one of a disputed file's copies (`cache choose`).
    case chosen
}

/// The decisions of the cross-check of one unpinned file (an ayah the reciter's table does not pin), which cannot
/// be proven right, only compared: a pure state machine. The downloader reports each downloaded copy and each
/// probe of another mirror (the whole file, hashed), and carries out the returned action.
///
/// An agreement is a *majority*: one SHA-256 served by at least two mirrors and by more mirrors than every other
/// answer together. Rules, in order, after each report:
/// 1. the copy in hand's hash is the agreement → keep it, `cross-checked`;
/// 2. another hash is the agreement → download the file from one of its mirrors not yet downloaded from (the
///    copy in hand is dropped; the new copy is checked the same way);
/// 3. a mirror not yet asked remains → probe it (in mirror order, starting after the copy's mirror);
/// 4. else, when no other mirror answered → keep the copy, `single-source`;
/// 5. else (mirrors answered, no majority) → `dispute`: nothing is kept at the file's name.
///
/// Every mirror is probed at most once and downloaded from at most once by rule 2, so a file costs at most one
/// probe per other mirror and one more download per mirror, and the check ends. A change anywhere in a file
/// changes its hash, so no partial comparison can be fooled.
public struct CrossCheck: Sendable, Hashable {
    /// What one mirror told about the file.
    public enum Observation: Sendable, Hashable {
        case fingerprint(FileFingerprint)
        /// It could not answer (an HTTP error, a timeout, a body that is not one whole MPEG audio stream): no
        /// opinion.
        case unavailable(String)
    }

    /// What the downloader should do next.
    public enum Action: Sendable, Hashable {
        /// Ask `mirror` for the whole file, into memory, and hash it.
        case probe(mirror: Int)
        /// Drop the copy in hand and download the whole file from `mirror`.
        case download(mirror: Int)
        /// Commit the copy in hand with this mark (`crossChecked` or `singleSource`).
        case keep(SourceMark)
        /// No majority: keep every copy aside (the one in hand and the probes'), none under the file's name.
        case dispute
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

    /// The hash a majority of the mirrors that answered served, if there is one: served by two or more, and by
    /// more than all other answers together.
    public var agreement: FileFingerprint? {
        var counts: [FileFingerprint: Int] = [:]
        for case .fingerprint(let print) in observations.values { counts[print, default: 0] += 1 }
        let answered = counts.values.reduce(0, +)
        return counts.first { $0.value >= 2 && 2 * $0.value > answered }?.key
    }

    /// Whether the check may still end by keeping a copy whose fingerprint is `fingerprint`, if every mirror goes on
    /// serving what it served (as when each mirror's copy is fetched once and `.download` takes the copy its probe
    /// fetched: `SurahLearning`). A copy held aside for the check can be let go of once this is false: with an
    /// agreement, only the agreed copy can be kept; without one, a copy is kept as single-source only when no other
    /// mirror served a file, and as cross-checked only when it can still be a majority, every mirror not asked yet
    /// serving it too.
    ///
    /// ```swift
    /// // Four mirrors: a, b and c served three different files; the fourth cannot make any of them a majority.
    /// check.mayStillKeep(a)   // false
    /// ```
    public func mayStillKeep(_ fingerprint: FileFingerprint) -> Bool {
        if let agreed = agreement { return agreed == fingerprint }
        var count = 0
        var answered = 0
        for case .fingerprint(let print) in observations.values {
            answered += 1
            if print == fingerprint { count += 1 }
        }
        let unasked = mirrorCount - observations.count
        let alone = answered == count && count <= 1 && count + unasked >= 1
        let best = count + unasked
        return alone || (best >= 2 && 2 * best > answered + unasked)
    }

    private mutating func decide() -> Action {
        guard let candidate, case .fingerprint(let mine)? = observations[candidate] else {
            preconditionFailure("CrossCheck: a probe reported before any download")
        }
        let order = (1..<max(mirrorCount, 1)).map { (candidate + $0) % mirrorCount }
        if let agreed = agreement {
            // 1. The copy in hand is what the majority served.
            if agreed == mine { return .keep(.crossChecked) }
            // 2. The majority served another file: take it from one of them.
            let agreeing = order.filter { observations[$0] == .fingerprint(agreed) }
            if let mirror = agreeing.first(where: { !redownloaded.contains($0) }) {
                redownloaded.insert(mirror)
                return .download(mirror: mirror)
            }
        }
        // 3. Ask the next mirror not asked yet.
        if let next = order.first(where: { observations[$0] == nil }) { return .probe(mirror: next) }
        // 4. and 5. Nothing more to learn.
        let others = order.contains { if case .fingerprint = observations[$0] { true } else { false } }
        return others ? .dispute : .keep(.singleSource)
    }
}

extension CrossCheck {
    /// Why a disputed ayah does not play, and the one command that settles it: what `cache ls`, `cache verify`,
    /// `play` and `prefetch` say of it. `copies`: each mirror's name and what it served.
    ///
    /// `36:5 is disputed: its mirrors served different files and no majority agrees (a: 13582 bytes, sha256
    /// 3f1c…; b: 13164 bytes, sha256 9a0b…); it is not played. Choose one: tartil cache choose 36:5 --reciter r
    /// --mirror NAME`
    public static func disputeMessage(_ ayah: AyahRef, reciter: String, copies: [(mirror: String, print: FileFingerprint)]) -> String {
        let listed = copies.map { "\($0.mirror): \($0.print)" }.joined(separator: "; ")
        return "\(ayah) is disputed: its mirrors served different files and no majority agrees (\(listed)); it is not played. "
            + "Choose one: tartil cache choose \(ayah) --reciter \(reciter) --mirror NAME"
    }
}
