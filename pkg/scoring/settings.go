package scoring

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/pulka/pulka/pkg/classic"
)

// Khishti is the table's khishti penalty: what a player who bid at least one
// trick and took none has written against them.
type Khishti uint8

// The khishti types. The zero value is the default, 200.
const (
	Khishti200     Khishti = iota // 200 whatever the hand
	Khishti500                    // 500 whatever the hand
	Khishti100                    // 100 whatever the hand
	KhishtiPerCard                // 100 per card dealt: 900 in a nine-card hand
)

var khishtiNames = [...]string{"200", "500", "100", "per-card"}

// Valid reports whether k is a known khishti type.
func (k Khishti) Valid() bool { return int(k) < len(khishtiNames) }

// String returns "200", "500", "100" or "per-card".
func (k Khishti) String() string {
	if !k.Valid() {
		return fmt.Sprintf("Khishti(%d)", uint8(k))
	}
	return khishtiNames[k]
}

// Penalty returns the points written against a khishti in a hand of the given
// number of cards (a positive number: the sheet writes its negative).
func (k Khishti) Penalty(cards int) int {
	switch k {
	case Khishti500:
		return 500
	case Khishti100:
		return 100
	case KhishtiPerCard:
		return 100 * cards
	}
	return 200
}

// ParseKhishti reads a khishti type: "200", "500", "100" or "per-card"
// ("percard" and "per_card" too, for people typing it by hand).
func ParseKhishti(s string) (Khishti, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "200", "":
		return Khishti200, nil
	case "500":
		return Khishti500, nil
	case "100":
		return Khishti100, nil
	case "per-card", "percard", "per_card":
		return KhishtiPerCard, nil
	}
	return 0, fmt.Errorf("%w: unknown khishti %q (want 200, 500, 100 or per-card)", ErrSettings, s)
}

// MarshalText writes the khishti's name.
func (k Khishti) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("%w: khishti %d", ErrSettings, uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText reads a khishti's name.
func (k *Khishti) UnmarshalText(b []byte) error {
	p, err := ParseKhishti(string(b))
	if err != nil {
		return err
	}
	*k = p
	return nil
}

// UnmarshalJSON accepts the name as a string or, since the fixed penalties
// are numbers, as a bare number: "khishti": 500 means what it says.
func (k *Khishti) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		return k.UnmarshalText([]byte(s))
	}
	if _, err := strconv.Atoi(string(b)); err != nil {
		return fmt.Errorf("%w: khishti %s is neither a name nor a whole number", ErrSettings, b)
	}
	return k.UnmarshalText(b)
}

// Settings are the scoring rules a table is created with. A table's settings
// (stake, privacy, ...) embed this struct rather than extend it, so adding a
// Domino Coin stake never changes how a sheet is scored.
type Settings struct {
	Variant classic.Variant `json:"variant"`
	Khishti Khishti         `json:"khishti"`
	// Premia: a player who makes every hand of a pulka gets their best hand
	// again. Off means nobody earns it, and so nobody gets a moshla.
	Premia bool `json:"premia"`
	// Moshla: when somebody earned the premia, the others lose their best hand.
	Moshla bool `json:"moshla"`
	// RestDocked decides the moshla when two or three players earned the
	// premia: true docks the rest, false spares them.
	RestDocked bool `json:"restDocked"`
}

// DefaultSettings are the settings of a table nobody changed: standard
// variant, khishti 200, premia and moshla on, the rest docked.
func DefaultSettings() Settings {
	return Settings{
		Variant:    classic.Standard,
		Khishti:    Khishti200,
		Premia:     true,
		Moshla:     true,
		RestDocked: true,
	}
}

// Validate reports an unknown variant or khishti type.
func (s Settings) Validate() error {
	if !s.Variant.Valid() {
		return fmt.Errorf("%w: unknown variant %d", ErrSettings, uint8(s.Variant))
	}
	if !s.Khishti.Valid() {
		return fmt.Errorf("%w: unknown khishti %d", ErrSettings, uint8(s.Khishti))
	}
	return nil
}
