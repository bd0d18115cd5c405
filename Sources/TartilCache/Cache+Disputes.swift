import Glibc
import TartilCore
import TartilSystem

/// Unpinned ayat whose mirrors disagree with no majority (`SourceMark.disputed`): nothing is at the file's name,
/// so nothing plays; every copy is kept aside in the reciter's folder as `.SSSAAA.<sha256 prefix>.disputed.mp3`
/// (a hidden name that no listing, no player and no web server serving the cache takes for the ayah's file), and
/// the index records which mirror served which. `cache choose` makes one of them the ayah's file.
extension Cache {
    /// One mirror's copy of a disputed ayah.
    public struct DisputedCopy: Sendable, Hashable {
        /// The mirror's name in mirrors.json (or `cached copy` for a copy whose mirror was not recorded).
        public let mirror: String
        public let bytes: Int
        public let sha256: String
        /// Where it is kept aside.
        public let path: String

        /// Its size and SHA-256, as the cross-check names them.
        public var fingerprint: FileFingerprint { FileFingerprint(bytes: bytes, sha256: sha256) }
    }

    /// A disputed ayah and its copies.
    public struct Dispute: Sendable, Hashable {
        public let reciter: String
        public let ayah: AyahRef
        public let copies: [DisputedCopy]

        /// What every command says of it: the mirrors, and the command that settles it.
        public var message: String {
            CrossCheck.disputeMessage(
                ayah, reciter: reciter,
                copies: copies.map { ($0.mirror, $0.fingerprint) })
        }
    }

    /// The hidden name a disputed copy is kept under.
    static func asideName(_ ayah: AyahRef, sha256: String) -> String { ".\(ayah.fileStem).\(sha256.prefix(16)).disputed.mp3" }

    /// Keeps a disputed ayah's copies aside (`copies`: each mirror's whole file) and records the dispute. A file
    /// already at the ayah's name (a single-source copy compared again) is moved aside too, under the mirror it
    /// came from, unless that mirror's new answer is among `copies`. Call while holding the ayah's writer (its
    /// lock), so no other process writes the ayah meanwhile.
    public func setAside(_ copies: [(mirror: String, bytes: [UInt8])], reciter: ReciterID, ayah: AyahRef) throws(CacheError) {
        let folder = try folder(reciter.rawValue, create: true)!
        var rows: [(mirror: String, bytes: Int, sha256: String)] = []
        for copy in copies {
            let sha256 = try SHA256.hash(copy.bytes)
            try write(copy.bytes, as: Self.asideName(ayah, sha256: sha256), in: folder)
            rows.append((copy.mirror, copy.bytes.count, sha256))
        }
        let finalName = "\(ayah.fileStem).mp3"
        if let entry = try index.entry(reciter: reciter.rawValue, ayah: ayah), folder.status(finalName) != nil {
            let mirror = entry.source ?? "cached copy"
            if !rows.contains(where: { $0.mirror == mirror }) {
                try folder.rename(finalName, to: Self.asideName(ayah, sha256: entry.sha256))
                rows.append((mirror, entry.bytes, entry.sha256))
            } else {
                _ = try folder.remove(finalName)
            }
        } else if folder.status(finalName) != nil {
            _ = try folder.remove(finalName)  // nothing vouches for it: it is no copy of anyone's
        }
        try index.recordDispute(reciter: reciter.rawValue, ayah: ayah, copies: rows)
        try folder.sync()
    }

    /// The dispute over one ayah, if it is disputed.
    public func dispute(reciter: ReciterID, ayah: AyahRef) throws(CacheError) -> Dispute? {
        try disputes(reciter: reciter.rawValue, ayah: ayah).first
    }

    /// The disputed ayat (of one reciter, when given), in order.
    public func disputes(reciter: String?, ayah: AyahRef? = nil) throws(CacheError) -> [Dispute] {
        let rows = try index.disputes(reciter: reciter, ayah: ayah)
        var result: [Dispute] = []
        for row in rows {
            let copy = DisputedCopy(
                mirror: row.mirror, bytes: row.bytes, sha256: row.sha256,
                path: "\(directory)/\(row.reciter)/\(Self.asideName(row.ayah, sha256: row.sha256))")
            if let last = result.last, last.reciter == row.reciter, last.ayah == row.ayah {
                result[result.count - 1] = Dispute(reciter: last.reciter, ayah: last.ayah, copies: last.copies + [copy])
            } else {
                result.append(Dispute(reciter: row.reciter, ayah: row.ayah, copies: [copy]))
            }
        }
        return result
    }

    /// Makes the copy `mirror` served of a disputed ayah its file (checked again: its hash, and `validate`),
    /// recorded as `chosen` from that mirror, and removes the other copies and the dispute. Throws
    /// `.notChoosable` when the ayah is not disputed or no copy of that mirror is kept.
    @discardableResult
    public func choose(reciter: ReciterID, ayah: AyahRef, mirror: String, validate: (String) throws -> AudioLength?) throws(CacheError)
        -> DisputedCopy
    {
        guard let dispute = try dispute(reciter: reciter, ayah: ayah) else {
            throw CacheError(.notChoosable, "\(ayah) of \(reciter) is not disputed: there is nothing to choose")
        }
        guard let copy = dispute.copies.first(where: { $0.mirror == mirror }) else {
            throw CacheError(
                .notChoosable,
                "no copy of \(ayah) from a mirror named '\(mirror)' is kept; the copies are from: "
                    + dispute.copies.map(\.mirror).joined(separator: ", "))
        }
        let folder = try folder(reciter.rawValue, create: true)!
        guard let bytes = try folder.read(Self.asideName(ayah, sha256: copy.sha256)) else {
            throw CacheError(.notChoosable, "the copy of \(ayah) from \(mirror) is gone from \(copy.path)")
        }
        let sha256 = try SHA256.hash(bytes)
        guard sha256 == copy.sha256, bytes.count == copy.bytes else {
            throw CacheError(.notChoosable, "the copy of \(ayah) from \(mirror) at \(copy.path) changed since it was kept aside (sha256 \(sha256.prefix(16))…)")
        }
        let writer = try self.writer(reciter: reciter, ayah: ayah, expectation: .unknown(maxBytes: bytes.count))
        do throws(CacheError) {
            if writer.offset > 0 { try writer.restart() }
            let failure: CacheError? = bytes.withUnsafeBytes { buffer in
                do throws(CacheError) { try writer.append(buffer) } catch { return error }
                return nil
            }
            if let failure { throw failure }
            writer.require(sha256: copy.sha256)
            let outcome = try commit([PendingFile(writer: writer, reciter: reciter, ayah: ayah, mark: .chosen, source: mirror)], validate: validate)
            if case .failure(let error) = outcome[0] { throw error }
        } catch {
            writer.abandon(keepPartial: false)
            throw error
        }
        for other in dispute.copies { _ = try? folder.remove(Self.asideName(ayah, sha256: other.sha256)) }
        try index.removeDispute(reciter: reciter.rawValue, ayah: ayah)
        return copy
    }

    /// Writes `bytes` under `name` in `folder`: a temporary name, fsynced, renamed (a link at either name is
    /// removed, never followed).
    private func write(_ bytes: [UInt8], as name: String, in folder: CacheFolder) throws(CacheError) {
        let temporary = "\(name).\(getpid()).tmp"
        let descriptor = try folder.openFile(temporary, O_WRONLY | O_CREAT | O_TRUNC, removingLink: true, what: "a disputed copy")
        let failure: CacheError? = bytes.withUnsafeBytes { buffer in
            do throws(Errno) { try SystemCall.writeAll(descriptor, buffer) } catch {
                return CacheError.system("write", path: Path.join(folder.path, temporary), error)
            }
            return fsync(descriptor) == 0 ? nil : CacheError.system("fsync", path: Path.join(folder.path, temporary))
        }
        close(descriptor)
        if let failure {
            _ = try? folder.remove(temporary)
            throw failure
        }
        try folder.rename(temporary, to: name)
    }
}
