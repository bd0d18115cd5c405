import CCrypto
import Glibc
import TartilCore
import TartilSystem

/// A streaming SHA-256 over libcrypto's `SHA256_*` functions (libcrypto uses the CPU's SHA extensions where present).
///
/// ```swift
/// let hasher = try SHA256()
/// try hasher.update(chunk)
/// let hex = try hasher.finalize()   // 64 lowercase hex digits
/// ```
/// The corresponding C functions are `SHA256_Init`, `SHA256_Update` and `SHA256_Final`, linked from libcrypto's
/// static archive (see CCrypto.h): the same code as EVP's SHA-256 without its provider layer, whose first use
/// (openssl.cnf read, default provider started, method fetched) cost a one-ayah play about 5 million instructions,
/// a tenth of its whole run.
/// An instance is confined to one thread at a time.
public final class SHA256 {
    private let context: UnsafeMutablePointer<SHA256_CTX>
    private var finished = false

    public init() throws(CacheError) {
        context = .allocate(capacity: 1)
        guard ccrypto_sha256_init(context) == 1 else {
            context.deallocate()
            throw CacheError(.crypto, "SHA256_Init failed")
        }
    }

    deinit { context.deallocate() }

    /// Adds `count` bytes at `bytes` to the digest.
    public func update(_ bytes: UnsafeRawPointer, count: Int) throws(CacheError) {
        precondition(!finished, "SHA256.update after finalize")
        guard ccrypto_sha256_update(context, bytes, count) == 1 else {
            throw CacheError(.crypto, "SHA256_Update failed")
        }
    }

    /// Adds `buffer` to the digest.
    public func update(_ buffer: UnsafeRawBufferPointer) throws(CacheError) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        try update(base, count: buffer.count)
    }

    /// Adds `bytes` to the digest.
    public func update(_ bytes: [UInt8]) throws(CacheError) {
        // withUnsafeBytes rethrows untyped errors, so the typed one is carried out by hand.
        var failure: CacheError?
        bytes.withUnsafeBytes { buffer in
            do throws(CacheError) { try update(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Ends the digest and returns it as 64 lowercase hex digits. The hasher cannot be used afterwards.
    public func finalize() throws(CacheError) -> String {
        precondition(!finished, "SHA256.finalize called twice")
        finished = true
        var digest = [UInt8](repeating: 0, count: 32)
        guard ccrypto_sha256_final(&digest, context) == 1 else {
            throw CacheError(.crypto, "SHA256_Final failed")
        }
        return SHA256Digest(bytes: digest)!.hex
    }

    /// SHA-256 of `buffer`.
    public static func hash(_ buffer: UnsafeRawBufferPointer) throws(CacheError) -> String {
        let hasher = try SHA256()
        try hasher.update(buffer)
        return try hasher.finalize()
    }

    /// SHA-256 of `bytes` (an array's, or part of one), without copying them.
    public static func hash(bytes: ArraySlice<UInt8>) throws(CacheError) -> String {
        // withUnsafeBytes rethrows untyped errors, so the typed one is carried out by hand.
        var result: Result<String, CacheError> = .failure(CacheError(.crypto, "not hashed"))
        bytes.withUnsafeBytes { buffer in result = Result { () throws(CacheError) -> String in try hash(buffer) } }
        return try result.get()
    }

    /// SHA-256 of `bytes`.
    public static func hash(_ bytes: [UInt8]) throws(CacheError) -> String { try hash(bytes: bytes[...]) }

    /// SHA-256 and size of the file at `path`, read in 1 MiB blocks with one pass. With `followingLinks: false`
    /// a symbolic link at `path` is refused (`.symbolicLink`), as the cache's own files are read.
    public static func hash(fileAt path: String, followingLinks: Bool = true) throws(CacheError) -> (sha256: String, bytes: Int) {
        // Checking a cached file is not playing it: its access time is left as it is.
        let descriptor = UntouchedReads.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followingLinks ? 0 : O_NOFOLLOW))
        if descriptor < 0 && Errno.current == .tooManySymbolicLinks && !followingLinks { throw CacheError.symbolicLink(path, what: "a cached file") }
        guard descriptor >= 0 else { throw CacheError.system("open", path: path) }
        defer { close(descriptor) }
        let hasher = try SHA256()
        let blockSize = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: blockSize, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        while true {
            let count: Int
            do throws(Errno) { count = try SystemCall.retrying { read(descriptor, buffer, blockSize) } } catch {
                throw CacheError.system("read", path: path, error)
            }
            if count == 0 { break }
            try hasher.update(buffer, count: count)
            total += count
        }
        return (try hasher.finalize(), total)
    }

    /// The libcrypto SHA-256 is linked from, e.g. `OpenSSL 3.0.19 27 Jan 2026 (SHA-256 linked in)`: the version
    /// tartil was built with, which TLS's shared libcrypto (libcurl's line) may have moved past since.
    public static var libraryVersion: String { String(cString: ccrypto_version()) + " (SHA-256 linked in)" }
}

@available(*, unavailable) extension SHA256: Sendable {}

/// The shared libcrypto.so.3 that libcurl's TLS loads (SHA-256 does not use it: see CCrypto.h).
public enum SharedLibcrypto {
    /// Loads libcrypto.so.3 and initializes it without its exit handler, before libcurl loads it. By default
    /// OpenSSL frees its global state in an `atexit` handler, while tartil's other threads may still be running
    /// (the writing threads, a player's threads) or ending, and a thread that ends frees its OpenSSL thread-local
    /// state: the two raced and crashed about one `render` in 150 at exit (`malloc_consolidate(): invalid chunk
    /// size`). The process's memory goes back to the system at exit anyway. A libcrypto that cannot be loaded is
    /// left to libcurl's own load to report.
    public static func prepare() { _ = prepared }

    private static let prepared: Void = { _ = ccrypto_prepare_shared() }()
}
