package intl

import (
	"errors"
	"slices"
	"testing"
)

// TestEnvDefaultLocale: a formatter given no locale, or none the Env
// offers, has the Env's default locale when it is offered, else en-US.
func TestEnvDefaultLocale(t *testing.T) {
	de, err := NewSet([]string{"de"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env       Env
		requested []string
		want      string
	}{
		{Env{}, nil, "en-US"},
		{Env{Locales: de, DefaultLocale: "de-CH"}, nil, "de-CH"},
		{Env{Locales: de, DefaultLocale: "de-CH"}, []string{"fr"}, "de-CH"},
		{Env{Locales: de, DefaultLocale: "fr"}, nil, "en-US"},
		{Env{Locales: de, DefaultLocale: "fr"}, []string{"xx", "de-AT"}, "de-AT"},
	} {
		f, err := c.env.NewNumberFormat(c.requested, nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.Locale() != c.want {
			t.Errorf("%+v %v: %s, want %s", c.env.DefaultLocale, c.requested, f.Locale(), c.want)
		}
	}
}

// TestNewSet: a name brings the locales under it; English is always
// offered; an unknown name is an UnknownLocaleError.
func TestNewSet(t *testing.T) {
	s, err := NewSet([]string{"fr", "zh-Hant"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.SupportedLocales([]string{"fr-CA", "fr-CH", "de", "en-GB", "zh-TW", "zh", "ja"})
	if err != nil {
		t.Fatal(err)
	}
	// zh (Simplified) and ja are not offered; zh-TW is zh-Hant's.
	if want := []string{"fr-CA", "fr-CH", "en-GB", "zh-TW"}; !slices.Equal(got, want) {
		t.Errorf("supported %v, want %v", got, want)
	}
	var ue *UnknownLocaleError
	if _, err := NewSet([]string{"de", "tlh"}); !errors.As(err, &ue) || ue.Locale != "tlh" {
		t.Errorf("NewSet(tlh): %v", err)
	}
	if l := Locales(); l[0] != "en" || !slices.Contains(l, "ko") {
		t.Errorf("Locales() = %v", l)
	}
}
