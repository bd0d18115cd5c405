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
        for ayah in wanted where !settled.contains(ayah) {
            let state = loadOne(ayah)
            mailbox.update { box in
                if case .downloading? = box.files[ayah], case .downloading = state { return }
                box.files[ayah] = state
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

    /// The file's state.
    private func loadOne(_ ayah: AyahRef) -> Player.FileState {
        guard let cache else { return .failed("the cache at \(setup.cacheDirectory) cannot be opened") }
        do {
            let expectation = try cache.expectation(
                reciter: setup.reciter.id, ayah: ayah, pinned: setup.table?.files[ayah], unpinnedLimit: setup.unpinnedLimit)
            if cache.hasFile(reciter: setup.reciter.id, ayah: ayah) {
                do {
                    let bytes = [UInt8](try cache.readVerified(reciter: setup.reciter.id, ayah: ayah, expectation: expectation))
                    guard setup.table?.files[ayah] == nil else { return .ready(bytes, measured: nil) }
                    do {
                        let (format, frames) = try Mpg123Decoder().countSamples(bytes: bytes, name: "\(ayah.fileStem).mp3")
                        return .ready(bytes, measured: (frames, format.sampleRate))
                    } catch {
                        return .failed("\(ayah.fileStem).mp3 does not decode: \(error)")
                    }
                } catch where error.code == .mismatch || error.code == .unvouched {
                    requested.remove(ayah)  // removed as bad, or not vouched for: fetch it again
                }
            }
            if !requested.contains(ayah) {
                requested.insert(ayah)
                try startedDownloader().submit([
                    DownloadRequest(
                        reciter: setup.reciter.id, ayah: ayah, mirrors: setup.reciter.mirrors, expectation: expectation,
                        priority: .playback)
                ])
            }
            return .downloading
        } catch {
            return .failed(error.message)
        }
    }
}

@available(*, unavailable) extension FileLoader: Sendable {}
