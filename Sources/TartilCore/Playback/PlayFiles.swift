/// Which files playing some ayat needs: the one answer the plan, `prefetch`, eviction and `cache ls` share, so
/// that a surah prefetched, kept or listed as complete is one that plays offline.
///
/// Playing an ayah needs its own file; playing ayah 1 of a surah other than 1 and 9 also needs the basmala,
/// recited from the reciter's file for 1:1 (mirrors.json has no other basmala file).
///
/// ```swift
/// PlayFiles.needed(for: [AyahRef(112, 1), AyahRef(112, 2)])   // [1:1, 112:1, 112:2]
/// PlayFiles.needed(forSurah: 1)                                 // 1:1 … 1:7 (its first ayah is the basmala)
/// PlayFiles.missing(fromSurah: 36, cached: ayatOf36)             // [1:1]
/// ```
public enum PlayFiles {
    /// The file the basmala is recited from: the reciter's 1:1.
    public static let basmala = AyahRef(unchecked: 1, 1)

    /// Whether the basmala is recited before `ayah` with `setting`: before ayah 1 of every surah but 1 (whose
    /// first ayah is the basmala) and 9 (which has none), unless it is off.
    public static func hasBasmala(before ayah: AyahRef, _ setting: PlaybackOptions.Basmala = .auto) -> Bool {
        setting == .auto && ayah.ayah == 1 && ayah.surah != 1 && ayah.surah != 9
    }

    /// The file the basmala before ayah 1 of `surah` is recited from, for a reciter whose recordings are cut into
    /// `files`: 1:1, or (one file per surah) the surah's own basmala part.
    public static func basmala(ofSurah surah: Int, files: FileLayout) -> AyahRef {
        files == .surah ? AyahRef.basmalaPart(ofSurah: surah) : basmala
    }

    /// The files playing `ayat` needs, each once, in the order first needed: the basmala's file before an ayah
    /// 1 that has one, then the ayah's own.
    public static func needed(
        for ayat: some Sequence<AyahRef>, basmala setting: PlaybackOptions.Basmala = .auto, files layout: FileLayout = .ayah
    ) -> [AyahRef] {
        var seen = Set<AyahRef>()
        var files: [AyahRef] = []
        for ayah in ayat {
            if hasBasmala(before: ayah, setting) {
                let basmala = basmala(ofSurah: ayah.surah, files: layout)
                if seen.insert(basmala).inserted { files.append(basmala) }
            }
            if seen.insert(ayah).inserted { files.append(ayah) }
        }
        return files
    }

    /// The files playing the whole of `surah` needs (its ayat, and the basmala's file before it unless it is 1
    /// or 9). `surah` must be 1…114.
    public static func needed(forSurah surah: Int, basmala setting: PlaybackOptions.Basmala = .auto, files: FileLayout = .ayah) -> [AyahRef] {
        needed(for: (1...Catalog.surahs[surah - 1].ayahCount).map { AyahRef(unchecked: surah, $0) }, basmala: setting, files: files)
    }

    /// The files of `surah` that playing it offline needs and `cached` does not hold, in play order: empty when
    /// it plays offline.
    public static func missing(fromSurah surah: Int, cached: Set<AyahRef>, basmala setting: PlaybackOptions.Basmala = .auto) -> [AyahRef] {
        needed(forSurah: surah, basmala: setting).filter { !cached.contains($0) }
    }

    /// The files that keeping `ayat` playable needs kept (eviction spares them): `needed(for:)` with the basmala
    /// on, whatever the setting, since a later play may recite it.
    public static func kept(for ayat: some Sequence<AyahRef>, files: FileLayout = .ayah) -> Set<AyahRef> {
        Set(needed(for: ayat, basmala: .auto, files: files))
    }
}
