package names

import (
	"errors"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		rule, name string
		ok         bool
	}{
		{"latin", "Nino", true},
		{"georgian", "ნინო", true},
		{"cyrillic with a space", "Тамара 2", true},
		{"punctuation", "long_name.with-dots", true},
		{"a visible U+FFFD is a character like any other", "a\uFFFDb", true},
		{"right-to-left override", "Nino\u202Eevil", false},
		{"bidi isolates", "x\u2066y\u2069", false},
		{"right-to-left mark", "a\u200Fb", false},
		{"arabic letter mark", "\u061Carabic-mark", false},
		{"zero-width space", "a\u200Bb", false},
		{"zero-width joiner", "a\u200Db", false},
		{"byte order mark", "\uFEFFNino", false},
		{"soft hyphen", "soft\u00ADhyphen", false},
		{"tag character", "a\U000E0041", false},
		{"control character", "bell\a", false},
		{"newline", "a\nb", false},
		{"line separator (Zl)", "a\u2028b", false},
		{"paragraph separator (Zp)", "a\u2029b", false},
		{"hangul choseong filler", "\u115F", false},
		{"hangul jungseong filler", "a\u1160", false},
		{"hangul filler", "\u3164\u3164", false},
		{"halfwidth hangul filler", "\uFFA0", false},
		{"braille blank", "\u2800", false},
		{"invalid UTF-8", "bad\xffutf8", false},
	} {
		err := Check(tc.name)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrHiddenCharacter)) {
			t.Errorf("%s: Check(%q) = %v, want ok=%v", tc.rule, tc.name, err, tc.ok)
		}
		if c := Clean(tc.name); Check(c) != nil || (tc.ok && c != tc.name) {
			t.Errorf("%s: Clean(%q) = %q", tc.rule, tc.name, c)
		}
	}
}

// Whatever Check accepts is valid UTF-8 without a character that hides or
// reorders; whatever Clean returns passes Check and keeps every visible
// character in order.
func FuzzCheckAndClean(f *testing.F) {
	for _, s := range []string{"Nino", "a\u202Eb", "ნინოთამარი", "\u3164", "a\u2028b", "\xff\xfe", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Check(s) == nil {
			if !utf8.ValidString(s) {
				t.Fatalf("accepted invalid UTF-8 %q", s)
			}
			for _, r := range s {
				if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Bidi_Control) {
					t.Fatalf("accepted %q with %U", s, r)
				}
			}
			if Clean(s) != s {
				t.Fatalf("Clean changed the accepted %q", s)
			}
		}
		c := Clean(s)
		if Check(c) != nil {
			t.Fatalf("Clean(%q) = %q, which Check refuses", s, c)
		}
		if utf8.RuneCountInString(c) > utf8.RuneCountInString(s) {
			t.Fatalf("Clean(%q) = %q grew", s, c)
		}
	})
}
