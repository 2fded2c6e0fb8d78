package wsclient

import (
	"testing"
	"time"
)

const cachedEvent = `{"type":"event","table":"t1","id":"5-0","event":{"seq":"7","caused_by":"p/k","bid_made":{"seat":2,"tricks":1}}}`

func TestFrameCache_IdenticalEventFramesShareOneDecode(t *testing.T) {
	c := NewFrameCache(8)
	t0, t1 := time.Unix(1, 0), time.Unix(2, 0)
	a, err := c.Decode([]byte(cachedEvent), t0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Decode([]byte(cachedEvent), t1)
	if err != nil {
		t.Fatal(err)
	}
	if a.Event != b.Event {
		t.Error("the second identical frame was decoded again")
	}
	if !a.At.Equal(t0) || !b.At.Equal(t1) {
		t.Errorf("At = %v, %v: each frame keeps its own reading time", a.At, b.At)
	}
	if b.Table != "t1" || b.ID != "5-0" || b.Event.GetSeq() != 7 || b.Event.GetBidMade().GetTricks() != 1 {
		t.Errorf("cached frame decoded wrong: %+v", b)
	}
}

func TestFrameCache_MatchesDecodeFrame(t *testing.T) {
	frames := []string{
		cachedEvent,
		`{"type":"ack","ref":"r1","cmd":"p/k"}`,
		`{"type":"error","code":"invalid","message":"no","ref":"r2"}`,
	}
	c := NewFrameCache(1) // generations roll over at every frame
	for _, fr := range frames {
		for range 3 {
			got, gerr := c.Decode([]byte(fr), time.Unix(3, 0))
			want, werr := DecodeFrame([]byte(fr), time.Unix(3, 0))
			if (gerr == nil) != (werr == nil) || got.Type != want.Type || got.Ref != want.Ref ||
				got.Cmd != want.Cmd || got.ID != want.ID || got.Event.GetSeq() != want.Event.GetSeq() {
				t.Errorf("%s: cache gave %+v, %v; DecodeFrame %+v, %v", fr, got, gerr, want, werr)
			}
		}
	}
}

func TestFrameCache_BadEventFrameIsAnError(t *testing.T) {
	c := NewFrameCache(8)
	if _, err := c.Decode([]byte(`{"type":"event","event":{"seq":"x"}}`), time.Now()); err == nil {
		t.Error("an undecodable event frame was accepted")
	}
}
