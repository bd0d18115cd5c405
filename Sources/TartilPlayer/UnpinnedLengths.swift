import Synchronization
import TartilCache
import TartilCore
import TartilNet
import TartilSystem

/// The lengths of ayat a reciter's table does not pin, learned as cheaply as they can be: exact where the cache
/// index remembers a decode, else estimated (`LengthEstimate`) from each file's size — on disk for cached files,
/// else from one ranged request per file (`HeadRequest`: its size and first 1 KiB) — with a cached file of the
/// reciter's, read whole, for what a file's first bytes do not show. `resolve --lengths` asks this; the player
/// does the same as it plays (`FileLoader`).
public enum UnpinnedLengths {
    /// What the cache tells of some files' lengths: `exact` where the index remembers a decode, the `sizes` of
    /// the other cached files, and the files (`missing`) whose sizes must be asked of a mirror; in `ayat`'s order.
    struct Known {
        var exact: [AyahRef: Timeline.Length] = [:]
        var sizes: [AyahRef: (bytes: Int, head: MPEGHead?)] = [:]
        var missing: [AyahRef] = []
    }

    /// Sorts `ayat` by what `cache` knows of their lengths.
    static func known(_ ayat: [AyahRef], reciter: ReciterID, cache: Cache) throws(CacheError) -> Known {
        let remembered = try cache.rememberedLengths(reciter: reciter)
        let cached = Dictionary(
            try cache.files(reciter: reciter.rawValue).filter { !$0.isSymbolicLink }.map { ($0.ayah, $0.bytes) },
            uniquingKeysWith: { first, _ in first })
        var known = Known()
        for ayah in ayat {
            if let length = remembered[ayah] {
                known.exact[ayah] = Timeline.Length(samples: length.samples, rate: length.sampleRate)
            } else if let bytes = cached[ayah] {
                known.sizes[ayah] = (bytes, nil)
            } else {
                known.missing.append(ayah)
            }
        }
        return known
    }

    /// The lengths `LengthEstimate` gives for files of these sizes (and first bytes), beside `reference`, a whole
    /// file of the reciter's; files it cannot estimate are left out.
    static func estimates(_ sizes: [AyahRef: (bytes: Int, head: MPEGHead?)], reference: MPEGHead?) -> [AyahRef: Timeline.Length] {
        var lengths: [AyahRef: Timeline.Length] = [:]
        for (ayah, size) in sizes {
            guard let estimate = LengthEstimate.samples(fileBytes: size.bytes, head: size.head, reference: reference) else { continue }
            lengths[ayah] = Timeline.Length(samples: estimate.samples, rate: estimate.rate, isEstimated: true)
        }
        return lengths
    }

    /// The lengths of `ayat` (those not found are left out). With `network` false, only the cache is read.
    public static func find(
        _ ayat: [AyahRef], reciter: Reciter, cacheDirectory: String, network: Bool, limits: DownloadLimits = DownloadLimits(),
        isCancelled: @escaping @Sendable () -> Bool = { false }
    ) throws(TartilError) -> [AyahRef: Timeline.Length] {
        guard !ayat.isEmpty else { return [:] }
        var known: Known
        var reference: MPEGHead?
        do {
            let cache = try Cache(directory: cacheDirectory)
            known = try Self.known(ayat, reciter: reciter.id, cache: cache)
            let files = try cache.files(reciter: reciter.id.rawValue).filter { !$0.isSymbolicLink }
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
        } catch {
            throw TartilError(.io, error.message)
        }
        if network && !known.missing.isEmpty {
            for head in try heads(of: known.missing, reciter: reciter, cacheDirectory: cacheDirectory, limits: limits, isCancelled: isCancelled) {
                known.sizes[head.ayah] = (head.bytes, MPEGHead.parse(head.first))
            }
        }
        return known.exact.merging(estimates(known.sizes, reference: reference)) { exact, _ in exact }
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
