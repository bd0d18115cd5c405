import TestSupport
import Testing

@testable import TartilCore

/// `UrgencyOrder` against the sort it replaces: after any sequence of jobs submitted (at any priority) and ended
/// (in any order), its jobs are exactly those not ended, sorted by priority, then by the order submitted.
@Suite struct UrgencyOrderTests {
    typealias JobID = DownloadScheduler.JobID

    @Test func theMoreUrgentComeFirstThenTheEarlierSubmitted() {
        var order = UrgencyOrder()
        for (index, priority) in [5, 0, 5, 2, 0].enumerated() {
            order.insert(JobID(index + 10), priority: priority, order: index)
        }
        #expect(Array(order.ids).map(\.rawValue) == [11, 14, 13, 10, 12])
        order.remove(priority: 0, order: 1)
        order.remove(priority: 5, order: 2)
        #expect(Array(order.ids).map(\.rawValue) == [14, 13, 10])
        #expect(order.count == 3)
    }

    @Test(arguments: 0..<40)
    func itAlwaysListsTheJobsNotEndedAsTheSortWould(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var order = UrgencyOrder()
        var live: [(priority: Int, order: Int, id: Int)] = []
        var submitted = 0
        let priorities = Int.random(in: 1...4, using: &random)
        for _ in 0..<Int.random(in: 1...600, using: &random) {
            // Mostly submissions early and ends later, ends mostly at the front (as a prefetch goes).
            if live.isEmpty || Int.random(in: 0..<3, using: &random) == 0 {
                for _ in 0..<Int.random(in: 1...20, using: &random) {
                    let priority = Int.random(in: 0..<priorities, using: &random)
                    order.insert(JobID(1000 + submitted), priority: priority, order: submitted)
                    live.append((priority, submitted, 1000 + submitted))
                    submitted += 1
                }
            } else {
                live.sort { $0.priority != $1.priority ? $0.priority < $1.priority : $0.order < $1.order }
                let index = Int.random(in: 0..<4, using: &random) == 0
                    ? Int.random(in: 0..<live.count, using: &random) : Int.random(in: 0..<min(3, live.count), using: &random)
                let ended = live.remove(at: index)
                order.remove(priority: ended.priority, order: ended.order)
            }
            live.sort { $0.priority != $1.priority ? $0.priority < $1.priority : $0.order < $1.order }
            #expect(Array(order.ids).map(\.rawValue) == live.map(\.id), "seed \(seed)")
            #expect(order.count == live.count)
            if Array(order.ids).map(\.rawValue) != live.map(\.id) { return }
        }
        // However many places over each keeps, two orders of the same jobs are equal.
        var fresh = UrgencyOrder()
        for job in live { fresh.insert(JobID(job.id), priority: job.priority, order: job.order) }
        #expect(fresh == order && fresh.hashValue == order.hashValue)
    }
}
