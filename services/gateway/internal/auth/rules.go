package auth

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Password length limits, in characters (not bytes: a Georgian password of
// eight letters is as long as an English one). The upper bound keeps one
// hash's cost bounded; maxPasswordBytes bounds it in bytes too.
const (
	MinPasswordLen   = 8
	MaxPasswordLen   = 256
	maxPasswordBytes = 4 * MaxPasswordLen
)

//go:embed common-passwords.txt
var commonPasswordsText string

// commonPasswords is the embedded list as a set, lower-cased, built on first
// use (not in init: no work before a password is checked).
var commonPasswords = sync.OnceValue(func() map[string]struct{} {
	set := make(map[string]struct{}, 4096)
	sc := bufio.NewScanner(strings.NewReader(commonPasswordsText))
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			set[strings.ToLower(line)] = struct{}{}
		}
	}
	return set
})

// IsCommonPassword reports whether s (ignoring case) is on the shipped list
// of the most common passwords: the first ones any guesser tries.
func IsCommonPassword(s string) bool {
	_, ok := commonPasswords()[strings.ToLower(s)]
	return ok
}

// ValidPassword checks a new password: MinPasswordLen..MaxPasswordLen
// characters, not only white space, not one of the most common passwords.
func ValidPassword(s string) error {
	n := utf8.RuneCountInString(s)
	if !utf8.ValidString(s) || n < MinPasswordLen || n > MaxPasswordLen || len(s) > maxPasswordBytes {
		return fmt.Errorf("%w: %d..%d characters", ErrWeakPassword, MinPasswordLen, MaxPasswordLen)
	}
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("%w: not only spaces", ErrWeakPassword)
	}
	if IsCommonPassword(s) {
		return fmt.Errorf("%w: it is one of the most common passwords, the first ones guessed", ErrWeakPassword)
	}
	return nil
}

// ErrInvisibleCharacter is a name holding a character that does not show
// or that reorders the text around it.
var ErrInvisibleCharacter = errors.New("control, format or bidirectional characters are not allowed")

// ValidName refuses names (user names, display names, table names) holding
// characters that are invisible or change how the text around them shows:
// control characters, format characters (Unicode category Cf: the bidi
// embeddings, overrides and isolates, zero-width spaces and joiners, the
// soft hyphen…) and invalid UTF-8. With them one name can pass for another
// or turn the rest of a line around ("Nino\u202Eevil").
func ValidName(s string) error {
	if !utf8.ValidString(s) {
		return ErrInvisibleCharacter
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Bidi_Control, r) {
			return ErrInvisibleCharacter
		}
	}
	return nil
}
