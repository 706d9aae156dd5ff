/// A first-in first-out queue with amortised O(1) push and pop (array plus head index).
struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }
    var first: Element? { isEmpty ? nil : storage[head] }

    mutating func append(_ element: Element) { storage.append(element) }

    mutating func prepend(contentsOf elements: [Element]) {
        guard !elements.isEmpty else { return }
        storage = elements + storage[head...]
        head = 0
    }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head >= 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes and returns everything, in order.
    mutating func removeAll() -> [Element] {
        let all = Array(storage[head...])
        storage = []
        head = 0
        return all
    }
}
