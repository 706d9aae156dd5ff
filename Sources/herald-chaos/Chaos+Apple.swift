import Foundation
import HeraldRuntime
import HeraldStubs

extension Chaos {
    /// Counts the apple jobs among `ids` at the local Apple, after ``Tally/account`` counted
    /// them as jobs (final, lost, failed). Per job (one account and Apple identity each):
    /// - no code sent to Apple twice (a code is single use): a duplicated exchange fails the run;
    /// - a completed `apple.token` exchanged its code once and stored the token; a completed
    ///   `apple.revoke` (with a code) exchanged once and revoked that token;
    /// - a revoke call repeated (a kill between Apple's answer and the commit) is a duplicated
    ///   send, and must be counted as uncertain in the job's record, as for the other channels;
    /// - a job `rejected` as `uncertain` (`exchange_uncertain`: a worker killed while Apple had
    ///   its code, the redelivery never sends it again) is the documented outcome of a kill, not
    ///   a failure: it is counted apart (``ScenarioResult/appleUncertain``), and each scenario
    ///   says how many it allows (the kill scenario: no more than the kills had in flight).
    func accountApple(_ result: inout ScenarioResult, ids: [String], statuses: [String: String]) async throws {
        let appleIDs = ids.filter { load.published[$0] == .apple }
        guard !appleIDs.isEmpty else { return }
        let records = try await tally.appleRecords(appleIDs)
        let counts = load.apple.endpoints.countsBySubject
        var (tokens, revokes, exchanges, revocations) = (0, 0, 0, 0)
        var (duplicated, undone): ([String], [String]) = ([], [])
        for id in appleIDs {
            let seen = counts[AppleGateway.subject(for: id)] ?? .init()
            let record = records[id]
            let isToken = load.apple.isToken(id) ?? true
            if isToken { tokens += 1 } else { revokes += 1 }
            exchanges += seen.exchanges
            revocations += seen.revocations
            if seen.maxCallsPerCode > 1 {
                result.duplicatedExchanges += 1
                duplicated.append("\(id): a code sent to Apple \(seen.maxCallsPerCode) times (record: \(record?.state ?? "none") \(record?.error ?? ""), \(record?.uncertainCalls ?? 0) uncertain)")
            }
            if seen.maxCallsPerToken > 1 {
                result.duplicates.append(DuplicateSend(channel: .apple, messageID: id, provider: "apple-revoke", sends: seen.maxCallsPerToken,
                                                       uncertainRecorded: record?.uncertainCalls ?? 0))
            }
            switch statuses[id] {
            case "completed":
                let done = isToken ? (record?.state == "stored" && seen.exchanges == 1) : (record?.state == "revoked" && seen.exchanges == 1 && seen.revocations == 1)
                if !done {
                    result.missingSends += 1
                    undone.append("\(id): completed as \(record?.state ?? "no record") with \(seen.exchanges) exchange(s), \(seen.revocations) revocation(s) at Apple")
                }
            case "rejected" where record?.state == "uncertain" && record?.error == "exchange_uncertain":
                result.failed -= 1
                result.appleUncertain += 1
            default: break
            }
        }
        result.notes.append("apple: \(appleIDs.count) jobs (\(tokens) apple.token, \(revokes) apple.revoke with a code); at the local Apple \(exchanges) exchanges, "
            + "\(revocations) revocations, \(result.duplicatedExchanges) codes sent twice; \(result.appleUncertain) ended uncertain (a kill while Apple had the code)")
        result.require(duplicated.isEmpty, "\(duplicated.count) authorization code(s) sent to Apple twice: " + duplicated.prefix(5).joined(separator: "; "))
        result.require(undone.isEmpty, "\(undone.count) apple job(s) completed without their exchange or revocation at Apple: " + undone.prefix(5).joined(separator: "; "))
    }
}
