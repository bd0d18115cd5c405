/// The parts a run's transfer carries (`PartRequests.Step.run`): every part of the run but its last, which is the
/// job's own file (the one the scheduler retries, fails over and commits). Each carried part is stored on its own
/// as soon as the body has passed it, and reported then; this is what becomes of each, across the job's attempts
/// and at its end. A part that a retry finds stored (or being committed) is not cut again; one the run could not
/// store (its commit failed, another process was writing it, the body never reached it) is fetched alone once the
/// job has its file, under the usual rules; when the job fails or is cancelled, so is each part not stored.
///
/// ```swift
/// var carried = CarriedParts(parts: [114:1, 114:2])
/// carried.attempt(verified: [])             // cut [114:1, 114:2]
/// carried.handedOver(114:1)
/// carried.committed(114:1, .stored(bytes: 23_823))   // [.report(.cached(114:1, …))]
/// carried.ended(with: .cached(114:3, …))    // [.fetchAlone([114:2])]: the body did not give it
/// ```
public struct CarriedParts: Sendable, Hashable {
    /// Where a carried part is.
    public enum State: Sendable, Hashable {
        /// Not cut yet (or cut but not stored: it may be cut again).
        case waiting
        /// Cut whole and handed to the committer.
        case committing
        /// Verified and under its name.
        case stored
    }

    /// What the committer made of a carried part.
    public enum Commit: Sendable, Hashable {
        case stored(bytes: Int)
        case failed(reason: String)
    }

    /// What the executor does.
    public enum Action: Sendable, Hashable {
        /// Reports an event about a carried part to whoever asked for it.
        case report(DownloadEvent)
        /// Submits these parts again, each a request of its own.
        case fetchAlone([AyahRef])
    }

    /// The carried parts in file order, and where each is.
    public let parts: [AyahRef]
    public private(set) var states: [AyahRef: State]
    /// How the job ended (its event about its own file), once it has.
    public private(set) var ending: DownloadEvent?

    public init(parts: [AyahRef]) {
        self.parts = parts
        states = Dictionary(uniqueKeysWithValues: parts.map { ($0, State.waiting) })
    }

    /// An attempt starts: the parts it cuts (those waiting and not in the cache verified already, in file order),
    /// and a report for each found verified (stored now).
    public mutating func attempt(verified: Set<AyahRef>) -> (cut: [AyahRef], actions: [Action]) {
        var cut: [AyahRef] = []
        var actions: [Action] = []
        for part in parts where states[part] == .waiting {
            if verified.contains(part) {
                states[part] = .stored
                actions.append(.report(.cached(part, bytes: 0, alreadyCached: true)))
            } else {
                cut.append(part)
            }
        }
        return (cut, actions)
    }

    /// A part was cut whole and handed to the committer.
    public mutating func handedOver(_ part: AyahRef) {
        guard states[part] == .waiting else { return }
        states[part] = .committing
    }

    /// The committer's answer for a part: stored, it is reported; not, it waits to be cut again by a later
    /// attempt, or, when the job has ended, is fetched alone.
    public mutating func committed(_ part: AyahRef, _ outcome: Commit) -> [Action] {
        guard states[part] == .committing else { return [] }
        switch outcome {
        case .stored(let bytes):
            states[part] = .stored
            return [.report(.cached(part, bytes: bytes, alreadyCached: false))]
        case .failed:
            states[part] = .waiting
            return settle([part])
        }
    }

    /// The job ended with `event` (about its own file): the waiting parts are fetched alone when it is stored,
    /// failed with it when it failed, cancelled with it when cancelled. Parts being committed are settled by
    /// their answer.
    public mutating func ended(with event: DownloadEvent) -> [Action] {
        guard ending == nil else { return [] }
        ending = event
        return settle(parts.filter { states[$0] == .waiting })
    }

    /// What becomes of waiting parts once the job has ended (nothing before).
    private func settle(_ waiting: [AyahRef]) -> [Action] {
        guard let ending, !waiting.isEmpty else { return [] }
        switch ending {
        case .failed(_, let reason): return waiting.map { .report(.failed($0, reason: reason)) }
        case .cancelled: return waiting.map { .report(.cancelled($0)) }
        case .cached, .started, .retrying, .marked, .mirrorAbandoned, .heldElsewhere: return [.fetchAlone(waiting)]
        }
    }
}
