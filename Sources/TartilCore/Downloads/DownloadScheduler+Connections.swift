/// What the scheduler decides about connections rather than files: HTTP/1.1 or HTTP/2 learned from answers, stalls
/// of shared connections, a broken multi handle, length probes in the room downloads leave, cancellation and the end.
extension DownloadScheduler {
    // MARK: - HTTP/1.1 and HTTP/2

    mutating func heard(_ server: String, multiplexes: Bool) {
        slots.learned(server, multiplexes: multiplexes)
        if !multiplexes { heardSingle.insert(server) }
    }

    mutating func received(_ bytes: [JobID: Int]) {
        for (id, count) in bytes {
            guard let entry = jobs[id], case .transferring(let mirror, sharesConnection: true) = entry.stage else {
                continue
            }
            sharedBytes[entry.server(mirror), default: 0] += count
        }
    }

    mutating func progress(requestsSent sent: Set<JobID>, _ round: inout Round) {
        for server in heardSingle.sorted() { settleSingle(server, requestsSent: sent, &round) }
        heardSingle.removeAll()
        // Connections shared by many requests stall as a whole (`StallWatch`): a server is watched while a request
        // sent on them is in flight (connecting is the connect timeout's business).
        guard stallWatch != nil else { return }
        var busy: Set<String> = []
        for entry in jobs.values {
            if case .transferring(let mirror, sharesConnection: true) = entry.stage, sent.contains(entry.job.id) {
                busy.insert(entry.server(mirror))
            }
        }
        for server in busy.union(sharedBytes.keys).sorted()
        where stallWatch!.observe(
            server, bytes: sharedBytes[server, default: 0], busy: busy.contains(server), now: round.now)
        {
            stopStalled(server, &round)
        }
    }

    /// `server` answered over HTTP/1.1 (an https server taken to multiplex): the transfers already sent each have a
    /// connection of their own, and libcurl judges their stalls from now on; of the rest, those over the server's
    /// limit (`TransferSlots`) are taken back, least urgent first, and wait their turn here, where a more urgent
    /// request can still go first (left in libcurl's queue, they would go in the order they were added).
    private mutating func settleSingle(_ server: String, requestsSent sent: Set<JobID>, _ round: inout Round) {
        var excess = slots.excess(for: server)
        let onServer = ids(where: \.isTransferring).reversed()
        for id in onServer {
            guard let entry = jobs[id], case .transferring(let mirror, let shares) = entry.stage,
                entry.server(mirror) == server
            else { continue }
            if sent.contains(id) || excess == 0 {
                if shares {
                    jobs[id]!.stage = .transferring(mirror: mirror, sharesConnection: false)
                    round.actions.append(.stopSharing(id))
                }
                continue
            }
            excess -= 1
            slots.ended(server)
            round.actions.append(.stopTransfer(id, closingConnection: false))
            jobs[id]!.stage = .waiting(mirror: mirror, notBefore: 0, takenBack: true)
        }
    }

    // MARK: - Stalls and a broken multi handle

    /// Stops everything on the shared connections to `server`, which have stalled, and closes them: a dead
    /// connection must not carry the retries. Each transfer is retried as its plan says (on the next mirror); a
    /// probe counts as unanswered; a length probe asks its next mirror.
    private mutating func stopStalled(_ server: String, _ round: inout Round) {
        let reason =
            "stalled (the connection moved under \(limits.stallBytesPerSecond) bytes/s for \(limits.stallSeconds) s)"
        for id in ids(where: { if case .transferring(_, sharesConnection: true) = $0 { true } else { false } }) {
            guard let entry = jobs[id], case .transferring(let mirror, _) = entry.stage, entry.server(mirror) == server
            else { continue }
            slots.ended(server)
            round.actions.append(.stopTransfer(id, closingConnection: true))
            fail(id, .unreachable(reason), on: mirror, &round)
        }
        for id in ids(where: \.isProbing) {
            guard let entry = jobs[id], case .probing(_, let probe) = entry.stage, entry.server(probe) == server else {
                continue
            }
            round.actions.append(.stopProbe(id, closingConnection: true))
            probed(id, .unavailable(reason), &round)
        }
        for (id, turn) in lengthRunning.sorted(by: { $0.key < $1.key }) where turn.server == server {
            lengthRunning[id] = nil
            round.actions.append(.stopLengthProbe(id, closingConnection: true))
            askNextMirror(turn, &round)
        }
        stallWatch?.reset(server)
    }

    /// Every transfer in the multi handle failed with `reason` and is retried as its plan says; every cross-check
    /// probe is unanswered. (Length probes stay: they are answered by their next mirror when they fail.)
    mutating func performFailed(_ reason: String, _ round: inout Round) {
        for id in ids(where: \.isTransferring) {
            guard let entry = jobs[id], case .transferring(let mirror, _) = entry.stage else { continue }
            slots.ended(entry.server(mirror))
            round.actions.append(.stopTransfer(id, closingConnection: false))
            fail(id, .transient(reason, retryAfter: nil), on: mirror, &round)
        }
        for id in ids(where: \.isProbing) {
            round.actions.append(.stopProbe(id, closingConnection: false))
            probed(id, .unavailable(reason), &round)
        }
    }

    // MARK: - Length probes

    mutating func submitLengthProbes(_ probes: [LengthProbe], _ round: inout Round) {
        guard phase == .running else {
            for probe in probes { round.actions.append(.dropLengthProbe(probe.id)) }
            return
        }
        lengthQueue += probes.map { LengthTurn(probe: $0, mirror: 0) }
    }

    /// Length probes go last: only while no download is due, at most half the transfers (two for the player's
    /// four), and never in the last free one, so a file the player wants starts at once.
    mutating func startLengthProbes(_ round: inout Round) {
        guard phase == .running, !lengthQueue.isEmpty else { return }
        let probing = jobs.values.filter(\.stage.isProbing).count
        let due = jobs.values.contains {
            if case .waiting(_, let notBefore, _) = $0.stage { notBefore <= round.now } else { false }
        }
        while !due, !lengthQueue.isEmpty, lengthRunning.count < max(2, limits.parallel / 2),
            slots.count + probing + lengthRunning.count < limits.parallel - 1
        {
            let turn = lengthQueue.removeFirst()
            guard turn.mirror < turn.probe.servers.count else {
                round.actions.append(.answerNoLength(turn.probe.id))
                continue
            }
            lengthRunning[turn.probe.id] = turn
            round.actions.append(.probeLength(turn.probe.id, mirror: turn.mirror))
        }
    }

    mutating func lengthProbeEnded(_ id: LengthProbeID, answered: Bool, _ round: inout Round) {
        guard let turn = lengthRunning.removeValue(forKey: id) else { return }
        if !answered { askNextMirror(turn, &round) }
    }

    mutating func lengthProbeNotStarted(_ id: LengthProbeID, _ round: inout Round) {
        guard lengthRunning.removeValue(forKey: id) != nil else { return }
        round.actions.append(.answerNoLength(id))
    }

    /// A length probe got no answer from its mirror: the next mirror is asked, or, after the last, nothing is the
    /// answer.
    private mutating func askNextMirror(_ turn: LengthTurn, _ round: inout Round) {
        if turn.mirror + 1 < turn.probe.servers.count {
            lengthQueue.append(LengthTurn(probe: turn.probe, mirror: turn.mirror + 1))
        } else {
            round.actions.append(.answerNoLength(turn.probe.id))
        }
    }

    // MARK: - Cancel and the end

    mutating func cancel(_ round: inout Round) {
        guard phase == .running else { return }
        phase = .cancelled
        cancelEverything(&round)
    }

    mutating func shutdown(_ round: inout Round) {
        // Jobs being committed, probed or in flight finish first; waiting ones too, unless cancelled.
        let idle = jobs.values.allSatisfy { $0.stage.isWaiting && phase == .cancelled }
        guard idle else { return }
        cancelEverything(&round)
        phase = .ended
    }

    /// Stops every transfer and probe, drops every length probe (unanswered) and ends every job but those with the
    /// committer (and those whose start or outcome is awaited: each ends cancelled when its answer comes).
    private mutating func cancelEverything(_ round: inout Round) {
        for id in lengthRunning.keys.sorted() {
            round.actions.append(.stopLengthProbe(id, closingConnection: false))
            round.actions.append(.dropLengthProbe(id))
        }
        lengthRunning.removeAll()
        for turn in lengthQueue { round.actions.append(.dropLengthProbe(turn.probe.id)) }
        lengthQueue.removeAll()
        for id in ids(where: \.isProbing) {
            round.actions.append(.stopProbe(id, closingConnection: false))
            round.actions.append(.dropCopy(id, keepPartial: true))
            end(id, .cancelled(jobs[id]!.job.ayah), &round)
        }
        for id in ids(where: \.isTransferring) {
            let entry = jobs[id]!
            if case .transferring(let mirror, _) = entry.stage { slots.ended(entry.server(mirror)) }
            round.actions.append(.stopTransfer(id, closingConnection: false))
            end(id, .cancelled(entry.job.ayah), &round)
        }
        for id in ids(where: \.isWaiting) {
            end(id, .cancelled(jobs[id]!.job.ayah), &round)
        }
    }
}
