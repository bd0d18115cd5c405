import Dispatch
import Synchronization
import TartilCache
import TartilCore
import TartilNet

/// The lengths of ayat a reciter's table does not pin, learned as cheaply as they can be: exact where the cache
/// index remembers a decode, else estimated (`LengthEstimate`) from each file's size — on disk for cached files,
/// else from one ranged request per file (`HeadRequest`: its size and first 1 KiB) — with a cached file of the
/// reciter's, read whole, for what a file's first bytes do not show. `resolve --lengths` asks this; the player
/// does the same as it plays (`FileLoader`).
public enum UnpinnedLengths {
    /// One ayah's length, and whether it is still an estimate.
    public struct Length: Sendable, Hashable {
        public let samples: Int
        public let sampleRate: Int
        public let isEstimated: Bool

        public var seconds: Double { Double(samples) / Double(sampleRate) }
    }

    /// The lengths of `ayat` (those not found are left out). With `network` false, only the cache is read.
    public static func find(
        _ ayat: [AyahRef], reciter: Reciter, cacheDirectory: String, network: Bool, limits: DownloadLimits = DownloadLimits(),
        isCancelled: @escaping @Sendable () -> Bool = { false }
    ) throws(TartilError) -> [AyahRef: Length] {
        guard !ayat.isEmpty else { return [:] }
        var lengths: [AyahRef: Length] = [:]
        var sizes: [AyahRef: (bytes: Int, head: MPEGHead?)] = [:]
        var reference: MPEGHead?
        var missing: [AyahRef] = []
        do {
            let cache = try Cache(directory: cacheDirectory)
            let remembered = try cache.rememberedLengths(reciter: reciter.id)
            let files = try cache.files(reciter: reciter.id.rawValue).filter { !$0.isSymbolicLink }
            let cached = Dictionary(files.map { ($0.ayah, $0.bytes) }, uniquingKeysWith: { first, _ in first })
            // The reference: a file of the reciter's verified in the cache, read whole (its hash checked).
            for file in files.prefix(8) {
                guard let sha256 = file.recordedSHA256,
                    let bytes = try? cache.readVerified(reciter: reciter.id, ayah: file.ayah, expectation: .recorded(bytes: file.bytes, sha256: sha256))
                else { continue }
                let head = MPEGHead.parse([UInt8](bytes), isWholeFile: true)
                if head.frame != nil {
                    reference = head
                    break
                }
            }
            for ayah in ayat {
                if let length = remembered[ayah] {
                    lengths[ayah] = Length(samples: length.samples, sampleRate: length.sampleRate, isEstimated: false)
                } else if let bytes = cached[ayah] {
                    sizes[ayah] = (bytes, nil)
                } else {
                    missing.append(ayah)
                }
            }
        } catch {
            throw TartilError(.io, error.message)
        }
        if network && !missing.isEmpty {
            for head in try heads(of: missing, reciter: reciter, cacheDirectory: cacheDirectory, limits: limits, isCancelled: isCancelled) {
                sizes[head.ayah] = (head.bytes, MPEGHead.parse(head.first))
            }
        }
        for (ayah, size) in sizes {
            guard let estimate = LengthEstimate.samples(fileBytes: size.bytes, head: size.head, reference: reference) else { continue }
            lengths[ayah] = Length(samples: estimate.samples, sampleRate: estimate.rate, isEstimated: true)
        }
        return lengths
    }

    /// Asks the mirrors for each file's size and first bytes, and waits for every answer (or Ctrl-C).
    private static func heads(
        of ayat: [AyahRef], reciter: Reciter, cacheDirectory: String, limits: DownloadLimits, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> [FileHead] {
        let answers = Monitor<(heads: [FileHead], count: Int)>(([], 0))
        let downloader: Downloader
        do {
            downloader = try Downloader(
                cacheDirectory: cacheDirectory, limits: limits, validate: AudioValidation.validate, events: { _ in })
        } catch {
            throw TartilError(.io, error.message)
        }
        downloader.submit(heads: ayat.map { HeadRequest(reciter: reciter.id, ayah: $0, mirrors: reciter.mirrors) }) { _, head in
            answers.update { state in
                if let head { state.heads.append(head) }
                state.count += 1
            }
        }
        while !answers.wait(until: { $0.count >= ayat.count }, timeout: 0.2, then: { _, done in done }) {
            if isCancelled() {
                downloader.cancel()
                downloader.shutdown()
                throw TartilError(.interrupted, "interrupted while asking the mirrors for sizes")
            }
        }
        downloader.cancel()
        downloader.shutdown()
        return answers.read { $0.heads }
    }
}
