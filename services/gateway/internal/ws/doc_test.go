package ws

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestProtocolDoc_NamesEveryCloseCode keeps docs/protocol.md's list of
// close codes true to the ones the gateway sends.
func TestProtocolDoc_NamesEveryCloseCode(t *testing.T) {
	doc, err := os.ReadFile("../../../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []websocket.StatusCode{websocket.StatusNormalClosure, CloseGoingAway, ClosePolicy, CloseTooBig,
		CloseInternal, CloseUnauthorized, CloseAuthTimedOut, CloseSlowConsumer} {
		if !strings.Contains(string(doc), "`"+strconv.Itoa(int(code))+"`") {
			t.Errorf("close code %d (%v) is not in docs/protocol.md", int(code), code)
		}
	}
}
