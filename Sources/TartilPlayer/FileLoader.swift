import Glibc
import TartilAudio
import TartilCache
import TartilCore
import TartilNet

/// The player's loader thread: reads each wanted file from the cache with its hash re-checked, hands the bytes
/// to the audio thread, and asks the downloader (at playback priority) for files that are not cached yet.
/// Owns its `Cache` (and so its index connection) and the `Downloader`, which it starts only when a file is
/// missing (playing from a full cache starts no download threads).
final class FileLoader {
    private let setup: PlayerSetup
    private let mailbox: Monitor<Player.Mailbox>
    private var downloader: Downloader?
    private var cache: Cache?
    /// Files asked of the downloader (each once).
    private var requested: Set<AyahRef> = []
    private var seenVersion = -1

    init(setup: PlayerSetup, mailbox: Monitor<Player.Mailbox>) {
        self.setup = setup
        self.mailbox = mailbox
    }

    func run() {
        do {
            cache = try Cache(directory: setup.cacheDirectory)
        } catch {
            mailbox.update { $0.files = [:] }
        }
        while true {
            let (wanted, events, ended) = mailbox.wait(
                until: { [seenVersion] in $0.wantedVersion != seenVersion || !$0.downloadEvents.isEmpty || $0.audioEnded }
            ) { box in
                let taken = (box.wanted, box.downloadEvents, box.audioEnded)
                box.downloadEvents.removeAll()
                seenVersion = box.wantedVersion
                return taken
            }
            if ended { break }
            var failures: [AyahRef: String] = [:]
            for event in events {
                if case .failed(let ayah, let reason) = event { failures[ayah] = reason }
            }
            load(wanted, failures: failures)
        }
        downloader?.cancel()
        downloader?.shutdown()
        mailbox.update { $0.loaderEnded = true }
    }

    /// Makes each wanted file ready (or downloading, or failed), and lets go of the bytes of files no longer
    /// wanted.
    private func load(_ wanted: [AyahRef], failures: [AyahRef: String]) {
        let settled = mailbox.update { box in
            let before = box.files.count
            box.files = box.files.filter { key, state in
                if case .failed = state { return true }
                return wanted.contains(key)
            }
            var changed = box.files.count != before
            for (ayah, reason) in failures {
                box.files[ayah] = .failed(reason)
                changed = true
            }
            if changed { box.filesVersion += 1 }
            var settled = Set<AyahRef>()
            for (key, state) in box.files {
                if case .downloading = state { continue }
                settled.insert(key)
            }
            return settled
        }
        var missing: [AyahRef: FileExpectation] = [:]
        for ayah in wanted where !settled.contains(ayah) {
            let state: Player.FileState
            switch find(ayah) {
            case .found(let found):
                state = found
            case .missing(let expectation):
                if !requested.contains(ayah) { missing[ayah] = expectation }
                state = .downloading
            }
            mailbox.update { box in
                if case .downloading? = box.files[ayah], case .downloading = state { return }
                box.files[ayah] = state
                box.filesVersion += 1
            }
        }
        let headArrived = mailbox.read { box in
            switch wanted.first.flatMap({ box.files[$0] }) {
            case .ready?, .failed?: true
            case .downloading?, nil: false
            }
        }
        let order = FetchOrder.requests(wanted: wanted, missing: Set(missing.keys), headArrived: headArrived)
        guard !order.isEmpty else { return }
        do {
            try startedDownloader().submit(order.map { ayah in
                DownloadRequest(
                    reciter: setup.reciter.id, ayah: ayah, mirrors: setup.reciter.mirrors, expectation: missing[ayah]!,
                    priority: .playback)
            })
            requested.formUnion(order)
        } catch {
            mailbox.update { box in
                for ayah in order { box.files[ayah] = .failed(error.message) }
                box.filesVersion += 1
            }
        }
    }

    private func startedDownloader() throws(CacheError) -> Downloader {
        if let downloader { return downloader }
        let mailbox = self.mailbox
        let started = try Downloader(
            cacheDirectory: setup.cacheDirectory, limits: setup.limits, policy: setup.policy,
            validate: AudioValidation.validate, events: { event in mailbox.update { $0.downloadEvents.append(event) } })
        downloader = started
        return started
    }

    /// What the cache has of a wanted file.
    private enum Lookup {
        /// Ready (read and re-verified), or failed for good.
        case found(Player.FileState)
        /// Not in the cache (or removed as bad): it must be downloaded, and must match this.
        case missing(FileExpectation)
    }

    /// Looks a wanted file up in the cache.
    private func find(_ ayah: AyahRef) -> Lookup {
        guard let cache else { return .found(.failed("the cache at \(setup.cacheDirectory) cannot be opened")) }
        do {
            let expectation = try cache.expectation(
                reciter: setup.reciter.id, ayah: ayah, pinned: setup.table?.files[ayah], unpinnedLimit: setup.unpinnedLimit)
            if cache.hasFile(reciter: setup.reciter.id, ayah: ayah) {
                do {
                    let bytes = [UInt8](try cache.readVerified(reciter: setup.reciter.id, ayah: ayah, expectation: expectation))
                    guard setup.table?.files[ayah] == nil else { return .found(.ready(bytes, measured: nil)) }
                    do {
                        let (format, frames) = try Mpg123Decoder().countSamples(bytes: bytes, name: "\(ayah.fileStem).mp3")
                        return .found(.ready(bytes, measured: (frames, format.sampleRate)))
                    } catch {
                        return .found(.failed("\(ayah.fileStem).mp3 does not decode: \(error)"))
                    }
                } catch where error.code == .mismatch || error.code == .unvouched {
                    requested.remove(ayah)  // removed as bad, or not vouched for: fetch it again
                }
            }
            return .missing(expectation)
        } catch {
            return .found(.failed(error.message))
        }
    }
}

@available(*, unavailable) extension FileLoader: Sendable {}
