import TestSupport
import Testing

@testable import TartilCore

/// Playing a surah-file reciter's parts from a server that ignores range requests: the player asks for runs of
/// the plan's next parts, one body cut into each (`PartRequests`, `PartStream`), and each part of a run is settled
/// on its own (`CarriedParts`).
@Suite struct PartRunTests {
    static func refs(_ pairs: [(Int, Int)]) -> [AyahRef] { pairs.map { AyahRef(unchecked: $0.0, $0.1) } }
    static func ref(_ surah: Int, _ ayah: Int) -> AyahRef { AyahRef(unchecked: surah, ayah) }

    /// Surah 112 as five parts (0: the basmala) of 100 bytes that overlap their neighbours by 10 (the frames a part
    /// needs before it); 113 as two.
    static let ranges: [AyahRef: ClosedRange<Int>] = {
        var ranges: [AyahRef: ClosedRange<Int>] = [:]
        for ayah in 0...4 { ranges[ref(112, ayah)] = max(0, ayah * 100 - 10)...(ayah * 100 + 99) }
        for ayah in 1...2 { ranges[ref(113, ayah)] = ((ayah - 1) * 300)...((ayah - 1) * 300 + 299) }
        return ranges
    }()

    // MARK: - PartRequests

    static let plan = refs([(112, 0), (112, 1), (112, 2), (112, 3), (112, 4), (113, 1), (113, 2)])

    @Test(arguments: [
        // (order, support, taken, expected: a list of runs, one part a request alone)
        ([(112, 0)], PartRequests.RangeSupport.unknown, [], [[(112, 0)]]),
        ([(112, 1), (112, 2), (112, 3)], .unknown, [], [[(112, 1)]]),  // one alone, until its answer tells
        ([(112, 1), (112, 2), (112, 3)], .honoured, [], [[(112, 1)], [(112, 2)], [(112, 3)]]),  // as before: each its range
        ([(112, 1), (112, 2), (112, 3)], .ignored, [], [[(112, 1), (112, 2), (112, 3), (112, 4)]]),  // on to the surah's end
        ([(112, 4), (113, 1)], .ignored, [], [[(112, 4)], [(113, 1), (113, 2)]]),  // not across surahs
        ([(112, 1)], .ignored, [(112, 3)], [[(112, 1), (112, 2)]]),  // stops before a part cached or asked for
        ([(112, 1), (112, 4)], .ignored, [(112, 3)], [[(112, 1), (112, 2)], [(112, 4)]]),
        ([(113, 2)], .ignored, [], [[(113, 2)]]),
        ([], .ignored, [], []),
        ([], .unknown, [], []),
    ] as [([(Int, Int)], PartRequests.RangeSupport, [(Int, Int)], [[(Int, Int)]])])
    func theRequestsFollowWhatTheServerShowed(order: [(Int, Int)], support: PartRequests.RangeSupport, taken: [(Int, Int)], expected: [[(Int, Int)]]) {
        let taken = Set(Self.refs(taken))
        let order = Self.refs(order)
        let from = order.first.flatMap { Self.plan.firstIndex(of: $0) } ?? 0
        let steps = PartRequests.steps(order: order, upcoming: Array(Self.plan[from...]), ranges: Self.ranges, support: support) { taken.contains($0) }
        #expect(steps == expected.map { $0.count == 1 ? .part(Self.ref($0[0].0, $0[0].1)) : .run(Self.refs($0)) })
    }

    /// A plan that repeats each ayah, or goes back: a run passes over the parts it has (repeats, a loop back to one
    /// of them) and stops where the plan goes back to a part before it in the file.
    @Test func aRunPassesOverRepeatsAndStopsWhereThePlanGoesBack() {
        let looped = Self.refs([(112, 1), (112, 2), (112, 1), (112, 3)])
        let loop = PartRequests.steps(order: [Self.ref(112, 1)], upcoming: looped, ranges: Self.ranges, support: .ignored) { _ in false }
        #expect(loop == [.run(Self.refs([(112, 1), (112, 2), (112, 3)]))])
        let repeated = Self.refs([(112, 1), (112, 1), (112, 2), (112, 2), (112, 3), (112, 0), (112, 4)])
        let steps = PartRequests.steps(order: [Self.ref(112, 1)], upcoming: repeated, ranges: Self.ranges, support: .ignored) { _ in false }
        #expect(steps == [.run(Self.refs([(112, 1), (112, 2), (112, 3)]))])
        let unranged = PartRequests.steps(order: [Self.ref(1, 1)], upcoming: Self.refs([(1, 1), (1, 2)]), ranges: Self.ranges, support: .ignored) { _ in false }
        #expect(unranged == [.part(Self.ref(1, 1))], "a file without a range goes alone")
    }

    /// Any order and plan: each part asked for is in exactly one request; every run is of one surah, in file
    /// order, and starts with a part of the order; nothing taken is asked for.
    @Test(arguments: 0..<200)
    func everyPartAskedForIsInOneRequest(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed))
        let all = Self.ranges.keys.sorted()
        let upcoming = (0..<Int.random(in: 1...12, using: &random)).map { _ in all.randomElement(using: &random)! }
        let taken = Set(all.filter { _ in Int.random(in: 0..<4, using: &random) == 0 })
        var seen = Set<AyahRef>()
        let order = upcoming.filter { !taken.contains($0) && Bool.random(using: &random) && seen.insert($0).inserted }
        let support = [PartRequests.RangeSupport.unknown, .honoured, .ignored].randomElement(using: &random)!
        let steps = PartRequests.steps(order: order, upcoming: upcoming, ranges: Self.ranges, support: support) { taken.contains($0) }
        let asked = steps.flatMap(\.parts)
        #expect(Set(asked).count == asked.count, "each part once: \(steps)")
        #expect(asked.allSatisfy { !taken.contains($0) })
        switch support {
        case .unknown: #expect(asked == Array(order.prefix(1)))
        case .honoured: #expect(asked == order)
        case .ignored:
            #expect(Set(order).isSubset(of: Set(asked)))
            for step in steps {
                let parts = step.parts
                #expect(order.contains(parts[0]))
                #expect(parts.allSatisfy { $0.surah == parts[0].surah })
                #expect(zip(parts, parts.dropFirst()).allSatisfy { Self.ranges[$0]!.lowerBound < Self.ranges[$1]!.lowerBound })
                if case .run(let run) = step { #expect(run.count > 1) }
            }
        }
    }

    // MARK: - PartStream

    /// A 200 (the file from byte 0), a 206 of the span, a wider 206, a resumed last part: chunk by chunk, each part
    /// gets exactly its window, is complete as soon as the body has passed it, and the body stops after the last.
    @Test(arguments: [
        // (windows, kept of the last, body start, chunk sizes, expected per chunk: (part, from, to) appends and
        // completions as (part, -1, -1), then whether finished)
        ([0...39, 30...79], 0, 0, [50, 50], [[(0, 0, 40), (0, -1, -1), (1, 30, 50)], [(1, 0, 30), (1, -1, -1)]], [false, true]),
        ([100...149, 140...199], 0, 0, [120, 100], [[(0, 100, 120)], [(0, 0, 30), (0, -1, -1), (1, 20, 80), (1, -1, -1)]], [false, true]),
        ([100...149, 140...199], 0, 100, [100], [[(0, 0, 50), (0, -1, -1), (1, 40, 100), (1, -1, -1)]], [true]),  // a 206 of the span
        ([100...149, 140...199], 0, 90, [5, 200], [[], [(0, 5, 55), (0, -1, -1), (1, 45, 105), (1, -1, -1)]], [false, true]),  // wider
        ([100...149, 140...199], 20, 0, [160, 40], [[(0, 100, 150), (0, -1, -1)], [(1, 0, 40), (1, -1, -1)]], [false, true]),  // resumed
        ([0...9, 20...29, 40...49], 0, 0, [15, 15, 20], [[(0, 0, 10), (0, -1, -1)], [(1, 5, 15), (1, -1, -1)], [(2, 10, 20), (2, -1, -1)]], [false, false, true]),
    ] as [([ClosedRange<Int>], Int, Int, [Int], [[(Int, Int, Int)]], [Bool])])
    func eachPartGetsItsWindow(
        windows: [ClosedRange<Int>], kept: Int, start: Int, chunks: [Int], expected: [[(Int, Int, Int)]], finished: [Bool]
    ) {
        var stream = PartStream(windows: windows, keptOfLast: kept)
        let started = stream.start(at: start)
        #expect(started)
        for (index, chunk) in chunks.enumerated() {
            let (actions, done) = stream.on(chunk: chunk)
            #expect(actions == expected[index].map { $0.1 < 0 ? .complete(part: $0.0) : .append(part: $0.0, bytes: $0.1..<$0.2) }, "chunk \(index)")
            #expect(done == finished[index], "chunk \(index)")
        }
    }

    @Test func theRangeAskedForAndABodyThatStartsTooLate() {
        #expect(PartStream(windows: [100...149, 140...199], keptOfLast: 20).range == 100...199)
        #expect(PartStream(windows: [140...199], keptOfLast: 20).range == 160...199, "one part resumed")
        var late = PartStream(windows: [100...149, 140...199], keptOfLast: 0)
        let tooLate = late.start(at: 101)
        #expect(!tooLate, "a body that starts past a wanted byte cannot give the run")
        let atTheStart = late.start(at: 100)
        #expect(atTheStart)
    }

    /// Any windows in file order (overlapping or not), any body start at or before the span and any chunking:
    /// every part gets exactly its window's bytes, in order, completes exactly when the body passes its end, and
    /// the stream is finished exactly when the last one is.
    @Test(arguments: 0..<300)
    func anyChunkingGivesExactlyEachWindow(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed))
        var windows: [ClosedRange<Int>] = []
        var start = Int.random(in: 0...50, using: &random)
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let count = Int.random(in: 1...80, using: &random)
            windows.append(start...(start + count - 1))
            start += Int.random(in: 1...(count + 20), using: &random)  // overlapping, touching or apart
        }
        let kept = Int.random(in: 0..<windows.last!.count, using: &random)
        var stream = PartStream(windows: windows, keptOfLast: kept)
        let bodyStart = Int.random(in: 0...stream.range.lowerBound, using: &random)
        let started = stream.start(at: bodyStart)
        #expect(started)
        var got = Array(repeating: [Int](), count: windows.count)
        got[windows.count - 1] = Array(windows.last!.prefix(kept))
        var completed: [Int] = []
        var offset = bodyStart
        var finished = false
        while !finished {
            let chunk = Int.random(in: 1...40, using: &random)
            let (actions, done) = stream.on(chunk: chunk)
            for action in actions {
                switch action {
                case .append(let part, let bytes):
                    #expect(!completed.contains(part))
                    got[part] += bytes.map { offset + $0 }
                case .complete(let part):
                    #expect(got[part] == Array(windows[part]), "part \(part) whole when complete")
                    #expect(windows[part].upperBound < offset + chunk, "only once the body has passed it")
                    completed.append(part)
                }
            }
            offset += chunk
            finished = done
            #expect(offset < windows.map(\.upperBound).max()! + 41, "the stream ends after the last window")
        }
        #expect(Set(completed) == Set(windows.indices) && completed.count == windows.count)
        #expect(got == windows.map { Array($0) })
    }

    // MARK: - CarriedParts

    static let parts = refs([(114, 1), (114, 2), (114, 3)])

    /// Each carried part is reported as it is stored; what the run could not store is fetched alone once the job
    /// has its file, failed with it when it fails, cancelled with it.
    @Test(arguments: [
        // (the job's end, expected actions at the end for 114:2, which failed its commit, and 114:3, never reached)
        (DownloadEvent.cached(ref(114, 4), bytes: 10, alreadyCached: false), [CarriedParts.Action.fetchAlone(refs([(114, 2), (114, 3)]))]),
        (.failed(ref(114, 4), reason: "HTTP 404"), [.report(.failed(ref(114, 2), reason: "HTTP 404")), .report(.failed(ref(114, 3), reason: "HTTP 404"))]),
        (.cancelled(ref(114, 4)), [.report(.cancelled(ref(114, 2))), .report(.cancelled(ref(114, 3)))]),
    ])
    func eachPartIsSettled(ending: DownloadEvent, expected: [CarriedParts.Action]) {
        var carried = CarriedParts(parts: Self.parts)
        let first = carried.attempt(verified: [])
        #expect(first.cut == Self.parts && first.actions.isEmpty)
        carried.handedOver(Self.parts[0])
        carried.handedOver(Self.parts[1])
        let stored = carried.committed(Self.parts[0], .stored(bytes: 23))
        #expect(stored == [.report(.cached(Self.parts[0], bytes: 23, alreadyCached: false))])
        let notStored = carried.committed(Self.parts[1], .failed(reason: "size mismatch"))
        #expect(notStored == [], "a later attempt may cut it again")
        let again = carried.committed(Self.parts[0], .stored(bytes: 23))
        #expect(again == [], "settled once")
        let atTheEnd = carried.ended(with: ending)
        #expect(atTheEnd == expected)
        let endedAgain = carried.ended(with: ending)
        #expect(endedAgain == [], "ends once")
    }

    /// A retry cuts only what is not stored or being committed, and reports what another process stored; a part
    /// whose commit fails after the job ended is settled as the job was.
    @Test func aRetryCutsOnlyWhatIsLeft() {
        var carried = CarriedParts(parts: Self.parts)
        _ = carried.attempt(verified: [])
        carried.handedOver(Self.parts[0])
        let retry = carried.attempt(verified: [Self.parts[2]])
        #expect(retry.cut == [Self.parts[1]])
        #expect(retry.actions == [.report(.cached(Self.parts[2], bytes: 0, alreadyCached: true))])
        let atTheEnd = carried.ended(with: .cached(Self.ref(114, 4), bytes: 10, alreadyCached: false))
        #expect(atTheEnd == [.fetchAlone([Self.parts[1]])])
        #expect(carried.states[Self.parts[0]] == .committing)
        let lateFailure = carried.committed(Self.parts[0], .failed(reason: "disk full"))
        #expect(lateFailure == [.fetchAlone([Self.parts[0]])])
        var failed = CarriedParts(parts: Self.parts)
        _ = failed.attempt(verified: [])
        failed.handedOver(Self.parts[0])
        _ = failed.ended(with: .failed(Self.ref(114, 4), reason: "HTTP 404"))
        let lateFailureOfAFailedRun = failed.committed(Self.parts[0], .failed(reason: "disk full"))
        #expect(lateFailureOfAFailedRun == [.report(.failed(Self.parts[0], reason: "HTTP 404"))])
    }
}
