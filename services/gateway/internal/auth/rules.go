package auth

import (
	"bufio"
	_ "embed"
	"fmt"
	"strings"
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
var commonPasswordsText string // read-only: the embedded file

// Passwords holds the rules for new passwords: lengths in characters and
// the list of the most common passwords, built once by NewPasswords (held
// by whoever checks passwords; no package state).
type Passwords struct {
	common map[string]struct{} // lower-cased
}

// NewPasswords parses the shipped list of the most common passwords.
func NewPasswords() *Passwords {
	set := make(map[string]struct{}, 4096)
	sc := bufio.NewScanner(strings.NewReader(commonPasswordsText))
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			set[strings.ToLower(line)] = struct{}{}
		}
	}
	return &Passwords{common: set}
}

// IsCommon reports whether s (ignoring case) is on the shipped list of the
// most common passwords: the first ones any guesser tries.
func (p *Passwords) IsCommon(s string) bool {
	_, ok := p.common[strings.ToLower(s)]
	return ok
}

// Check checks a new password: MinPasswordLen..MaxPasswordLen characters,
// not only white space, not one of the most common passwords.
func (p *Passwords) Check(s string) error {
	n := utf8.RuneCountInString(s)
	if !utf8.ValidString(s) || n < MinPasswordLen || n > MaxPasswordLen || len(s) > maxPasswordBytes {
		return fmt.Errorf("%w: %d..%d characters", ErrWeakPassword, MinPasswordLen, MaxPasswordLen)
	}
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("%w: not only spaces", ErrWeakPassword)
	}
	if p.IsCommon(s) {
		return fmt.Errorf("%w: it is one of the most common passwords, the first ones guessed", ErrWeakPassword)
	}
	return nil
}
