extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes: a plain search for a short needle (a key in a reply line, a PEM
    /// marker in a file), over the bytes themselves. `String.contains(_:)` would take the standard library's
    /// generic string searching, whose first use in a process costs about 300,000 instructions.
    public func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard count >= needle.count else { return false }
        return withUnsafeBufferPointer { haystack in
            needle.withUnsafeBufferPointer { needle in
                let first = needle[0]
                for start in 0...(haystack.count - needle.count) where haystack[start] == first {
                    var matched = 1
                    while matched < needle.count && haystack[start + matched] == needle[matched] { matched += 1 }
                    if matched == needle.count { return true }
                }
                return false
            }
        }
    }
}
