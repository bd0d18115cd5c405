extension Array where Element == String {
    /// The strings with `separator` between them, as `joined(separator:)` makes them. On the paths every start of
    /// tartil takes, this is used instead: the standard library's `joined` is generic over the sequence, and its
    /// first call looks up `Array<String>`'s element type at run time, a scan of every protocol conformance in the
    /// binary (about 120k instructions, and the pages it touches).
    public func joined(with separator: String) -> String {
        var text = ""
        for (index, string) in enumerated() {
            if index > 0 { text += separator }
            text += string
        }
        return text
    }
}
