import HeraldRuntime
/// The ITU-T E.164 country calling codes, kept as data: one line per code, its regions
/// (ISO 3166-1 alpha-2; `*` for non-geographic services) and, where the national numbering
/// plan fixes it, the length range of the national significant number (NSN).
///
/// Source: ITU-T E.164 Annex to ITU Operational Bulletin ("List of ITU-T Recommendation
/// E.164 assigned country codes"). Update this table, not the code, when the plan changes.
enum CallingCodeTable {
    static let data = """
    1 US,CA,AG,AI,AS,BB,BM,BS,DM,DO,GD,GU,JM,KN,KY,LC,MP,MS,PR,SX,TC,TT,VC,VG,VI 10-10
    7 RU,KZ 10-10
    20 EG 8-10
    27 ZA 9-9
    30 GR 10-10
    31 NL 9-9
    32 BE 8-9
    33 FR 9-9
    34 ES 9-9
    36 HU 8-9
    39 IT,VA 6-11
    40 RO 9-9
    41 CH 9-9
    43 AT 4-13
    44 GB,GG,IM,JE 9-10
    45 DK 8-8
    46 SE 7-13
    47 NO,SJ 5-8
    48 PL 9-9
    49 DE 6-13
    51 PE 8-9
    52 MX 10-10
    53 CU 6-8
    54 AR 10-11
    55 BR 10-11
    56 CL 9-9
    57 CO 8-10
    58 VE 10-10
    60 MY 8-10
    61 AU,CX,CC 9-9
    62 ID 8-12
    63 PH 8-10
    64 NZ 8-10
    65 SG 8-8
    66 TH 8-9
    81 JP 9-10
    82 KR 8-10
    84 VN 9-10
    86 CN 8-12
    90 TR 10-10
    91 IN 10-10
    92 PK 9-10
    93 AF 9-9
    94 LK 9-9
    95 MM 7-10
    98 IR 10-10
    211 SS
    212 MA,EH
    213 DZ
    216 TN
    218 LY
    220 GM
    221 SN
    222 MR
    223 ML
    224 GN
    225 CI
    226 BF
    227 NE
    228 TG
    229 BJ
    230 MU
    231 LR
    232 SL
    233 GH
    234 NG
    235 TD
    236 CF
    237 CM
    238 CV
    239 ST
    240 GQ
    241 GA
    242 CG
    243 CD
    244 AO
    245 GW
    246 IO
    247 AC
    248 SC
    249 SD
    250 RW
    251 ET
    252 SO
    253 DJ
    254 KE
    255 TZ
    256 UG
    257 BI
    258 MZ
    260 ZM
    261 MG
    262 RE,YT
    263 ZW
    264 NA
    265 MW
    266 LS
    267 BW
    268 SZ
    269 KM
    290 SH,TA
    291 ER
    297 AW
    298 FO
    299 GL
    350 GI
    351 PT 9-9
    352 LU
    353 IE 7-9
    354 IS
    355 AL
    356 MT
    357 CY
    358 FI,AX 5-12
    359 BG
    370 LT
    371 LV
    372 EE
    373 MD
    374 AM
    375 BY
    376 AD
    377 MC
    378 SM
    380 UA 9-9
    381 RS
    382 ME
    383 XK
    385 HR
    386 SI
    387 BA
    389 MK
    420 CZ 9-9
    421 SK 9-9
    423 LI
    500 FK
    501 BZ
    502 GT
    503 SV
    504 HN
    505 NI
    506 CR
    507 PA
    508 PM
    509 HT
    590 GP,BL,MF
    591 BO
    592 GY
    593 EC
    594 GF
    595 PY
    596 MQ
    597 SR
    598 UY
    599 CW,BQ
    670 TL
    672 NF,AQ
    673 BN
    674 NR
    675 PG
    676 TO
    677 SB
    678 VU
    679 FJ
    680 PW
    681 WF
    682 CK
    683 NU
    685 WS
    686 KI
    687 NC
    688 TV
    689 PF
    690 TK
    691 FM
    692 MH
    800 *
    808 *
    850 KP
    852 HK 8-8
    853 MO
    855 KH
    856 LA
    870 *
    878 *
    880 BD
    881 *
    882 *
    883 *
    886 TW
    888 *
    960 MV
    961 LB
    962 JO
    963 SY
    964 IQ
    965 KW
    966 SA
    967 YE
    968 OM
    970 PS
    971 AE
    972 IL
    973 BH
    974 QA
    975 BT
    976 MN
    977 NP
    979 *
    992 TJ
    993 TM
    994 AZ
    995 GE
    996 KG
    998 UZ
    """
}

/// One assigned country calling code.
public struct CallingCode: Sendable, Hashable {
    public var code: String
    /// ISO 3166-1 alpha-2 regions; empty for non-geographic services (freephone, satellite, …).
    public var regions: [String]
    /// Length range of the national significant number, where the plan fixes one.
    public var nationalLengths: ClosedRange<Int>
    public var isGeographic: Bool { !regions.isEmpty }
}

public enum CallingCodes {
    /// Code → entry, parsed once from ``CallingCodeTable/data``.
    public static let byCode: [String: CallingCode] = {
        var out: [String: CallingCode] = [:]
        for line in CallingCodeTable.data.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2 else { continue }
            let code = String(fields[0])
            let regions = fields[1] == "*" ? [] : fields[1].split(separator: ",").map(String.init)
            // Without a plan-specific range: at least 4 digits, at most what E.164's 15 leave.
            var lengths = 4...(15 - code.count)
            if fields.count >= 3 {
                let bounds = fields[2].split(separator: "-").compactMap { Int($0) }
                if bounds.count == 2 { lengths = bounds[0]...bounds[1] }
            }
            out[code] = CallingCode(code: code, regions: regions, nationalLengths: lengths)
        }
        return out
    }()

    /// The assigned code `digits` starts with (codes are prefix-free: 1 to 3 digits).
    public static func match(_ digits: Substring) -> CallingCode? {
        for length in 1...3 where digits.count > length {
            if let entry = byCode[String(digits.prefix(length))] { return entry }
        }
        return nil
    }
}
