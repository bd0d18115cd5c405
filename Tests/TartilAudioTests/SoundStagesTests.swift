import Foundation
import TestSupport
import Testing

@testable import TartilAudio

/// Speed (libsonic) and volume (the gain stage and its limiter) on real decodes of a test tone.
@Suite struct SoundStagesTests {
    static let tools = ["/usr/bin/sox", "/usr/bin/lame"].allSatisfy(FileManager.default.isExecutableFile)

    /// A 440 Hz sine, 5 s, 22050 Hz mono, made with sox and encoded with lame, decoded by Mpg123Decoder.
    static func tone() throws -> (pcm: [Int16], format: PCMFormat) {
        let directory = NSTemporaryDirectory() + "tartil-tone-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = "sox -q -n -r 22050 -c 1 -b 16 '\(directory)/tone.wav' synth 5 sine 440 gain -6 && lame --quiet -b 64 '\(directory)/tone.wav' '\(directory)/tone.mp3'"
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let decoder = try Mpg123Decoder()
        try decoder.open(directory + "/tone.mp3")
        var pcm: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 4096)
        while true {
            let bytes = try chunk.withUnsafeMutableBytes { try decoder.read(into: $0) }
            if bytes == 0 { break }
            pcm += chunk[..<(bytes / 2)]
        }
        return (pcm, decoder.format)
    }

    /// The dominant frequency between 300 and 600 Hz: the strongest bin of a DFT at 1 Hz steps over the middle
    /// second (away from the edges). Each bin's power |Σ x[n]·e^(-iωn)|² comes from Goertzel's recurrence, which
    /// gives the same value as summing x[n]·cos(ωn) and x[n]·sin(ωn) with one multiply-add per sample instead of a
    /// sine and a cosine (the sums took some 30 s of this debug build's time over the five speeds).
    static func dominantFrequency(_ pcm: [Int16], rate: Int) -> Int {
        let middle = Array(pcm[(pcm.count / 2 - rate / 2)..<(pcm.count / 2 + rate / 2)]).map(Double.init)
        var best = (frequency: 0, power: 0.0)
        middle.withUnsafeBufferPointer { samples in
            for frequency in 300...600 {
                let coefficient = 2 * cos(2 * Double.pi * Double(frequency) / Double(rate))
                var (previous, beforeThat) = (0.0, 0.0)
                for sample in samples {
                    (previous, beforeThat) = (sample + coefficient * previous - beforeThat, previous)
                }
                let power = previous * previous + beforeThat * beforeThat - coefficient * previous * beforeThat
                if power > best.power { best = (frequency, power) }
            }
        }
        return best.frequency
    }

    /// Runs `pcm` through the stages in chunks as the audio thread does, flushing at the end.
    static func run(_ pcm: [Int16], format: PCMFormat, speed: Double, volume: Int = 100) throws -> [Int16] {
        let stages = SoundStages()
        try stages.configure(format)
        _ = try stages.setSpeed(speed)
        stages.volume = volume
        var out: [Int16] = []
        for start in stride(from: 0, to: pcm.count, by: 1024) {
            let chunk = Array(pcm[start..<min(pcm.count, start + 1024)])
            try chunk.withUnsafeBytes { out += try stages.process($0).assumingMemoryBound(to: Int16.self) }
        }
        out += try stages.flush().assumingMemoryBound(to: Int16.self)
        return out
    }

    @Test(.enabled(if: tools, "needs sox and lame (tools/install-deps)"), arguments: [0.5, 0.75, 1.25, 1.5, 2.0])
    func speedChangesTheLengthAndNotThePitch(speed: Double) throws {
        let (pcm, format) = try Self.tone()
        #expect(Self.dominantFrequency(pcm, rate: format.sampleRate) == 440)
        let out = try Self.run(pcm, format: format, speed: speed)
        let expected = Double(pcm.count) / speed
        #expect(abs(Double(out.count) - expected) <= Double(SpeedStretcher.blockFrames(sampleRate: format.sampleRate)))
        #expect(abs(Self.dominantFrequency(out, rate: format.sampleRate) - 440) <= 1)
    }

    @Test func atOneAndAHundredTheDecodePassesThroughUntouched() throws {
        let stages = SoundStages()
        try stages.configure(PCMFormat(sampleRate: 22050, channels: 1))
        let pcm: [Int16] = [0, 1, -1, 32767, -32768, 1234]
        try pcm.withUnsafeBytes { input in
            let out = try stages.process(input)
            #expect(out.baseAddress == input.baseAddress && out.count == input.count)
        }
        #expect(try stages.flush().count == 0)
    }

    @Test(arguments: [0, 5, 37, 50, 70, 99, 100, 101, 150])
    func gainBelowFullScaleIsExact(volume: Int) {
        let stage = GainStage(volume: volume)
        // Every sample whose gained value stays within full scale, including the halves (rounded away from 0).
        let limit = volume <= 100 ? 32767 : 32767 * 100 / volume
        var samples = (-limit...limit).map { Int16($0) }
        samples.withUnsafeMutableBufferPointer { stage.apply(to: $0, channels: 1, sampleRate: 22050) }
        for (index, value) in (-limit...limit).enumerated() {
            let exact = (Double(value) * Double(volume) / 100).rounded()  // x·v/100 is exact in a Double here
            if Double(samples[index]) != exact {
                Issue.record("\(value) at \(volume)%: \(samples[index]), not \(exact)")
                return
            }
        }
        #expect(!stage.hasLimited)
    }

    @Test func theLimiterEngagesSmoothlyAndNothingWraps() {
        let stage = GainStage(volume: 150)
        let rate = 22050
        // Quiet, then a full-scale square burst, then quiet again: 150 % would wrap the burst.
        var samples = [Int16](repeating: 1000, count: rate)
        for index in (rate / 2)..<(rate / 2 + 2000) { samples[index] = index % 20 < 10 ? 32767 : -32768 }
        let input = samples
        samples.withUnsafeMutableBufferPointer { stage.apply(to: $0, channels: 1, sampleRate: rate) }
        #expect(stage.hasLimited)
        for (index, sample) in samples.enumerated() {
            // Never flipped in sign (a wrap would), never beyond full scale.
            #expect(input[index] == 0 || (sample >= 0) == (input[index] >= 0), "sample \(index)")
            #expect(sample >= -32767)
        }
        // Well before the burst the gain is the volume exactly; during it, the peaks are at full scale at most.
        #expect(samples[1000] == 1500)
        let burst = samples[(rate / 2)..<(rate / 2 + 2000)].map { abs(Int($0)) }.max()!
        #expect(burst <= 32767 && burst > 30000)
        // The gain comes down over a couple of milliseconds before the burst, not in one step.
        let before = Int(GainStage.attackSeconds * Double(rate)) + 2
        #expect(samples[rate / 2 - before] == 1500)
        #expect(samples[rate / 2 - 1] < 1500 && samples[rate / 2 - 1] > 600)
    }
}
