package lobbyclient

import "testing"

func TestIsGuest_ByTheGatewaysIDPrefix(t *testing.T) {
	for id, want := range map[string]bool{"g-0123abcd": true, "u-0123abcd": false, "": false, "G-1": false, "guest": false} {
		if IsGuest(id) != want {
			t.Errorf("IsGuest(%q) = %v", id, !want)
		}
	}
}
