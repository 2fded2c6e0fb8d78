package scoring

import (
	"errors"
	"math"
	"testing"
)

func TestFormatPoints_SheetNotationDividesByAHundred(t *testing.T) {
	cases := []struct {
		points int
		want   string
	}{
		{950, "9.5"}, {-40, "-0.4"}, {900, "9"}, {-200, "-2"}, {0, "0"},
		{50, "0.5"}, {470, "4.7"}, {170, "1.7"}, {2380, "23.8"}, {-3600, "-36"},
		{5, "0.05"}, {-105, "-1.05"}, {10, "0.1"},
		{math.MinInt64, "-92233720368547758.08"},
	}
	for _, c := range cases {
		if got := FormatPoints(c.points); got != c.want {
			t.Errorf("FormatPoints(%d) = %q, want %q", c.points, got, c.want)
		}
	}
}

func TestParsePoints_ReadsTheNotationBack(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"9.5", 950}, {"-0.4", -40}, {"9", 900}, {"-2", -200}, {"−0.4", -40}, {"0.05", 5}, {"1.50", 150},
	}
	for _, c := range cases {
		if got, err := ParsePoints(c.in); err != nil || got != c.want {
			t.Errorf("ParsePoints(%q) = %d, %v, want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "-", ".5", "9.", "9.555", "1e3", "+1", "9,5", "--1", "99999999999999999999"} {
		if got, err := ParsePoints(bad); !errors.Is(err, ErrNotation) {
			t.Errorf("ParsePoints(%q) = %d, %v, want ErrNotation", bad, got, err)
		}
	}
}

func FuzzParsePoints_RoundTrip(f *testing.F) {
	for _, s := range []string{"9.5", "-0.4", "0", "12.34", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePoints(s)
		if err != nil {
			return
		}
		back, err := ParsePoints(FormatPoints(p))
		if err != nil || back != p {
			t.Errorf("%q → %d → %q → %d, %v", s, p, FormatPoints(p), back, err)
		}
	})
}

func TestFormatPoints_RoundTripsEveryScore(t *testing.T) {
	for p := -100_000; p <= 100_000; p += 7 {
		if back, err := ParsePoints(FormatPoints(p)); err != nil || back != p {
			t.Fatalf("%d → %q → %d, %v", p, FormatPoints(p), back, err)
		}
	}
}
