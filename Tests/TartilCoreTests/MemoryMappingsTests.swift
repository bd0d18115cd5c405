import TestSupport
import Testing

@testable import TartilCore

/// Which mappings a long prefetch unmaps after its start-up: only pages that exist in the page cache as they are.
@Suite struct MemoryMappingsTests {
    /// Lines as Linux 6.18 writes them in /proc/PID/smaps (sizes shortened to the ones read, plus a few others).
    static let smaps = """
        55fde4b79000-55fde5a62000 r-xp 00000000 fe:00 16531636                   /usr/bin/tartil
        Size:              15268 kB
        Rss:                8420 kB
        Anonymous:             0 kB
        VmFlags: rd ex mr mw me
        55fde5a63000-55fde5abd000 r--p 00ee9000 fe:00 16531636                   /usr/bin/tartil
        Rss:                 360 kB
        Anonymous:           360 kB
        55fde5abd000-55fde5ce0000 rw-p 00f43000 fe:00 16531636                   /usr/bin/tartil
        Rss:                1224 kB
        Anonymous:           192 kB
        55fe12745000-55fe128e1000 rw-p 00000000 00:00 0                          [heap]
        Rss:                1512 kB
        Anonymous:          1512 kB
        7f1084000000-7f108446a000 rw-p 00000000 00:00 0 
        Rss:                4516 kB
        Anonymous:          4516 kB
        7f1092400000-7f10924c5000 r--p 00000000 fe:00 333177                     /usr/lib/x86_64-linux-gnu/libcrypto.so.3
        Rss:                 788 kB
        AnonHugePages:         0 kB
        Anonymous:             0 kB
        7f10924c5000-7f1092742000 r-xp 000c5000 fe:00 333177                     /usr/lib/x86_64-linux-gnu/libcrypto.so.3
        Rss:                   0 kB
        Anonymous:             0 kB
        7f1092800000-7f1092900000 r--s 00000000 fe:00 42                         /tmp/shared memory file
        Rss:                  64 kB
        Anonymous:             0 kB
        7ffd1c5f1000-7ffd1c5f3000 r-xp 00000000 00:00 0                          [vdso]
        Rss:                   8 kB
        Anonymous:             0 kB
        not a mapping line
        Rss: 12 MB

        """

    @Test func readsHeadersAndSizes() {
        let mappings = MemoryMappings.parse(Array(Self.smaps.utf8))
        #expect(mappings.count == 9)
        let text = mappings[0]
        #expect(text.start == 0x55fd_e4b7_9000 && text.end == 0x55fd_e5a6_2000)
        #expect(text.readable && !text.writable && text.executable && text.isPrivate)
        #expect(text.path == "/usr/bin/tartil")
        #expect(text.residentKiB == 8420 && text.anonymousKiB == 0)
        #expect(mappings[4].path == "" && mappings[4].anonymousKiB == 4516)
        #expect(mappings[3].path == "[heap]")
        // A path with spaces is kept whole; `AnonHugePages` is not `Anonymous`; a line in another unit is skipped.
        #expect(mappings[7].path == "/tmp/shared memory file" && !mappings[7].isPrivate)
        #expect(mappings[5].anonymousKiB == 0 && mappings[5].residentKiB == 788)
        #expect(mappings[8].residentKiB == 8)
    }

    @Test func onlyCleanReadOnlyPrivateFilePagesAreReleasable() {
        let mappings = MemoryMappings.parse(Array(Self.smaps.utf8))
        let releasable = mappings.filter(\.isReleasable).map { "\($0.path) \($0.start)" }
        // The binary's code and libcrypto's headers: yes. Relocated RELRO data (copied pages), writable data, the
        // heap and anonymous memory, a shared mapping, the vdso, a mapping with nothing resident: no.
        #expect(releasable == ["/usr/bin/tartil \(0x55fd_e4b7_9000)", "/usr/lib/x86_64-linux-gnu/libcrypto.so.3 \(0x7f10_9240_0000)"])
    }

    @Test func malformedLinesAreSkipped() {
        for line in ["", "-", "zz-10 r-xp 00000000 fe:00 1 /x", "10-20 r-x 00000000 fe:00 1 /x", "20-10 r-xp 0 fe:00 1 /x",
                     "10-20 r-xp 0g fe:00 1 /x", "10000000000000000-20 r-xp 0 fe:00 1 /x", "Rss: 12 kB", "Rss: x kB"] {
            #expect(MemoryMappings.parse(Array(line.utf8)).isEmpty, "\(line)")
        }
        let sized = MemoryMappings.parse(Array("10-20 r-xp 0 fe:00 1 /x\nRss: 99999999999999999999 kB\nRss: 4 kB\n".utf8))
        #expect(sized.count == 1 && sized[0].residentKiB == 4)
    }

    @Test func onlyLongPrefetchesReleaseTheirStartupPages() {
        #expect(!MemoryMappings.releasesStartupPages(files: 7))
        #expect(!MemoryMappings.releasesStartupPages(files: MemoryMappings.releasingFiles - 1))
        #expect(MemoryMappings.releasesStartupPages(files: MemoryMappings.releasingFiles))
        #expect(MemoryMappings.releasesStartupPages(files: 6236))
    }
}
