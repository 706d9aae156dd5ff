import HeraldRuntime
import Testing

/// The one lower-case hex the database keeps digests in (``Hex``), and ``SHA256Hex`` on it.
@Suite struct HexTests {
    @Test func everyByteIsTwoLowerCaseDigits() {
        #expect(Hex.lower([0x00, 0x0F, 0xF0, 0xFF, 0xA5]) == "000ff0ffa5")
        #expect(Hex.lower([UInt8]()) == "")
        #expect(Hex.lower((0...255).map(UInt8.init)).count == 512)
    }

    @Test func sha256HexIsWhatSha256sumPrints() {
        // printf abc | sha256sum; printf '' | sha256sum
        #expect(SHA256Hex.of("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256Hex.of("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}
