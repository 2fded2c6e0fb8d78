package scoring

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNotation is returned by ParsePoints for a string that is not a score in
// the sheet's /100 notation.
var ErrNotation = errors.New("not a score in /100 notation")

// FormatPoints writes whole points the way the paper sheet does, divided by a
// hundred with no trailing zeros: 950 → "9.5", 900 → "9", -40 → "-0.4",
// -200 → "-2", 5 → "0.05". Only integers are involved, so no rounding can
// creep into a total.
func FormatPoints(points int) string {
	var b [24]byte
	return string(AppendPoints(b[:0], points))
}

// AppendPoints appends FormatPoints(points) to dst: no allocation, for
// renderers that write many cells.
func AppendPoints(dst []byte, points int) []byte {
	u := uint64(points)
	if points < 0 {
		dst = append(dst, '-')
		u = -u // two's complement negation: right even for the minimum int
	}
	dst = strconv.AppendUint(dst, u/100, 10)
	switch frac := u % 100; {
	case frac == 0:
	case frac%10 == 0:
		dst = append(dst, '.', byte('0'+frac/10))
	default:
		dst = append(dst, '.', byte('0'+frac/10), byte('0'+frac%10))
	}
	return dst
}

// ParsePoints reads the /100 notation back into whole points: "9.5" → 950,
// "-0.4" → -40, "9" → 900. At most two decimals are allowed, since a sheet
// never holds a fraction of a point.
func ParsePoints(s string) (int, error) {
	in := s
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "−"): // the minus sign of printed sheets
		neg, s = true, s[len("−"):]
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || !allDigits(whole) || (hasDot && (frac == "" || len(frac) > 2 || !allDigits(frac))) {
		return 0, fmt.Errorf("%w: %q", ErrNotation, in)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > (1<<62)/100 {
		return 0, fmt.Errorf("%w: %q is too large", ErrNotation, in)
	}
	p := int(w) * 100
	if hasDot {
		f, _ := strconv.Atoi(frac) // one or two digits: cannot fail
		if len(frac) == 1 {
			f *= 10
		}
		p += f
	}
	if neg {
		p = -p
	}
	return p, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
