package passhash

import (
	"errors"
	"strings"
	"testing"
)

// cheap keeps the tests fast; the encoding and checks do not depend on cost.
var cheap = NewHasher(Params{Time: 1, MemoryKiB: 64, Threads: 1})

func TestVerify_AcceptsOnlyTheRightPassword(t *testing.T) {
	h, err := cheap.Hash("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pw   string
		want bool
	}{{"s3cret", true}, {"s3creT", false}, {"", false}, {"s3cret ", false}} {
		ok, err := Verify(h, tc.pw)
		if err != nil || ok != tc.want {
			t.Errorf("Verify(%q) = %v, %v; want %v", tc.pw, ok, err, tc.want)
		}
	}
}

func TestHash_NeverContainsThePlaintextAndIsSalted(t *testing.T) {
	a, _ := cheap.Hash("hunter2hunter2")
	b, _ := cheap.Hash("hunter2hunter2")
	if strings.Contains(a, "hunter2") {
		t.Fatalf("hash %q contains the password", a)
	}
	if a == b {
		t.Fatal("two hashes of the same password are equal: no salt")
	}
	if !strings.HasPrefix(a, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("hash %q is not a PHC argon2id string with the hasher's parameters", a)
	}
}

func TestHash_DefaultParamsAreEncoded(t *testing.T) {
	var zero Hasher
	h, err := zero.Hash("x")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h, "$m=19456,t=2,p=1$") {
		t.Fatalf("zero hasher did not use the default parameters: %q", h)
	}
	if ok, _ := Verify(h, "x"); !ok {
		t.Fatal("default-parameter hash does not verify")
	}
}

func TestVerify_RejectsMalformedHashes(t *testing.T) {
	good, _ := cheap.Hash("pw")
	parts := strings.Split(good, "$")
	for name, h := range map[string]string{
		"empty":       "",
		"bcrypt":      "$2a$10$abcdefghijklmnopqrstuu",
		"argon2i":     strings.Replace(good, "argon2id", "argon2i", 1),
		"version":     strings.Replace(good, "v=19", "v=16", 1),
		"huge memory": strings.Join([]string{"", "argon2id", "v=19", "m=4194304,t=1,p=1", parts[4], parts[5]}, "$"),
		"zero time":   strings.Join([]string{"", "argon2id", "v=19", "m=64,t=0,p=1", parts[4], parts[5]}, "$"),
		"bad salt":    strings.Join([]string{"", "argon2id", "v=19", parts[3], "!!", parts[5]}, "$"),
		"short key":   strings.Join([]string{"", "argon2id", "v=19", parts[3], parts[4], "AAAA"}, "$"),
	} {
		ok, err := Verify(h, "pw")
		if ok || !errors.Is(err, ErrMalformedHash) {
			t.Errorf("%s: Verify = %v, %v; want false, ErrMalformedHash", name, ok, err)
		}
	}
}

func BenchmarkHash_Default(b *testing.B) {
	h := NewHasher(DefaultParams())
	for b.Loop() {
		if _, err := h.Hash("correct horse"); err != nil {
			b.Fatal(err)
		}
	}
}
