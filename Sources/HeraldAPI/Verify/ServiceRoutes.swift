import Foundation
import HeraldAPIStore
import HTTPTypes
import Hummingbird

/// `/v2/Services[/{Sid}]`: Twilio Verify's Services.
struct ServiceRoutes {
    let dependencies: APIDependencies

    func add(to group: RouterGroup<APIContext>) {
        group.post("Services", use: create)
        group.get("Services", use: list)
        group.get("Services/{service}", use: fetch)
        group.post("Services/{service}", use: update)
        group.delete("Services/{service}", use: delete)
    }

    /// What Herald reads; `ignored` are Twilio's that change nothing here when false or empty.
    static let settings: Set<String> = ["FriendlyName", "CodeLength", "SkipSmsToLandlines", "DoNotShareWarningEnabled", "LookupEnabled",
                                        "TtlSeconds", "MaxSendAttempts", "MaxCheckAttempts"]
    static let offIfFalse: Set<String> = ["Psd2Enabled", "CustomCodeEnabled", "DtmfInputRequired", "VerifyEventSubscriptionEnabled"]

    func create(_ request: Request, context: APIContext) async throws -> Response {
        let form = try await FormFields.body(request, limit: dependencies.api.maxBodyBytes, accepted: Self.settings.union(Self.offIfFalse))
        var settings = VerifyService.Settings(friendlyName: try form.required("FriendlyName", maxLength: 64))
        try apply(form, to: &settings)
        let service = try await dependencies.verify.createService(settings, logger: context.logger)
        return JSONResponse.make(.created, try dependencies.resources(request, context).service(service))
    }

    func update(_ request: Request, context: APIContext) async throws -> Response {
        let sid = try context.parameters.require("service")
        let form = try await FormFields.body(request, limit: dependencies.api.maxBodyBytes, accepted: Self.settings.union(Self.offIfFalse))
        guard var settings = try await dependencies.verify.service(sid, logger: context.logger)?.settings else { throw TwilioError.notFound(request.uri.path) }
        if let name = try form.string("FriendlyName", maxLength: 64) {
            guard !name.isEmpty else { throw TwilioError.invalid("FriendlyName", "must not be empty") }
            settings.friendlyName = name
        }
        try apply(form, to: &settings)
        guard let service = try await dependencies.verify.updateService(sid, settings, logger: context.logger) else { throw TwilioError.notFound(request.uri.path) }
        return JSONResponse.make(.ok, try dependencies.resources(request, context).service(service))
    }

    func fetch(_ request: Request, context: APIContext) async throws -> Response {
        let sid = try context.parameters.require("service")
        guard let service = try await dependencies.verify.service(sid, logger: context.logger) else { throw TwilioError.notFound(request.uri.path) }
        return JSONResponse.make(.ok, try dependencies.resources(request, context).service(service))
    }

    func delete(_ request: Request, context: APIContext) async throws -> Response {
        let sid = try context.parameters.require("service")
        guard try await dependencies.verify.deleteService(sid, logger: context.logger) else { throw TwilioError.notFound(request.uri.path) }
        return Response(status: .noContent)
    }

    func list(_ request: Request, context: APIContext) async throws -> Response {
        let query = try FormFields.query(request, accepted: ["PageSize", "Page", "PageToken"])
        let size = try query.int("PageSize", range: 1...1000) ?? 50
        let page = try query.int("Page", range: 0...1_000_000) ?? 0
        let (services, more) = try await dependencies.verify.services(page: page, pageSize: size, logger: context.logger)
        let render = try dependencies.resources(request, context)
        let url = { (page: Int) in "\(render.base)/v2/Services?PageSize=\(size)&Page=\(page)" }
        let meta: [String: Any] = [
            "page": page, "page_size": size, "first_page_url": url(0), "url": url(page), "key": "services",
            "previous_page_url": page > 0 ? url(page - 1) : NSNull(),
            "next_page_url": more ? url(page + 1) : NSNull(),
        ]
        return JSONResponse.make(.ok, ["services": services.map(render.service), "meta": meta])
    }

    private func apply(_ form: FormFields, to settings: inout VerifyService.Settings) throws {
        for name in Self.offIfFalse where try form.bool(name) == true {
            throw TwilioError.invalid(name, "not offered by Herald")
        }
        if let length = try form.int("CodeLength", range: 4...10) { settings.codeLength = length }
        if let skip = try form.bool("SkipSmsToLandlines") { settings.skipSMSToLandlines = skip }
        if let warn = try form.bool("DoNotShareWarningEnabled") { settings.doNotShareWarning = warn }
        _ = try form.bool("LookupEnabled")
        if let ttl = try form.int("TtlSeconds", range: 60...86_400) { settings.ttlSeconds = ttl }
        if let sends = try form.int("MaxSendAttempts", range: 1...10) { settings.maxSendAttempts = sends }
        if let checks = try form.int("MaxCheckAttempts", range: 1...20) { settings.maxCheckAttempts = checks }
    }
}
