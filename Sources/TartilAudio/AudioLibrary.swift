import CALSA
import CMpg123

/// Facts about the audio libraries this build links (mpg123 for decoding, ALSA for sound).
public enum AudioLibrary {
    /// e.g. `mpg123 API 47, ALSA 1.2.8`.
    public static var versionDescription: String {
        let alsa = ALSAOutput.loadFailure ?? String(cString: snd_asoundlib_version())
        return "mpg123 API \(MPG123_API_VERSION), ALSA \(alsa)"
    }
}
