import Synchronization
import TartilSystem
import Testing

/// The threads tartil starts without libdispatch: a counting semaphore, and work spread over the processors.
struct SystemThreadsTests {
    @Test func aSemaphoreCountsSignalsAndWaitsForThem() {
        let semaphore = Semaphore(value: 1)
        semaphore.wait()  // the one it started with
        let arrived = Atomic<Int>(0)
        for _ in 0..<8 {
            NativeThread.start(stackSize: 64 << 10) {
                arrived.add(1, ordering: .relaxed)
                semaphore.signal()
            }
        }
        for _ in 0..<8 { semaphore.wait() }
        #expect(arrived.load(ordering: .relaxed) == 8)
    }

    /// Every index once, whatever the count (none, one, fewer than the processors, many), and all done on return.
    @Test(arguments: [0, 1, 2, 3, 17, 1000])
    func concurrentPerformRunsEveryIndexOnce(iterations: Int) {
        let counts = Mutex([Int](repeating: 0, count: iterations))
        NativeThread.concurrentPerform(iterations: iterations) { index in counts.withLock { $0[index] += 1 } }
        #expect(counts.withLock { $0 } == [Int](repeating: 1, count: iterations))
        #expect(NativeThread.processorCount >= 1)
    }
}
