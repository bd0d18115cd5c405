import CSystem
import Glibc
import TartilCore
import TartilSystem

/// One file's side of the writing threads: its descriptor, its SHA-256 and the state of direct I/O on it.
///
/// Touched by one thread at a time, with a lane's lock between them: by its `CacheWriter` before the first block
/// is handed over and after `WritingThreads.drain`, and in between by the one writing thread whose lane it is on.
final class FileSink: @unchecked Sendable {
    let descriptor: Int32
    let path: String
    /// The lane (writing thread) that takes every block of this file, so they are hashed and written in order.
    fileprivate let lane: Int
    var hasher: SHA256
    /// Blocks handed over, and blocks written (the latter under the lane's lock).
    fileprivate var submitted: UInt64 = 0
    fileprivate var completed: UInt64 = 0
    /// The first write or hash that failed; reported by `drain`.
    fileprivate var failure: CacheError?
    /// Whether `O_DIRECT` is set on the descriptor, and whether the file system refused it.
    fileprivate var direct = false
    fileprivate var directRefused = false

    init(descriptor: Int32, path: String) throws(CacheError) {
        self.descriptor = descriptor
        self.path = path
        hasher = try SHA256()
        lane = WritingThreads.shared.nextLane()
    }

    /// Starts the file over: a new digest and no failure. Only after `drain`.
    func reset() throws(CacheError) {
        hasher = try SHA256()
        failure = nil
    }
}

/// Hashes and writes downloads on threads of their own, so that the downloading thread only receives bytes and
/// copies them into a block.
///
/// A `CacheWriter` fills a block (64 KiB, page-aligned) and hands it over when it is full or the file ends. One
/// of a few writing threads (each file always goes to the same one, so its blocks stay in order) adds the block
/// to the file's SHA-256 (every byte is still hashed once, as it is written, never read back) and writes it with
/// direct I/O: the bytes go from the block to the device without being copied into the page cache, which the
/// commit's sync would only have to write back. A file's last few hundred bytes (past its last whole 4 KiB) and
/// any file system that refuses `O_DIRECT` get an ordinary write.
///
/// At most `maxQueued` blocks wait to be written, which bounds the memory to a block per open writer plus those.
final class WritingThreads: Sendable {
    static let shared = WritingThreads()

    /// 64 KiB: every file being downloaded holds one, so with 16 transfers the blocks are most of a prefetch's heap
    /// (128 KiB blocks held 7.4 MiB at a whole-Qur'an prefetch's peak); a recitation file is about 100 KB.
    static let blockSize = 64 << 10
    /// Direct I/O needs offsets and lengths in whole blocks of the device; 4096 covers every common one.
    static let alignment = 4096
    private static let laneCount = 4
    private static let maxQueued = 12

    private struct Job {
        let sink: FileSink
        let block: UnsafeMutableRawPointer
        let count: Int
        let offset: Int
    }

    private struct LaneState {
        var queue: [Job] = []
        var writerWaiting = 0
        var drainersWaiting = 0
    }

    private struct Pool {
        var free: [UnsafeMutableRawPointer] = []
        var queued = 0
        var producersWaiting = 0
        var nextLane = 0
    }

    private let lanes: [Monitor<LaneState>]
    private let pool = Monitor(Pool())

    private init() {
        lanes = (0..<Self.laneCount).map { _ in Monitor(LaneState()) }
        for lane in 0..<Self.laneCount {
            NativeThread.start(stackSize: 256 << 10) { [self] in run(lane: lane) }
        }
    }

    /// The lane for a new file (round robin).
    fileprivate func nextLane() -> Int {
        pool.update(wakeIf: { _ in false }) { state in
            defer { state.nextLane = (state.nextLane + 1) % Self.laneCount }
            return state.nextLane
        }
    }

    /// An empty block (`blockSize` bytes, page-aligned) for a writer to fill.
    func takeBlock() -> UnsafeMutableRawPointer {
        let reused = pool.update(wakeIf: { _ in false }) { $0.free.popLast() }
        return reused ?? UnsafeMutableRawPointer.allocate(byteCount: Self.blockSize, alignment: Self.alignment)
    }

    /// Gives back a block that will not be handed over.
    func returnBlock(_ block: UnsafeMutableRawPointer) {
        pool.update(wakeIf: { _ in false }) { $0.free.append(block) }
    }

    /// Hands over `count` bytes of `block` to be hashed and written at `offset`; waits while `maxQueued` blocks
    /// are already waiting. The block belongs to the writing threads from here on.
    func submit(_ block: UnsafeMutableRawPointer, count: Int, offset: Int, to sink: FileSink) {
        pool.wait(until: { $0.queued < Self.maxQueued }, countingIn: \.producersWaiting, wake: false) { $0.queued += 1 }
        lanes[sink.lane].update(wakeIf: { $0.writerWaiting > 0 }) { state in
            sink.submitted += 1
            state.queue.append(Job(sink: sink, block: block, count: count, offset: offset))
        }
    }

    /// Waits until every block handed over for `sink` is hashed and written; throws the first failure.
    func drain(_ sink: FileSink) throws(CacheError) {
        let failure = lanes[sink.lane].wait(
            until: { _ in sink.completed >= sink.submitted }, countingIn: \.drainersWaiting, wake: false
        ) { _ in sink.failure }
        if let failure { throw failure }
    }

    private func run(lane: Int) {
        let state = lanes[lane]
        while true {
            let jobs = state.wait(until: { !$0.queue.isEmpty }, countingIn: \.writerWaiting, wake: false) { box in
                defer { box.queue.removeAll(keepingCapacity: true) }
                return box.queue
            }
            for job in jobs where job.sink.failure == nil {
                do throws(CacheError) {
                    try job.sink.hasher.update(job.block, count: job.count)
                    try Self.write(job)
                } catch {
                    job.sink.failure = error
                }
            }
            state.update(wakeIf: { $0.drainersWaiting > 0 }) { _ in
                for job in jobs { job.sink.completed += 1 }
            }
            pool.update(wakeIf: { $0.producersWaiting > 0 }) { pool in
                for job in jobs { pool.free.append(job.block) }
                pool.queued -= jobs.count
            }
        }
    }

    /// Writes a job's bytes at its offset: whole 4 KiB blocks at an aligned offset with direct I/O, the rest
    /// (and everything, where the file system refuses direct I/O) with ordinary writes.
    private static func write(_ job: Job) throws(CacheError) {
        let sink = job.sink
        var done = 0
        if !sink.directRefused && job.offset % alignment == 0 {
            let whole = job.count - job.count % alignment
            if whole > 0 && setDirect(sink, true) {
                do throws(Errno) {
                    let bytes = UnsafeRawBufferPointer(start: job.block, count: whole)
                    try SystemCall.writeAll(sink.descriptor, bytes, at: job.offset)
                    done = whole
                } catch {
                    // Accepted by fcntl, refused by write: ordinary writes from here.
                    guard error == .invalidArgument else { throw CacheError.system("write", path: sink.path, error) }
                    sink.directRefused = true
                }
            }
        }
        guard done < job.count else { return }
        _ = setDirect(sink, false)
        do throws(Errno) {
            let bytes = UnsafeRawBufferPointer(start: job.block + done, count: job.count - done)
            try SystemCall.writeAll(sink.descriptor, bytes, at: job.offset + done)
        } catch {
            throw CacheError.system("write", path: sink.path, error)
        }
    }

    /// Sets or clears `O_DIRECT`; false when the file system refuses it (and then it is not asked again).
    private static func setDirect(_ sink: FileSink, _ on: Bool) -> Bool {
        if sink.direct == on { return true }
        if on && sink.directRefused { return false }
        if csystem_set_direct(sink.descriptor, on ? 1 : 0) == 0 {
            sink.direct = on
            return true
        }
        if on { sink.directRefused = true }
        return false
    }
}
