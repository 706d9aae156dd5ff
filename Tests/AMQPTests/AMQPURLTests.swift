import AMQP
import Testing

@Suite struct AMQPURLTests {
    @Test func parsesAFullURL() throws {
        let url = try AMQPURL("amqp://guest:guest@127.0.0.1:55672/%2f")
        #expect(url.useTLS == false)
        #expect(url.host == "127.0.0.1")
        #expect(url.port == 55672)
        #expect(url.vhost == "/")
        #expect(url.user == "guest")
        #expect(url.password == "guest")
    }

    @Test func defaultsAndPercentDecoding() throws {
        let url = try AMQPURL("amqps://us%40er:p%3Aa%2Fss@rabbit.example.com/my%2Fvhost")
        #expect(url.useTLS)
        #expect(url.port == 5671)
        #expect(url.user == "us@er")
        #expect(url.password == "p:a/ss")
        #expect(url.vhost == "my/vhost")

        let plain = try AMQPURL("amqp://broker")
        #expect(plain.port == 5672)
        #expect(plain.vhost == "/")
        #expect(plain.user == "guest")

        #expect(try AMQPURL("amqp://broker/").vhost == "/")
        #expect(try AMQPURL("amqp://broker/herald").vhost == "herald")
    }

    @Test func ipv6Literals() throws {
        let url = try AMQPURL("amqp://u:p@[::1]:5673/v")
        #expect(url.host == "::1")
        #expect(url.port == 5673)
        #expect(try AMQPURL("amqp://[2001:db8::2]").port == 5672)
        #expect(url.description.contains("[::1]:5673"))
    }

    @Test func aListOfNodes() throws {
        let nodes = try AMQPURL.list("amqp://u:p,w@rabbit-1:5672/%2f, amqps://u:p@rabbit-2/herald,amqp://rabbit-3")
        #expect(nodes.map(\.host) == ["rabbit-1", "rabbit-2", "rabbit-3"])
        #expect(nodes[0].password == "p,w", "a comma not followed by a scheme stays in the password")
        #expect(nodes[1].useTLS && nodes[1].port == 5671 && nodes[1].vhost == "herald")
        #expect(try AMQPURL.list("amqp://one").count == 1)
        #expect(try AMQPURL.list("amqp://a,\n  amqp://b\n").map(\.host) == ["a", "b"], "a YAML block's newlines")
        #expect(throws: AMQPError.self) { try AMQPURL.list("amqp://a,amqp://b,") }
        let error = #expect(throws: AMQPError.self) { try AMQPURL.list("amqp://u:secret@a,amqp://b:99999") }
        #expect("\(error!)".contains("node 2 of 2") && !"\(error!)".contains("secret"))
    }

    @Test func descriptionMasksThePassword() throws {
        let url = try AMQPURL("amqp://alice:s3cr3t-pw@host:1234/%2f")
        #expect(!url.description.contains("s3cr3t"))
        #expect(url.description.contains("alice"))
        #expect(url.description.contains("***"))
        #expect(!"\(url)".contains("s3cr3t"))
    }

    @Test(arguments: [
        ("http://host/", "scheme"),
        ("host:5672", "scheme"),
        ("amqp://", "host"),
        ("amqp://user:s3cr3t@:5672/", "host"),
        ("amqp://user:s3cr3t@host:99999/", "port"),
        ("amqp://user:s3cr3t@host:abc/", "port"),
        ("amqp://user:s3cr3t@host:/", "port"),
        ("amqp://user:s3cr3t@[::1/", "IPv6"),
        ("amqp://user:s3cr3t@::1:5672/", "IPv6"),
        ("amqp://user:s3cr3t%zz@host/", "password"),
        ("amqp://user:s3cr3t@host/a/b", "vhost"),
        ("amqp://user:s3cr3t@host/?heartbeat=5", "query"),
    ])
    func rejectsBadURLs(input: String, reasonMentions: String) {
        do {
            let url = try AMQPURL(input)
            Issue.record("parsed \(url) from \(input)")
        } catch {
            guard case .invalidURL(let reason) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(reason.contains(reasonMentions), "\(reason)")
            #expect(!reason.contains("s3cr3t"))
            #expect(!error.description.contains("s3cr3t"))
        }
    }
}
