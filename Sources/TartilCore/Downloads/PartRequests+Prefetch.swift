/// How `prefetch` goes through its requests when some of them ask for parts of surah files by their ranges (a
/// surah whose missing parts are less than half its file: `SurahFetch`). The player learns how the mirrors treat
/// ranges from its first part's answer (`PartRequests.steps`); a prefetch does the same: the requests go in order
/// up to the first part asked for by its range (the probe), and once its answer has shown how the server treats
/// ranges, the rest go as `regrouped` says: as they are when ranges are honoured, and with the parts of each surah
/// as runs (one request whose body is cut into all of them) when they are ignored, so that a server that sends
/// the whole file from byte 0 for every request moves about the file once, not the file up to each part for
/// every part. While no answer has shown it (the probe failed on every mirror), the next part probes again.
///
/// Requests are named by their index; `ranged[i]` is the part request `i` asks for by its range alone, nil for
/// any other request (a whole surah file, a recheck, a per-ayah file).
///
/// ```swift
/// let ranged: [AyahRef?] = [67:1, 67:2, 67:3, nil]
/// PartRequests.probe(in: ranged)                                             // 0
/// PartRequests.regrouped([67:2, 67:3, nil], support: .ignored, ranges: r)    // [.run([0, 1]), .request(2)]
/// ```
extension PartRequests {
    /// One request of a prefetch as it goes: a request as it is, or the parts of several (indices in file order,
    /// all of one surah) as one run.
    public enum PrefetchStep: Sendable, Hashable {
        case request(Int)
        case run([Int])

        /// The requests it stands for.
        public var requests: [Int] {
            switch self {
            case .request(let index): [index]
            case .run(let indices): indices
            }
        }
    }

    /// The request whose answer shows how the mirrors treat ranges: the first part asked for by its range, when
    /// another such part follows it (one part alone has nothing to gain); nil otherwise.
    public static func probe(in ranged: [AyahRef?]) -> Int? {
        guard let first = ranged.firstIndex(where: { $0 != nil }), ranged[(first + 1)...].contains(where: { $0 != nil }) else { return nil }
        return first
    }

    /// The requests `ranged` names, as they go once the mirrors have shown `support`: with ranges ignored, the parts
    /// of each surah asked for by their ranges as runs (`steps` over them, in the order given: a run takes the
    /// parts after its first that are later in the same surah's file, as long as they follow one another so), each
    /// run where its first part was; every other request, and everything when ranges are honoured or still
    /// unknown, as it is. Every request is in exactly one step.
    public static func regrouped(_ ranged: [AyahRef?], support: RangeSupport, ranges: [AyahRef: ClosedRange<Int>]) -> [PrefetchStep] {
        guard support == .ignored else { return ranged.indices.map { .request($0) } }
        let parts = ranged.compactMap { $0 }
        var index: [AyahRef: Int] = [:]
        for (position, part) in ranged.enumerated() {
            if let part, index[part] == nil { index[part] = position }
        }
        // A part asked for twice (never, from a prefetch) goes alone the second time.
        let runs = steps(order: parts, upcoming: parts, ranges: ranges, support: .ignored, taken: { _ in false })
        var runOf: [AyahRef: Step] = [:]
        for run in runs { runOf[run.parts[0]] = run }
        var carried: Set<Int> = []
        var result: [PrefetchStep] = []
        for (position, part) in ranged.enumerated() {
            guard let part, index[part] == position else {
                result.append(.request(position))
                continue
            }
            if carried.contains(position) { continue }  // in a run placed before it
            guard let run = runOf[part], run.parts.count > 1 else {
                result.append(.request(position))
                continue
            }
            let members = run.parts.map { index[$0]! }
            carried.formUnion(members)
            result.append(.run(members))
        }
        return result
    }
}
