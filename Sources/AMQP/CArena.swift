import CRabbitMQ

/// Scratch memory for building C structures (tables, byte strings) that rabbitmq-c
/// encodes right away. Everything is freed together by `reset()` or deinit.
/// Owned by the connection thread.
final class CArena {
    private var pool = amqp_pool_t()

    init() {
        init_amqp_pool(&pool, 16 * 1024)
    }

    deinit {
        empty_amqp_pool(&pool)
    }

    /// Frees everything allocated since the last reset (keeps the first page for reuse).
    func reset() {
        recycle_amqp_pool(&pool)
    }

    func allocate<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let raw = amqp_pool_alloc(&pool, max(1, MemoryLayout<T>.stride * count))!
        return raw.bindMemory(to: T.self, capacity: count)
    }

    func bytes(_ string: String) -> amqp_bytes_t {
        var string = string
        return string.withUTF8 { bytes($0) }
    }

    func bytes(_ buffer: UnsafeBufferPointer<UInt8>) -> amqp_bytes_t {
        guard buffer.count > 0 else { return herald_empty_bytes() }
        let dst = allocate(UInt8.self, count: buffer.count)
        dst.initialize(from: buffer.baseAddress!, count: buffer.count)
        return amqp_bytes_t(len: buffer.count, bytes: UnsafeMutableRawPointer(dst))
    }

    func bytes(_ array: [UInt8]) -> amqp_bytes_t {
        array.withUnsafeBufferPointer { bytes($0) }
    }
}

extension amqp_bytes_t {
    /// Copies the bytes into a Swift array.
    var array: [UInt8] {
        guard len > 0, let base = bytes else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: len))
    }

    /// Decodes the bytes as UTF-8 (lossy repair of invalid sequences).
    var string: String {
        guard len > 0, let base = bytes else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: base, count: len), as: UTF8.self)
    }
}
