package intl

import (
	"slices"
	"strings"
)

// SupportedValuesOf is ECMA-402's Intl.supportedValuesOf(key): the values
// of the option key names that the formatters here support, sorted, as
// code units sort. A key other than calendar, collation, currency,
// numberingSystem, timeZone and unit is a RangeError.
//
// The values are this implementation's, not ICU's: the Gregorian
// calendar and Latin digits only, no collation type (Collator is CLDR's
// root order tailored per locale), every currency CLDR names in English,
// historic ones included (Node lists those in use), every primary IANA
// zone but the Etc/ ones (Node's 418, the same), and ECMA-402's simple
// units.
func SupportedValuesOf(key string) ([]string, error) {
	switch key {
	case "calendar":
		return []string{"gregory"}, nil
	case "collation":
		return []string{}, nil
	case "currency":
		cs := localeTable[0].currencies // en's, sorted by code
		out := make([]string, 0, len(cs))
		for _, c := range cs {
			// XXX and XTS are codes for no currency and for tests.
			if code := string(c.code[:]); code != "XXX" && code != "XTS" {
				out = append(out, code)
			}
		}
		return out, nil
	case "numberingSystem":
		return []string{"latn"}, nil
	case "timeZone":
		out := make([]string, 0, len(zoneTable))
		for _, z := range zoneTable {
			if !strings.HasPrefix(z.name, "Etc/") {
				out = append(out, z.name)
			}
		}
		return out, nil
	case "unit":
		return slices.Clone(sanctionedUnits[:]), nil
	}
	return nil, rangeError("Invalid key : %s", key)
}
