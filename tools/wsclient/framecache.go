package wsclient

import (
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// FrameCache decodes an event or sheet frame once for every connection that
// receives the very same bytes: the clients of one table in a load test get
// identical frames for every public event, and decoding was most of the
// load generator's CPU, which the services it measures share. Frames
// decoded through it share their Event and Sheet, which every consumer must
// treat as read-only (Model and Player do). Other frames (acks, joins,
// errors: unique to one connection) are decoded as usual.
// A FrameCache is safe for concurrent use.
type FrameCache struct {
	mu       sync.Mutex
	cur, old map[string]Frame
	max      int
}

// NewFrameCache keeps up to about 2×max decoded frames, dropping the oldest
// half when the newer half is full.
func NewFrameCache(maxFrames int) *FrameCache {
	return &FrameCache{cur: map[string]Frame{}, old: map[string]Frame{}, max: max(maxFrames, 1)}
}

// Field numbers of ServerFrame's event and sheet members
// (proto/pulka/gateway/v1/frames.proto): a frame without a ref begins with
// one of their tags.
const (
	eventField protowire.Number = 13
	sheetField protowire.Number = 14
)

// shared reports whether data is an event or sheet frame, which many
// connections receive alike.
func shared(data []byte) bool {
	n, typ, size := protowire.ConsumeTag(data)
	return size > 0 && typ == protowire.BytesType && (n == eventField || n == sheetField)
}

// Decode is DecodeFrame, sharing the work between identical frames.
func (c *FrameCache) Decode(data []byte, at time.Time) (Frame, error) {
	if c == nil || !shared(data) {
		return DecodeFrame(data, at)
	}
	c.mu.Lock()
	f, ok := c.cur[string(data)]
	if !ok {
		f, ok = c.old[string(data)]
	}
	c.mu.Unlock()
	if ok {
		f.At = at
		return f, nil
	}
	f, err := DecodeFrame(data, at)
	if err != nil {
		return f, err
	}
	c.mu.Lock()
	if len(c.cur) >= c.max {
		c.old, c.cur = c.cur, make(map[string]Frame, c.max)
	}
	c.cur[string(data)] = f
	c.mu.Unlock()
	return f, nil
}
