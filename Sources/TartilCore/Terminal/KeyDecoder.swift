/// A key pressed at a terminal, as `KeyDecoder` reads it from the bytes of standard input in raw mode.
public enum Key: Sendable, Hashable {
    /// A printable ASCII character (space to `~`).
    case character(Character)
    case up, down, left, right
}

/// Turns the bytes a terminal sends in raw mode into keys: printable ASCII, and the arrows as `ESC [ A…D` (normal
/// cursor mode) or `ESC O A…D` (application mode). A sequence split across reads is completed by the next read;
/// anything else (other escape sequences, control bytes, bytes of non-ASCII characters) is passed over. Pure: no
/// I/O, bounded memory, and the keys never depend on how the bytes were split into reads.
///
/// ```swift
/// var decoder = KeyDecoder()
/// decoder.feed([0x20, 0x1B, 0x5B])   // [.character(" ")]: ESC [ waits for its final byte
/// decoder.feed([0x43])               // [.right]
/// ```
public struct KeyDecoder: Sendable, Hashable {
    /// Where the decoder is within an escape sequence.
    enum Phase: Sendable, Hashable {
        case ground
        /// After ESC.
        case escape
        /// After `ESC [`, with the parameter and intermediate bytes so far (at most `maximumParameters`).
        case csi(parameters: [UInt8])
        /// After `ESC O`.
        case ss3
    }

    /// The longest run of CSI parameter bytes kept; a longer sequence is abandoned (its bytes are passed over
    /// until its final byte).
    public static let maximumParameters = 16

    private(set) var phase: Phase = .ground
    /// True while passing over the rest of an over-long CSI sequence.
    private var skippingCSI = false

    public init() {}

    /// True when bytes of an unfinished escape sequence are held.
    public var isPending: Bool { phase != .ground || skippingCSI }

    /// Decodes `bytes`, keeping an unfinished escape sequence for the next call.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Key] {
        var keys: [Key] = []
        for byte in bytes {
            if let key = take(byte) { keys.append(key) }
        }
        return keys
    }

    /// Input stopped with an escape sequence unfinished: it was a lone Esc (or cut short), and is dropped.
    public mutating func idle() {
        phase = .ground
        skippingCSI = false
    }

    private mutating func take(_ byte: UInt8) -> Key? {
        if skippingCSI {
            if (0x40...0x7E).contains(byte) { skippingCSI = false }
            // A new ESC starts a new sequence even inside a broken one.
            if byte == 0x1B {
                skippingCSI = false
                phase = .escape
            }
            return nil
        }
        switch phase {
        case .ground:
            if byte == 0x1B {
                phase = .escape
                return nil
            }
            return (0x20...0x7E).contains(byte) ? .character(Character(Unicode.Scalar(byte))) : nil
        case .escape:
            switch byte {
            case UInt8(ascii: "["): phase = .csi(parameters: [])
            case UInt8(ascii: "O"): phase = .ss3
            case 0x1B: phase = .escape  // the first ESC was a lone Esc
            default: phase = .ground  // Alt+key, or an escape sequence tartil does not use: passed over
            }
            return nil
        case .csi(var parameters):
            if (0x20...0x3F).contains(byte) {
                guard parameters.count < Self.maximumParameters else {
                    phase = .ground
                    skippingCSI = true
                    return nil
                }
                parameters.append(byte)
                phase = .csi(parameters: parameters)
                return nil
            }
            phase = .ground
            if byte == 0x1B {
                phase = .escape  // a broken sequence, and a new one starting
                return nil
            }
            // A final byte (0x40-0x7E) ends the sequence; anything else breaks it. Only plain arrows (no
            // modifiers: no parameters, or just "1") are keys.
            guard parameters.isEmpty || parameters == [UInt8(ascii: "1")] else { return nil }
            return Self.arrow(byte)
        case .ss3:
            phase = .ground
            if byte == 0x1B {
                phase = .escape
                return nil
            }
            return Self.arrow(byte)
        }
    }

    private static func arrow(_ final: UInt8) -> Key? {
        switch final {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return .right
        case UInt8(ascii: "D"): return .left
        default: return nil
        }
    }
}
