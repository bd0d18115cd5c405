/// The process's memory mappings as `/proc/PID/smaps` lists them, and which of them may give back the pages they
/// have resident (`isReleasable`): what a whole-Qur'an prefetch does once its start-up is over (`ResidentPages`).
///
/// Why: the kernel maps a file's pages 64 KiB at a time around each one touched ("fault-around"), so the start-up
/// (the loader's relocations and symbol lookups, the Swift runtime's first lookups, parsing the command, the table
/// and libraries' initialization) leaves most of tartil's 15 MB of code and its libraries' resident, while a
/// prefetch's steady state runs in a few hundred pages of it. Unmapping the clean, read-only file pages once lets
/// only what is used after that come back (measured: the binary's own 8.3 MiB to 4.7). `madvise(MADV_RANDOM)` does
/// not change fault-around (measured on Linux 6.18: still 64 KiB mapped per page touched).
public struct MemoryMapping: Sendable, Hashable {
    /// The first address.
    public var start: UInt
    /// One past the last address.
    public var end: UInt
    /// The permissions: `r`, `w` and `x` in smaps' `r-xp`.
    public var readable: Bool
    public var writable: Bool
    public var executable: Bool
    /// A private (copy-on-write) mapping, `p` in the permissions; `s` is shared.
    public var isPrivate: Bool
    /// The file mapped, or a pseudo-name (`[heap]`, `[stack]`, `[vdso]`), or "" for anonymous memory.
    public var path: String
    /// Resident pages, in KiB (`Rss:`).
    public var residentKiB: Int
    /// Of those, the anonymous ones (`Anonymous:`), in KiB: in a private file mapping, pages copied on write, such
    /// as data the loader relocated before making it read-only, which exist nowhere else.
    public var anonymousKiB: Int

    public init(
        start: UInt, end: UInt, readable: Bool, writable: Bool, executable: Bool, isPrivate: Bool, path: String,
        residentKiB: Int = 0, anonymousKiB: Int = 0
    ) {
        self.start = start
        self.end = end
        self.readable = readable
        self.writable = writable
        self.executable = executable
        self.isPrivate = isPrivate
        self.path = path
        self.residentKiB = residentKiB
        self.anonymousKiB = anonymousKiB
    }

    /// Whether its resident pages can be unmapped with no loss: a private mapping of a file (an absolute path),
    /// not writable, none of whose pages were copied on write. Each page unmapped is the page cache's, and a later
    /// access maps the same bytes again (a minor fault); a copied page (a debugger's breakpoint, data relocated
    /// before the loader made it read-only) would be lost, so a mapping holding any is left alone.
    public var isReleasable: Bool {
        isPrivate && !writable && readable && path.hasPrefix("/") && anonymousKiB == 0 && residentKiB > 0
    }
}

/// Reading `/proc/PID/smaps`, and when a prefetch gives back its start-up's pages.
public enum MemoryMappings {
    /// Whether a prefetch of `files` files gives back its start-up's pages (`ResidentPages`) before it downloads:
    /// from a few surahs' worth up. Reading `/proc/self/smaps` and unmapping (some 20 mappings, 80 once libcurl
    /// is loaded) takes a few milliseconds and the pages used again come back with minor faults, which a short
    /// prefetch would pay for nothing (its peak is its start-up).
    public static func releasesStartupPages(files: Int) -> Bool { files >= releasingFiles }

    /// The fewest files a prefetch gives back its start-up's pages for.
    public static let releasingFiles = 256

    /// The mappings in the text of `/proc/PID/smaps` (or `maps`, whose lines have no sizes). Lines that are
    /// neither a mapping's header nor a size this reads are skipped.
    ///
    /// ```swift
    /// let mappings = MemoryMappings.parse(smapsBytes)
    /// let ranges = mappings.filter(\.isReleasable)
    /// ```
    public static func parse(_ text: [UInt8]) -> [MemoryMapping] {
        // About 3,000 lines for tartil's 150 mappings: read in place, a field at a time, with no copies.
        text.withUnsafeBufferPointer { bytes in
            var mappings: [MemoryMapping] = []
            var lineStart = 0
            while lineStart < bytes.count {
                var lineEnd = lineStart
                while lineEnd < bytes.count && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
                let line = UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd])
                if let mapping = header(line) {
                    mappings.append(mapping)
                } else if !mappings.isEmpty, let (key, kib) = size(line) {
                    switch key {
                    case .resident: mappings[mappings.count - 1].residentKiB = kib
                    case .anonymous: mappings[mappings.count - 1].anonymousKiB = kib
                    }
                }
                lineStart = lineEnd + 1
            }
            return mappings
        }
    }

    /// The fields of `line` separated by spaces: the first `count - 1`, then the rest of the line (leading spaces
    /// dropped) as the last; fewer when the line has fewer.
    private static func fields(_ line: UnsafeBufferPointer<UInt8>, count: Int) -> [Range<Int>] {
        var fields: [Range<Int>] = []
        var index = 0
        while fields.count < count {
            while index < line.count && line[index] == UInt8(ascii: " ") { index += 1 }
            guard index < line.count else { break }
            if fields.count == count - 1 {
                fields.append(index..<line.count)
                break
            }
            let start = index
            while index < line.count && line[index] != UInt8(ascii: " ") { index += 1 }
            fields.append(start..<index)
        }
        return fields
    }

    /// `start-end perms offset dev inode [path]`, e.g. `55fd…-55fe… r-xp 00000000 fe:00 16531636   /usr/bin/x`.
    private static func header(_ line: UnsafeBufferPointer<UInt8>) -> MemoryMapping? {
        let fields = Self.fields(line, count: 6)
        guard fields.count >= 5, let dash = line[fields[0]].firstIndex(of: UInt8(ascii: "-")),
            let start = hex(line, fields[0].lowerBound..<dash), let end = hex(line, (dash + 1)..<fields[0].upperBound),
            start <= end, fields[1].count == 4, hex(line, fields[2]) != nil
        else { return nil }
        let permissions = fields[1].lowerBound
        func permission(_ offset: Int, _ letter: Unicode.Scalar) -> Bool {
            line[permissions + offset] == UInt8(ascii: letter)
        }
        var path = ""
        if fields.count > 5 {
            var last = fields[5].upperBound  // a line of maps may end in spaces
            while last > fields[5].lowerBound && line[last - 1] == UInt8(ascii: " ") { last -= 1 }
            let name = UnsafeBufferPointer(rebasing: line[fields[5].lowerBound..<last])
            path = String(decoding: name, as: UTF8.self)
        }
        return MemoryMapping(
            start: start, end: end, readable: permission(0, "r"), writable: permission(1, "w"),
            executable: permission(2, "x"), isPrivate: permission(3, "p"), path: path)
    }

    private enum SizeKey { case resident, anonymous }

    /// `Rss:   8420 kB` or `Anonymous:   0 kB`; nil for any other line.
    private static func size(_ line: UnsafeBufferPointer<UInt8>) -> (SizeKey, Int)? {
        let fields = Self.fields(line, count: 4)
        guard fields.count == 3, line[fields[2]].elementsEqual("kB".utf8) else { return nil }
        let key: SizeKey
        if line[fields[0]].elementsEqual("Rss:".utf8) {
            key = .resident
        } else if line[fields[0]].elementsEqual("Anonymous:".utf8) {
            key = .anonymous
        } else {
            return nil
        }
        let digits = line[fields[1]]
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        guard digits.count <= 18, digits.allSatisfy(isDigit) else { return nil }
        return (key, digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) })
    }

    /// A hexadecimal number (at most 16 digits) at `range` of `line`.
    private static func hex(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt? {
        guard !range.isEmpty, range.count <= 16 else { return nil }
        var value: UInt = 0
        for digit in line[range] {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value << 4 | UInt(digit - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = value << 4 | UInt(digit - UInt8(ascii: "a") + 10)
            default: return nil
            }
        }
        return value
    }
}
