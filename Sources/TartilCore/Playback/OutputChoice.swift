/// How the user chose the output: `--output alsa` (with `--device NAME`), `wav:PATH`, `null` or `silent`.
public enum OutputChoice: Sendable, Hashable, Codable, CustomStringConvertible {
    case alsa(device: String)
    case wav(path: String)
    case null
    case silent

    /// Parses `--output` (`alsa`, `wav:PATH`, `null`, `silent`); `device` is `--device` (ALSA's device name).
    public static func parse(_ text: String, device: String) -> OutputChoice? {
        if text == "alsa" { return .alsa(device: device) }
        if text == "null" { return .null }
        if text == "silent" { return .silent }
        if text.hasPrefix("wav:") && text.count > 4 { return .wav(path: String(text.dropFirst(4))) }
        return nil
    }

    /// The sinks named by a word alone (`wav:PATH` carries a path), for did-you-mean.
    public static let names = ["alsa", "null", "silent"]

    public static let forms =
        "alsa (the sound card; --device NAME picks the ALSA device), wav:PATH, null (discard as fast as decoded) or silent (discard in real time, like a sound card)"

    /// Whether positions played here go to the journal: not for ALSA's `null` device, which takes the sound
    /// as fast as it is decoded with nobody hearing it (the advice for machines without a sound card is
    /// `--output silent`, which keeps real time). `--output null` and `wav:` record them as they are written, for
    /// scripts and tests of the journal that need no real time.
    public var recordsPositions: Bool {
        if case .alsa(let device) = self, device == "null" { return false }
        return true
    }

    public var description: String {
        switch self {
        case .alsa(let device): "alsa:\(device)"
        case .wav(let path): "wav:\(path)"
        case .null: "null"
        case .silent: "silent"
        }
    }
}

