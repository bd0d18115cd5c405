import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// How far before its ayah a part's byte range may start (`PrerollSearch`), and how far the bit reservoir reaches
/// (`MPEGStream.FrameIndex.reservoirReach`).
@Suite struct PrerollSearchTests {
    @Test(arguments: [
        // (first frame, reservoir reach, the candidates)
        (0, 0, [0]),
        (1, 1, [0, 1]),
        (5, 3, [0, 1, 2, 3, 4, 5]),  // near the stream's start: every frame back to it
        (64, 9, Array(0...64)),
        (65, 9, Array(0...65)),  // 64, then the stream's start
        (1000, 9, Array(0...64) + [128, 256, 512, 1000]),
        (1024, 9, Array(0...64) + [128, 256, 512, 1024]),
        (1000, 86, Array(0...102) + [204, 408, 816, 1000]),  // a reservoir reaching 86 frames back, and the margin
        (90, 86, Array(0...90)),
    ] as [(Int, Int, [Int])])
    func candidates(first: Int, reach: Int, expected: [Int]) {
        #expect(PrerollSearch.candidates(firstFrame: first, reach: reach) == expected)
    }

    /// Any first frame and reach: strictly increasing from 0 to the stream's start (the candidate that always
    /// decodes exactly), every preroll tried up to 64 frames and the reservoir's reach and margin, at most
    /// doubling after that, and so a count of the linear part and a logarithm of the rest.
    @Test func seededCandidates() {
        var random = SeededRandom(seed: 25)
        for _ in 0..<5000 {
            let first = random.below(4) == 0 ? random.below(100) : random.below(1 << 22)
            let reach = random.below(min(first, 600) + 1)
            let candidates = PrerollSearch.candidates(firstFrame: first, reach: reach)
            #expect(candidates.first == 0 && candidates.last == first, "\(first) \(reach)")
            #expect(zip(candidates, candidates.dropFirst()).allSatisfy { $0 < $1 }, "\(first) \(reach)")
            let linear = min(first, max(PrerollSearch.linearFrames, reach + PrerollSearch.margin))
            #expect(Array(candidates.prefix(linear + 1)) == Array(0...linear), "\(first) \(reach)")
            #expect(zip(candidates, candidates.dropFirst()).allSatisfy { $0 == 0 || $1 <= 2 * $0 }, "\(first) \(reach)")
            #expect(candidates.count <= linear + 2 + (first > 0 ? Int(log2(Double(first))) : 0), "\(first) \(reach): \(candidates.count)")
        }
    }

    /// MPEG-2 frames of 24 bytes (8 kbit/s at 24 kHz, stereo: 17 bytes of side information, so 3 of main data):
    /// 255 bytes of reservoir are 85 frames, and the frame before: 86, more than the 64 frames a range could once
    /// start before its ayah. Near the stream's start, the reach is the start.
    @Test func theReservoirOfSmallFramesReachesFarBack() throws {
        let header: [UInt8] = [0xFF, 0xF3, 0x14, 0x00]  // MPEG-2 layer III, no CRC, 8 kbit/s, 24000 Hz, stereo
        let frame = try #require(MPEGHead.Frame(header[0], header[1], header[2], header[3]))
        #expect(frame.bytes == 24 && frame.mainDataBytes == 3 && frame.maximumBackstep == 255)
        let bytes = Array((0..<300).map { _ in header + [UInt8](repeating: 0, count: 20) }.joined())
        let index = try MPEGStream.frameIndex(of: bytes).get()
        #expect(index.count == 300)
        #expect(index.reservoirReach(before: 200, in: bytes) == 86)
        #expect(index.reservoirReach(before: 50, in: bytes) == 50)
        #expect(index.reservoirReach(before: 0, in: bytes) == 0)
        #expect(index.reservoirReach(before: 300, in: bytes) == nil)
        #expect(PrerollSearch.candidates(firstFrame: 200, reach: 86).contains(86 + PrerollSearch.margin))
    }

    /// On every fixture (MPEG-1 and 2 and 2.5, mono and stereo, CBR and VBR, with a CRC or not), the reach of each
    /// frame is what the frames' headers give, counted back one by one from a walk of every frame.
    @Test(arguments: MPEGStreamTests.names)
    func theReachIsTheFramesMainDataCountedBack(name: String) throws {
        let bytes = try MPEGStreamTests.fixture(name)
        let index = try MPEGStream.frameIndex(of: bytes).get()
        let frames = try (0..<index.count).map { frame in
            let offset = try #require(index.offset(of: frame, in: bytes))
            return try #require(MPEGHead.Frame(bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3]))
        }
        for frame in 0..<index.count {
            var reach = min(frame, 1)
            var held = 0
            var back = frame - 2
            while back >= 0, held < frames[0].maximumBackstep {
                held += frames[back].mainDataBytes
                reach += 1
                back -= 1
            }
            #expect(index.reservoirReach(before: frame, in: bytes) == reach, "\(name) frame \(frame)")
        }
    }
}
