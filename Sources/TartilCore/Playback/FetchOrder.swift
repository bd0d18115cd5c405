/// Which of the player's wanted files to ask the network for now. The files wanted are in the order they will
/// be heard; on a slow link the ones fetched together share the bandwidth (and, over HTTP/2, one connection), so
/// while the file needed now is missing it is fetched alone, and the files ahead follow once it is here. The
/// first sound then costs one file's transfer, not four.
public enum FetchOrder {
    /// The files to request now, in order: of `missing` (wanted files neither cached nor requested already),
    /// only the first wanted file until it has arrived, then all of them.
    ///
    /// - Parameters:
    ///   - wanted: the files wanted, the one needed now first.
    ///   - missing: the wanted files not in the cache and not requested yet.
    ///   - headArrived: whether the first wanted file is here (read from the cache, or failed for good: either
    ///     way nothing more is coming for it).
    public static func requests(wanted: [AyahRef], missing: Set<AyahRef>, headArrived: Bool) -> [AyahRef] {
        guard let head = wanted.first else { return [] }
        if !headArrived { return missing.contains(head) ? [head] : [] }
        var seen = Set<AyahRef>()
        return wanted.filter { missing.contains($0) && seen.insert($0).inserted }
    }
}
