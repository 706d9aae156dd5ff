// The C face of libphonenumber declared in include/phonenumber_shim.h.
#include "phonenumber_shim.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <list>
#include <dlfcn.h>
#include <set>
#include <string>

#include <phonenumbers/phonenumber.pb.h>
#include <phonenumbers/phonenumberutil.h>

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

namespace {

herald_phone_type herald_type(PhoneNumberUtil::PhoneNumberType type) {
    switch (type) {
    case PhoneNumberUtil::FIXED_LINE: return HERALD_PHONE_TYPE_FIXED_LINE;
    case PhoneNumberUtil::MOBILE: return HERALD_PHONE_TYPE_MOBILE;
    case PhoneNumberUtil::FIXED_LINE_OR_MOBILE: return HERALD_PHONE_TYPE_FIXED_LINE_OR_MOBILE;
    case PhoneNumberUtil::TOLL_FREE: return HERALD_PHONE_TYPE_TOLL_FREE;
    case PhoneNumberUtil::PREMIUM_RATE: return HERALD_PHONE_TYPE_PREMIUM_RATE;
    case PhoneNumberUtil::SHARED_COST: return HERALD_PHONE_TYPE_SHARED_COST;
    case PhoneNumberUtil::VOIP: return HERALD_PHONE_TYPE_VOIP;
    case PhoneNumberUtil::PERSONAL_NUMBER: return HERALD_PHONE_TYPE_PERSONAL_NUMBER;
    case PhoneNumberUtil::PAGER: return HERALD_PHONE_TYPE_PAGER;
    case PhoneNumberUtil::UAN: return HERALD_PHONE_TYPE_UAN;
    case PhoneNumberUtil::VOICEMAIL: return HERALD_PHONE_TYPE_VOICEMAIL;
    default: return HERALD_PHONE_TYPE_UNKNOWN;
    }
}

herald_phone_form herald_form(PhoneNumberUtil::ValidationResult result) {
    switch (result) {
    case PhoneNumberUtil::IS_POSSIBLE: return HERALD_PHONE_POSSIBLE;
    case PhoneNumberUtil::IS_POSSIBLE_LOCAL_ONLY: return HERALD_PHONE_LOCAL_ONLY;
    case PhoneNumberUtil::INVALID_COUNTRY_CODE: return HERALD_PHONE_INVALID_COUNTRY_CODE;
    case PhoneNumberUtil::TOO_SHORT: return HERALD_PHONE_TOO_SHORT;
    case PhoneNumberUtil::TOO_LONG: return HERALD_PHONE_TOO_LONG;
    default: return HERALD_PHONE_INVALID_LENGTH;
    }
}

herald_phone_form herald_parse_error(PhoneNumberUtil::ErrorType error) {
    switch (error) {
    case PhoneNumberUtil::INVALID_COUNTRY_CODE_ERROR: return HERALD_PHONE_INVALID_COUNTRY_CODE;
    case PhoneNumberUtil::TOO_SHORT_AFTER_IDD:
    case PhoneNumberUtil::TOO_SHORT_NSN: return HERALD_PHONE_TOO_SHORT;
    case PhoneNumberUtil::TOO_LONG_NSN: return HERALD_PHONE_TOO_LONG;
    default: return HERALD_PHONE_NOT_A_NUMBER;
    }
}

void set_region(herald_phone_info *info, const std::string &region) {
    std::strncpy(info->region, region.c_str(), sizeof(info->region) - 1);
    info->region[sizeof(info->region) - 1] = '\0';
}

}  // namespace

extern "C" void herald_phone_classify(const char *e164, herald_phone_info *info) {
    const PhoneNumberUtil &util = *PhoneNumberUtil::GetInstance();
    std::memset(info, 0, sizeof(*info));
    info->type = HERALD_PHONE_TYPE_UNKNOWN;
    set_region(info, "ZZ");

    PhoneNumber number;
    // "ZZ": no default region; the number must carry its '+' and country calling code.
    const PhoneNumberUtil::ErrorType error = util.Parse(e164, "ZZ", &number);
    if (error != PhoneNumberUtil::NO_PARSING_ERROR) {
        info->form = herald_parse_error(error);
        return;
    }
    info->country_code = number.country_code();
    std::string national;
    util.GetNationalSignificantNumber(number, &national);
    info->national_length = static_cast<int>(national.size());
    info->form = herald_form(util.IsPossibleNumberWithReason(number));
    std::string region;
    util.GetRegionCodeForNumber(number, &region);
    set_region(info, region.empty() ? "ZZ" : region);
    // IsValidNumber is GetNumberType != UNKNOWN: both match the national number against the
    // metadata of the region GetRegionCodeForNumber finds (IsValidNumberForRegion). Asked once,
    // the patterns are matched once (no difference over 1.2 M random and near-valid numbers).
    const PhoneNumberUtil::PhoneNumberType type = util.GetNumberType(number);
    info->valid = type != PhoneNumberUtil::UNKNOWN ? 1 : 0;
    info->type = herald_type(type);
}

extern "C" int herald_phone_is_supported_region(const char *region) {
    std::set<std::string> regions;
    PhoneNumberUtil::GetInstance()->GetSupportedRegions(&regions);
    return regions.count(region) > 0 ? 1 : 0;
}

extern "C" int herald_phone_country_code_for_region(const char *region) {
    return PhoneNumberUtil::GetInstance()->GetCountryCodeForRegion(region);
}

extern "C" int herald_phone_library_file(char *buffer, int size) {
    Dl_info info;
    if (size <= 0 || dladdr(reinterpret_cast<void *>(&PhoneNumberUtil::GetInstance), &info) == 0 || info.dli_fname == nullptr) {
        return 0;
    }
    char resolved[PATH_MAX];
    const char *path = realpath(info.dli_fname, resolved) != nullptr ? resolved : info.dli_fname;
    std::strncpy(buffer, path, static_cast<size_t>(size) - 1);
    buffer[size - 1] = '\0';
    return 1;
}

extern "C" int herald_phone_regions_for_calling_code(int calling_code, char *buffer, int size) {
    std::list<std::string> regions;
    PhoneNumberUtil::GetInstance()->GetRegionCodesForCountryCallingCode(calling_code, &regions);
    if (size <= 0 || regions.empty()) {
        return 0;
    }
    std::string joined;
    for (const std::string &region : regions) {
        joined += (joined.empty() ? "" : ",") + region;
    }
    std::strncpy(buffer, joined.c_str(), static_cast<size_t>(size) - 1);
    buffer[size - 1] = '\0';
    return 1;
}
