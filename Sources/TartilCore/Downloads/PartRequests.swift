/// How the player asks for the parts of a reciter of one file per surah (each ayah a byte range of its surah's
/// file), given what its mirrors have shown of range requests this run. A server that honours them is asked for
/// each part's range alone, as before. One that ignores them sends the whole file from byte 0 for every request,
/// so asking part by part would move the file up to each part again and again (O(N²) bytes over a surah): the
/// parts the plan plays next in that surah are asked for together instead, as one request whose body is cut into
/// all of them (`PartStream`), each stored as soon as the body has passed it. While neither is known, one part
/// goes alone, and its answer tells.
///
/// ```swift
/// PartRequests.steps(order: [2:255], upcoming: [2:255], ranges: r, support: .unknown) { _ in false }   // [.part(2:255)]
/// PartRequests.steps(order: [114:1, 114:2], upcoming: plan, ranges: r, support: .ignored) { _ in false }
///                                                                        // [.run([114:1, 114:2, …, 114:6])]
/// ```
public enum PartRequests: Sendable, Hashable {
    /// What a server has shown of range requests for parts this run.
    public enum RangeSupport: Sendable, Hashable {
        /// No part's range request has been answered yet.
        case unknown
        /// The last answer to one was the range (206).
        case honoured
        /// The last answer to one was the whole file (200).
        case ignored
    }

    /// One request: a part by its range, or a run of parts of one surah (in file order) cut from one body.
    public enum Step: Sendable, Hashable {
        case part(AyahRef)
        case run([AyahRef])

        /// The parts the request stands for.
        public var parts: [AyahRef] {
            switch self {
            case .part(let part): [part]
            case .run(let parts): parts
            }
        }
    }

    /// The requests for the parts `order` (those to ask for now, in the order needed: `FetchOrder`'s answer).
    ///
    /// - Parameters:
    ///   - upcoming: the files the plan plays from now on, in order (repeats may appear more than once).
    ///   - ranges: each part's bytes of its surah's file; a file without one is asked for alone.
    ///   - support: what the mirrors have shown of range requests.
    ///   - taken: whether a file is cached or asked for already (a run stops before it).
    /// - Returns: with `.honoured`, each part alone; with `.unknown`, only the first part (the rest wait for its
    ///   answer); with `.ignored`, for each part of `order` not in a run yet, a run of it and the parts the plan
    ///   plays after it (repeats passed over), while they are of the same surah, later in its file, and neither
    ///   taken nor in a run (a run of one part is the part alone).
    public static func steps(
        order: [AyahRef], upcoming: [AyahRef], ranges: [AyahRef: ClosedRange<Int>], support: RangeSupport, taken: (AyahRef) -> Bool
    ) -> [Step] {
        switch support {
        case .honoured: return order.map { .part($0) }
        case .unknown: return order.first.map { [.part($0)] } ?? []
        case .ignored: break
        }
        var placed: Set<AyahRef> = []
        var steps: [Step] = []
        for part in order where !placed.contains(part) {
            placed.insert(part)
            guard var last = ranges[part], let from = upcoming.firstIndex(of: part) else {
                steps.append(.part(part))
                continue
            }
            var run = [part]
            for next in upcoming[(from + 1)...] {
                if run.contains(next) { continue }  // a repeat
                guard next.surah == part.surah, let range = ranges[next], range.lowerBound > last.lowerBound,
                    !placed.contains(next), !taken(next)
                else { break }
                run.append(next)
                placed.insert(next)
                last = range
            }
            steps.append(run.count == 1 ? .part(part) : .run(run))
        }
        return steps
    }
}
