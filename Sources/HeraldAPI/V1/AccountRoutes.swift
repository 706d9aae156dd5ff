import HeraldClient

/// `/v1/accounts/{id}`: the one path that deletes an account: `account.deleted` and every
/// `apple.revoke` of its Sign in with Apple tokens in the same transaction.
extension V1API {
    func deleteAccount(_ input: Operations.DeleteAccount.Input) async throws -> Operations.DeleteAccount.Output {
        let id = try context.parameters.require("id")
        guard (1...128).contains(id.utf8.count) else { throw APIFailure.invalid(field: "id", reason: "id must be 1 to 128 bytes") }
        guard try await dependencies.accounts.deleteAccount(id: id) else { throw APIFailure.notFound("account") }
        return .ok(.init(body: .json(.init(accountId: id, deleted: true))))
    }
}
