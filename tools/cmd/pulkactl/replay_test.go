package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/tools/record"
)

func TestDemo_PrintsAFinishedPaperSheetWhoseRecordReplaysToIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "game.json")
	out, errOut, code := runCmd(t, "", "demo", "--seed", "9", "--record", path)
	if code != 0 {
		t.Fatalf("demo exited %d: %s", code, errOut)
	}
	for _, want := range []string{"Pulka I (finished)", "Pulka IV (finished)", "sul", "game over"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo sheet lacks %q:\n%s", want, out)
		}
	}
	replayed, errOut, code := runCmd(t, "", "replay", "--text", path)
	if code != 0 {
		t.Fatalf("replay exited %d: %s", code, errOut)
	}
	if !strings.HasSuffix(out, replayed) {
		t.Fatalf("replayed sheet differs from the demo's:\n%s\nvs\n%s", replayed, out)
	}
}

func TestReplay_JSONSheetEqualsTheLibrarys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "game.json")
	if _, errOut, code := runCmd(t, "", "demo", "--seed", "4", "--variant", "nines", "--record", path); code != 0 {
		t.Fatal(errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, string(data), "replay")
	if code != 0 {
		t.Fatalf("replay from stdin exited %d: %s", code, errOut)
	}
	var got scoring.Sheet
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Parse(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := record.Replay(rec)
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != res.Sheet.Total || !got.Finished || len(got.Hands) != 16 {
		t.Fatalf("sheet totals %v finished %v hands %d, want %v true 16", got.Total, got.Finished, len(got.Hands), res.Sheet.Total)
	}
}

func TestReplay_IllegalMoveExits1NamingHandTrickSeatRule(t *testing.T) {
	path := filepath.Join(t.TempDir(), "game.json")
	if _, errOut, code := runCmd(t, "", "demo", "--record", path); code != 0 {
		t.Fatal(errOut)
	}
	data, _ := os.ReadFile(path)
	rec, err := record.Parse(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	rec.Moves[5] = rec.Moves[4] // the same seat moves twice
	var b strings.Builder
	if err := rec.Write(&b); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCmd(t, b.String(), "replay")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (%s)", code, errOut)
	}
	for _, want := range []string{"move 6", "hand ", "trick ", "seat ", "turn"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("message %q lacks %q", errOut, want)
		}
	}
}

func TestReplay_NotARecordExits2(t *testing.T) {
	for _, in := range []string{"", "{}", `{"format":"pulka-game-record/2","game":"go","seed":1,"moves":[]}`} {
		if _, _, code := runCmd(t, in, "replay"); code != 2 {
			t.Errorf("replay of %q exited %d, want 2", in, code)
		}
	}
	if _, _, code := runCmd(t, "", "replay", "/no/such/file.json"); code != 2 {
		t.Errorf("missing file exited %d, want 2", code)
	}
}

func TestSelfplay_ReportsRateAndSummary(t *testing.T) {
	out, errOut, code := runCmd(t, "", "selfplay", "--games", "20", "--vs", "random")
	if code != 0 {
		t.Fatal(errOut)
	}
	for _, want := range []string{"games/s", "baseline bot", "random bot", "exact bids"} {
		if !strings.Contains(out, want) {
			t.Errorf("selfplay output lacks %q:\n%s", want, out)
		}
	}
	out, errOut, code = runCmd(t, "", "selfplay", "--game", "japanese", "--games", "5", "--target", "11")
	if code != 0 || !strings.Contains(out, "matches/s") {
		t.Fatalf("japanese selfplay exit %d: %s%s", code, out, errOut)
	}
	for _, bad := range [][]string{{"--games", "0"}, {"--game", "poker"}, {"--vs", "human"}, {"--game", "japanese", "--target", "12"}} {
		if _, _, code := runCmd(t, "", append([]string{"selfplay"}, bad...)...); code != 2 {
			t.Errorf("selfplay %v exited %d, want 2", bad, code)
		}
	}
}
