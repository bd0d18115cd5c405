/// A job's way through the scheduler: submitted, waiting, started, in flight, finished, cross-checked,
/// committed, or failed and retried as its `DownloadPlan` says.
extension DownloadScheduler {
    // MARK: - Submitting and starting

    mutating func submit(_ newJobs: [Job], _ round: inout Round) {
        for job in newJobs {
            precondition(jobs[job.id] == nil, "DownloadScheduler: \(job.id) was submitted twice")
            var plan = DownloadPlan(mirrorCount: job.sources.count, policy: policy)
            let action = plan.begin(health: health(of: job), now: round.now)
            // `follow` gives it its stage (waiting on the plan's mirror), or ends it.
            jobs[job.id] = Entry(
                job: job, order: submitted, plan: plan,
                crossCheck: job.crossChecked ? CrossCheck(mirrorCount: job.sources.count) : nil, mark: nil,
                stage: .waiting(mirror: 0, notBefore: .infinity, takenBack: false))
            urgency.insert(job.id, priority: job.priority, order: submitted)
            submitted += 1
            follow(job.id, action, &round)
        }
    }

    /// Starts what is due, most urgent first, while its server has room. The jobs put back to wait meanwhile (a
    /// failed start, say) wait for the next round.
    mutating func startDue(_ round: inout Round) {
        guard phase == .running else { return }
        // In order of urgency, stopping as soon as every slot is taken: the jobs in flight and being committed
        // come first, so this mostly looks at those and the next few waiting.
        for id in urgency.ids {
            guard slots.hasRoom else { break }
            guard let entry = jobs[id], case .waiting(let mirror, let notBefore, let takenBack) = entry.stage,
                notBefore <= round.now, slots.hasRoom(for: entry.server(mirror))
            else { continue }
            start(id, on: mirror, takenBack: takenBack, &round)
        }
    }

    /// Starts an attempt (its slot is held until `.started`), or decides again when its mirror was given up for
    /// the run since the attempt was planned.
    private mutating func start(_ id: JobID, on mirror: Int, takenBack: Bool, _ round: inout Round) {
        let entry = jobs[id]!
        let mirrorHealth = health(of: entry.job)
        if let reason = mirrorHealth.abandonedReason(mirror) {
            var plan = entry.plan
            let action = plan.failed(
                .untrusted(reason), on: mirror, health: mirrorHealth, now: round.now, random: { 0 })
            jobs[id]!.plan = plan
            follow(id, action, &round)
            return
        }
        let server = entry.server(mirror)
        let shares = slots.multiplexes(server)
        // A server's first transfer starts connecting at once, before the round's other files are opened (each
        // open costs a little; a round may start a hundred); over HTTP/1.1 every transfer has a connection of its
        // own to open or a request to send, and goes at once too.
        let connectNow = !slots.isBusy(server) || !shares
        slots.started(server)
        jobs[id]!.stage = .starting(mirror: mirror, sharesConnection: shares, announce: !takenBack)
        round.actions.append(.start(Start(job: id, mirror: mirror, sharesConnection: shares, connectNow: connectNow)))
    }

    mutating func started(_ results: [StartResult], _ round: inout Round) {
        var freed = false
        for result in results {
            guard let entry = jobs[result.job], case .starting(let mirror, let shares, let announce) = entry.stage
            else { continue }
            let (id, job) = (result.job, entry.job)
            // The other process let go: a later wait is timed (and said) afresh.
            if result.outcome != .busy { jobs[id]!.heldElsewhere = nil }
            if result.outcome == .opened, phase == .running {
                jobs[id]!.stage = .transferring(mirror: mirror, sharesConnection: shares)
                if announce { round.actions.append(.report(.started(job.ayah, mirror: job.sources[mirror].name))) }
                continue
            }
            slots.ended(entry.server(mirror))
            freed = true
            switch result.outcome {
            case .opened:
                // Cancelled while it was being started.
                round.actions.append(.stopTransfer(id, closingConnection: false))
                end(id, .cancelled(job.ayah), &round)
            case .alreadyCached(let bytes):
                end(id, .cached(job.ayah, bytes: bytes, alreadyCached: true), &round)
            case .busy:
                // Another process has it: look again shortly, and say so once it has had it a while.
                if phase == .running {
                    switch entry.heldElsewhere {
                    case nil: jobs[id]!.heldElsewhere = .since(round.now)
                    case .since(let since) where round.now - since >= Self.heldElsewhereNotice:
                        jobs[id]!.heldElsewhere = .reported
                        round.actions.append(.report(.heldElsewhere(job.ayah)))
                    case .since, .reported: break
                    }
                    jobs[id]!.stage = .waiting(mirror: mirror, notBefore: round.now + 0.2, takenBack: false)
                } else {
                    end(id, .cancelled(job.ayah), &round)
                }
            case .failed(let failure):
                fail(id, failure, on: mirror, &round)
            case .refused(let reason):
                end(id, .failed(job.ayah, reason: reason), &round)
            }
        }
        let asked = jobs.values.filter(\.stage.isStarting).count
        mostInFlight = max(mostInFlight, slots.count - asked)
        if freed { startDue(&round) }
    }

    // MARK: - Transfers that ended

    /// Frees the slots of transfers libcurl finished, and starts the next due ones on them before the outcomes
    /// are settled (which hands blocks and files to other threads).
    mutating func ended(_ transfers: [JobID], _ round: inout Round) {
        var released = false
        for id in transfers {
            guard let entry = jobs[id], case .transferring(let mirror, _) = entry.stage else { continue }
            slots.ended(entry.server(mirror))
            jobs[id]!.stage = .finishing(mirror: mirror)
            released = true
        }
        if released { startDue(&round) }
    }

    /// A finished transfer's outcome: commit the copy (after its cross-check), or decide the next attempt.
    mutating func finished(_ id: JobID, _ outcome: TransferOutcome, _ round: inout Round) {
        guard let entry = jobs[id], case .finishing(let mirror) = entry.stage else { return }
        switch outcome {
        case .complete(let fingerprint):
            guard phase == .running else {
                round.actions.append(.dropCopy(id, keepPartial: true))
                end(id, .cancelled(entry.job.ayah), &round)
                return
            }
            if var check = entry.crossCheck, let fingerprint {
                let action = check.downloaded(from: mirror, fingerprint)
                jobs[id]!.crossCheck = check
                crossCheck(id, action, copy: mirror, &round)
            } else {
                jobs[id]!.stage = .committing(mirror: mirror)
                round.actions.append(.commit(id, mirror: mirror, mark: nil))
            }
        case .failed(let failure):
            // Bytes a mirror cannot give this file are of no use to a resume.
            let unusable = if case .mirrorUnusable = failure { true } else { false }
            round.actions.append(.dropCopy(id, keepPartial: !unusable))
            fail(id, failure, on: mirror, &round)
        }
    }

    // MARK: - The cross-check and the commit

    /// Carries out the cross-check's action for the job whose copy from `copy` is in hand.
    mutating func crossCheck(_ id: JobID, _ action: CrossCheck.Action, copy: Int, _ round: inout Round) {
        let entry = jobs[id]!
        switch action {
        case .keep(let mark):
            jobs[id]!.mark = mark
            jobs[id]!.stage = .committing(mirror: copy)
            round.actions.append(.commit(id, mirror: copy, mark: mark))
        case .probe(let other):
            guard phase == .running else {
                round.actions.append(.dropCopy(id, keepPartial: true))
                end(id, .cancelled(entry.job.ayah), &round)
                return
            }
            jobs[id]!.stage = .probing(copy: copy, probe: other)
            round.actions.append(.probe(id, mirror: other))
        case .dispute:
            let check = entry.crossCheck!
            var prints: [Int: FileFingerprint] = [:]
            for (mirror, observation) in check.observations { if case .fingerprint(let print) = observation { prints[mirror] = print } }
            let detail = markDetail(entry)
            round.actions.append(.setAside(id, copy: copy, prints: prints))
            round.actions.append(.report(.marked(entry.job.ayah, .disputed, detail: detail)))
            let named = prints.keys.sorted().map { (entry.job.sources[$0].name, prints[$0]!) }
            end(id, .failed(entry.job.ayah, reason: CrossCheck.disputeMessage(entry.job.ayah, reciter: entry.job.reciter.rawValue, copies: named)), &round)
        case .download(let other):
            // Two other mirrors agree on another file: this copy goes, and the file comes from one of them.
            let sources = entry.job.sources
            round.actions.append(.dropCopy(id, keepPartial: false))
            round.actions.append(
                .report(
                    .retrying(
                        entry.job.ayah, mirror: sources[copy].name,
                        reason:
                            "mirrors disagree on this file; taking it from \(sources[other].name), which another mirror agrees with",
                        delay: 0)))
            var plan = entry.plan
            let next = plan.switchTo(other)
            jobs[id]!.plan = plan
            follow(id, next, &round)
        }
    }

    mutating func probed(_ id: JobID, _ observation: CrossCheck.Observation, _ round: inout Round) {
        guard let entry = jobs[id], case .probing(let copy, let probe) = entry.stage, var check = entry.crossCheck
        else { return }
        let action = check.probed(probe, observation)
        jobs[id]!.crossCheck = check
        crossCheck(id, action, copy: copy, &round)
    }

    mutating func committed(_ id: JobID, _ outcome: CommitOutcome, _ round: inout Round) {
        guard let entry = jobs[id], case .committing(let mirror) = entry.stage else { return }
        let job = entry.job
        switch outcome {
        case .stored(let bytes):
            var mirrorHealth = health(of: job)
            mirrorHealth.recordSuccess(mirror)
            health[job.reciter] = mirrorHealth
            if let mark = entry.mark {
                round.actions.append(.report(.marked(job.ayah, mark, detail: markDetail(entry))))
            }
            end(id, .cached(job.ayah, bytes: bytes, alreadyCached: false), &round)
        case .rejected(let reason):
            fail(id, .mirrorUnusable(reason), on: mirror, &round)
        case .mismatch(let reason):
            fail(id, .wrongBytes(reason), on: mirror, &round)
        }
    }

    /// What the mirrors told, for a disputed file: `m1: 13582 bytes, sha256 3f1c…; m2: 13164 bytes, sha256 9a0b…`.
    private func markDetail(_ entry: Entry) -> String {
        guard let check = entry.crossCheck else { return "" }
        return check.observations.keys.sorted().map { mirror in
            let name = entry.job.sources[mirror].name
            switch check.observations[mirror]! {
            case .fingerprint(let print): return "\(name): \(print)"
            case .unavailable(let reason): return "\(name): no answer (\(reason))"
            }
        }.joined(separator: "; ")
    }

    // MARK: - Failures and the end

    /// An attempt on `mirror` failed: the mirror's health and the job's plan decide what comes next.
    mutating func fail(_ id: JobID, _ failure: DownloadFailure, on mirror: Int, _ round: inout Round) {
        guard let entry = jobs[id] else { return }
        let job = entry.job
        var mirrorHealth = health(of: job)
        let wasAbandoned = mirrorHealth.abandonedReason(mirror) != nil
        mirrorHealth.recordFailure(mirror, failure, now: round.now)
        health[job.reciter] = mirrorHealth
        if !wasAbandoned, let reason = mirrorHealth.abandonedReason(mirror) {
            round.actions.append(.report(.mirrorAbandoned(mirror: job.sources[mirror].name, reason: reason)))
        }
        var plan = entry.plan
        let action = plan.failed(
            failure, on: mirror, health: mirrorHealth, now: round.now, random: { random.nextUnit() })
        jobs[id]!.plan = plan
        if case .start(_, let delay) = action, phase == .running {
            round.actions.append(
                .report(.retrying(job.ayah, mirror: job.sources[mirror].name, reason: failure.reason, delay: delay)))
        }
        follow(id, action, &round)
    }

    /// Carries out a plan's action: the job waits for its next attempt, or ends (given up, or cancelled).
    mutating func follow(_ id: JobID, _ action: DownloadPlan.Action, _ round: inout Round) {
        let job = jobs[id]!.job
        guard phase == .running else {
            end(id, .cancelled(job.ayah), &round)
            return
        }
        switch action {
        case .start(let mirror, let delay):
            jobs[id]!.stage = .waiting(mirror: mirror, notBefore: round.now + delay, takenBack: false)
        case .giveUp(let reason):
            // Nothing unverified stays behind for a file that cannot be had.
            round.actions.append(.discardPartial(id))
            end(id, .failed(job.ayah, reason: reason), &round)
        }
    }

    mutating func end(_ id: JobID, _ event: DownloadEvent, _ round: inout Round) {
        if let entry = jobs.removeValue(forKey: id) { urgency.remove(priority: entry.job.priority, order: entry.order) }
        round.actions.append(.end(id, event))
    }

    func health(of job: Job) -> MirrorHealth {
        health[job.reciter] ?? MirrorHealth(mirrorCount: job.sources.count, policy: policy)
    }
}
