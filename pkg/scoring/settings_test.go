package scoring

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/classic"
)

func TestSettings_DefaultsArePremiaMoshlaRestDockedKhishti200(t *testing.T) {
	want := Settings{Variant: classic.Standard, Khishti: Khishti200, Premia: true, Moshla: true, RestDocked: true}
	if got := DefaultSettings(); got != want {
		t.Errorf("DefaultSettings() = %+v, want %+v", got, want)
	}
}

func TestSettings_JSONNamesAndRoundTrip(t *testing.T) {
	s := Settings{Variant: classic.Nines, Khishti: KhishtiPerCard, Premia: true, RestDocked: true}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"variant":"nines","khishti":"per-card","premia":true,"moshla":false,"restDocked":true}`
	if string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var back Settings
	if err := json.Unmarshal(b, &back); err != nil || back != s {
		t.Errorf("read back %+v, %v", back, err)
	}
}

// Decoding onto DefaultSettings keeps the default of every field the JSON
// leaves out, which is how a table description missing a setting is read.
func TestSettings_MissingFieldsKeepTheDefaults(t *testing.T) {
	s := DefaultSettings()
	if err := json.Unmarshal([]byte(`{"khishti":500,"moshla":false}`), &s); err != nil {
		t.Fatal(err)
	}
	want := DefaultSettings()
	want.Khishti, want.Moshla = Khishti500, false
	if s != want {
		t.Errorf("%+v, want %+v", s, want)
	}
}

// A table's settings embed the scoring settings: a stake added beside them
// leaves the JSON of the scoring fields as it was.
func TestSettings_EmbedInTableSettings(t *testing.T) {
	type table struct {
		Settings
		Stake int `json:"stake"`
	}
	b, err := json.Marshal(table{Settings: DefaultSettings(), Stake: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"khishti":"200"`) || !strings.Contains(string(b), `"stake":100`) {
		t.Errorf("table JSON %s", b)
	}
}

func TestSheet_JSONRoundTrip(t *testing.T) {
	sheet := mustBuild(t, perCard(), seedGame)
	b, err := json.Marshal(sheet)
	if err != nil {
		t.Fatal(err)
	}
	var back Sheet
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if string(b) != string(b2) {
		t.Errorf("sheet changed on a JSON round trip:\n%s\n%s", b, b2)
	}
	if !strings.Contains(string(b), `"result":["made","made","made","khishti"]`) {
		t.Errorf("results are not written by name: %.300s", b)
	}
}
