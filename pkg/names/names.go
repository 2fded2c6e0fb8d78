// Package names provides the one rule for the names people choose and
// others read (user names, display names, table names): every character
// in them shows as itself. The gateway and the lobby both apply it, so a
// name one accepts the other does not refuse.
package names

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrHiddenCharacter is a name holding a character that does not show, or
// that changes how the text around it shows.
var ErrHiddenCharacter = errors.New("control, format, bidirectional, separator or blank-filler characters are not allowed")

// Hidden reports characters that change how text around them is shown
// without showing themselves: control characters; Unicode format
// characters (Cf: the bidi embeddings, overrides and isolates
// U+202A–U+202E and U+2066–U+2069, the marks U+200E/U+200F and U+061C,
// zero-width spaces and joiners, the BOM, soft hyphens, tag characters);
// the line and paragraph separators (Zl, Zp); and the fillers that render
// as blank letters (Hangul U+115F, U+1160, U+3164, U+FFA0; Braille blank
// U+2800). With them one name can pass for another ("Nino" and
// "Nino\u200B") or reverse the text shown after it ("Nino\u202Eevil").
func Hidden(r rune) bool {
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800:
		return true
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Bidi_Control, r) ||
		unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}

// Check refuses a name of invalid UTF-8 or holding a Hidden character,
// with ErrHiddenCharacter. Lengths and allowed alphabets are each caller's.
func Check(s string) error {
	if !utf8.ValidString(s) || strings.IndexFunc(s, Hidden) >= 0 {
		return ErrHiddenCharacter
	}
	return nil
}

// Clean drops from s what Check refuses (Hidden characters and invalid
// UTF-8), for names that must be shown whatever they were.
func Clean(s string) string {
	return strings.Map(func(r rune) rune {
		if Hidden(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
}
