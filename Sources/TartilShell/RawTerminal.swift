import TartilSession
import Glibc
import Synchronization
import TartilCore
import TartilSystem

/// Standard input's terminal in raw mode (non-canonical, no echo; signals kept, so Ctrl-C and Ctrl-Z work) while
/// `tartil play` reads keys, and the way back on every way out: `leave()` (q, the end, Ctrl-C and SIGTERM, which
/// `Interrupt` turns into a flag the key loop sees), a crash signal (SIGSEGV, SIGILL, SIGABRT, SIGBUS, SIGFPE:
/// the handler restores the saved attributes, puts back the handler that was there before (the default, or
/// Swift's backtracer) and re-raises), and Ctrl-Z (SIGTSTP: restore, then stop; SIGCONT: raw again, and a redraw).
/// SIGWINCH sets a flag so the live line is redrawn for the new width.
///
/// The handlers only read memory set up before they were installed and call async-signal-safe functions
/// (`tcsetattr`, `sigaction`, `raise`, `write`).
enum RawTerminal {
    /// The attributes before raw mode, and raw mode's own: in memory of their own, read by the handlers.
    nonisolated(unsafe) private static let saved = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    nonisolated(unsafe) private static let raw = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    /// The handlers that were installed before `enter`, one per signal in `signals`, put back by `leave`.
    nonisolated(unsafe) private static let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: signals.count)
    private static let active = Atomic<Bool>(false)
    /// True while the terminal is in raw mode now: false while stopped by Ctrl-Z, and after `bg` (a background
    /// process that sets its terminal is stopped by SIGTTOU, so only a raw terminal is ever restored).
    private static let terminalIsRaw = Atomic<Bool>(false)
    private static let resized = Atomic<Bool>(false)
    private static let continued = Atomic<Bool>(false)
    private static let wakeWrite = Atomic<Int32>(-1)
    /// A self-pipe the SIGWINCH and SIGCONT handlers write to, so the key loop's poll wakes at once.
    private static let wakeDescriptors: (read: Int32, write: Int32) = SelfPipe.make()

    static let crashSignals: [Int32] = [SIGSEGV, SIGILL, SIGABRT, SIGBUS, SIGFPE]
    static let signals: [Int32] = crashSignals + [SIGTSTP, SIGCONT, SIGWINCH]

    /// A descriptor that becomes readable after SIGWINCH or SIGCONT (-1 if the pipe could not be made).
    static var wakeDescriptor: Int32 { wakeDescriptors.read }

    /// True while raw mode is on.
    static var isActive: Bool { active.load(ordering: .relaxed) }

    /// Whether the live line must be redrawn (the terminal was resized, or tartil came back from Ctrl-Z); clears
    /// the flags and empties the wake pipe.
    static func takeRedraw() -> Bool {
        var byte: UInt8 = 0
        while wakeDescriptors.read >= 0 && read(wakeDescriptors.read, &byte, 1) > 0 {}
        let resizedNow = resized.exchange(false, ordering: .relaxed)
        let continuedNow = continued.exchange(false, ordering: .relaxed)
        return resizedNow || continuedNow
    }

    /// Turns raw mode on for standard input, installing the handlers first. Throws (the terminal unchanged)
    /// when standard input's attributes cannot be read or set.
    static func enter() throws(TartilError) {
        guard !isActive else { return }
        guard tcgetattr(0, saved) == 0 else { throw failure("tcgetattr") }
        raw.pointee = saved.pointee
        raw.pointee.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.pointee.c_cc) { cells in
            cells[Int(VMIN)] = 1
            cells[Int(VTIME)] = 0
        }
        wakeWrite.store(wakeDescriptors.write, ordering: .relaxed)
        for (index, signal) in signals.enumerated() {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = handler(for: signal)
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            guard sigaction(signal, &action, previous + index) == 0 else {
                for restored in 0..<index { sigaction(signals[restored], previous + restored, nil) }
                throw failure("sigaction")
            }
        }
        // A parent may have started us with these signals blocked (the mask is inherited): unblock them, or
        // Ctrl-Z would be held pending and never stop tartil.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signal in [SIGTSTP, SIGCONT, SIGWINCH] { sigaddset(&unblock, signal) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        active.store(true, ordering: .relaxed)
        guard tcsetattr(0, TCSANOW, raw) == 0 else {
            let error = failure("tcsetattr")
            leave()
            throw error
        }
        terminalIsRaw.store(true, ordering: .relaxed)
    }

    /// Restores the terminal as it was and the handlers that were there before `enter`. Safe to call twice.
    static func leave() {
        guard active.exchange(false, ordering: .relaxed) else { return }
        if terminalIsRaw.exchange(false, ordering: .relaxed) {
            _ = try? SystemCall.retrying { tcsetattr(0, TCSANOW, saved) }
        }
        for index in signals.indices { sigaction(signals[index], previous + index, nil) }
    }

    private static func failure(_ call: String) -> TartilError {
        TartilError(
            .failure, "cannot set up the terminal for keys: \(call) failed: \(Errno.current)")
    }

    private static func handler(for signal: Int32) -> @convention(c) (Int32) -> Void {
        switch signal {
        case SIGTSTP:
            return { signal in
                SystemCall.keepingErrno {  // the interrupted code may be about to read errno
                    if RawTerminal.terminalIsRaw.exchange(false, ordering: .relaxed) {
                        _ = tcsetattr(0, TCSANOW, RawTerminal.saved)
                        _ = write(2, "\n", 1)
                    }
                    // Stop as SIGTSTP would have: the default action, unblocked (it is blocked in its own handler).
                    var stop = sigaction()
                    stop.__sigaction_handler.sa_handler = SIG_DFL
                    sigemptyset(&stop.sa_mask)
                    var ours = sigaction()
                    _ = sigaction(signal, &stop, &ours)
                    var unblock = sigset_t()
                    sigemptyset(&unblock)
                    sigaddset(&unblock, signal)
                    _ = pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
                    _ = raise(signal)
                    // Continued (`fg`): SIGCONT's handler made the terminal raw again; catch the next Ctrl-Z too.
                    _ = sigaction(signal, &ours, nil)
                }
            }
        case SIGCONT:
            return { _ in
                SystemCall.keepingErrno {  // the interrupted code may be about to read errno
                    // Raw again only in the foreground: a background process setting the terminal would be stopped.
                    if RawTerminal.active.load(ordering: .relaxed) && tcgetpgrp(0) == getpgrp()
                        && tcsetattr(0, TCSANOW, RawTerminal.raw) == 0
                    {
                        RawTerminal.terminalIsRaw.store(true, ordering: .relaxed)
                    }
                    RawTerminal.continued.store(true, ordering: .relaxed)
                    var byte: UInt8 = 1
                    _ = write(RawTerminal.wakeWrite.load(ordering: .relaxed), &byte, 1)
                }
            }
        case SIGWINCH:
            return { _ in
                SystemCall.keepingErrno {  // the interrupted code may be about to read errno
                    RawTerminal.resized.store(true, ordering: .relaxed)
                    var byte: UInt8 = 1
                    _ = write(RawTerminal.wakeWrite.load(ordering: .relaxed), &byte, 1)
                }
            }
        default:
            return { signal in
                SystemCall.keepingErrno {  // the interrupted code may be about to read errno
                    if RawTerminal.terminalIsRaw.exchange(false, ordering: .relaxed) {
                        _ = tcsetattr(0, TCSANOW, RawTerminal.saved)
                    }
                    // Put back the handler from before (the default action, or Swift's backtracer) and raise again:
                    // the signal is blocked in its handler, so it is delivered as this handler returns.
                    if let index = RawTerminal.signals.firstIndex(of: signal) {
                        _ = sigaction(signal, RawTerminal.previous + index, nil)
                    } else {
                        _ = Glibc.signal(signal, SIG_DFL)
                    }
                    _ = raise(signal)
                }
            }
        }
    }

    /// The width of the terminal on `descriptor`, in columns (nil when it is not a terminal or does not say).
    static func columns(of descriptor: Int32) -> Int? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
