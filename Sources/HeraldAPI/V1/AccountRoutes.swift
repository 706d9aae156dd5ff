import HeraldClient
import HTTPTypes
import Hummingbird

/// `/v1/accounts/{id}`: the one path that deletes an account: `account.deleted` and every
/// `apple.revoke` of its Sign in with Apple tokens in the same transaction.
struct AccountRoutes {
    let dependencies: APIDependencies

    func add(to group: RouterGroup<APIContext>) {
        group.delete("{id}", use: delete)
    }

    func delete(_ request: Request, context: APIContext) async throws -> Response {
        let id = try context.parameters.require("id")
        guard (1...128).contains(id.utf8.count) else { throw APIFailure.invalid(field: "id", reason: "id must be 1 to 128 bytes") }
        guard try await dependencies.accounts.deleteAccount(id: id) else { throw APIFailure.notFound("account") }
        return JSONResponse.make(.ok, ["account_id": id, "deleted": true])
    }
}
