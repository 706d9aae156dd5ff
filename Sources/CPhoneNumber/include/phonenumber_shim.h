// A C face of libphonenumber (Google's reference phone-number library, C++), for Swift.
// Only what Herald decides with: is an E.164 number valid, which region (ISO 3166) and which
// type of line is it. Every function is safe to call from any thread: PhoneNumberUtil is a
// process-wide singleton whose read calls are thread-safe.
#ifndef HERALD_PHONENUMBER_SHIM_H
#define HERALD_PHONENUMBER_SHIM_H

#ifdef __cplusplus
extern "C" {
#endif

/// What the library says of a number's form, before validity.
typedef enum {
    HERALD_PHONE_POSSIBLE = 0,
    /// Not a number the library can read at all.
    HERALD_PHONE_NOT_A_NUMBER = 1,
    /// No country calling code the library knows starts the number.
    HERALD_PHONE_INVALID_COUNTRY_CODE = 2,
    HERALD_PHONE_TOO_SHORT = 3,
    HERALD_PHONE_TOO_LONG = 4,
    /// Between the shortest and the longest numbers of the region, but no length in use there.
    HERALD_PHONE_INVALID_LENGTH = 5,
    /// Only dialable locally (a subscriber number without its area code).
    HERALD_PHONE_LOCAL_ONLY = 6,
} herald_phone_form;

/// The library's number types, in our own stable numbering.
typedef enum {
    HERALD_PHONE_TYPE_FIXED_LINE = 0,
    HERALD_PHONE_TYPE_MOBILE = 1,
    HERALD_PHONE_TYPE_FIXED_LINE_OR_MOBILE = 2,
    HERALD_PHONE_TYPE_TOLL_FREE = 3,
    HERALD_PHONE_TYPE_PREMIUM_RATE = 4,
    HERALD_PHONE_TYPE_SHARED_COST = 5,
    HERALD_PHONE_TYPE_VOIP = 6,
    HERALD_PHONE_TYPE_PERSONAL_NUMBER = 7,
    HERALD_PHONE_TYPE_PAGER = 8,
    HERALD_PHONE_TYPE_UAN = 9,
    HERALD_PHONE_TYPE_VOICEMAIL = 10,
    HERALD_PHONE_TYPE_UNKNOWN = 11,
} herald_phone_type;

typedef struct {
    herald_phone_form form;
    /// 1 when the number is in a range the region's metadata assigns.
    int valid;
    int country_code;
    /// Digits of the national significant number (0 when not read).
    int national_length;
    /// ISO 3166-1 alpha-2 region, NUL-terminated; "ZZ" when unknown, "001" for non-geographic.
    char region[4];
    herald_phone_type type;
} herald_phone_info;

/// Reads `e164` ('+' and digits, NUL-terminated) into `info`. Never fails: a number the
/// library cannot read has `form` NOT_A_NUMBER and `valid` 0.
void herald_phone_classify(const char *e164, herald_phone_info *info);

/// 1 when `region` (two upper-case letters) is one the library has metadata for.
int herald_phone_is_supported_region(const char *region);

/// The country calling code of `region`, 0 when the library does not know the region.
int herald_phone_country_code_for_region(const char *region);

/// The regions sharing `calling_code` (1: "US,AG,AI,…"), comma-separated, main region first,
/// written to `buffer` NUL-terminated (cut at `size`). 0 when the code is not assigned.
int herald_phone_regions_for_calling_code(int calling_code, char *buffer, int size);

/// The file of the libphonenumber loaded in this process, symbolic links resolved (Debian:
/// `libphonenumber.so.8.12`, whose version is the metadata's major and minor), written to
/// `buffer` NUL-terminated. 0 when it cannot be told.
int herald_phone_library_file(char *buffer, int size);

#ifdef __cplusplus
}
#endif

#endif
