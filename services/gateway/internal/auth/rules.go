package auth

import (
	"bufio"
	_ "embed"
	"fmt"
	"strings"
	"sync"
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
