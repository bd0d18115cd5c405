/// A random (version 4) UUID as lowercase text, `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx` (y: 8, 9, a or b): what
/// `UUID().uuidString.lowercased()` gives, from the system's random source (getrandom(2)), without Foundation.
/// Journal events and devices are named by these.
public enum RandomUUID {
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return make(using: &generator)
    }

    /// One made from `generator`'s bytes (for tests, a seeded one).
    public static func make(using generator: inout some RandomNumberGenerator) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        for half in 0..<2 {
            let word = generator.next()
            for index in 0..<8 { bytes[half * 8 + index] = UInt8(truncatingIfNeeded: word >> (8 * index)) }
        }
        bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80  // the RFC 4122 variant
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
