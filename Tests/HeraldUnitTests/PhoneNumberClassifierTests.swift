@testable import HeraldPhone
@testable import HeraldPhoneCheck
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// libphonenumber through the CPhoneNumber shim: region (NANP area codes resolved), type
/// and validity of real-format numbers, and the reasons of the ones not in use.
@Suite struct PhoneNumberClassifierTests {
    @Test(arguments: [
        ("+12015550123", "US", PhoneNumberType.fixedLineOrMobile, 1),
        ("+14155552671", "US", .fixedLineOrMobile, 1),
        ("+18762101234", "JM", .mobile, 1),
        ("+18765230123", "JM", .fixedLineOrMobile, 1),
        ("+18092345678", "DO", .fixedLineOrMobile, 1),
        ("+16135550123", "CA", .fixedLineOrMobile, 1),
        ("+18002345678", "US", .tollFree, 1),
        ("+19002345678", "US", .premiumRate, 1),
        ("+447400123456", "GB", .mobile, 44),
        ("+442071838750", "GB", .fixedLine, 44),
        ("+449098790000", "GB", .premiumRate, 44),
        ("+33810123456", "FR", .sharedCost, 33),
        ("+443001234567", "GB", .uan, 44),
        ("+448431234567", "GB", .premiumRate, 44),
        ("+445612345678", "GB", .voip, 44),
        ("+445512345678", "GB", .uan, 44),
        ("+447640123456", "GB", .pager, 44),
        ("+448001234567", "GB", .tollFree, 44),
        ("+4915112345678", "DE", .mobile, 49),
        ("+4917012345678", "DE", .mobile, 49),
        ("+33612345678", "FR", .mobile, 33),
        ("+5511912345678", "BR", .mobile, 55),
        ("+6834002", "NU", .fixedLine, 683),
    ])
    func numbersReadWithTheirRegionAndType(number: String, region: String, type: PhoneNumberType, callingCode: Int) throws {
        let info = try PhoneNumberClassifier.classify(try PhoneNumber(number))
        #expect(info.regionCode == region)
        #expect(info.type == type)
        #expect(info.countryCode == callingCode)
        #expect(info.e164 == number)
        #expect(!info.description.contains(number.dropFirst(4)), "the description masks the number")
    }

    @Test(arguments: [
        ("+1201555012", "too short for +1"),
        ("+120155501234", "too long for +1"),
        ("+44740012345678", "too long for +44"),
        ("+2812345678", "no assigned country calling code"),
        ("+10155552671", "no assigned range of +1"),
        ("+14150552671", "no assigned range of +1"),
        ("+4900012345678", "+49"),
    ])
    func numbersNotInUseSayWhy(number: String, reason: String) throws {
        let phone = try PhoneNumber(number)
        do {
            let info = try PhoneNumberClassifier.classify(phone)
            Issue.record("\(info) was read as valid")
        } catch {
            #expect(error.reason.contains(reason), "\(error.reason)")
            #expect(!error.reason.contains(number.dropFirst(4)), "the reason must not echo the number")
        }
    }

    @Test func regionCodesAreCheckedAgainstTheLibrary() {
        for code in ["US", "GB", "JM", "DO", "DE", "NU"] { #expect(PhoneNumberClassifier.isSupportedRegion(code)) }
        for code in ["XX", "us", "USA", "", "ZZ", "001", "U"] { #expect(!PhoneNumberClassifier.isSupportedRegion(code)) }
        #expect(PhoneNumberClassifier.callingCode(ofRegion: "JM") == 1)
        #expect(PhoneNumberClassifier.callingCode(ofRegion: "GB") == 44)
        #expect(PhoneNumberClassifier.callingCode(ofRegion: "XX") == nil)
    }

    @Test func callingCodesMapToTheirRegions() {
        let nanp = PhoneNumberClassifier.regions(ofCallingCode: 1)
        #expect(nanp.first == "US")
        #expect(Set(["CA", "JM", "DO", "PR", "BS"]).isSubset(of: Set(nanp)))
        #expect(PhoneNumberClassifier.regions(ofCallingCode: 44).first == "GB")
        #expect(PhoneNumberClassifier.regions(ofCallingCode: 28).isEmpty)
    }

    @Test func theLibraryFileNamesItsVersion() throws {
        let file = try #require(PhoneNumberClassifier.libraryFile)
        #expect(file.contains("libphonenumber.so"))
    }

    /// The library is read from many worker tasks at once.
    @Test func concurrentReadsAgree() async throws {
        let numbers = ["+18762101234", "+449098790000", "+12015550123", "+4915112345678"]
        let expected = try numbers.map { try PhoneNumberClassifier.classify(try PhoneNumber($0)) }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for n in 0..<400 {
                group.addTask {
                    try PhoneNumberClassifier.classify(try PhoneNumber(numbers[n % numbers.count])) == expected[n % numbers.count]
                }
            }
            for try await same in group { #expect(same) }
        }
    }
}
