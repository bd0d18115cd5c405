import Glibc

/// A system error number, with the system's own text for it.
///
/// The corresponding C variable is `errno`; the text comes from `strerror`.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno` now.
    public static var current: Errno { Errno(rawValue: errno) }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let noEntry = Errno(rawValue: ENOENT)
    public static let exists = Errno(rawValue: EEXIST)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    public static let notConnected = Errno(rawValue: ENOTCONN)
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    public static let isDirectory = Errno(rawValue: EISDIR)
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// EPERM: what `open` reports for `O_NOATIME` on a file the process does not own.
    public static let notPermitted = Errno(rawValue: EPERM)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    /// ELOOP: what `O_NOFOLLOW` reports for a symbolic link at the name.
    public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    public static let tooManyOpenFilesInSystem = Errno(rawValue: ENFILE)

    /// `No such file or directory`.
    public var description: String { String(cString: strerror(rawValue)) }

    /// Lets `catch Errno.noEntry` and `case .noEntry` match by number.
    public static func ~= (pattern: Errno, error: any Error) -> Bool {
        (error as? Errno)?.rawValue == pattern.rawValue
    }
}

/// The one funnel for system calls that report failure as -1 and `errno`, as swift-system's
/// `valueOrErrno(retryOnInterrupt:)`: an interrupted call (EINTR) is made again, any other failure is thrown as
/// the `Errno` it set. Every module calls the kernel through it instead of writing its own EINTR loop.
///
/// ```swift
/// let count = try SystemCall.retrying { read(descriptor, buffer, size) }
/// ```
public enum SystemCall {
    /// Runs `body` and puts `errno` back as it was: what a signal handler wraps its work in, so that the code it
    /// interrupted (between a failed call and its read of `errno`) sees its own error, not the handler's
    /// `write(2)`'s. Async-signal-safe: it reads and writes the thread's `errno` and nothing else.
    ///
    /// ```swift
    /// let handler: @convention(c) (Int32) -> Void = { _ in
    ///     SystemCall.keepingErrno { _ = write(wake, &byte, 1) }
    /// }
    /// ```
    @inline(__always)
    public static func keepingErrno(_ body: () -> Void) {
        let saved = errno
        body()
        errno = saved
    }

    /// Calls `body` until it does not fail with EINTR (unless `retryOnInterrupt` is false); returns what it
    /// returned, or throws `errno` when it returned -1.
    @inline(__always)
    public static func retrying<Value: FixedWidthInteger>(
        retryOnInterrupt: Bool = true, _ body: () -> Value
    ) throws(Errno) -> Value {
        while true {
            let value = body()
            if value != -1 { return value }
            let error = Errno.current
            if retryOnInterrupt && error == .interrupted { continue }
            throw error
        }
    }

    /// Like `retrying`, for a wait that a signal should be able to end: after EINTR the call is made again
    /// unless `interrupted()` says the signal was one that ends the wait (Ctrl-C at the prompt), and then
    /// `.interrupted` is thrown.
    ///
    /// ```swift
    /// let ready = try SystemCall.retrying(stoppingWhen: { Interrupt.isPending }) { poll(&entries, 2, -1) }
    /// ```
    @inline(__always)
    public static func retrying<Value: FixedWidthInteger>(
        stoppingWhen interrupted: () -> Bool, _ body: () -> Value
    ) throws(Errno) -> Value {
        while true {
            let value = body()
            if value != -1 { return value }
            let error = Errno.current
            if error == .interrupted && !interrupted() { continue }
            throw error
        }
    }

    /// For calls that return the error number itself instead of setting `errno` (`pthread_*`, `clock_nanosleep`,
    /// `posix_fallocate`): 0 is success, EINTR is tried again, anything else is thrown.
    @inline(__always)
    public static func returningError(retryOnInterrupt: Bool = true, _ body: () -> Int32) throws(Errno) {
        while true {
            let result = body()
            if result == 0 { return }
            if retryOnInterrupt && result == EINTR { continue }
            throw Errno(rawValue: result)
        }
    }

    /// Writes all of `bytes` to `descriptor` (a partial write is followed by the rest, EINTR is retried);
    /// `flags` other than 0 use send(2) (MSG_NOSIGNAL for sockets).
    public static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, flags: Int32 = 0) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let written = try retrying {
                flags == 0
                    ? Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    : Glibc.send(descriptor, bytes.baseAddress! + offset, bytes.count - offset, flags)
            }
            offset += written
        }
    }

    /// Writes all of `bytes` to `descriptor` at `offset` with pwrite(2) (the file position does not move; a partial
    /// write is followed by the rest, EINTR is retried).
    public static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) throws(Errno) {
        var done = 0
        while done < bytes.count {
            done += try retrying {
                pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            }
        }
    }

    /// Reads into `buffer` until it is full or the file ends (read(2), or pread(2) from `offset` when one is
    /// given); returns how many bytes were read, less than the buffer's size only at the end of the file. EINTR is
    /// retried.
    ///
    /// ```swift
    /// let count = try SystemCall.readAll(descriptor, into: UnsafeMutableRawBufferPointer(buffer), at: 0)
    /// ```
    public static func readAll(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int? = nil
    ) throws(Errno) -> Int {
        var done = 0
        while done < buffer.count {
            let count = try retrying {
                offset.map { pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t($0 + done)) }
                    ?? Glibc.read(descriptor, buffer.baseAddress! + done, buffer.count - done)
            }
            if count == 0 { break }
            done += count
        }
        return done
    }

    /// Writes all of `text` (UTF-8) to `descriptor`.
    public static func writeAll(_ descriptor: Int32, _ text: String, flags: Int32 = 0) throws(Errno) {
        var failure: Errno?
        var text = text
        text.withUTF8 { buffer in
            do throws(Errno) { try writeAll(descriptor, UnsafeRawBufferPointer(buffer), flags: flags) } catch { failure = error }
        }
        if let failure { throw failure }
    }
}
