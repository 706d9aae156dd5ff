import HeraldRuntime

/// herald-api's schema group (`Sources/HeraldAPIStore/SQL`): API keys and the Twilio Verify
/// Services and Verifications. Applied after the channels' groups (`HeraldWorkers`'s `HeraldFleet.schema`).
public enum APISchema {
    public static let group = SchemaGroup(name: "api", files: EmbeddedSQL.files)
}
