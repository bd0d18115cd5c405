import Glibc
import TartilCore

/// A SHA-256 in progress whose updates run on the `HashingThread`. The downloading thread hands it bytes with
/// `HashingThread.append` and reads the digest only after `HashingThread.finish`, which waits for every chunk
/// handed over before it: the hasher is touched by one thread at a time, with the monitor's lock between them.
final class StreamingDigest: @unchecked Sendable {
    fileprivate let hasher: SHA256
    /// Sequence number of the last chunk handed over for this digest.
    fileprivate var lastChunk: UInt64 = 0
    /// The first update that failed, reported by `finish`.
    fileprivate var failure: CacheError?

    init() throws(CacheError) { hasher = try SHA256() }

    /// Hashes on the calling thread (a resumed partial file, read back before any chunk is handed over).
    func updateHere(_ bytes: UnsafeRawPointer, count: Int) throws(CacheError) {
        precondition(lastChunk == 0, "StreamingDigest.updateHere after chunks were handed to the hashing thread")
        try hasher.update(bytes, count: count)
    }
}

/// Hashes downloaded bytes on a thread of its own, so that the download thread only receives and writes.
/// Each byte is still hashed once, as it is written (no second pass over the file): `append` copies the bytes
/// into one of a few fixed slots (waiting while all are full, which bounds the memory to `slotCount ×
/// slotSize`), and the hashing thread updates the digest from there, in the order the chunks arrived.
final class HashingThread: Sendable {
    static let shared = HashingThread()

    private static let slotSize = 32 << 10
    private static let slotCount = 16

    private struct Chunk {
        let digest: StreamingDigest
        let slot: Int
        let count: Int
    }

    private struct State {
        var queue: [Chunk] = []
        var freeSlots: [Int] = Array(0..<HashingThread.slotCount)
        var handedOver: UInt64 = 0
        var hashed: UInt64 = 0
        /// Who is asleep, so that a change wakes threads only when one of them can go on.
        var hasherWaiting = 0
        var producersWaiting = 0
        var finishersWaiting = 0

        /// The hasher works in batches: when half the slots are full, or someone waits for it.
        var hasherHasWork: Bool {
            queue.count >= HashingThread.batch || (!queue.isEmpty && (producersWaiting > 0 || finishersWaiting > 0))
        }
    }

    /// Chunks the hashing thread takes at once (it sleeps until there are this many, or someone waits): a
    /// wake-up per 32 KiB chunk cost more than the hashing saved (measured: 350,000 futex calls for a Qur'an).
    private static let batch = 8

    private let state = Monitor(State())
    private nonisolated(unsafe) let slots: UnsafeMutableRawPointer

    private init() {
        slots = UnsafeMutableRawPointer.allocate(byteCount: Self.slotSize * Self.slotCount, alignment: 64)
        NativeThread.start(stackSize: 256 << 10) { [self] in run() }
    }

    /// Hands `count` bytes at `bytes` over to be added to `digest`; returns once they are copied.
    func append(_ bytes: UnsafeRawPointer, count: Int, to digest: StreamingDigest) {
        var offset = 0
        while offset < count {
            let length = min(Self.slotSize, count - offset)
            let slot = state.wait(until: { !$0.freeSlots.isEmpty }, countingIn: \.producersWaiting, wake: false) {
                $0.freeSlots.removeLast()
            }
            (slots + slot * Self.slotSize).copyMemory(from: bytes + offset, byteCount: length)
            state.update(wakeIf: { $0.hasherWaiting > 0 && $0.hasherHasWork }) { state in
                state.handedOver += 1
                digest.lastChunk = state.handedOver
                state.queue.append(Chunk(digest: digest, slot: slot, count: length))
            }
            offset += length
        }
    }

    /// Waits until every chunk handed over for `digest` is hashed, then returns the digest's 64 hex digits.
    func finish(_ digest: StreamingDigest) throws(CacheError) -> String {
        state.update(wakeIf: { $0.hasherWaiting > 0 }) { $0.finishersWaiting += 1 }
        let failure = state.wait(until: { $0.hashed >= digest.lastChunk }, wake: false) { box in
            box.finishersWaiting -= 1
            return digest.failure
        }
        if let failure { throw failure }
        return try digest.hasher.finalize()
    }

    private func run() {
        while true {
            let chunks = state.wait(until: \.hasherHasWork, countingIn: \.hasherWaiting, wake: false) { box in
                defer { box.queue.removeAll(keepingCapacity: true) }
                return box.queue
            }
            for chunk in chunks where chunk.digest.failure == nil {
                do {
                    try chunk.digest.hasher.update(slots + chunk.slot * Self.slotSize, count: chunk.count)
                } catch {
                    chunk.digest.failure = error
                }
            }
            state.update(wakeIf: { $0.producersWaiting > 0 || $0.finishersWaiting > 0 }) { state in
                state.freeSlots.append(contentsOf: chunks.map(\.slot))
                state.hashed += UInt64(chunks.count)
            }
        }
    }
}
